"""tinyattn against PyTorch on the CPU: optional, run only where ``import torch`` works (torch is not a dependency).

Two comparisons, float32, both libraries on ONE thread (NumPy's BLAS and torch's intra-op pool), in
one process with their repeats interleaved, timed in CPU time (``time.process_time``): with one
thread on each side that is the time the work takes, without the waits for a core that other
processes on a shared machine add to wall time:

* Attention forward+backward at the shapes of the ``mha`` benchmark, against the same four
  projections around ``torch.nn.functional.scaled_dot_product_attention`` (PyTorch's fused kernel);
* one training step (forward, loss, backward, AdamW) of a nanoGPT-sized model: 4 layers, 4 heads,
  width 128, block 128, batch 8, the same code (``benchmarks/gpt_model.py``) on both sides.

Before timing, both sides start from the same weights and their outputs, losses and gradients are
checked to agree, so they really do the same work.
"""
from __future__ import annotations

import importlib.util
import time

import numpy as np

import tinyattn
from tinyattn import blas
from tinyattn.nn import Attention

from . import targets
from .common import Row, compare
from .gpt_model import GPTConfig, build
from .mha import QUICK_SHAPES, SHAPES

BATCH = 8
QUICK_CONFIG = GPTConfig(vocab_size=11, block_size=16, n_layer=1, n_head=2, n_embd=16)


def available() -> bool:
    """Whether torch can be imported here (the benchmark is skipped otherwise)."""
    return importlib.util.find_spec("torch") is not None


def _mha_pair(torch, B: int, T: int, d: int, h: int):
    """tinyattn's Attention and torch's four Linear + SDPA, same weights, and a step for each."""
    tinyattn.manual_seed(0)
    layer = Attention(d, h)
    w = {k: torch.from_numpy(np.array(v)) for k, v in layer.state_dict().items()}
    for p in w.values():
        p.requires_grad_(True)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((B, T, d)).astype(np.float32)
    dy = rng.standard_normal((B, T, d)).astype(np.float32)
    tx, tdy = torch.from_numpy(x), torch.from_numpy(dy)
    dk = d // h
    TF = torch.nn.functional

    def torch_step():
        for p in w.values():
            p.grad = None
        xt = tx.detach().requires_grad_(True)
        q, k, v = (TF.linear(xt, w[n + ".weight"], w[n + ".bias"]).view(B, T, h, dk).transpose(1, 2)
                   for n in ("W_q", "W_k", "W_v"))  # (B, H, T, d_k) each
        o = TF.scaled_dot_product_attention(q, k, v)  # (B, H, T, d_k)
        y = TF.linear(o.transpose(1, 2).reshape(B, T, d), w["W_o.weight"], w["W_o.bias"])  # (B, T, d)
        y.backward(tdy)
        return y, xt

    def tinyattn_step():
        layer.zero_grad()
        xt = tinyattn.tensor(x, requires_grad=True)
        y = layer(xt)
        y.backward(dy)
        return y, xt

    y_a, x_a = tinyattn_step()
    y_t, x_t = torch_step()
    err = max(_rel(y_a.numpy(), y_t.detach().numpy()), _rel(np.asarray(x_a.grad), x_t.grad.numpy()))
    for name, p in layer.named_parameters():
        err = max(err, _rel(np.asarray(p.grad), w[name].grad.numpy(), ref=np.asarray(x_a.grad)))
    if not err < 1e-3:
        raise AssertionError(f"tinyattn and torch disagree on Attention: relative error {err:.2e}")
    return tinyattn_step, torch_step, err


def _rel(a: np.ndarray, b: np.ndarray, ref: np.ndarray | None = None) -> float:
    """max |a - b| relative to the largest entry of b (or of ref, for arrays whose exact value is ~0)."""
    scale = max(float(np.max(np.abs(b))), float(np.max(np.abs(ref))) if ref is not None else 0.0)
    return float(np.max(np.abs(a - b))) / scale


