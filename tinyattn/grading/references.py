"""The grader's own reference answers, in plain NumPy (float64).

Written independently of `solutions/`: the grader never imports the solutions folder.
Every function computes in float64 so that a float32 submission is compared with the exact answer.
"""
from __future__ import annotations

import numpy as np

from tinyattn.gradcheck import numerical_grad


def f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def swap_last(x: np.ndarray) -> np.ndarray:
    """Transpose the last two axes: (..., a, b) -> (..., b, a)."""
    return np.swapaxes(x, -1, -2)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(x - max) / sum(exp(x - max)) along `axis`."""
    x = f64(x)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def softmax_backward(y: np.ndarray, dy: np.ndarray, axis: int = -1) -> np.ndarray:
    """dx = y * (dy - <dy, y>) along `axis`."""
    y, dy = f64(y), f64(dy)
    return y * (dy - np.sum(dy * y, axis=axis, keepdims=True))


def scores(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Q Kᵀ / sqrt(d_k): (..., T, d) x (..., S, d) -> (..., T, S)."""
    Q, K = f64(Q), f64(K)
    return np.einsum("...td,...sd->...ts", Q, K) / np.sqrt(Q.shape[-1])


def causal_mask(T: int) -> np.ndarray:
    """(T, T) bool, True where key j <= query i."""
    return np.arange(T)[None, :] <= np.arange(T)[:, None]


def apply_mask(s: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return np.where(mask, f64(s), -np.inf)


def attention(Q, K, V, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """(softmax(Q Kᵀ/sqrt(d), masked) V, weights)."""
    s = scores(Q, K)
    if mask is not None:
        s = apply_mask(s, mask)
    w = softmax(s, axis=-1)
    return w @ f64(V), w


def attention_out(Q, K, V, mask=None) -> np.ndarray:
    """attention's output only (what flash attention and the decoding steps must reproduce)."""
    return attention(Q, K, V, mask)[0]


def attention_loss(Q, K, V, dout, mask=None) -> float:
    """<dout, attention(Q, K, V)>: the scalar whose gradient ex05 asks for."""
    return float(np.sum(attention(Q, K, V, mask)[0] * f64(dout)))


def attention_grads_numeric(Q, K, V, dout, mask=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dQ, dK, dV) of <dout, attention(Q, K, V)> by central finite differences (float64)."""
    return (numerical_grad(lambda x: attention_loss(x, K, V, dout, mask), f64(Q)),
            numerical_grad(lambda x: attention_loss(Q, x, V, dout, mask), f64(K)),
            numerical_grad(lambda x: attention_loss(Q, K, x, dout, mask), f64(V)))


def attention_grads_exact(Q, K, V, dout, mask=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dQ, dK, dV) of <dout, attention(Q, K, V)> from the derived formulas (float64, exact to rounding).

    Kept next to the finite-difference version on purpose: the checks judge a learner's gradient
    against the finite differences (independent of any formula) and, to rounding, against this."""
    Q, K, V, dout = f64(Q), f64(K), f64(V), f64(dout)
    _, P = attention(Q, K, V, mask)                                     # (..., T, S)
    dP = dout @ swap_last(V)                                            # (..., T, d_v) @ (..., d_v, S)
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True)) / np.sqrt(Q.shape[-1])
    return dS @ K, swap_last(dS) @ Q, swap_last(P) @ dout              # (..., T, d), (..., S, d), (..., S, d_v)


def matmul_grads_exact(A, B, dC) -> tuple[np.ndarray, np.ndarray]:
    """(dA, dB) of <dC, A @ B>, summed back over the axes the product broadcast (exact to rounding)."""
    A, B, dC = f64(A), f64(B), f64(dC)
    return unbroadcast(dC @ swap_last(B), A.shape), unbroadcast(swap_last(A) @ dC, B.shape)


