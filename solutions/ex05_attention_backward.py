"""Exercise 05 · attention, backward: the gradients of the loss w.r.t. Q, K and V.
Points: 15 in 2 parts, each scored on its own: attention_backward 10 (after notebook 02), masks 5 (after notebook 04).

Allowed: NumPy and the Python standard library; nothing from tinyattn (check a gradient with your
own finite differences).
This exercise runs confined to real arithmetic, so its gradient can only be derived: no complex numbers or
object arrays (no 1j, no complex or object dtype); imports: numpy, math, itertools, functools, collections,
random, time, typing, sys (its streams and exit) and your own helper files (not another exercise's); no name
or attribute that begins with an underscore (but __name__ and __init__); no eval, exec, getattr, open or type.
No exercise may import torch, tensorflow, jax, scipy.special or the grader (tinyattn.grading).
Grade yourself with:  tinyattn grade --only ex05   (checked against finite differences)
"""
import math

import numpy as np


def attention_backward(Q: np.ndarray, K: np.ndarray, V: np.ndarray, dout: np.ndarray,
                       mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Given dL/dout for out = softmax(Q Kᵀ / sqrt(d_k), masked) V, return (dQ, dK, dV).

    Shapes (same leading dims "..." for all inputs):
        Q: (..., T, d_k), K: (..., S, d_k), V: (..., S, d_v), dout: (..., T, d_v)
        mask: None, or bool broadcastable to (..., T, S); True = may attend
        returns: dQ (..., T, d_k), dK (..., S, d_k), dV (..., S, d_v)

    Math (recompute the forward first: s = Q Kᵀ / sqrt(d_k), P = softmax(s), out = P V):
        dV = Pᵀ dout                      dP = dout Vᵀ
        dS = P * (dP - sum_j(dP * P))     (softmax backward, per row, the sum over keys)
        dQ = dS K / sqrt(d_k)             dK = dSᵀ Q / sqrt(d_k)
    Masked entries have P = 0, so dS is 0 there: no gradient flows to masked keys.
    Graded to float64 rounding: within 1e-12 of the largest entry of the exact gradient. Finite
    differences (numerical_grad) are only good to about 1e-10, so they do not pass: derive it.
    The grader also measures its CPU time on large inputs: a gradient computed numerically
    (finite differences, a complex step, dual numbers) costs one forward pass per input entry,
    a derived one a few; over 500 forward passes' worth fails.

    Hints:
        * Check every shape: dV must look like V, dK like K, dQ like Q.
        * The 1/sqrt(d_k) of the forward pass appears again in dQ and dK.
        * The grader compares with finite differences: (L(x + eps) - L(x - eps)) / (2 eps).
    """
    ### BEGIN SOLUTION
    scale = 1.0 / math.sqrt(Q.shape[-1])
    # recompute the forward pass, keeping P for the backward
    s = Q @ np.swapaxes(K, -1, -2) * scale                   # (..., T, d_k) @ (..., d_k, S) -> (..., T, S)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    s = s - s.max(axis=-1, keepdims=True)
    P = np.exp(s)
    P = P / P.sum(axis=-1, keepdims=True)                    # (..., T, S)
    # out = P @ V
    dV = np.swapaxes(P, -1, -2) @ dout                       # (..., S, T) @ (..., T, d_v) -> (..., S, d_v)
    dP = dout @ np.swapaxes(V, -1, -2)                       # (..., T, d_v) @ (..., d_v, S) -> (..., T, S)
    # softmax backward, one row (one query) at a time
    dS = P * (dP - (dP * P).sum(axis=-1, keepdims=True))     # (..., T, S)
    # s = scale * Q Kᵀ
    dQ = dS @ K * scale                                      # (..., T, S) @ (..., S, d_k) -> (..., T, d_k)
    dK = np.swapaxes(dS, -1, -2) @ Q * scale                 # (..., S, T) @ (..., T, d_k) -> (..., S, d_k)
    return dQ, dK, dV
    ### END SOLUTION
