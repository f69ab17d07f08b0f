"""Attention forward+backward: tinyattn's layer against the same layer written by hand in NumPy.

The NumPy layer below is what a careful NumPy programmer writes: the same four projections with
PyTorch's weight layout, one batched matmul for all heads, an in-place stable softmax, and a backward
derived by hand (no autograd, no graph). Before timing, both layers are run on the same weights and
input, and their outputs and every gradient are checked to agree, so the two really do the same work.
"""
from __future__ import annotations

import math

import numpy as np

import tinyattn
from tinyattn.nn import Attention

from .common import Row, compare
from .targets import decide

SHAPES = [(8, 128, 256, 8), (4, 512, 256, 8), (1, 2048, 128, 4)]  # (B, T, d_model, n_heads)
QUICK_SHAPES = [(2, 16, 32, 4)]
DTYPES = (np.float32, np.float64)


class NumpyMHA:
    """y = (softmax(q k^T / sqrt(d_k)) v) W_o^T + b_o, q = x W_q^T + b_q (same for k, v): forward and backward."""

    def __init__(self, weights: dict[str, np.ndarray], n_heads: int) -> None:
        self.w = weights  # "W_q.weight" (d, d), "W_q.bias" (d,), ... as in the tinyattn/PyTorch state_dict
        self.h = n_heads

    def forward(self, x: np.ndarray) -> np.ndarray:
        w, H = self.w, self.h
        B, T, d = x.shape
        dk = d // H
        x2 = x.reshape(B * T, d)  # (B*T, d): every position is a row, so each projection is one GEMM

        def heads(name):  # (B*T, d) -> (B, T, H, d_k) -> (B, H, T, d_k)
            y = x2 @ w[name + ".weight"].T  # (B*T, d) @ (d, d) -> (B*T, d)
            y += w[name + ".bias"]
            return y.reshape(B, T, H, dk).transpose(0, 2, 1, 3)

        q, k, v = heads("W_q"), heads("W_k"), heads("W_v")  # (B, H, T, d_k) each
        s = q @ k.transpose(0, 1, 3, 2)  # (B, H, T, d_k) @ (B, H, d_k, T) -> (B, H, T, T)
        s *= 1.0 / math.sqrt(dk)
        s -= s.max(axis=-1, keepdims=True)  # stable softmax, in place
        np.exp(s, out=s)
        s /= s.sum(axis=-1, keepdims=True)
        p = s  # (B, H, T, T)
        o = p @ v  # (B, H, T, T) @ (B, H, T, d_k) -> (B, H, T, d_k)
        o2 = o.transpose(0, 2, 1, 3).reshape(B * T, d)  # (B, T, H, d_k) -> (B*T, d): heads side by side
        y = o2 @ w["W_o.weight"].T  # (B*T, d) @ (d, d) -> (B*T, d)
        y += w["W_o.bias"]
        self.cache = (x2, q, k, v, p, o, o2, (B, T, d, dk))
        return y.reshape(B, T, d)

    def backward(self, dy: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """dy (B, T, d) -> dx (B, T, d) and the gradient of every weight (same keys as the weights)."""
        w, H = self.w, self.h
        x2, q, k, v, p, o, o2, (B, T, d, dk) = self.cache
        self.cache = None  # the activations are freed when backward returns, as tinyattn frees its graph
        grads = {}
        dy2 = dy.reshape(B * T, d)  # (B*T, d)
        grads["W_o.weight"] = dy2.T @ o2  # (d, B*T) @ (B*T, d) -> (d, d)
        grads["W_o.bias"] = dy2.sum(axis=0)
        do = (dy2 @ w["W_o.weight"]).reshape(B, T, H, dk).transpose(0, 2, 1, 3)  # (B*T, d) -> (B, H, T, d_k)
        dv = p.transpose(0, 1, 3, 2) @ do  # (B, H, T, T) @ (B, H, T, d_k) -> (B, H, T, d_k)
        ds = do @ v.transpose(0, 1, 3, 2)  # dP: (B, H, T, d_k) @ (B, H, d_k, T) -> (B, H, T, T)
        # softmax backward: dS = P (dP - rowsum(dP P)), and rowsum(dP P) = rowsum(dO O), a (T, d_k) product
        ds -= (do * o).sum(axis=-1, keepdims=True)
        ds *= p
        ds *= 1.0 / math.sqrt(dk)  # the scale, folded into dS once instead of into dQ and dK
        dq = ds @ k  # (B, H, T, T) @ (B, H, T, d_k) -> (B, H, T, d_k)
        dkk = ds.transpose(0, 1, 3, 2) @ q  # (B, H, T, T) @ (B, H, T, d_k) -> (B, H, T, d_k)
        dx2 = None
        for name, g in (("W_q", dq), ("W_k", dkk), ("W_v", dv)):
            g2 = g.transpose(0, 2, 1, 3).reshape(B * T, d)  # (B, H, T, d_k) -> (B, T, H, d_k) -> (B*T, d)
            grads[name + ".weight"] = g2.T @ x2  # (d, B*T) @ (B*T, d) -> (d, d)
            grads[name + ".bias"] = g2.sum(axis=0)
            part = g2 @ w[name + ".weight"]  # (B*T, d) @ (d, d) -> (B*T, d)
            if dx2 is None:
                dx2 = part
            else:
                dx2 += part
        return dx2.reshape(B, T, d), grads


def _make_layers(B: int, T: int, d: int, h: int, dtype) -> tuple:
    """The tinyattn layer and the NumPy layer, with the same weights, plus an input and an upstream gradient."""
    prev = tinyattn.get_default_dtype()
    tinyattn.set_default_dtype(dtype)  # so the layer's parameters are created in this dtype
    try:
        tinyattn.manual_seed(0)
        layer = Attention(d, h)
    finally:
        tinyattn.set_default_dtype(prev)
    np_layer = NumpyMHA({name: np.array(t) for name, t in layer.state_dict().items()}, h)  # NumPy copies
    rng = np.random.default_rng(1)
    x = rng.standard_normal((B, T, d)).astype(dtype)
    dy = rng.standard_normal((B, T, d)).astype(dtype)
    return layer, np_layer, x, dy


def _step_tinyattn(layer, x: np.ndarray, dy: np.ndarray):
    """One forward+backward: fresh gradients, the input requires grad (so dx is computed, as by NumPy)."""
    layer.zero_grad()
    xt = tinyattn.tensor(x, requires_grad=True)
    layer(xt).backward(dy)
    return xt


def _step_numpy(np_layer: NumpyMHA, x: np.ndarray, dy: np.ndarray):
    np_layer.forward(x)
    return np_layer.backward(dy)


def check_agreement(layer, np_layer: NumpyMHA, x: np.ndarray, dy: np.ndarray) -> float:
    """Largest relative difference between the two layers' outputs and gradients; raises if it is too big."""
    xt = tinyattn.tensor(x, requires_grad=True)
    layer.zero_grad()
    y = layer(xt)
    y.backward(dy)
    y_np = np_layer.forward(x)
    dx_np, grads_np = np_layer.backward(dy)
    pairs = [("output", y.numpy(), y_np), ("dx", xt.grad.numpy(), dx_np)]
    pairs += [(name, p.grad.numpy(), grads_np[name]) for name, p in layer.named_parameters()]
    tol = 1e-3 if x.dtype == np.float32 else 1e-9
    # Relative to the larger of the array's own size and dx's: W_k's bias gradient is exactly 0 in exact
    # arithmetic (adding q.b_k to every score of a row is cancelled by the softmax), so both layers return
    # rounding noise there, and noise relative to noise means nothing.
    ref = float(np.max(np.abs(dx_np)))
    worst = 0.0
    for name, a, b in pairs:
        err = float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), ref))
        worst = max(worst, err)
        if not err < tol:
            raise AssertionError(f"tinyattn and the NumPy layer disagree on {name}: relative error {err:.2e} > {tol}")
    return worst


