"""Adversarial: kills the interpreter at import, skipping every cleanup."""
import os

os._exit(0)


def sinusoidal_encoding(T, d_model):
    return None
