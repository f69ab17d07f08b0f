"""Attention as functions: the readable reference, PyTorch's scaled_dot_product_attention, linear attention.

* ``attention``: softmax(q k^T / sqrt(d_k)) v written with ordinary Tensor ops, one line per step.
  Read this one first; autograd differentiates it op by op.
* ``scaled_dot_product_attention``: the same maths with PyTorch's arguments, computed by one fused
  ``Function`` (``_SDPA``) whose backward is written by hand. It does the work of the reference in
  fewer, larger NumPy calls, which is what makes Attention fast.
* ``linear_attention``: the elu(x)+1 kernel trick of Katharopoulos et al. (2020), O(T) instead of O(T^2).

Shapes: q (..., T, d_k), k (..., S, d_k), v (..., S, d_v); usually (B, H, T, d_k).
Masks mean what PyTorch means: True = "may attend".
"""
from __future__ import annotations

import math

import numpy as np

from .. import checks
from ..masks import as_keep, check_rows, mask_array
from ..fastnp import dot_last, max_down, max_keepdims, sum_down
from ..tensor import Function, Tensor, _check_all_masked, get_rng

__all__ = ["attention", "scaled_dot_product_attention", "linear_attention"]


# ----------------------------------------------------------------------------------------------
# Checks at the surface: a learner's mistake gets a sentence, not a NumPy traceback.
# ----------------------------------------------------------------------------------------------
def _as_tensor(x, name: str) -> Tensor:
    if isinstance(x, Tensor):
        t = x
    elif isinstance(x, (np.ndarray, list, tuple, float, int)):
        t = Tensor(x)
    else:
        raise TypeError(f"{name} must be a Tensor or an array, got {type(x).__name__}")
    if t.ndim < 2:
        raise ValueError(f"{name} must have at least 2 dims (..., length, features), got shape {t.shape}")
    if not np.issubdtype(t.dtype, np.floating):
        raise TypeError(f"{name} must hold floats, got dtype {t.dtype}")
    return t


def _check_qkv(q, k, v, batch: bool = True) -> tuple[Tensor, Tensor, Tensor, tuple]:
    """Wrap q, k, v as Tensors and check they fit together; return them and the (broadcast) batch shape."""
    q, k, v = _as_tensor(q, "q"), _as_tensor(k, "k"), _as_tensor(v, "v")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q has shape {q.shape} but k has shape {k.shape}: last dims must match "
                         "(each query is dotted with each key)")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k has shape {k.shape} but v has shape {v.shape}: dim -2 (the number of keys S) "
                         "must match (one value per key)")
    if k.shape[-2] == 0:
        raise ValueError(f"k has shape {k.shape}: no keys to attend to (S = 0)")
    if q.shape[-1] == 0:
        raise ValueError(f"q has shape {q.shape}: queries and keys of size d_k = 0 have no scores to compare "
                         "(and the default scale 1/sqrt(d_k) is infinite)")
    if not batch:
        return q, k, v, ()
    try:
        batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise ValueError(f"q {q.shape}, k {k.shape} and v {v.shape}: leading (batch/head) dims do not broadcast") from None
    return q, k, v, tuple(batch)


def _default_scale(d_k: int, scale: float | None) -> float:
    # Why 1/sqrt(d_k): if the entries of q and k have variance 1, the dot product q.k is a sum of d_k
    # such products and has variance d_k. Dividing by sqrt(d_k) brings the scores back to variance 1,
    # so the softmax does not saturate into a one-hot whose gradient is almost zero.
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    return checks.number("scale", scale)


# ----------------------------------------------------------------------------------------------
# The readable reference.
# ----------------------------------------------------------------------------------------------
def attention(q, k, v, mask=None, scale: float | None = None) -> tuple[Tensor, Tensor]:
    """softmax(q k^T * scale, masked) v  ->  (output (..., T, d_v), weights (..., T, S)).

    q (..., T, d_k), k (..., S, d_k), v (..., S, d_v). ``mask``: bool or 0/1, broadcastable to
    (..., T, S), True/1 = keep. ``scale`` defaults to 1/sqrt(d_k).
    """
    q, k, v, batch = _check_qkv(q, k, v)
    full = (*batch, q.shape[-2], k.shape[-2])  # (..., T, S): the shape of the scores
    keep = None
    if mask is not None:
        keep = as_keep(mask, full)  # (..., T, S) bool, True = may attend
        check_rows(~keep.any(axis=-1), full)
    return _attention(q, k, v, keep, _default_scale(q.shape[-1], scale))


