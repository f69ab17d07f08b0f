"""Known-wrong variants: what a specific misconception computes, on the grader's own inputs.

Each function here reproduces one mistake from `mistakes.py` exactly, so a check can say
"your output equals what you get when you forget X" instead of just "wrong values".
All in float64 NumPy; none of this is ever shown to the learner as code.
"""
from __future__ import annotations

import numpy as np

from .references import f64, softmax, swap_last


def attention(Q, K, V, mask=None, *, scale: str = "sqrt", axis: int = -1, mask_mode: str = "before",
              transposed: bool = False, stable: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Attention with one knob turned the wrong way; the defaults give the correct result."""
    Q, K, V = f64(Q), f64(K), f64(V)
    d = Q.shape[-1]
    s = (K @ swap_last(Q)) if transposed else (Q @ swap_last(K))        # (..., T, S), or (..., S, T) transposed
    s = s / {"sqrt": np.sqrt(d), "none": 1.0, "d": float(d)}[scale]
    if mask is not None and mask_mode in ("before", "zero", "inverted"):
        if mask_mode == "before":
            s = np.where(mask, s, -np.inf)
        elif mask_mode == "zero":
            s = np.where(mask, s, 0.0)
        else:
            s = np.where(mask, -np.inf, s)
    if stable:
        w = softmax(s, axis=axis)
    else:
        with np.errstate(all="ignore"):
            e = np.exp(s)
            w = e / e.sum(axis=axis, keepdims=True)
    if mask is not None and mask_mode == "after":
        w = np.where(mask, w, 0.0)
    return w @ V, w


# mistake id -> the knobs that reproduce it (masking mistakes only apply when there is a mask)
ATTENTION_KNOBS: dict[str, list[dict]] = {
    "missing_scale": [dict(scale="none")],
    "scale_by_d_not_sqrt": [dict(scale="d")],
    "softmax_wrong_axis": [dict(axis=-2)],
    "weights_transposed": [dict(transposed=True)],
    "mask_after_softmax": [dict(mask_mode="after")],
    "mask_fill_zero": [dict(mask_mode="zero")],
    "mask_inverted_future_leak": [dict(mask_mode="inverted")],
    "mask_ignored": [dict(mask_mode="ignored")],                       # the mask argument never used
}
MASK_MISTAKES = ("mask_after_softmax", "mask_fill_zero", "mask_inverted_future_leak", "mask_ignored")


def safe(fn, *args, **kwargs):
    """fn(*args) or None: a variant that can not even be computed on these inputs matches nothing."""
    try:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    except Exception:  # noqa: BLE001 - e.g. shapes that only fit the correct version
        return None


def attention_variants(Q, K, V, mask=None, which: int = 0) -> dict[str, list]:
    """{mistake id: [output]} for every attention mistake; which=0 -> out, 1 -> weights."""
    res = {}
    for mid, knobs in ATTENTION_KNOBS.items():
        if mid in MASK_MISTAKES and mask is None:
            continue
        outs = [safe(attention, Q, K, V, mask, **kw) for kw in knobs]
        res[mid] = [o[which] for o in outs if o is not None]
    return res


def scores_variants(Q, K) -> dict[str, list]:
    """ex01: the unscaled, over-scaled and transposed score matrices."""
    raw = f64(Q) @ swap_last(f64(K))                                     # (..., T, S)
    d = Q.shape[-1]
    return {"missing_scale": [raw], "scale_by_d_not_sqrt": [raw / d], "weights_transposed": [swap_last(raw) / np.sqrt(d)]}


# ---- softmax (ex02) ----------------------------------------------------------------------------

def softmax_other_axes(x: np.ndarray, axis: int) -> list[np.ndarray]:
    ax = axis % x.ndim
    return [softmax(x, axis=a) for a in range(x.ndim) if a != ax]


def softmax_backward_diagonal(y, dy) -> list[np.ndarray]:
    y, dy = f64(y), f64(dy)
    return [y * dy, y * (1.0 - y) * dy]


def softmax_backward_other_axes(y, dy, axis: int = -1) -> list[np.ndarray]:
    """The backward with its sum <dy, y> taken along an axis other than the softmax's."""
    y, dy = f64(y), f64(dy)
    ax = axis % y.ndim
    return [y * (dy - np.sum(dy * y, axis=a, keepdims=True)) for a in range(y.ndim) if a != ax]


# ---- masks (ex03, ex13) ------------------------------------------------------------------------

def causal_inverted(T: int) -> list[np.ndarray]:
    lower = np.tril(np.ones((T, T), dtype=bool))
    return [~lower, lower.T]                       # "True = blocked", or the upper triangle (sees the future)


def causal_no_diagonal(T: int) -> list[np.ndarray]:
    return [np.tril(np.ones((T, T), dtype=bool), k=-1)]


def apply_mask_variants(s, mask) -> dict[str, list[np.ndarray]]:
    s = f64(s)
    return {"mask_fill_zero": [np.where(mask, s, 0.0)],
            "mask_inverted_future_leak": [np.where(mask, -np.inf, s)]}


def sliding_window_variants(T: int, window: int) -> dict[str, list[np.ndarray]]:
    i, j = np.indices((T, T))
    good = (j <= i) & (i - j < window)
    return {
        "mask_excludes_diagonal": [(j < i) & (i - j < window), (j < i) & (i - j <= window)],
        "window_off_by_one": [(j <= i) & (i - j <= window), (j <= i) & (i - j < window - 1)],
        "mask_inverted_future_leak": [~good, good.T],
    }


# ---- attention backward (ex05) -----------------------------------------------------------------

def attention_backward(Q, K, V, dout, mask=None, *, backward_scale: bool = True, forward_scale: bool = True,
                       softmax_grad: str = "full", dv_transposed: bool = False, mask_use: str = "given"
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dQ, dK, dV) with one knob turned the wrong way; softmax_grad: full | diag (P dP) | p1mp (P(1-P) dP)
    | queries (the sum of dP * P over the queries, axis -2, instead of the keys); mask_use: given |
    ignored (the forward recomputed without the mask) | causal (a causal mask instead of the one given)."""
    Q, K, V, dout = f64(Q), f64(K), f64(V), f64(dout)
    if mask_use == "ignored":
        mask = None
    elif mask_use == "causal":
        T, S = Q.shape[-2], K.shape[-2]
        mask = np.tril(np.ones((T, S), dtype=bool))                     # (T, S): key j <= query i
    c = 1.0 / np.sqrt(Q.shape[-1])
    _, P = attention(Q, K, V, mask, scale="sqrt" if forward_scale else "none")      # (..., T, S)
    dV = (P if dv_transposed else swap_last(P)) @ dout
    dP = dout @ swap_last(V)
    dS = {"full": lambda: P * (dP - np.sum(dP * P, axis=-1, keepdims=True)),
          "diag": lambda: P * dP, "p1mp": lambda: P * (1.0 - P) * dP,
          "queries": lambda: P * (dP - np.sum(dP * P, axis=-2, keepdims=True))}[softmax_grad]()
    k = c if backward_scale else 1.0
    return dS @ K * k, swap_last(dS) @ Q * k, dV


ATTENTION_BACKWARD_KNOBS: dict[str, list[dict]] = {
    "missing_scale": [dict(backward_scale=False, forward_scale=False)],
    "scale_missing_in_backward": [dict(backward_scale=False)],
    "softmax_backward_missing_term": [dict(softmax_grad="diag"), dict(softmax_grad="p1mp")],
    "softmax_backward_wrong_axis": [dict(softmax_grad="queries")],
    "weights_transposed": [dict(dv_transposed=True)],
    "mask_ignored_in_backward": [dict(mask_use="ignored")],
    "mask_assumed_causal": [dict(mask_use="causal")],
}


def attention_backward_variants(Q, K, V, dout, mask=None) -> dict[str, list]:
    """{mistake id: [(dQ, dK, dV), ...]} for every ex05 mistake."""
    res = {}
    for mid, knobs in ATTENTION_BACKWARD_KNOBS.items():
        outs = [safe(attention_backward, Q, K, V, dout, mask, **kw) for kw in knobs]
        res[mid] = [o for o in outs if o is not None]
    return res


# ---- autograd (ex06) ---------------------------------------------------------------------------

def unbroadcast_trailing(grad, shape) -> np.ndarray:
    """Sums the extra axes from the RIGHT (axis -1) instead of the left."""
    grad = f64(grad)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=-1)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


def unbroadcast_no_keepdims(grad, shape) -> np.ndarray:
    """Sums the leading axes but forgets the size-1 axes."""
    grad = f64(grad)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    return grad


def unbroadcast_variants(grad, shape) -> dict[str, list]:
    return {"unbroadcast_wrong_axes": [o for o in (safe(f, grad, shape) for f in (unbroadcast_trailing,
                                                                                  unbroadcast_no_keepdims))
                                       if o is not None]}


# ---- heads (ex07, ex08) ------------------------------------------------------------------------

def split_no_transpose(x, n_heads) -> np.ndarray:
    B, T, C = x.shape
    return f64(x).reshape(B, n_heads, T, C // n_heads)


def merge_no_transpose(x) -> np.ndarray:
    B, H, T, d = x.shape
    return f64(x).reshape(B, T, H * d)


# ---- positional (ex09) -------------------------------------------------------------------------

def sinusoidal_exponent(T: int, d_model: int, numerator: str) -> np.ndarray:
    """The table with the wrong numerator in 10000^(n / d_model): numerator="pair" uses the pair index i
    (0, 0, 1, 1, ...) where 2i (0, 0, 2, 2, ...) belongs; "column" uses each column's own index j."""
    c = np.arange(d_model)
    n = {"pair": c // 2, "column": c}[numerator]
    angle = np.arange(T)[:, None] * 10000.0 ** (-n / d_model)           # (T, d_model)
    return np.where(c % 2 == 0, np.sin(angle), np.cos(angle))


def sinusoidal_swapped(T: int, d_model: int) -> np.ndarray:
    from .references import sinusoidal
    pe = sinusoidal(T, d_model)
    out = np.empty_like(pe)
    out[:, 0::2], out[:, 1::2] = pe[:, 1::2], pe[:, 0::2]     # cos in the even columns, sin in the odd
    return out


# ---- RNN (ex10) --------------------------------------------------------------------------------

def rnn_forward_transposed(x, h0, W_xh, W_hh, b) -> np.ndarray:
    from .references import rnn_forward
    return rnn_forward(x, h0, W_xh, f64(W_hh).T, b)


def rnn_backward(x, h0, W_xh, W_hh, b, hs, dhs, *, carry: bool = True, transposed: bool = False):
    x, h0, W_xh, W_hh, hs, dhs = map(f64, (x, h0, W_xh, W_hh, hs, dhs))
    dx = np.zeros_like(x)
    dWx, dWh, db = np.zeros_like(W_xh), np.zeros_like(W_hh), np.zeros(W_hh.shape[0])
    nxt = np.zeros_like(h0)
    for t in range(x.shape[1] - 1, -1, -1):
        prev = hs[:, t - 1] if t > 0 else h0
        da = (dhs[:, t] + (nxt if carry else 0.0)) * (1.0 - hs[:, t] ** 2)
        dWx += x[:, t].T @ da
        dWh += prev.T @ da
        db += da.sum(axis=0)
        dx[:, t] = da @ W_xh.T
        nxt = da @ (W_hh if transposed else W_hh.T)
    return dx, nxt, dWx, dWh, db


RNN_BACKWARD_KNOBS: dict[str, list[dict]] = {
    "bptt_missing_carry": [dict(carry=False)],
    "weights_transposed": [dict(transposed=True)],
}


def rnn_backward_variants(x, h0, W_xh, W_hh, b, hs, dhs) -> dict[str, list]:
    """{mistake id: [(dx, dh0, dW_xh, dW_hh, db), ...]}."""
    res = {}
    for mid, knobs in RNN_BACKWARD_KNOBS.items():
        outs = [safe(rnn_backward, x, h0, W_xh, W_hh, b, hs, dhs, **kw) for kw in knobs]
        res[mid] = [o for o in outs if o is not None]
    return res


# ---- GQA (ex11) --------------------------------------------------------------------------------

def repeat_kv_tiled(k, n_rep) -> np.ndarray:
    return np.tile(f64(k), (1, n_rep, 1, 1))


def gqa_tiled(q, k, v) -> np.ndarray:
    n_rep = q.shape[1] // k.shape[1]
    return attention(q, repeat_kv_tiled(k, n_rep), repeat_kv_tiled(v, n_rep))[0]


def gqa_variants(q, k, v) -> dict[str, list]:
    from .references import repeat_kv
    n_rep = q.shape[1] // k.shape[1]
    kr, vr = repeat_kv(k, n_rep), repeat_kv(v, n_rep)
    res = {"kv_repeat_tiled_not_interleaved": [safe(gqa_tiled, q, k, v)]}
    every = attention_variants(q, kr, vr, None)
    for mid in ("missing_scale", "scale_by_d_not_sqrt", "softmax_wrong_axis", "weights_transposed"):
        res[mid] = every[mid]
    return res


# ---- flash (ex12) ------------------------------------------------------------------------------

def flash_no_rescale(Q, K, V, block_size: int, *, rescale_acc: bool, rescale_l: bool) -> np.ndarray:
    """Online softmax that forgets to rescale acc, or l, or both, when the running max grows."""
    Q, K, V = f64(Q), f64(K), f64(V)
    s_all = Q @ K.T / np.sqrt(Q.shape[1])                       # fine here: only the grader's variant
    m = np.full(Q.shape[0], -np.inf)
    l = np.zeros(Q.shape[0])
    acc = np.zeros((Q.shape[0], V.shape[1]))
    for j0 in range(0, K.shape[0], block_size):
        s = s_all[:, j0:j0 + block_size]
        m_new = np.maximum(m, s.max(axis=1))
        p = np.exp(s - m_new[:, None])
        alpha = np.exp(m - m_new)
        l = (alpha * l if rescale_l else l) + p.sum(axis=1)
        acc = (alpha[:, None] * acc if rescale_acc else acc) + p @ V[j0:j0 + block_size]
        m = m_new
    return acc / l[:, None]


def flash_variants(Q, K, V, block_size: int) -> dict[str, list]:
    res = {"flash_missing_rescale": [safe(flash_no_rescale, Q, K, V, block_size, rescale_acc=a, rescale_l=r)
                                     for a, r in ((False, False), (False, True), (True, False))]}
    for mid, scale in (("missing_scale", "none"), ("scale_by_d_not_sqrt", "d")):
        res[mid] = [attention(Q, K, V, scale=scale)[0]]
    return res


# ---- KV cache (ex14) ---------------------------------------------------------------------------

def decode_without_cache(q, k, v) -> np.ndarray:
    """Every step attends to its own token only: softmax of one score is 1, so out_t = v_t."""
    return f64(v).copy()


def decode_variants(q, k, v) -> dict[str, list]:
    from .references import causal_mask
    causal = causal_mask(q.shape[2])
    return {"kv_cache_not_appended": [decode_without_cache(q, k, v)],
            "missing_scale": [attention(q, k, v, causal, scale="none")[0]],
            "scale_by_d_not_sqrt": [attention(q, k, v, causal, scale="d")[0]]}


# ---- multi-head module (ex08) ------------------------------------------------------------------

def multihead(x, Wq, bq, Wk, bk, Wv, bv, Wo, bo, n_heads, mask=None, *, split_mixed: bool = False,
              merge_mixed: bool = False, **attention_knobs) -> np.ndarray:
    """Multi-head attention with a head-splitting or attention mistake (defaults: correct)."""
    from .references import linear, merge_heads, split_heads
    split = (lambda t: split_no_transpose(t, n_heads)) if split_mixed else (lambda t: split_heads(t, n_heads))
    q, k, v = split(linear(x, Wq, bq)), split(linear(x, Wk, bk)), split(linear(x, Wv, bv))   # (B, H, T, d_k)
    out, _ = attention(q, k, v, mask, **attention_knobs)                                       # (B, H, T, d_k)
    return linear(merge_no_transpose(out) if merge_mixed else merge_heads(out), Wo, bo)        # (B, T, C)


MULTIHEAD_KNOBS: dict[str, list[dict]] = {
    "heads_mixed_no_transpose": [dict(split_mixed=True), dict(merge_mixed=True),
                                 dict(split_mixed=True, merge_mixed=True)],
    **{mid: knobs for mid, knobs in ATTENTION_KNOBS.items()},
}


def multihead_variants(x, Wq, bq, Wk, bk, Wv, bv, Wo, bo, n_heads, mask=None) -> dict[str, list]:
    W = (Wq, bq, Wk, bk, Wv, bv, Wo, bo)
    return {mid: [o for o in (safe(multihead, x, *W, n_heads, mask, **kw) for kw in knobs) if o is not None]
            for mid, knobs in MULTIHEAD_KNOBS.items() if mask is not None or mid not in MASK_MISTAKES}


# ---- ex15
def patch_heads_unpatched(params, clean, corrupted, answer) -> float:
    """Nothing patched: the corrupted run's metric (a hook that returns nothing, or under a wrong name)."""
    from .references import _ex15_forward, _ex15_metric
    return _ex15_metric(_ex15_forward(params, corrupted)[0], answer)


def patch_heads_layer_at_once(params, clean, corrupted, answer) -> np.ndarray:
    """Every head of a layer patched together: each row constant."""
    from .references import _ex15_grid
    return _ex15_grid(params, clean, corrupted, answer, heads_together=True)
