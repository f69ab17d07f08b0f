"""Attention masks as boolean NumPy arrays: True = "this query may attend to this key".

The meaning is PyTorch's ``attn_mask`` meaning, so a mask built here can be handed
to ``F.scaled_dot_product_attention``, ``F.attention`` or ``Attention``
unchanged. Rows are queries (length T), columns are keys (length S).

This module is the one place that says what a mask means:

* ``as_keep``: a caller's mask (bool, or 0/1 numbers) as a checked bool array;
* ``band``: the causal / sliding-window structure as limits ``lo <= j - i <= hi``, with the
  bottom-right alignment (the T queries are the last T of S positions) written once;
* ``Keep``: a checked mask AND a band, the form every attention backend takes;
* ``check_rows``: the refusal of a query row with no key left (its softmax would be 0/0);
* ``additive_blocked``: the other meaning, that of PyTorch's ``nn.MultiheadAttention`` (True = may
  NOT attend, a float mask is added to the scores), as the array to add.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from . import checks
from .tensor import Tensor

__all__ = ["causal_mask", "padding_mask", "sliding_window_mask", "as_keep", "band", "check_rows", "Keep",
           "additive_blocked"]


# ----------------------------------------------------------------------------------------------
# The structural masks: a band of allowed offsets j - i.
# ----------------------------------------------------------------------------------------------
def band(T: int, S: int, causal: bool = False, window: int | None = None) -> tuple[float, float]:
    """The limits (lo, hi) such that query i may see key j iff lo <= j - i <= hi (+-inf: no limit).

    Query i sits at absolute position i + (S - T): with S > T the T queries are the *last* T
    positions of an S-long sequence (KV-cache decoding), so the band is aligned bottom-right.
    causal: keys up to the query's own position (j - i <= S - T).
    window: keys within ``window`` positions: window-1 before it (and, when not causal, window-1 after).
    """
    off = S - T  # query i is at absolute position i + off
    lo = -math.inf if window is None else off - window + 1
    hi = off if causal else (math.inf if window is None else off + window - 1)
    return lo, hi


def band_mask(T: int, S: int, lo: float, hi: float) -> np.ndarray:
    """Bool (T, S): True where lo <= j - i <= hi."""
    diff = np.arange(S)[None, :] - np.arange(T)[:, None]  # (T, S): j - i
    return (diff >= lo) & (diff <= hi)


def causal_mask(T: int, S: int | None = None) -> np.ndarray:
    """Bool (T, S): query i may see key j iff j <= i + (S - T).  S defaults to T.

    With S == T this is the lower triangle (each token sees itself and the past).
    With S > T the triangle is aligned bottom-right: the T queries are the *last*
    T positions of an S-long sequence, as in KV-cache decoding where one new
    token (T=1) must see all S cached keys. (PyTorch's ``is_causal`` in
    ``scaled_dot_product_attention`` aligns top-left instead; see nn/sdpa.py.)
    """
    T = checks.positive_int("T", T, "causal_mask")
    S = T if S is None else checks.positive_int("S", S, "causal_mask")
    return band_mask(T, S, *band(T, S, causal=True))  # (T, S)


def sliding_window_mask(T: int, window: int, causal: bool = True, S: int | None = None) -> np.ndarray:
    """Bool (T, S): a band of width ``window`` around each query (S defaults to T).

    causal=True:  i - window < j <= i   (the query itself and the window-1 keys before it)
    causal=False: |i - j| < window      (window-1 keys on each side, and itself)
    With S > T, query i sits at absolute position i + S - T (bottom-right, like causal_mask).
    """
    T = checks.positive_int("T", T, "sliding_window_mask")
    window = checks.positive_int("window", window, "sliding_window_mask")
    S = T if S is None else checks.positive_int("S", S, "sliding_window_mask")
    return band_mask(T, S, *band(T, S, causal=causal, window=window))  # (T, S)


def padding_mask(lengths, T: int) -> np.ndarray:
    """Bool (B, 1, 1, T): True where position t < lengths[b] (a real token), False on padding.

    The two singleton axes let it broadcast against attention scores (B, H, T_q, T):
    it masks *keys*, the same for every head and every query.
    """
    T = checks.positive_int("T", T, "padding_mask")
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


# ----------------------------------------------------------------------------------------------
# A caller's mask, checked once.
# ----------------------------------------------------------------------------------------------
def mask_array(mask, name: str, full: tuple, dims: str = "the attention scores' shape (..., T, S)") -> np.ndarray:
    """The mask's array, after checking it broadcasts to the scores' shape ``full`` (``dims`` names it)."""
    m = np.asarray(mask._data if isinstance(mask, Tensor) else mask)
    try:
        ok = np.broadcast_shapes(m.shape, full) == full
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"{name} has shape {m.shape}, which does not broadcast to {dims} = {full}")
    return m


def as_keep(mask, full: tuple, name: str = "mask", dims: str = "the attention scores' shape (..., T, S)") -> np.ndarray:
    """A bool or 0/1 mask, broadcastable to the scores' shape ``full``, as bool: True/1 = may attend.

    Any other number is refused: PyTorch's other convention is an *additive* float mask (0 = attend,
    -inf = blocked), and reading that one as 0/1 would silently swap attended and blocked keys.
    """
    m = mask_array(mask, name, full, dims)
    if m.dtype == bool:
        return m
    if not (np.issubdtype(m.dtype, np.integer) or np.issubdtype(m.dtype, np.floating)):
        raise TypeError(f"{name} must be bool or 0/1 numbers (True/1 = attend), got dtype {m.dtype}")
    odd = m[(m != 0) & (m != 1)]
    if odd.size:
        raise ValueError(f"{name} must be bool or 0/1 (True/1 = attend), but it holds {odd.flat[0].item()}: an "
                         "additive float mask (0 = attend, -inf = blocked) means the opposite here. Pass the "
                         "bool mask (True = attend), or give the additive one to "
                         "F.scaled_dot_product_attention(attn_mask=...)")
    return m != 0


def additive_blocked(mask, name: str, dtype) -> np.ndarray | None:
    """``nn.MultiheadAttention``'s mask meaning as an array to add to the scores: a bool mask's True
    (may NOT attend) becomes -inf, a float mask is added as it is. (The opposite of ``as_keep``'s bool.)"""
    if mask is None:
        return None
    m = np.asarray(mask._data if isinstance(mask, Tensor) else mask)
    if m.dtype == np.bool_:
        return np.where(m, -np.inf, 0.0).astype(dtype)
    if m.dtype.kind != "f":
        raise TypeError(f"MultiheadAttention: {name} must be bool (True = may NOT attend) or float (added to the "
                        f"scores), got dtype {m.dtype}")
    return m.astype(dtype, copy=False)


def check_rows(dead: np.ndarray, full: tuple) -> None:
    """Raise if any query row has no key left: its softmax would be 0/0 = NaN.

    ``dead`` is bool, broadcastable to ``full[:-1]`` = (..., T): True where every key is masked.
    """
    if not dead.any():
        return
    rows = np.argwhere(np.broadcast_to(dead, full[:-1]))
    shown = [tuple(int(i) for i in r) for r in rows[:5]]
    more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
    raise ValueError(f"attention rows {shown}{more} have every key masked: softmax over no keys is 0/0 = NaN "
                     f"(rows are indices into (..., T) = {full[:-1]}). Every query needs at least one key it may "
                     "attend to: check the mask, the padding lengths, or a causal mask with more queries than keys")


class Keep(NamedTuple):
    """Which keys each query may attend to: ``mask`` (bool, broadcastable to (..., T, S), or None for
    all) AND the band ``lo <= j - i <= hi``. Every attention backend takes this one form; the flash
    backend uses the band as it is (no (T, S) array), the others ask for ``dense()``."""
    mask: np.ndarray | None = None
    lo: float = -math.inf
    hi: float = math.inf

    def dense(self, T: int, S: int) -> np.ndarray | None:
        """The whole rule as one bool array (..., T, S), or None if every key is visible."""
        if self.lo == -math.inf and self.hi == math.inf:
            return self.mask
        b = band_mask(T, S, self.lo, self.hi)  # (T, S)
        return b if self.mask is None else self.mask & b


def keep(mask, full: tuple, causal: bool = False, window: int | None = None,
         dims: str = "(B, H, T, S)") -> Keep:
    """A caller's mask and the causal / window band, checked once, as the ``Keep`` every backend takes.

    Raises if a query row is left with no key (checked here, on the dense rule, unless only a band
    is given: a band alone leaves every row a key when ``causal`` or ``window`` is set).
    """
    T, S = full[-2], full[-1]
    k = Keep(None if mask is None else as_keep(mask, full, "mask", dims), *band(T, S, causal, window))
    d = k.dense(T, S)
    if d is not None and (k.mask is not None or T > S):
        check_rows(~d.any(axis=-1), full)
    return k
