"""Attention FLOP/s as a share of what ``np.matmul`` reaches on this machine on the same shapes.

Attention is matmuls plus a softmax. The matmuls alone, run back to back by ``np.matmul`` on
contiguous operands of exactly the shapes the layer uses, are the practical limit for any NumPy
implementation: the share ``t(matmuls) / t(layer)`` (= achieved GFLOP/s / matmul GFLOP/s) says how
much of the time goes to useful arithmetic and how much to the softmax, copies and bookkeeping.

FLOPs of Attention forward+backward with N = B*T rows, input requiring grad:
  forward  4 projections (N, d) @ (d, d)          + 2 attention matmuls (scores, P V), 2 B T^2 d each
  backward 8 projection GEMMs (dW and dx of each)  + 4 attention matmuls (dV, dP, dQ, dK)
  total    12 * 2 N d^2 + 6 * 2 B T^2 d
"""
from __future__ import annotations

import numpy as np

import tinyattn
import tinyattn.nn.functional as F

from .common import Row, compare
from .mha import _make_layers, _step_numpy, _step_tinyattn

SHAPE = (4, 512, 256, 8)  # (B, T, d_model, n_heads): the shape the target is set at
QUICK_SHAPE = (2, 32, 32, 4)


def mha_matmuls(B: int, T: int, d: int, h: int) -> list[tuple[tuple, tuple]]:
    """The (a.shape, b.shape) of every matmul in Attention forward+backward."""
    N, dk = B * T, d // h
    proj = ((N, d), (d, d))  # x @ W^T and dx = g @ W
    wgrad = ((d, N), (N, d))  # dW = g^T @ x
    qk = ((B, h, T, dk), (B, h, dk, T))  # scores, dP
    pv = ((B, h, T, T), (B, h, T, dk))  # P V, dV (P^T dO), dQ (dS K), dK (dS^T Q)
    return [proj] * 4 + [qk, pv] + [wgrad] * 4 + [proj] * 4 + [pv, qk, pv, pv]


def sdpa_matmuls(B: int, T: int, d: int, h: int) -> list[tuple[tuple, tuple]]:
    """The matmuls of the attention core alone, forward+backward: scores, P V; dV, dP, dQ, dK."""
    dk = d // h
    qk = ((B, h, T, dk), (B, h, dk, T))
    pv = ((B, h, T, T), (B, h, T, dk))
    return [qk, pv, pv, qk, pv, pv]


def flops(matmuls: list[tuple[tuple, tuple]]) -> float:
    """2 m n k per (m, k) @ (k, n) product, times the batch."""
    total = 0.0
    for a, b in matmuls:
        total += 2.0 * np.prod(a[:-2], dtype=float) * a[-2] * a[-1] * b[-1]
    return total


def _matmul_runner(matmuls, dtype):
    """A function that runs exactly these matmuls with np.matmul on contiguous random operands."""
    rng = np.random.default_rng(0)
    operands = [(rng.standard_normal(a).astype(dtype), rng.standard_normal(b).astype(dtype)) for a, b in matmuls]

    def run_all():
        for a, b in operands:
            np.matmul(a, b)
    return run_all


def _sdpa_step(q, k, v, do):
    for t in (q, k, v):
        t.grad = None
    F.scaled_dot_product_attention(q, k, v).backward(do)


def run(quick: bool = False) -> list[Row]:
    B, T, d, h = QUICK_SHAPE if quick else SHAPE
    dtype = np.float32
    repeat, warmup = (3, 1) if quick else (9, 2)
    case = f"(B,T,d,h)=({B},{T},{d},{h}) float32"
    rows = []

    # The whole layer, against the same matmuls.
    layer, np_layer, x, dy = _make_layers(B, T, d, h, dtype)
    mm = mha_matmuls(B, T, d, h)
    fl = flops(mm)
    t = compare({"tinyattn": lambda: _step_tinyattn(layer, x, dy), "numpy": lambda: _step_numpy(np_layer, x, dy),
                 "matmuls": _matmul_runner(mm, dtype)}, repeat=repeat, warmup=warmup, min_time=0.0 if quick else 2.0)
    gf = {k: fl / s / 1e9 for k, s in t.items()}
    rows.append(Row("matmul_roofline", f"Attention fwd+bwd {case}", "GFLOP/s", gf["tinyattn"], gf["matmuls"],
                    ratio=gf["tinyattn"] / gf["matmuls"], ratio_name="share of np.matmul",
                    target=None if quick else ">= 0.5",
                    extra={"gflop": fl / 1e9, "numpy_layer_gflops": gf["numpy"],
                           "numpy_layer_share": gf["numpy"] / gf["matmuls"]}))

    # The attention core alone (F.scaled_dot_product_attention): matmuls with a small inner dim d_k,
    # where the (T, T) softmax is a larger part of the work.
    rng = np.random.default_rng(2)
    dk = d // h
    q, k, v = (tinyattn.tensor(rng.standard_normal((B, h, T, dk)).astype(dtype), requires_grad=True) for _ in range(3))
    do = rng.standard_normal((B, h, T, dk)).astype(dtype)
    mm = sdpa_matmuls(B, T, d, h)
    fl = flops(mm)
    t = compare({"tinyattn": lambda: _sdpa_step(q, k, v, do), "matmuls": _matmul_runner(mm, dtype)},
                repeat=repeat, warmup=warmup, min_time=0.0 if quick else 1.0)
    gf = {k_: fl / s / 1e9 for k_, s in t.items()}
    rows.append(Row("matmul_roofline", f"scaled_dot_product_attention fwd+bwd (B,H,T,d_k)=({B},{h},{T},{dk}) float32",
                    "GFLOP/s", gf["tinyattn"], gf["matmuls"], ratio=gf["tinyattn"] / gf["matmuls"],
                    ratio_name="share of np.matmul", extra={"gflop": fl / 1e9}))

    # The machine's matmul speed on one large square GEMM, for scale.
    n = 128 if quick else 1024
    a, b = (rng.standard_normal((n, n)).astype(dtype) for _ in range(2))
    t = compare({"matmul": lambda: np.matmul(a, b)}, repeat=repeat, warmup=warmup)
    rows.append(Row("matmul_roofline", f"np.matmul ({n},{n}) @ ({n},{n}) float32", "GFLOP/s",
                    2.0 * n**3 / t["matmul"] / 1e9))
    return rows