def _attention(q: Tensor, k: Tensor, v: Tensor, keep: np.ndarray | None, scale: float) -> tuple[Tensor, Tensor]:
    """``attention`` on checked inputs: ``keep`` is bool (..., T, S) or None, every row with a key."""
    scores = (q @ k.transpose(-2, -1)) * scale  # (..., T, d_k) @ (..., d_k, S) -> (..., T, S)
    if keep is not None:
        scores = scores.masked_fill(~keep, float("-inf"))  # (..., T, S): exp(-inf) = 0, a masked key gets no weight
    weights = scores.softmax(dim=-1)  # (..., T, S): each row is a distribution over the S keys
    output = weights @ v  # (..., T, S) @ (..., S, d_v) -> (..., T, d_v): a weighted average of values
    return output, weights


# ----------------------------------------------------------------------------------------------
# The fused fast path.
# ----------------------------------------------------------------------------------------------
def _keeps_output(q: np.ndarray) -> bool:
    """Whether the output is saved for backward, as PyTorch 2's CPU kernels decide: its fused kernel
    (4-D inputs) keeps it, so ``y += 1`` after the call makes backward raise; its composite path
    (3-D and 2-D inputs) keeps the weights P instead, and the same write is fine. Without O, the
    softmax backward's row sums are rowsum(dP P) rather than rowsum(dO O) (equal; one (T, S) pass more)."""
    return q.ndim == 4


