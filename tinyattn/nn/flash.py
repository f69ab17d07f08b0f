"""FlashAttention in NumPy: exact attention without ever holding the (T, S) score matrix.

Forward (Dao et al. 2022, Algorithm 1): walk over tiles of queries and, inside, tiles of keys. Keep
for each query row a running max ``m`` and a running sum ``l`` of exp(score - m); when a new tile
raises the max, rescale what was summed so far by exp(m_old - m_new). This *online softmax* gives the
exact softmax after the last tile. Save only the output O and each row's logsumexp L = m + log(l).

Backward (FlashAttention-2 style): recompute each tile's probabilities from Q, K and L
(P = exp(S - L), no max or sum needed), and use D = rowsum(dO * O) for the softmax backward.
Peak memory is O((T + S) d + block^2) instead of O(T S).

NumPy cannot fuse a tile's steps into one kernel, so each tile costs a handful of Python-level calls:
for short sequences that overhead makes this slower than ``scaled_dot_product_attention``. For long
ones the tiles stay in the CPU cache and causal tiles above the diagonal are skipped, so it comes
close (benchmarks/RESULTS.md, T=8192, d=64, non-causal fwd+bwd: 1.8x the blocked
``scaled_dot_product_attention``'s time with 64-wide tiles, 1.1x with 256-wide). The point is the
memory, and the algorithm, which is what runs on GPUs.
"""
from __future__ import annotations

import numpy as np

from .. import checks
from ..tensor import Function, Tensor, _check_all_masked, get_rng
from ..masks import check_rows
from .sdpa import _check_qkv, _default_scale

__all__ = ["flash_attention"]

_NEG_INF = -np.inf


def _band_mask(i0: int, i1: int, j0: int, j1: int, lo: float, hi: float) -> np.ndarray | None:
    """Bool (i1-i0, j1-j0) for one tile: True where lo <= j - i <= hi. None if the whole tile is visible."""
    if j1 - 1 - i0 <= hi and j0 - (i1 - 1) >= lo:
        return None  # every (i, j) of the tile is inside the band
    diff = np.arange(j0, j1)[None, :] - np.arange(i0, i1)[:, None]  # (Br, Bc): j - i
    return (diff >= lo) & (diff <= hi)


def _tile_visible(i0: int, i1: int, j0: int, j1: int, lo: float, hi: float) -> bool:
    """False if no (i, j) of the tile is inside the band (the tile can be skipped entirely)."""
    return j0 - (i1 - 1) <= hi and (j1 - 1) - i0 >= lo


def _dropout_tile(seed: int, i0: int, j0: int, shape: tuple, p: float, dtype) -> np.ndarray:
    """The same keep/(1-p) tile in forward and backward: regenerated from (seed, i0, j0), never stored."""
    rng = np.random.default_rng((seed, i0, j0))
    return (rng.random(shape, dtype=dtype) >= p) / np.asarray(1 - p, dtype)


