"""Exercise 09 · sinusoidal positional encoding (Vaswani et al., 2017).
Points: 5 (ready after notebook 05).

Attention itself ignores order; adding a position-dependent vector to each token fixes that.
Allowed: NumPy and the Python standard library; nothing from tinyattn (check a gradient with your
own finite differences). No exercise may import torch, tensorflow, jax, scipy.special or the grader
(tinyattn.grading).
Grade yourself with:  tinyattn grade --only ex09
"""
import numpy as np


def sinusoidal_encoding(T: int, d_model: int) -> np.ndarray:
    """The (T, d_model) table PE of the original Transformer (d_model even).

    Math, for position pos in [0, T) and i in [0, d_model / 2):
        PE[pos, 2i]     = sin(pos / 10000^(2i / d_model))
        PE[pos, 2i + 1] = cos(pos / 10000^(2i / d_model))
    Even columns hold sines, odd columns cosines, sharing one frequency per pair.

    Shapes:
        returns: (T, d_model) float array; row 0 is [0, 1, 0, 1, ...]

    Hints:
        * Build pos as a column (T, 1) and the even indices 2i as a row: broadcasting makes the grid.
        * pe[:, 0::2] selects the even columns, pe[:, 1::2] the odd ones.
    """
    raise NotImplementedError("ex09: implement sinusoidal_encoding")
