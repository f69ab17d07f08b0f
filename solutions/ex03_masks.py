"""Exercise 03 · causal masks and how to apply them.
Points: 5 in 2 parts, each scored on its own: causal_mask 2 (after notebook 04), apply_mask 3 (after
notebook 04).

Convention (as in PyTorch's attn_mask): a boolean mask is True where a query MAY attend.
Allowed: NumPy and the Python standard library; nothing from tinyattn (check a gradient with your
own finite differences). No exercise may import torch, tensorflow, jax, scipy.special or the grader
(tinyattn.grading).
Grade yourself with:  tinyattn grade --only ex03
"""
import numpy as np


def causal_mask(T: int) -> np.ndarray:
    """Boolean (T, T) mask, True where query i may look at key j, i.e. j <= i.

    Shapes:
        returns: (T, T) array of dtype bool; row i is query i, column j is key j.

    Example, T = 3:
        [[ True, False, False],
         [ True,  True, False],
         [ True,  True,  True]]

    Hints:
        * Position i may see itself (the diagonal is True) and the past (below it).
        * np.tril on an array of ones keeps the lower triangle; np.ones((T, T), dtype=bool).
    """
    ### BEGIN SOLUTION
    return np.tril(np.ones((T, T), dtype=bool))
    ### END SOLUTION


def apply_mask(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Return a copy of `scores` with -inf wherever `mask` is False.

    Shapes:
        scores: (..., T, S) float
        mask:   bool, broadcastable to scores (e.g. (T, S) or (B, 1, 1, S))
        returns: same shape and dtype as scores

    Math: after softmax, exp(-inf) = 0, so a masked key gets exactly zero weight.
    Filling with 0 instead would NOT hide the key: exp(0) = 1 is a perfectly normal weight.

    Hints:
        * np.where(mask, scores, -np.inf) keeps scores where the mask is True.
        * Do not modify `scores` in place (scores[~mask] = ... changes the caller's array).
    """
    ### BEGIN SOLUTION
    # np.where broadcasts the mask and builds a new array; the caller's scores stay intact
    return np.where(mask, scores, np.array(-np.inf, dtype=scores.dtype))
    ### END SOLUTION
