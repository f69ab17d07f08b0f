"""ex08 · MultiHeadAttention(nn.Module): built from nn.Linear and Tensor ops, graded from its own weights."""
import numpy as np

import tinyattn
from tinyattn import nn

from .. import references as ref
from .. import wrong
from ..checkkit import CheckFailed, Session, as_array, distinct, expect_close, expect_raises

PROJECTIONS = ("W_q", "W_k", "W_v", "W_o")


def weights_of(m) -> list:
    """[Wq, bq, Wk, bk, Wv, bv, Wo, bo] as NumPy arrays (PyTorch layout: weight (out, in))."""
    res = []
    for name in PROJECTIONS:
        lin = getattr(m, name, None)
        if not isinstance(lin, nn.Linear):
            raise CheckFailed(f"self.{name} should be an nn.Linear, got {type(lin).__name__}")
        res += [lin.weight.numpy(), None if lin.bias is None else lin.bias.numpy()]
    return res


def build(s: Session, C: int, H: int):
    return s.invoke("MultiHeadAttention(d_model, n_heads)", s.fn("MultiHeadAttention"), C, H)


def forward(s: Session, m, x: np.ndarray, mask=None) -> np.ndarray:
    t = tinyattn.tensor(x.copy(), requires_grad=False)
    out = s.invoke("MultiHeadAttention.forward", m, t, copy_inputs=False, **({} if mask is None else {"mask": mask}))
    if not np.array_equal(t.numpy(), x):
        s.mutations.append("forward modified its input x in place")
    if not isinstance(out, tinyattn.Tensor):
        raise CheckFailed(f"forward should return a tinyattn Tensor, got {type(out).__name__}")
    return as_array(out, "forward(x)")


def check_values(s: Session, m, x, H, mask=None, what="forward(x)") -> None:
    W = weights_of(m)
    variants = {mid: [wrong.safe(wrong.multihead, x, *W, H, mask, **kw) for kw in knobs]
                for mid, knobs in wrong.MULTIHEAD_KNOBS.items() if mask is not None or mid not in wrong.MASK_MISTAKES}
    expect_close(forward(s, m, x, mask), ref.multihead(x, *W, H, mask), what, variants,
                 nonfinite_mistake="unstable_softmax")


def run(s: Session) -> None:
    previous = tinyattn.get_default_dtype()
    tinyattn.set_default_dtype(np.float64)      # float64 parameters: exact comparisons with the NumPy reference
    try:
        _run(s)
    finally:
        tinyattn.set_default_dtype(previous)


def _run(s: Session) -> None:
    rng = s.rng
    B, T, H, d_k = distinct(rng, 4, 2, 5)
    C = H * d_k
    x = rng.standard_normal((B, T, C))
    with s.check("__init__ makes W_q, W_k, W_v, W_o: nn.Linear(d_model, d_model)"):
        m = build(s, C, H)
        if not isinstance(m, nn.Module):
            raise CheckFailed("MultiHeadAttention should subclass tinyattn.nn.Module")
        for name, w in zip(PROJECTIONS, weights_of(m)[0::2]):
            if w.shape != (C, C):
                raise CheckFailed(f"self.{name}.weight has shape {w.shape}, expected ({C}, {C})")
    with s.check("forward (B, T, C) -> (B, T, C) equals attention computed from its weights"):
        check_values(s, build(s, C, H), x, H)
    with s.check("a causal (T, T) mask: True = may attend"):
        check_values(s, build(s, C, H), x, H, ref.causal_mask(T), "forward(x, mask=causal)")
    with s.check("a (B, 1, 1, T) padding mask"):
        lengths = rng.integers(1, T, size=B)
        pad = (np.arange(T)[None, :] < lengths[:, None])[:, None, None, :]
        check_values(s, build(s, C, H), x, H, pad, "forward(x, mask=padding)")
    with s.check("backward: gradients reach W_q, W_k, W_v and W_o"):
        m = build(s, C, H)
        t = tinyattn.tensor(x, requires_grad=False)
        out = s.invoke("MultiHeadAttention.forward", m, t, copy_inputs=False)
        if not isinstance(out, tinyattn.Tensor):
            raise CheckFailed(f"forward should return a tinyattn Tensor, got {type(out).__name__}")
        s.invoke("out.backward(g)", out.backward, rng.standard_normal(out.shape), copy_inputs=False)
        for name in PROJECTIONS:
            g = getattr(m, name).weight.grad
            g = None if g is None else g.numpy()
            if g is None or not np.isfinite(g).all() or not np.any(g):
                raise CheckFailed(f"self.{name}.weight got no gradient: stay in Tensor ops (no .data / np.* "
                                  "in forward), or autograd can not reach the weights")
    with s.check("d_model not divisible by n_heads raises ValueError"):
        expect_raises(s, ValueError, "MultiHeadAttention", C + 1, H, naming=dict(d_model=C + 1, n_heads=H))
