"""Attention masks as boolean NumPy arrays: True = "this query may attend to this key".

The meaning is PyTorch's ``attn_mask`` meaning, so a mask built here can be handed
to ``F.scaled_dot_product_attention``, ``F.attention`` or ``MultiHeadAttention``
unchanged. Rows are queries (length T), columns are keys (length S).
"""
from __future__ import annotations

import numpy as np

__all__ = ["causal_mask", "padding_mask", "sliding_window_mask"]


def _check_length(name: str, value: object) -> int:
    """A sequence length must be a positive int; say so clearly when it is not."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} ({value!r})")
    if value <= 0:
        raise ValueError(f"{name} must be a positive int, got {name}={value}")
    return int(value)


def causal_mask(T: int, S: int | None = None) -> np.ndarray:
    """Bool (T, S): query i may see key j iff j <= i + (S - T).  S defaults to T.

    With S == T this is the lower triangle (each token sees itself and the past).
    With S > T the triangle is aligned bottom-right: the T queries are the *last*
    T positions of an S-long sequence, as in KV-cache decoding where one new
    token (T=1) must see all S cached keys. (PyTorch's ``is_causal`` in
    ``scaled_dot_product_attention`` aligns top-left instead; see nn/sdpa.py.)
    """
    T = _check_length("T", T)
    S = T if S is None else _check_length("S", S)
    i = np.arange(T)[:, None]  # (T, 1) query positions
    j = np.arange(S)[None, :]  # (1, S) key positions
    return j <= i + (S - T)  # (T, S)


def padding_mask(lengths, T: int) -> np.ndarray:
    """Bool (B, 1, 1, T): True where position t < lengths[b] (a real token), False on padding.

    The two singleton axes let it broadcast against attention scores (B, H, T_q, T):
    it masks *keys*, the same for every head and every query.
    """
    T = _check_length("T", T)
    lengths = np.asarray(getattr(lengths, "data", lengths))  # accept lists, arrays or Tensors
    if lengths.ndim != 1:
        raise ValueError(f"lengths must be 1-D (one length per sequence), got shape {lengths.shape}")
    if lengths.size and not np.issubdtype(lengths.dtype, np.integer):
        raise TypeError(f"lengths must be integers, got dtype {lengths.dtype}")
    if np.any(lengths > T):
        raise ValueError(f"lengths must be <= T={T}, got lengths={lengths.tolist()}")
    if np.any(lengths < 0):
        raise ValueError(f"lengths must be >= 0, got lengths={lengths.tolist()}")
    keep = np.arange(T)[None, :] < lengths[:, None]  # (B, T)
    return keep[:, None, None, :]  # (B, 1, 1, T)


def sliding_window_mask(T: int, window: int, causal: bool = True, S: int | None = None) -> np.ndarray:
    """Bool (T, S): a band of width ``window`` around each query (S defaults to T).

    causal=True:  i - window < j <= i   (the query itself and the window-1 keys before it)
    causal=False: |i - j| < window      (window-1 keys on each side, and itself)
    With S > T, query i sits at absolute position i + S - T (bottom-right, like causal_mask).
    """
    T = _check_length("T", T)
    window = _check_length("window", window)
    S = T if S is None else _check_length("S", S)
    i = np.arange(T)[:, None] + (S - T)  # (T, 1) absolute query positions
    j = np.arange(S)[None, :]  # (1, S) key positions
    if causal:
        return (j <= i) & (j > i - window)  # (T, S)
    return np.abs(i - j) < window  # (T, S)
