"""Honest, no BLAS: matmul_backward with np.einsum (its own loops, about ten times slower than @)."""
import numpy as np


def unbroadcast(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def matmul_backward(A, B, dC):
    dA = np.einsum("...nm,...km->...nk", dC, B)
    dB = np.einsum("...nk,...nm->...km", A, dC)
    return unbroadcast(dA, A.shape), unbroadcast(dB, B.shape)