def _kept_inputs(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> tuple:
    """What backward reads of the inputs, as PyTorch keeps it: its fused kernel (4-D) keeps q, k and v
    themselves; its composite path keeps v and scaled copies of q and k, so a later write into q or k
    (or ``q.data = ...``) is neither refused nor seen by its backward. Here: copies of q and k."""
    return (q, k, v) if _keeps_output(q) else (q.copy(), k.copy(), v)


class _SDPA(Function):
    """O = dropout(softmax(Q K^T s + mask)) V;  dV = P^T dO, dS = P (dO V^T - rowsum(dO O)), dQ = dS K s, dK = dS^T Q s

    Positional inputs: q (..., T, d), k (..., S, d), v (..., S, d_v) and, optionally, a float ``bias``
    (..., T, S) that needs a gradient (its gradient is dS). Constants: ``keep`` (bool, True = attend) or
    ``bias`` (float, added), ``scale``, ``dropout_p``.
    """

    @staticmethod
    def forward(ctx, q, k, v, bias=None, keep=None, scale=1.0, dropout_p=0.0):
        plan = _block_plan(q, k, v, keep) if bias is None and dropout_p == 0.0 else None
        if plan is not None:  # big score arrays: the same maths, a block of matrices and query rows at a time
            e, l, o = _forward_blocked(q, k, v, keep, scale, plan)
            ctx.save_for_backward(*_kept_inputs(q, k, v), e, o if _keeps_output(q) else o.copy(), l)
            ctx.scale, ctx.block = scale, plan
            return o
        ctx.block = None
        # the scale on q (T x d) rather than on the scores (T x S): one pass over the big array fewer
        s = (q * np.asarray(scale, dtype=q.dtype)) @ np.swapaxes(k, -1, -2)  # (..., T, d) @ (..., d, S) -> (..., T, S)
        if bias is not None:
            s = s + bias if np.broadcast_shapes(s.shape, bias.shape) != s.shape else np.add(s, bias, out=s)
        if keep is not None:
            if np.broadcast_shapes(s.shape, keep.shape) != s.shape:  # a mask with more batch dims than q/k
                s = np.array(np.broadcast_to(s, np.broadcast_shapes(s.shape, keep.shape)))
            np.copyto(s, -np.inf, where=~keep)  # (..., T, S): exp(-inf) = 0 below
        # softmax along the keys, in place: p = exp(s - max) / sum(exp(s - max))
        m = max_keepdims(s, -1)  # (..., T, 1)
        _check_all_masked(m, -1, "scaled_dot_product_attention")  # NaN or +inf in a row: raise, naming it
        s -= m  # the row max cancels; subtracting it keeps exp() <= 1
        np.exp(s, out=s)
        s *= 1 / s.sum(axis=-1, keepdims=True)  # one division per row, then a multiply per entry
        p = s  # (..., T, S)
        if dropout_p > 0.0:
            # Inverted dropout on the weights: zero each with prob p, scale survivors by 1/(1-p).
            drop = (get_rng().random(p.shape, dtype=p.dtype) >= dropout_p) / np.asarray(1 - dropout_p, p.dtype)
            o = (p * drop) @ v  # (..., T, S) @ (..., S, d_v) -> (..., T, d_v)
        else:
            drop = None
            o = p @ v  # (..., T, S) @ (..., S, d_v) -> (..., T, d_v)
        ctx.save_for_backward(*_kept_inputs(q, k, v), p, o if _keeps_output(q) else None, drop)
        ctx.scale = scale
        return o

    @staticmethod
    def backward(ctx, do):
        if ctx.block is not None:
            q, k, v, e, o, l = ctx.saved_tensors
            return _backward_blocked(q, k, v, e, l, o, do, ctx.scale, ctx.block)
        q, k, v, p, o, drop = ctx.saved_tensors
        needs = ctx.needs_input_grad
        pd = p if drop is None else p * drop  # the weights that actually multiplied V
        dv = np.swapaxes(pd, -1, -2) @ do if needs[2] else None  # (..., S, T) @ (..., T, d_v) -> (..., S, d_v)
        ds = do @ np.swapaxes(v, -1, -2)  # dP: (..., T, d_v) @ (..., d_v, S) -> (..., T, S)
        if drop is not None:
            ds *= drop
        # softmax backward: dS = P (dP - rowsum(dP P)), and rowsum(dP P) = rowsum(dO O) (FlashAttention's D):
        # a (T, d_v) product instead of another (T, S) one.
        ds -= (do * o if o is not None else ds * p).sum(axis=-1, keepdims=True)  # (..., T, S) - (..., T, 1)
        ds *= p
        dq = ds @ k if needs[0] else None  # (..., T, S) @ (..., S, d) -> (..., T, d)
        dk = np.swapaxes(ds, -1, -2) @ q if needs[1] else None  # (..., S, T) @ (..., T, d) -> (..., S, d)
        if dq is not None:
            dq *= ctx.scale
        if dk is not None:
            dk *= ctx.scale
        if len(needs) == 4:  # a learnable float mask (e.g. a relative-position bias): it was added to s
            return dq, dk, dv, (ds if needs[3] else None)
        return dq, dk, dv


# Blocking for cache locality. With T = S = 2048 the scores of one head are 16 MiB: every in-place
# pass of the softmax and of its backward (max, subtract, exp, sum, divide; dP - D, * P) then
# streams them through main memory. Taking a block at a time keeps each (matrices, rows, S) block in
# the CPU cache from its matmul through the softmax to the next matmul. The numbers are the same
# up to rounding (each query row's softmax never depended on another row).
# What goes in a block: whole (T, S) matrices of the batch when they fit (T = 128: 16 of them),
# else one head and as many query rows as fit (T = 512: 512 rows, T = 2048: 128 rows). One head's
# rows, rather than a few rows of every head, keep the backward's dV += P^T dO and dK += dS^T Q
# products long in their inner dimension (the rows): OpenBLAS took twice as long for P^T dO summed
# over 8 blocks of 64 rows as for one product over all 512 rows (one thread).
# Four choices, each measured on one thread (SkylakeX kernel); the first two and the last together
# took Attention forward+backward at (B,T,d,h) = (1,2048,128,4) / (4,512,256,8) / (8,128,256,8) from
# 147 / 103 / 29.0 ms to 120 / 95 / 27.4 ms:
# * keys down the rows: a block is S^T = K Q^T (S, R), not Q K^T (R, S). With d_k = 32, OpenBLAS
#   computes (2048, 32) @ (32, 128) in 0.19 ms and (128, 32) @ (2048, 32)^T in 0.29-0.30 ms, and the
#   same holds for all six products of the forward and backward (1.14 ms against 1.42 ms a block);
#   square blocks cost the same either way. The softmax then runs down the columns (max_down, sum_down).
# * the softmax's division moves to the outputs: the block keeps E = exp(S - max), O = (E V) / L, and
#   the backward divides dO and D by L ((R, d_v) and (R, 1) arrays) instead of E: one pass over every
#   (S, R) block fewer.
# * blocks span several matrices of the batch when whole matrices fit (T = 128: 16 of them), and a
#   causal mask's row blocks stop at the last key their rows see (``_block_plan``): the nanoGPT-style
#   step of benchmarks/tutorial_styles.py (B, H, T, d_k) = (8, 4, 128, 32) spent 19.2 ms a step in
#   this op before and 14.5 ms after (torch's fused kernel: 16.5 ms).
# * E is kept as a list of blocks, not one (..., T, S) array: each block comes from malloc's heap and
#   reuses the previous step's memory, while one array over glibc's 32 MiB mmap ceiling (P at
#   (1, 4, 2048, 2048) float32 is 64 MiB) is mapped afresh each step, a page fault per 4 KiB.
_BLOCK_ELEMENTS = 1 << 18  # entries of one (matrices, rows, S) block: 1 MiB of float32. Measured at 1/4, 1/2, 1,
# 2, 4 and 8 MiB: 1 and 2 MiB were the fastest at T = 512 and 2048 (and equal to unblocked at T = 128).


def _block_plan(q, k, v, keep) -> list[tuple[tuple, slice, int]] | None:
    """The blocks, as (batch index, query rows, keys) each, when blocking pays (the scores are bigger
    than one block), else None.

    ``batch index`` is a tuple of ints and slices over the batch dims, so ``q[(*b, rows)]`` is a view
    (..., rows, d) and ``k[(*b, slice(0, keys))]`` a view (..., keys, d); no data is copied. ``keys``:
    a block needs only the keys up to the last one its rows may see (a causal mask's row i sees i + 1
    keys), so the rest are never computed: their weights would be exactly 0.
    """
    batch, T, S = q.shape[:-2], q.shape[-2], k.shape[-2]
    if math.prod(batch) * T * S <= _BLOCK_ELEMENTS or k.shape[:-2] != batch or v.shape[:-2] != batch:
        return None
    if keep is not None and (keep.ndim > q.ndim or np.broadcast_shapes(keep.shape, (*batch, T, S)) != (*batch, T, S)):
        return None  # a mask with more batch dims than q: the plain path broadcasts it
    seen = np.full(T, S)  # how many keys each query row needs: all of them...
    if keep is not None and math.prod(keep.shape[:-2]) == 1:  # ...unless one (T, S) mask holds for every matrix
        m = np.broadcast_to(keep.reshape(keep.shape[-2:]), (T, S))
        seen = S - np.argmax(m[:, ::-1], axis=-1)  # one past each row's last True (every row has one: checked)
    rows = T if T * S <= _BLOCK_ELEMENTS else max(16, _BLOCK_ELEMENTS // S)  # all of a head's rows if they fit
    if seen[0] < S:  # a causal-like mask: shorter row blocks skip more of the keys nobody sees
        rows = min(rows, max(32, T // 4))
    mats = max(1, _BLOCK_ELEMENTS // (rows * S))  # how many (T, S) matrices of the batch share a block
    return [(b, slice(i, i + rows), int(seen[i:i + rows].max())) for b in _batch_groups(batch, mats)
            for i in range(0, T, rows)]


def _batch_groups(batch: tuple, n: int):
    """Index tuples over the batch dims, each selecting up to n of its matrices as a view: the last dims
    whole while they fit, the dim before them in chunks, the dims before that one index at a time."""
    inner, j = 1, len(batch)
    while j > 0 and inner * batch[j - 1] <= n:
        j -= 1
        inner *= batch[j]
    whole = (slice(None),) * (len(batch) - j)
    if j == 0:
        return [whole]
    step = max(1, n // inner)
    return [(*outer, slice(c, c + step), *whole) for outer in np.ndindex(*batch[:j - 1])
            for c in range(0, batch[j - 1], step)]


def _forward_blocked(q, k, v, keep, scale, plan):
    """O = softmax(Q K^T scale, masked) V, one block of the plan at a time, keys down the rows.

    Returns (E, L, O): E, the list of each block's exp(S^T - max) (.., n, R), kept for the backward;
    L (..., T, 1), each query row's sum of E (the softmax's denominator); O (..., T, d_v).

    Every choice here depends on the shapes and the mask, never on the values: a query's output is
    then the same to the last bit whatever the keys it may not see hold (padding, future tokens).
    (Skipping the max when Cauchy-Schwarz bounds every score was 7% faster, but the bound reads
    every key, so garbage in a padding key changed the rounding of real tokens' outputs.)
    """
    batch, T, S = q.shape[:-2], q.shape[-2], k.shape[-2]
    qs_t = np.swapaxes(q * np.asarray(scale, dtype=q.dtype), -1, -2)  # (..., d, T): the scale on q, not on (T, S)
    if keep is not None:  # (..., S, T) view of the mask, keys down the rows like the blocks
        keep_t = np.swapaxes(np.broadcast_to(keep, (*batch, T, S)), -1, -2)
    e, row_max = [], np.empty((*q.shape[:-1], 1), dtype=np.result_type(q, k))  # (..., T, 1)
    l = np.empty_like(row_max)  # (..., T, 1)
    o = np.empty((*q.shape[:-1], v.shape[-1]), dtype=np.result_type(q, k, v))  # (..., T, d_v)
    for b, rows, n in plan:
        qo, cols, kv = (*b, rows), (*b, slice(None), rows), (*b, slice(0, n))  # rows of q/O, columns of Q^T, keys
        st = k[kv] @ qs_t[cols]  # S^T: (.., n, d) @ (.., d, R) -> (.., n, R), one column per query
        if keep is not None:
            np.copyto(st, -np.inf, where=~keep_t[(*kv, rows)])
        m = max_down(st)  # (.., 1, R): each query's largest score
        row_max[qo] = np.swapaxes(m, -1, -2)
        st -= m  # exp(s - max) <= 1: no overflow
        np.exp(st, out=st)  # E^T
        l_b = np.swapaxes(sum_down(st), -1, -2)  # (.., R, 1): the softmax's denominators
        l[qo] = l_b
        # O = P V = (E V) / L: the division on (R, d_v) outputs instead of on the (S, R) block
        o_b = np.matmul(np.swapaxes(st, -1, -2), v[kv], out=o[qo])  # (.., R, n) @ (.., n, d_v) -> (.., R, d_v)
        o_b /= l_b
        e.append(st)
    _check_all_masked(row_max, -1, "scaled_dot_product_attention")  # NaN or +inf in a row: raise, naming it
    return e, l, o


def _backward_blocked(q, k, v, e, l, o, do, scale, plan):
    """dQ, dK, dV of the blocked forward, block by block, keys down the rows like the forward's E.

    With P = E / L (row-wise): dV = P^T dO = E^T (dO / L), and dS = P (dO V^T - D) = E (dO/L V^T - D/L),
    D = rowsum(dO O): dividing the (R, d_v) rows of dO and the (R, 1) D by L replaces dividing E.
    dP^T/L - D/L is one product: [V, 1] [dO/L, -D/L]^T, a column of ones on V and of -D/L on dO/L, which
    saves a pass over every (n, R) block (16% of that step at (16, 128, 128) blocks, the same numbers).
    """
    d_v = v.shape[-1]
    d_rows = dot_last(do, o)  # (..., T, 1): rowsum(dP P) = rowsum(dO O)
    do_l = np.concatenate([do, -d_rows], axis=-1)  # (..., T, d_v + 1): [dO, -D]...
    do_l /= l  # ...divided by L
    v_1 = np.concatenate([v, np.ones((*v.shape[:-1], 1), dtype=v.dtype)], axis=-1)  # (..., S, d_v + 1): [V, 1]
    dq = np.empty(q.shape, dtype=np.result_type(q, do))
    dk = np.zeros(k.shape, dtype=dq.dtype)
    dv = np.zeros(v.shape, dtype=dq.dtype)
    for (b, rows, n), e_b in zip(plan, e):
        qo, kv = (*b, rows), (*b, slice(0, n))
        dv[kv] += e_b @ do_l[(*qo, slice(0, d_v))]  # (.., n, R) @ (.., R, d_v) -> (.., n, d_v)
        ds_t = v_1[kv] @ np.swapaxes(do_l[qo], -1, -2)  # dP^T/L - D/L: (.., n, d_v+1) @ (.., d_v+1, R) -> (.., n, R)
        ds_t *= e_b  # dS^T
        np.matmul(np.swapaxes(ds_t, -1, -2), k[kv], out=dq[qo])  # (.., R, n) @ (.., n, d) -> (.., R, d)
        dk[kv] += ds_t @ q[qo]  # (.., n, R) @ (.., R, d) -> (.., n, d)
    dq *= scale
    dk *= scale
    return dq, dk, dv


def _sdpa(q: Tensor, k: Tensor, v: Tensor, keep=None, bias=None, scale: float = 1.0, dropout_p: float = 0.0) -> Tensor:
    """Run the fused op on checked inputs. ``keep``: bool array; ``bias``: float array or Tensor."""
    if q.shape[-2] == 0:  # no queries: an empty output, as PyTorch (a softmax over no rows has no max to take)
        return (q @ k.transpose(-2, -1)) @ v  # (..., 0, S) @ (..., S, d_v) -> (..., 0, d_v)
    if isinstance(bias, Tensor) and bias.requires_grad:
        return _SDPA.apply(q, k, v, bias, keep=keep, scale=scale, dropout_p=dropout_p)
    if isinstance(bias, Tensor):
        bias = bias._data
    return _SDPA.apply(q, k, v, bias=bias, keep=keep, scale=scale, dropout_p=dropout_p)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: float | None = None, enable_gqa: bool = False) -> Tensor:
    """PyTorch's F.scaled_dot_product_attention: softmax(Q K^T * scale + mask) V -> (..., T, d_v).

    query (..., H, T, d_k), key (..., H_kv, S, d_k), value (..., H_kv, S, d_v).
    attn_mask: bool (True = attend) or float (added to the scores), broadcastable to (..., T, S).
    is_causal: query i sees keys j <= i, aligned TOP-LEFT when T != S, exactly as PyTorch's sdpa
      (its reference code builds ``ones(L, S).tril()``). So torch code ported here means the same thing.
      For KV-cache decoding you want bottom-right (the T queries are the last T positions): pass
      ``attn_mask=tinyattn.masks.causal_mask(T, S)``; Attention does that for you.
      As in PyTorch, is_causal and attn_mask can not both be given.
    dropout_p: applied to the weights whenever > 0 (like PyTorch, this function does not know about
      train/eval; pass 0.0 when evaluating).
    enable_gqa: if H is a multiple of H_kv, repeat each key/value head H/H_kv times (repeat_interleave
      on dim -3, as PyTorch), so query head h uses key/value head h // (H/H_kv).
    A query row whose every key is masked raises ValueError naming the row. PyTorch does not raise: its
      sdpa (2.13) returns zeros for such a row, older versions NaN; either hides a mask bug.
    A row of scores holding NaN or +inf (from a NaN or inf in query or key, or in a float attn_mask)
      raises ValueError naming the row, exactly as F.softmax, F.attention and F.flash_attention do
      (PyTorch returns NaN there). A NaN in value reaches only the outputs that read it, on every path.
    """
    q, k, v, _ = _check_qkv(query, key, value, batch=not enable_gqa)
    if enable_gqa:
        if q.ndim < 3 or k.ndim < 3 or v.ndim < 3:
            raise ValueError(f"enable_gqa needs a heads dim (-3): got q {q.shape}, k {k.shape}, v {v.shape}")
        h, h_kv = q.shape[-3], k.shape[-3]
        if v.shape[-3] != h_kv or h % h_kv:
            raise ValueError(f"enable_gqa: q has {h} heads, k {h_kv} and v {v.shape[-3]}: k and v need the same "
                             f"number of heads, and it must divide {h}")
        if h != h_kv:
            k = k.repeat_interleave(h // h_kv, dim=-3)  # (..., H_kv, S, d_k) -> (..., H, S, d_k)
            v = v.repeat_interleave(h // h_kv, dim=-3)  # (..., H_kv, S, d_v) -> (..., H, S, d_v)
    q, k, v, batch = _check_qkv(q, k, v)
    T, S = q.shape[-2], k.shape[-2]
    full = (*batch, T, S)
    dropout_p = checks.probability("dropout_p", dropout_p, "scaled_dot_product_attention")
    keep, bias = None, None
    if is_causal:
        if attn_mask is not None:
            raise ValueError("scaled_dot_product_attention: give attn_mask or is_causal=True, not both (as in PyTorch); "
                             "to combine them, AND your bool mask with tinyattn.masks.causal_mask(T, S)")
        keep = np.tri(T, S, dtype=bool)  # (T, S): j <= i, top-left aligned like PyTorch
    elif attn_mask is not None:  # (it must fit the scores, q k^T, whose batch dims do not include v's: PyTorch's rule)
        m = mask_array(attn_mask, "attn_mask", (*np.broadcast_shapes(q.shape[:-2], k.shape[:-2]), T, S))
        if m.dtype == bool:
            keep = m  # (..., T, S) True = attend
        elif np.issubdtype(m.dtype, np.floating):
            bias = attn_mask if isinstance(attn_mask, Tensor) else m  # (..., T, S) added to the scores
            check_rows(np.isneginf(m).all(axis=-1), full)
        else:
            raise TypeError(f"attn_mask must be bool (True = attend) or float (added to the scores), got dtype "
                            f"{m.dtype}; for a 0/1 mask use attn_mask=(mask != 0)")
    if keep is not None:
        check_rows(~keep.any(axis=-1), full)
    return _sdpa(q, k, v, keep=keep, bias=bias, scale=_default_scale(q.shape[-1], scale), dropout_p=dropout_p)


# ----------------------------------------------------------------------------------------------
# Linear attention (Katharopoulos et al., 2020): a kernel instead of a softmax.
# ----------------------------------------------------------------------------------------------
class _EluPlusOne(Function):
    """phi(x) = elu(x) + 1 = x + 1 if x > 0 else exp(x);  d/dx = 1 if x > 0 else exp(x)"""

    @staticmethod
    def forward(ctx, x):
        e = np.exp(np.minimum(x, 0))  # exp only where it is used, so large x can not overflow
        ctx.save_for_backward(x > 0, e)
        return np.where(x > 0, x + 1, e)

    @staticmethod
    def backward(ctx, g):
        pos, e = ctx.saved_tensors
        return g * np.where(pos, 1, e)


def linear_attention(q, k, v, causal: bool = False) -> Tensor:
    """out_i = phi(q_i) . sum_j phi(k_j) v_j^T / phi(q_i) . sum_j phi(k_j), phi = elu + 1  -> (..., T, d_v).

    Softmax(q.k) is replaced by the kernel phi(q).phi(k), so the sum over keys can be done once,
    before the queries: O(T d^2) instead of O(T^2 d). ``causal``: sums run over j <= i only,
    computed with cumulative sums over time (needs S == T). phi > 0, so the denominator is > 0.
    """
    q, k, v, _ = _check_qkv(q, k, v)
    if causal and q.shape[-2] != k.shape[-2]:
        raise ValueError(f"causal linear attention needs as many queries as keys, got q {q.shape} and k {k.shape}")
    fq, fk = _EluPlusOne.apply(q), _EluPlusOne.apply(k)  # (..., T, d_k), (..., S, d_k): positive features
    if not causal:
        kv = fk.transpose(-2, -1) @ v  # (..., d_k, S) @ (..., S, d_v) -> (..., d_k, d_v): sum_j phi(k_j) v_j^T
        z = fk.sum(dim=-2, keepdim=True)  # (..., 1, d_k): sum_j phi(k_j)
        num = fq @ kv  # (..., T, d_k) @ (..., d_k, d_v) -> (..., T, d_v)
        den = (fq * z).sum(dim=-1, keepdim=True)  # (..., T, 1)
        return num / den
    # Causal: the same two sums, but as running totals up to each position t.
    kv = fk.unsqueeze(-1) * v.unsqueeze(-2)  # (..., T, d_k, 1) * (..., T, 1, d_v) -> (..., T, d_k, d_v)
    kv = kv.cumsum(kv.ndim - 3)  # (..., T, d_k, d_v): sum_{j <= t} phi(k_j) v_j^T
    z = fk.cumsum(fk.ndim - 2)  # (..., T, d_k): sum_{j <= t} phi(k_j)
    num = (fq.unsqueeze(-2) @ kv).squeeze(-2)  # (..., T, 1, d_k) @ (..., T, d_k, d_v) -> (..., T, d_v)
    den = (fq * z).sum(dim=-1, keepdim=True)  # (..., T, 1)
    return num / den