class _FlashAttention(Function):
    """O = softmax(Q K^T s, band/mask) V in tiles;  backward recomputes P = exp(Q K^T s - L) per tile

    Query i may see key j when lo <= j - i <= hi (causal: hi = S - T or 0; sliding window: lo too) and
    ``keep[..., i, j]`` (an optional bool mask broadcastable to (..., T, S), e.g. key padding).
    """

    @staticmethod
    def forward(ctx, q, k, v, scale, block_size, lo=-np.inf, hi=np.inf, keep=None, dropout_p=0.0):
        T, S, B = q.shape[-2], k.shape[-2], block_size
        batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
        seed = int(get_rng().integers(2**62)) if dropout_p > 0 else 0
        o = np.empty((*batch, T, v.shape[-1]), dtype=q.dtype)  # (..., T, d_v)
        lse = np.empty((*batch, T, 1), dtype=q.dtype)  # (..., T, 1): logsumexp of each score row
        qs = q * np.asarray(scale, dtype=q.dtype)  # scaled once here, not in every tile: (q s) k^T = (q k^T) s
        kt = k.swapaxes(-1, -2)  # (..., d, S): a view, taken once rather than per tile
        for i0 in range(0, T, B):
            i1 = min(i0 + B, T)
            qi = qs[..., i0:i1, :]  # (..., Br, d)
            m = np.full((*batch, i1 - i0, 1), _NEG_INF, dtype=q.dtype)  # running row max
            l = np.zeros((*batch, i1 - i0, 1), dtype=q.dtype)  # running sum of exp(s - m)
            acc = np.zeros((*batch, i1 - i0, v.shape[-1]), dtype=q.dtype)  # running sum of exp(s - m) V
            for j0 in range(0, S, B):
                j1 = min(j0 + B, S)
                if not _tile_visible(i0, i1, j0, j1, lo, hi):
                    continue  # e.g. above the causal diagonal: every score is -inf, skip the work
                s = _tile_scores(qi, kt, i0, i1, j0, j1, lo, hi, keep)  # (..., Br, Bc)
                m_new = np.maximum(m, s.max(axis=-1, keepdims=True))  # (..., Br, 1)
                # A row that has seen no visible key yet has m_new = -inf; use 0 so exp(-inf - 0) = 0, not NaN.
                m_safe = np.where(m_new == _NEG_INF, 0, m_new)
                s -= m_safe
                p = np.exp(s, out=s)  # (..., Br, Bc), <= 1; in place: the tile's scores are not needed again
                alpha = np.exp(m - m_safe)  # (..., Br, 1): rescales the old sums to the new max
                l *= alpha
                l += p.sum(axis=-1, keepdims=True)
                if dropout_p > 0:
                    p *= _dropout_tile(seed, i0, j0, p.shape, dropout_p, p.dtype)
                acc *= alpha
                acc += p @ v[..., j0:j1, :]  # (..., Br, Bc) @ (..., Bc, d_v) -> (..., Br, d_v)
                m = m_new
            if not l.all():  # l >= 1 for a row with any visible key (its max contributes exp(0) = 1)
                dead = np.zeros((*batch, T), dtype=bool)
                dead[..., i0:i1] = l[..., 0] == 0
                check_rows(dead, (*batch, T, S))
            # NaN or +inf in a score row: the same error as every other softmax, naming the row
            _check_all_masked(m, -1, "flash_attention", first_row=i0)
            o[..., i0:i1, :] = acc / l  # (..., Br, d_v)
            lse[..., i0:i1, :] = m + np.log(l)  # (..., Br, 1)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.cfg = (scale, block_size, lo, hi, keep, dropout_p, seed)
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        scale, B, lo, hi, keep, dropout_p, seed = ctx.cfg
        T, S = q.shape[-2], k.shape[-2]
        batch = o.shape[:-2]
        D = (do * o).sum(axis=-1, keepdims=True)  # (..., T, 1): rowsum(dO * O) = rowsum(dP * P)
        qs = q * np.asarray(scale, dtype=q.dtype)  # the forward's scaled queries
        kt = k.swapaxes(-1, -2)  # (..., d, S)
        dq = np.zeros((*batch, T, q.shape[-1]), dtype=q.dtype)  # (..., T, d)
        dk = np.zeros((*batch, S, k.shape[-1]), dtype=q.dtype)  # (..., S, d)
        dv = np.zeros((*batch, S, v.shape[-1]), dtype=q.dtype)  # (..., S, d_v)
        for j0 in range(0, S, B):  # outer loop over key tiles: dK_j and dV_j are finished after one pass
            j1 = min(j0 + B, S)
            kj, vjt = k[..., j0:j1, :], v[..., j0:j1, :].swapaxes(-1, -2)  # (..., Bc, d), (..., d_v, Bc)
            for i0 in range(0, T, B):
                i1 = min(i0 + B, T)
                if not _tile_visible(i0, i1, j0, j1, lo, hi):
                    continue
                qi, doi = q[..., i0:i1, :], do[..., i0:i1, :]  # (..., Br, d), (..., Br, d_v)
                s = _tile_scores(qs[..., i0:i1, :], kt, i0, i1, j0, j1, lo, hi, keep)  # (..., Br, Bc)
                s -= lse[..., i0:i1, :]
                p = np.exp(s, out=s)  # (..., Br, Bc): the forward's softmax, recomputed (in place)
                dp = doi @ vjt  # (..., Br, d_v) @ (..., d_v, Bc) -> (..., Br, Bc)
                if dropout_p > 0:
                    mask = _dropout_tile(seed, i0, j0, p.shape, dropout_p, p.dtype)
                    dv[..., j0:j1, :] += (p * mask).swapaxes(-1, -2) @ doi  # (..., Bc, Br) @ (..., Br, d_v)
                    dp *= mask
                else:
                    dv[..., j0:j1, :] += p.swapaxes(-1, -2) @ doi  # (..., Bc, Br) @ (..., Br, d_v)
                dp -= D[..., i0:i1, :]  # softmax backward, in place: dS = P (dP - D)
                dp *= p
                dq[..., i0:i1, :] += dp @ kj  # (..., Br, Bc) @ (..., Bc, d) -> (..., Br, d)
                dk[..., j0:j1, :] += dp.swapaxes(-1, -2) @ qi  # (..., Bc, Br) @ (..., Br, d)
        dq *= scale  # s = (q k^T) scale: the scale once on each sum, not on every tile's part of it
        dk *= scale
        return dq, dk, dv