def run(quick: bool = False) -> list[Row]:
    rows = []
    shapes = QUICK_SHAPES if quick else SHAPES
    repeat, warmup = (3, 1) if quick else (7, 2)
    for B, T, d, h in shapes:
        for dtype in DTYPES:
            layer, np_layer, x, dy = _make_layers(B, T, d, h, dtype)
            err = check_agreement(layer, np_layer, x, dy)
            st: dict = {}
            t = compare({"tinyattn": lambda: _step_tinyattn(layer, x, dy),
                         "numpy": lambda: _step_numpy(np_layer, x, dy)}, repeat=repeat, warmup=warmup,
                        min_time=0.0 if quick else 2.0, stats=st)
            ms_t, ms_np = t["tinyattn"] * 1e3, t["numpy"] * 1e3
            rows.append(Row("mha", f"(B,T,d,h)=({B},{T},{d},{h}) {np.dtype(dtype).name}", "fwd+bwd ms",
                            ms_t, ms_np, ratio=ms_t / ms_np, ratio_name="tinyattn / numpy",
                            target=None if quick else decide("attention_numpy")[0],
                            target_why="" if quick else decide("attention_numpy")[1],
                            extra={"max_rel_diff": err, "repeats": st["repeat"],
                                   "ratio_of_fastest": st["min"]["tinyattn"] / st["min"]["numpy"]}))
    return rows
