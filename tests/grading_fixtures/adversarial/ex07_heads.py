"""Adversarial: the wrong shapes (no transpose, so (B, T, H, d_k) instead of (B, H, T, d_k))."""
import numpy as np


def split_heads(x, n_heads):
    B, T, C = x.shape
    return x.reshape(B, T, n_heads, C // n_heads)


def merge_heads(x):
    return x.reshape(x.shape[0], x.shape[1], -1)