def _tile_scores(qi, kt, i0, i1, j0, j1, lo, hi, keep) -> np.ndarray:
    """Scores of one tile (``qi`` already scaled, ``kt`` = k^T (..., d, S)), -inf where the band or ``keep``
    forbids: (..., Br, Bc)."""
    s = qi @ kt[..., j0:j1]  # (..., Br, d) @ (..., d, Bc) -> (..., Br, Bc)
    band = _band_mask(i0, i1, j0, j1, lo, hi)  # (Br, Bc) or None
    if band is not None:
        s = np.where(band, s, _NEG_INF)
    if keep is not None:
        # keep broadcasts to (..., T, S); a size-1 axis (e.g. a key-padding mask's query axis) is not sliced
        ki = keep[..., i0:i1, :] if keep.shape[-2] != 1 else keep
        kij = ki[..., j0:j1] if keep.shape[-1] != 1 else ki
        s = np.where(kij, s, _NEG_INF)
    return s


def _flash(q: Tensor, k: Tensor, v: Tensor, scale: float, block_size: int = 64, lo: float = -np.inf,
           hi: float = np.inf, keep: np.ndarray | None = None, dropout_p: float = 0.0) -> Tensor:
    """The op with every option (Attention uses the band for bottom-right causal and windows)."""
    if keep is not None and keep.ndim < 2:
        keep = keep.reshape((1,) * (2 - keep.ndim) + keep.shape)  # (S,) -> (1, S)
    return _FlashAttention.apply(q, k, v, scale=scale, block_size=block_size, lo=lo, hi=hi, keep=keep,
                                 dropout_p=dropout_p)


def flash_attention(q, k, v, is_causal: bool = False, scale: float | None = None, block_size: int = 64) -> Tensor:
    """softmax(q k^T * scale) v computed in (block_size x block_size) tiles -> (..., T, d_v).

    q (..., T, d_k), k (..., S, d_k), v (..., S, d_v), any leading dims; T and S need not be multiples
    of block_size. Same numbers as ``scaled_dot_product_attention`` (to rounding), including
    ``is_causal``, which is aligned top-left like PyTorch's sdpa (query i sees keys j <= i). Note the
    flash-attn library (>= 2.1) aligns bottom-right instead when T != S; Attention's KV-cache
    path asks for bottom-right explicitly. Tiles entirely above the causal diagonal are skipped.
    Memory: no (T, S) array in forward or backward; the backward recomputes each tile.
    NaN or +inf in a row of scores raises ValueError naming the row, as scaled_dot_product_attention does.
    """
    q, k, v, _ = _check_qkv(q, k, v)
    block_size = checks.positive_int("block_size", block_size, "flash_attention")
    hi = 0 if is_causal else np.inf  # j - i <= 0: top-left causal
    return _flash(q, k, v, scale=_default_scale(q.shape[-1], scale), block_size=block_size, hi=hi)
