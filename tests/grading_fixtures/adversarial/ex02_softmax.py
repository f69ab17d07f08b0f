"""Adversarial: exits the interpreter while being imported."""
import sys

import numpy as np

sys.exit(0)


def softmax(x, axis=-1):
    return np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True)


def softmax_backward(y, dy, axis=-1):
    return y * (dy - (dy * y).sum(axis=axis, keepdims=True))
