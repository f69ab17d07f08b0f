"""Exercise 07 · splitting channels into heads and merging them back.
Points: 5 in 2 parts, each scored on its own: split_heads 3 (after notebook 05), merge_heads 2 (after
notebook 05).

Allowed: NumPy and the Python standard library; nothing from tinyattn (check a gradient with your
own finite differences). No exercise may import torch, tensorflow, jax, scipy.special or the grader
(tinyattn.grading).
Grade yourself with:  tinyattn grade --only ex07
"""
import numpy as np


def split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """(B, T, C) -> (B, H, T, d_k) with H = n_heads and d_k = C // H.

    Head h owns channels [h * d_k, (h + 1) * d_k) of every token:
        out[b, h, t, :] == x[b, t, h * d_k:(h + 1) * d_k]

    Raise ValueError (naming C and n_heads) when C is not divisible by n_heads.

    Hints:
        * reshape to (B, T, H, d_k) first: that only cuts each token's channels into H pieces.
        * then transpose(0, 2, 1, 3) so each head is a sequence of T tokens.
        * reshape straight to (B, H, T, d_k) would fill heads with pieces of DIFFERENT tokens.
    """
    raise NotImplementedError("ex07: implement split_heads")


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(B, H, T, d_k) -> (B, T, H * d_k), the exact inverse of split_heads.

    out[b, t, h * d_k:(h + 1) * d_k] == x[b, h, t, :]

    Hint: undo the transpose first, then the reshape.
    """
    raise NotImplementedError("ex07: implement merge_heads")
