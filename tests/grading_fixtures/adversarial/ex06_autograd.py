"""Adversarial: correct, but very chatty on stdout and stderr."""
import sys

import numpy as np

print("hello from import " * 1000)
print("noise on stderr " * 1000, file=sys.stderr)


def unbroadcast(grad, shape):
    print("unbroadcast", grad.shape, "->", shape)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def matmul_backward(A, B, dC):
    print("matmul_backward" * 100, file=sys.stderr)
    dA = dC @ np.swapaxes(B, -1, -2)
    dB = np.swapaxes(A, -1, -2) @ dC
    return unbroadcast(dA, A.shape), unbroadcast(dB, B.shape)
