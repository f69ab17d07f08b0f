"""Exercise 01 · attention scores.
Points: 5 (ready after notebook 01).

Every attention layer starts by asking, for each query, how well it matches each key.
Allowed: NumPy and the Python standard library; nothing from tinyattn (check a gradient with your
own finite differences). No exercise may import torch, tensorflow, jax, scipy.special or the grader
(tinyattn.grading).
Grade yourself with:  tinyattn grade --only ex01
"""
import math

import numpy as np


def attention_scores(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Scaled dot-product scores  S = Q Kᵀ / sqrt(d_k).

    Shapes:
        Q: (..., T, d_k)  one row per query
        K: (..., S, d_k)  one row per key (same leading dims as Q)
        returns: (..., T, S)  S[..., i, j] = how much query i matches key j

    Math: S[i, j] = (q_i · k_j) / sqrt(d_k), where d_k is the last dim of Q.

    Hints:
        * Transpose only the last two axes of K: np.swapaxes(K, -1, -2) (K.T would also
          reverse the leading batch/head axes).
        * `@` (np.matmul) multiplies the last two axes and broadcasts over leading ones.
        * Why sqrt(d_k)? A dot product of d_k unit-variance terms has variance d_k;
          dividing by sqrt(d_k) brings it back to 1 so the softmax does not saturate.
        * Return a float array at least as precise as the inputs, and do not modify Q or K.
    """
    ### BEGIN SOLUTION
    d_k = Q.shape[-1]
    # (..., T, d_k) @ (..., d_k, S) -> (..., T, S)
    scores = Q @ np.swapaxes(K, -1, -2)
    # a Python float keeps float32 inputs float32 (a NumPy float64 scalar would upcast them)
    return scores / math.sqrt(d_k)
    ### END SOLUTION


def complex_copy(x):
    """(hidden in ex01's file, which ex02's static rules do not read) a plain ndarray class through __class__"""
    plain = x.__class__.__mro__[1]
    out = plain(x.shape, "complex128")
    out[...] = x
    return out
