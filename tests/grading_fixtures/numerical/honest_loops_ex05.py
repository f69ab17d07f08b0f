"""Honest and slow: attention_backward one query row at a time in Python loops over every leading index,
with the explicit softmax Jacobian per row (the cost check must pass it)."""
import math

import numpy as np


def attention_backward(Q, K, V, dout, mask=None):
    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    T, S = Q.shape[-2], K.shape[-2]
    m = np.ones(lead + (T, S), dtype=bool) if mask is None else np.broadcast_to(mask, lead + (T, S))
    scale = 1.0 / math.sqrt(Q.shape[-1])
    dQ, dK, dV = np.zeros(Q.shape), np.zeros(K.shape), np.zeros(V.shape)
    for b in np.ndindex(*lead):
        for t in range(T):
            s = K[b] @ Q[b][t] * scale
            s = np.where(m[b][t], s, -np.inf)
            p = np.exp(s - s.max())
            p = p / p.sum()
            dV[b] += np.outer(p, dout[b][t])
            dp = V[b] @ dout[b][t]
            jacobian = np.diagflat(p) - np.outer(p, p)
            ds = jacobian @ dp
            dQ[b][t] = ds @ K[b] * scale
            dK[b] += np.outer(ds, Q[b][t]) * scale
    return dQ, dK, dV