def _gpt_pair(torch, cfg: GPTConfig, batch: int):
    """The same GPT on both libraries with the same weights and batch, and one AdamW training step of each."""
    tinyattn.manual_seed(0)
    ours = build(tinyattn)(cfg)
    theirs = build(torch)(cfg)
    theirs.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in ours.state_dict().items()})
    rng = np.random.default_rng(2)
    idx = rng.integers(0, cfg.vocab_size, size=(batch, cfg.block_size))
    tgt = rng.integers(0, cfg.vocab_size, size=(batch, cfg.block_size))
    opt_a = tinyattn.optim.AdamW(ours.parameters(), lr=1e-3)
    opt_t = torch.optim.AdamW(theirs.parameters(), lr=1e-3)
    idx_a, tgt_a = tinyattn.tensor(idx), tinyattn.tensor(tgt)
    idx_t, tgt_t = torch.from_numpy(idx), torch.from_numpy(tgt)

    def train_step(model, opt, idx, tgt):  # the same lines for both libraries
        loss = model(idx, tgt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    def tinyattn_step():
        return train_step(ours, opt_a, idx_a, tgt_a)

    def torch_step():
        return train_step(theirs, opt_t, idx_t, tgt_t)

    la, lt = float(tinyattn_step().item()), float(torch_step().item())
    grads_a = dict(ours.named_parameters())
    err = abs(la - lt) / abs(lt)
    for name, p in theirs.named_parameters():
        err = max(err, _rel(np.asarray(grads_a[name].grad), p.grad.numpy()))
    if not err < 2e-3:
        raise AssertionError(f"tinyattn and torch disagree on the GPT step: relative error {err:.2e}")
    return tinyattn_step, torch_step, err, sum(p.numel() for p in theirs.parameters())


def run(quick: bool = False) -> list[Row]:
    if not available():
        print("(torch is not importable here: the PyTorch comparison is skipped)", end=" ", flush=True)
        return []
    import torch

    threads_before = (torch.get_num_threads(), blas.get_num_threads())
    torch.set_num_threads(1)
    blas.set_num_threads(1)
    try:
        return _run(torch, quick)
    finally:
        torch.set_num_threads(threads_before[0])
        if threads_before[1] is not None:
            blas.set_num_threads(threads_before[1])


def _run(torch, quick: bool) -> list[Row]:
    from .floor import Floor
    floor = Floor()  # NumPy against torch at each case's GEMM shapes, in the same run (floor.py)
    try:
        return _cases(torch, quick, floor)
    finally:
        floor.close()


def _cases(torch, quick: bool, floor) -> list[Row]:
    from .floor import torch_gemm_shapes
    rows = []
    floor_rounds = 1 if quick else 7
    repeat, warmup, min_time = (3, 1, 0.0) if quick else (7, 2, 3.0)
    threads = f"1 thread, NumPy BLAS threads {blas.get_num_threads()}"
    for B, T, d, h in (QUICK_SHAPES if quick else SHAPES):
        ours, theirs, err = _mha_pair(torch, B, T, d, h)
        st: dict = {}
        t = compare({"tinyattn": ours, "torch": theirs}, repeat=repeat, warmup=warmup, min_time=min_time, stats=st,
                    clock=time.process_time)
        fl = floor.measure(torch_gemm_shapes(torch, theirs), floor_rounds)
        target, why = (None, "") if quick else targets.decide("attention_torch", (B, T, d, h), fl)
        rows.append(Row("torch_cpu", f"Attention (B,T,d,h)=({B},{T},{d},{h}) float32 vs torch SDPA",
                        "fwd+bwd ms", t["tinyattn"] * 1e3, t["torch"] * 1e3, ratio=t["tinyattn"] / t["torch"],
                        ratio_name="tinyattn / torch", target=target, target_why=why,
                        extra={"max_rel_diff": err, "repeats": st["repeat"], "threads": threads,
                               "ratio_of_fastest": st["min"]["tinyattn"] / st["min"]["torch"]}, floor=fl))
    cfg = QUICK_CONFIG if quick else GPTConfig()
    batch = 2 if quick else BATCH
    ours, theirs, err, n_params = _gpt_pair(torch, cfg, batch)
    st = {}
    t = compare({"tinyattn": ours, "torch": theirs}, repeat=repeat, warmup=warmup, min_time=min_time, stats=st,
                    clock=time.process_time)
    fl = floor.measure(torch_gemm_shapes(torch, theirs), floor_rounds)
    target, why = (None, "") if quick else targets.decide("nanogpt", None, fl)
    rows.append(Row("torch_cpu", f"nanoGPT-sized step: {cfg.n_layer} layers, {cfg.n_head} heads, width {cfg.n_embd}, "
                                 f"block {cfg.block_size}, batch {batch}, AdamW, float32", "step ms",
                    t["tinyattn"] * 1e3, t["torch"] * 1e3, ratio=t["tinyattn"] / t["torch"],
                    ratio_name="tinyattn / torch", target=target, target_why=why,
                    extra={"max_rel_diff": err, "parameters": n_params, "repeats": st["repeat"], "threads": threads,
                           "ratio_of_fastest": st["min"]["tinyattn"] / st["min"]["torch"]}, floor=fl))
    return rows