def rnn_grads_exact(x, h0, W_xh, W_hh, b, dhs) -> tuple[np.ndarray, ...]:
    """(dx, dh0, dW_xh, dW_hh, db) of <dhs, rnn_forward(...)> by backprop through time (exact to rounding)."""
    x, h0, W_xh, W_hh, dhs = f64(x), f64(h0), f64(W_xh), f64(W_hh), f64(dhs)
    hs = rnn_forward(x, h0, W_xh, W_hh, b)
    dx, dWx, dWh, db = np.zeros_like(x), np.zeros_like(W_xh), np.zeros_like(W_hh), np.zeros(W_hh.shape[0])
    carry = np.zeros_like(h0)                                           # dL/dh_t through h_{t+1}
    for t in range(x.shape[1] - 1, -1, -1):
        da = (dhs[:, t] + carry) * (1.0 - hs[:, t] ** 2)                # (B, H): through tanh
        prev = hs[:, t - 1] if t > 0 else h0
        dx[:, t], dWx, dWh, db = da @ W_xh.T, dWx + x[:, t].T @ da, dWh + prev.T @ da, db + da.sum(axis=0)
        carry = da @ W_hh.T
    return dx, carry, dWx, dWh, db


def softmax_grad_numeric(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    """d<g, softmax(x)>/dx (last axis) by central finite differences."""
    return numerical_grad(lambda z: float(np.sum(softmax(z, -1) * g)), f64(x))


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum `grad` down to `shape` (NumPy's right-aligned broadcasting, undone)."""
    grad = f64(grad)
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    return np.sum(grad, axis=axes, keepdims=True).reshape(shape)


def split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    B, T, C = x.shape
    return np.stack([x[:, :, h * (C // n_heads):(h + 1) * (C // n_heads)] for h in range(n_heads)], axis=1)


def merge_heads(x: np.ndarray) -> np.ndarray:
    return np.concatenate([x[:, h] for h in range(x.shape[1])], axis=-1)


def linear(x: np.ndarray, W: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """x Wᵀ + b with W in PyTorch's (out, in) layout."""
    y = f64(x) @ f64(W).T
    return y if b is None else y + f64(b)


def multihead(x, Wq, bq, Wk, bk, Wv, bv, Wo, bo, n_heads, mask=None) -> np.ndarray:
    """Multi-head self-attention from explicit weights: (B, T, C) -> (B, T, C)."""
    q = split_heads(linear(x, Wq, bq), n_heads)       # (B, H, T, d_k)
    k = split_heads(linear(x, Wk, bk), n_heads)
    v = split_heads(linear(x, Wv, bv), n_heads)
    out, _ = attention(q, k, v, mask)                 # (B, H, T, d_k)
    return linear(merge_heads(out), Wo, bo)           # (B, T, C)


def multihead_grads(x, Wq, bq, Wk, bk, Wv, bv, Wo, bo, n_heads, mask, g) -> list[np.ndarray]:
    """[dWq, dbq, dWk, dbk, dWv, dbv, dWo, dbo] of sum(multihead(x, ...) * g), derived (exact to rounding)."""
    x, g = f64(x), f64(g)
    q, k, v = (split_heads(linear(x, W, b), n_heads) for W, b in ((Wq, bq), (Wk, bk), (Wv, bv)))
    out, P = attention(q, k, v, mask)                 # P: (B, H, T, T), zero where masked
    dO = split_heads(g @ f64(Wo), n_heads)            # (B, H, T, d_k)
    dP = dO @ np.swapaxes(v, -1, -2)
    dS = P * (dP - np.sum(dP * P, axis=-1, keepdims=True)) / np.sqrt(q.shape[-1])
    grads = []
    for d in (dS @ k, np.swapaxes(dS, -1, -2) @ q, np.swapaxes(P, -1, -2) @ dO):   # dq, dk, dv
        d = merge_heads(d)                            # (B, T, C): the gradient of the projection's output
        grads += [np.einsum("btc,btd->cd", d, x), d.sum(axis=(0, 1))]
    merged = merge_heads(out)
    return grads + [np.einsum("btc,btd->cd", g, merged), g.sum(axis=(0, 1))]


def sinusoidal(T: int, d_model: int) -> np.ndarray:
    pe = np.empty((T, d_model))
    for c in range(d_model):
        freq = 10000.0 ** (-(c - c % 2) / d_model)
        pe[:, c] = (np.sin if c % 2 == 0 else np.cos)(np.arange(T) * freq)
    return pe


def rnn_forward(x, h0, W_xh, W_hh, b) -> np.ndarray:
    x, h = f64(x), f64(h0)
    hs = np.empty(x.shape[:2] + (W_hh.shape[0],))
    for t in range(x.shape[1]):
        h = np.tanh(x[:, t] @ f64(W_xh) + h @ f64(W_hh) + f64(b))
        hs[:, t] = h
    return hs


def rnn_grads_numeric(x, h0, W_xh, W_hh, b, dhs) -> tuple[np.ndarray, ...]:
    """(dx, dh0, dW_xh, dW_hh, db) of <dhs, rnn_forward(...)> by central finite differences."""
    p = [f64(a) for a in (x, h0, W_xh, W_hh, b)]
    grads = []
    for i in range(5):
        def loss(v, i=i):
            q = list(p)
            q[i] = v
            return float(np.sum(rnn_forward(*q) * f64(dhs)))
        grads.append(numerical_grad(loss, p[i]))
    return tuple(grads)


def repeat_kv(k: np.ndarray, n_rep: int) -> np.ndarray:
    """(B, H_kv, T, d) -> (B, H_kv * n_rep, T, d), out[:, h] = k[:, h // n_rep]."""
    idx = np.arange(k.shape[1] * n_rep) // n_rep
    return k[:, idx]


def gqa(q, k, v) -> np.ndarray:
    n_rep = q.shape[1] // k.shape[1]
    return attention(q, repeat_kv(k, n_rep), repeat_kv(v, n_rep))[0]


def sliding_window_mask(T: int, window: int) -> np.ndarray:
    i, j = np.indices((T, T))
    return (j <= i) & (j > i - window)


def decode_sequence(q, k, v) -> np.ndarray:
    """What T decoding steps must produce: causal attention over (B, H, T, d)."""
    return attention(q, k, v, causal_mask(q.shape[2]))[0]


# ---- ex15: activation patching on the exercise's attention-only NumPy model
def _ex15_forward(params, tokens, hooks=None):
    hooks = hooks or {}
    cache = {}

    def point(name, x):
        cache[name] = x.copy()
        fn = hooks.get(name)
        out = None if fn is None else fn(x.copy())
        return x if out is None else np.asarray(out, dtype=x.dtype)

    x = params["W_E"][tokens]  # (B, T, C)
    T = tokens.shape[1]
    future = np.triu(np.ones((T, T), dtype=bool), 1)
    n_layers = sum(1 for k in params if k.startswith("W_Q."))
    for l in range(n_layers):
        x = point(f"blocks.{l}.hook_resid_pre", x)
        q = np.einsum("btc,hcd->bthd", x, params[f"W_Q.{l}"])  # (B, T, H, d)
        k = np.einsum("btc,hcd->bthd", x, params[f"W_K.{l}"])
        v = np.einsum("btc,hcd->bthd", x, params[f"W_V.{l}"])
        scores = np.where(future, -np.inf, np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1]))
        w = np.exp(scores - scores.max(axis=-1, keepdims=True))
        w /= w.sum(axis=-1, keepdims=True)  # (B, H, T, T)
        z = point(f"blocks.{l}.attn.hook_z", np.einsum("bhqk,bkhd->bqhd", w, v))  # (B, T, H, d)
        x = x + np.einsum("bthd,hdc->btc", z, params[f"W_O.{l}"])
    return x @ params["W_U"], cache


def _ex15_metric(logits, answer):
    z = logits[:, -1].astype(np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return float(logp[np.arange(len(answer)), answer].mean())


def _ex15_grid(params, clean, corrupted, answer, heads_together: bool = False) -> np.ndarray:
    _, cache = _ex15_forward(params, clean)
    L, H = sum(1 for k in params if k.startswith("W_Q.")), params["W_Q.0"].shape[0]
    grid = np.zeros((L, H))
    for l in range(L):
        name = f"blocks.{l}.attn.hook_z"
        for h in range(H):
            def patch(z, h=h):
                if heads_together:
                    return cache[name].copy()
                z[:, :, h] = cache[name][:, :, h]
                return z
            grid[l, h] = _ex15_metric(_ex15_forward(params, corrupted, {name: patch})[0], answer)
    return grid


def patch_heads(params, clean, corrupted, answer) -> np.ndarray:
    """(n_layers, n_heads): the metric with head (l, h)'s hook_z patched from the clean run into the corrupted one."""
    return _ex15_grid(params, clean, corrupted, answer)
