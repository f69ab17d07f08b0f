"""Tamper: remove the import guard from sys.meta_path, then import a framework by a computed name."""
import importlib
import sys

sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "ImportGuard"]
special = importlib.import_module("sci" + "py.spe" + "cial")


def softmax(x, axis=-1):
    return special.softmax(x, axis=axis)


def softmax_backward(y, dy, axis=-1):
    return y * (dy - (dy * y).sum(axis=axis, keepdims=True))
