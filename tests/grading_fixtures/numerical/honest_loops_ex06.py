"""Honest and slow: matmul_backward with a Python loop over every broadcast leading index (the cost check
must pass it)."""
import numpy as np


def unbroadcast(grad, shape):
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def matmul_backward(A, B, dC):
    lead = np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    Ab = np.broadcast_to(A, lead + A.shape[-2:])
    Bb = np.broadcast_to(B, lead + B.shape[-2:])
    dA, dB = np.zeros(Ab.shape), np.zeros(Bb.shape)
    for i in np.ndindex(*lead):
        dA[i] = dC[i] @ Bb[i].T
        dB[i] = Ab[i].T @ dC[i]
    return unbroadcast(dA, A.shape), unbroadcast(dB, B.shape)
