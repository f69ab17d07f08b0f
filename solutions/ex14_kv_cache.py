"""Exercise 14 · one decoding step with a key/value cache.
Points: 10 (ready after notebook 08).

When generating token by token, the keys and values of earlier tokens never change: keep them
in a cache and only compute the new token's q, k, v.
Allowed: NumPy and the Python standard library; nothing from tinyattn (check a gradient with your
own finite differences). No exercise may import torch, tensorflow, jax, scipy.special or the grader
(tinyattn.grading).
Grade yourself with:  tinyattn grade --only ex14
"""
import math

import numpy as np


def decode_step(q_t: np.ndarray, k_t: np.ndarray, v_t: np.ndarray,
                cache: tuple[np.ndarray, np.ndarray] | None
                ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Attend from the newest token to every token so far; return (out_t, new_cache).

    Shapes:
        q_t, k_t: (B, H, 1, d), v_t: (B, H, 1, d_v)   the new token's query, key, value
        cache: None before the first step, else (K, V) with K (B, H, t, d), V (B, H, t, d_v)
        returns: out_t (B, H, 1, d_v) and the new cache (K', V') of length t + 1, where
                 K' = K followed by k_t along the time axis (axis 2), and likewise V'.

    Math: out_t = softmax(q_t K'ᵀ / sqrt(d)) V'. No mask is needed: the cache only holds the
    past and the present, so step by step this equals causal attention over the sequence.

    Hints:
        * np.concatenate([K, k_t], axis=2). Return the NEW cache: the caller passes it back next step.
        * Do not modify the arrays of the old cache.
        * Subtract the max score before exp, as in ex04: the grader also tries scores in the thousands.
    """
    ### BEGIN SOLUTION
    if cache is None:
        K, V = k_t, v_t
    else:
        K = np.concatenate([cache[0], k_t], axis=2)        # (B, H, t, d) + (B, H, 1, d) -> (B, H, t+1, d)
        V = np.concatenate([cache[1], v_t], axis=2)        # (B, H, t+1, d_v)
    s = q_t @ np.swapaxes(K, -1, -2) / math.sqrt(q_t.shape[-1])   # (B, H, 1, d) @ (B, H, d, t+1) -> (B, H, 1, t+1)
    s = s - s.max(axis=-1, keepdims=True)
    w = np.exp(s)
    w = w / w.sum(axis=-1, keepdims=True)
    out = w @ V                                             # (B, H, 1, t+1) @ (B, H, t+1, d_v) -> (B, H, 1, d_v)
    return out, (K, V)
    ### END SOLUTION
