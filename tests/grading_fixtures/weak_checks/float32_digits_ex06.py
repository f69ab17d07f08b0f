"""unbroadcast sums in float32 and returns float64: float64's dtype, float32's digits. Earned 4/4 (unbroadcast)
on 55% of seeds 1-20 (2.2 on average) under rtol 1e-6; now 0/4 (rtol 1e-9: a sum of at most 60 float64 terms is
exact to ~1e-14). matmul_backward is honest: it keeps its 6 points."""
import numpy as np


def sum_to(g, shape):
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for i, n in enumerate(shape):
        if n == 1 and g.shape[i] != 1:
            g = g.sum(axis=i, keepdims=True)
    return g


def unbroadcast(grad, shape):
    return sum_to(grad.astype(np.float32), shape).astype(np.float64)


def matmul_backward(A, B, dC):
    return sum_to(dC @ np.swapaxes(B, -1, -2), A.shape), sum_to(np.swapaxes(A, -1, -2) @ dC, B.shape)
