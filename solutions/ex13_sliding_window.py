"""Exercise 13 · sliding-window (local) causal attention masks.
Points: 5 (ready after notebook 04).

Allowed: NumPy and the Python standard library; nothing from tinyattn (check a gradient with your
own finite differences). No exercise may import torch, tensorflow, jax, scipy.special or the grader
(tinyattn.grading).
Grade yourself with:  tinyattn grade --only ex13
"""
import numpy as np


def sliding_window_mask(T: int, window: int) -> np.ndarray:
    """Boolean (T, T) mask: query i may attend key j iff i - window < j <= i.

    Each query sees itself and the window - 1 tokens before it (fewer near the start);
    any window >= T (also one far larger than T) gives the ordinary causal mask. True = may
    attend (as in ex03).

    Example, T = 4, window = 2:
        [[ True, False, False, False],
         [ True,  True, False, False],
         [False,  True,  True, False],
         [False, False,  True,  True]]

    Raise ValueError (naming window) if window < 1.

    Hint: compare a column of query positions i (T, 1) with a row of key positions j (1, T).
    """
    ### BEGIN SOLUTION
    if window < 1:
        raise ValueError(f"window must be >= 1, got window={window}")
    i = np.arange(T)[:, None]                 # (T, 1) query positions
    j = np.arange(T)[None, :]                 # (1, T) key positions
    # causal (j <= i) and fewer than `window` steps back: `window` keys including itself
    return (j <= i) & (i - j < window)
    ### END SOLUTION
