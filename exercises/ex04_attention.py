"""Exercise 04 · scaled dot-product attention, forward.
Points: 10 in 2 parts, each scored on its own: attention 6 (after notebook 01), masks 4 (after notebook
04).

Allowed: NumPy and the Python standard library; nothing from tinyattn (check a gradient with your
own finite differences). No exercise may import torch, tensorflow, jax, scipy.special or the grader
(tinyattn.grading).
Grade yourself with:  tinyattn grade --only ex04
"""
import math

import numpy as np


def attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray, mask: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """out = softmax(Q Kᵀ / sqrt(d_k), with -inf where mask is False) V, returning (out, weights).

    Shapes (any number of leading dims "...", the same for Q, K and V):
        Q: (..., T, d_k)   queries
        K: (..., S, d_k)   keys
        V: (..., S, d_v)   values (d_v may differ from d_k)
        mask: None, or bool broadcastable to (..., T, S); True = query may attend to key
        returns: out (..., T, d_v), weights (..., T, S) with every row summing to 1

    Math:
        scores  = Q Kᵀ / sqrt(d_k)                       (row i = query i, column j = key j)
        scores  = -inf where mask is False               (BEFORE the softmax)
        weights = softmax(scores) along the key axis (the last one)
        out     = weights V
    Every query must be allowed at least one key (a row of all -inf has no softmax).

    Hints:
        * Reuse your ideas from ex01-ex03, but write them out here: this file must stand alone.
        * Subtract the row max before exp, or logits around 1000 give inf/inf = nan.
        * Masking after the softmax leaves rows that no longer sum to 1.
        * Do not modify Q, K, V or mask.
    """
    raise NotImplementedError("ex04: implement attention")
