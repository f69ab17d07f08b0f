"""Exercise 11 · grouped-query attention (GQA): fewer key/value heads than query heads.
Points: 10 in 2 parts, each scored on its own: repeat_kv 3 (after notebook 08), gqa_attention 7 (after
notebook 08).

Allowed: NumPy and the Python standard library; nothing from tinyattn (check a gradient with your
own finite differences). No exercise may import torch, tensorflow, jax, scipy.special or the grader
(tinyattn.grading).
Grade yourself with:  tinyattn grade --only ex11
"""
import math

import numpy as np


def repeat_kv(k: np.ndarray, n_rep: int) -> np.ndarray:
    """(B, H_kv, T, d) -> (B, H_kv * n_rep, T, d), each kv head repeated n_rep times in a row.

    Query heads are grouped: heads [g * n_rep, (g + 1) * n_rep) all share kv head g, so
        out[:, h] == k[:, h // n_rep]
    That is torch.repeat_interleave(k, n_rep, dim=1), NOT k.repeat(1, n_rep, 1, 1) (np.tile),
    which would give out[:, h] == k[:, h % H_kv].

    Hint: np.repeat(k, n_rep, axis=1).
    """
    raise NotImplementedError("ex11: implement repeat_kv")


def gqa_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Grouped-query attention without a mask: softmax(q kᵀ / sqrt(d)) v, sharing kv heads.

    Shapes:
        q: (B, H, T, d), k: (B, H_kv, S, d), v: (B, H_kv, S, d_v), H divisible by H_kv
        returns: (B, H, T, d_v)

    H_kv = H is ordinary multi-head attention; H_kv = 1 is multi-query attention (MQA).

    Hints:
        * n_rep = H // H_kv; expand k and v with repeat_kv, then it is ex04's attention.
        * Stable softmax over the keys (last axis), scaled by 1/sqrt(d).
    """
    raise NotImplementedError("ex11: implement gqa_attention")
