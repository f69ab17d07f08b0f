"""ex08 · MultiHeadAttention(nn.Module): built from nn.Linear and Tensor ops, graded with weights the grader sets.

The checks talk to the learner's module through five small steps (build it, read its projections'
shapes, load weights into them, run forward, run backward and read the gradients), so they never
depend on how the module initialises itself: every weight and bias is drawn from the grader's
generator and written into W_q, W_k, W_v and W_o before the values are compared.
"""
import numpy as np

import tinyattn
from tinyattn import nn
from tinyattn.gradcheck import numerical_grad

from ..checkkit import CheckFailed, Session, as_array, copy_into, distinct, expect_close, expect_each, \
    expect_raises
from ..oracle import ref, wrong

PROJECTIONS = ("W_q", "W_k", "W_v", "W_o")
GRAPH_CUT = "graph_cut_by_numpy"      # a weight without a gradient: a step of the forward went through NumPy


def build(s: Session, C: int, H: int):
    m = s.invoke("MultiHeadAttention(d_model, n_heads)", s.fn("MultiHeadAttention"), C, H)
    if not isinstance(m, nn.Module):
        raise CheckFailed("MultiHeadAttention should subclass tinyattn.nn.Module")
    return m


def projection_shapes(m) -> dict[str, tuple]:
    """{name: (weight shape, bias shape or None)}; CheckFailed when a projection is not an nn.Linear."""
    shapes = {}
    for name in PROJECTIONS:
        lin = getattr(m, name, None)
        if not isinstance(lin, nn.Linear):
            raise CheckFailed(f"self.{name} should be an nn.Linear, got {type(lin).__name__}")
        shapes[name] = (lin.weight.numpy().shape, None if lin.bias is None else lin.bias.numpy().shape)
    return shapes


def expect_projections(m, C: int) -> None:
    """Four nn.Linear(d_model, d_model) WITH a bias, as the docstring asks."""
    for name, (w, b) in projection_shapes(m).items():
        if w != (C, C):
            raise CheckFailed(f"self.{name}.weight has shape {w}, expected ({C}, {C}): nn.Linear(d_model, d_model)")
        if b is None:
            raise CheckFailed(f"self.{name} has no bias: the docstring asks for nn.Linear(d_model, d_model) with a "
                              "bias (the default bias=True)")
        if b != (C,):
            raise CheckFailed(f"self.{name}.bias has shape {b}, expected ({C},)")


def random_weights(rng, C: int) -> list[np.ndarray]:
    """[Wq, bq, Wk, bk, Wv, bv, Wo, bo] in PyTorch's layout (weight (out, in)); biases clearly nonzero."""
    res = []
    for _ in PROJECTIONS:
        res += [rng.standard_normal((C, C)) / np.sqrt(C), rng.standard_normal(C) * 0.5]
    return res


def load(m, W: list[np.ndarray]) -> None:
    """Write the weights and biases into the module's four projections (float64, in place)."""
    for i, name in enumerate(PROJECTIONS):
        lin = getattr(m, name)
        for param, value in ((lin.weight, W[2 * i]), (lin.bias, W[2 * i + 1])):
            copy_into(param, value)


def forward(s: Session, m, x: np.ndarray, mask=None) -> np.ndarray:
    t = tinyattn.tensor(x.copy(), requires_grad=False)
    out = s.invoke("MultiHeadAttention.forward", m, t, copy_inputs=False, **({} if mask is None else {"mask": mask}))
    if not np.array_equal(t.numpy(), x):
        s.mutations.append("forward modified its input x in place")
    if not isinstance(out, tinyattn.Tensor):
        raise CheckFailed(f"forward should return a tinyattn Tensor, got {type(out).__name__}")
    return np.array(as_array(out, "forward(x)"))


def check_values(s: Session, x, H, mask=None, what="forward(x)") -> None:
    C = x.shape[-1]
    W = random_weights(s.rng, C)
    m = build(s, C, H)
    expect_projections(m, C)
    load(m, W)
    got = forward(s, m, x, mask)
    want, variants = ref.multihead(x, *W, H, mask), wrong.multihead_variants(x, *W, H, mask)
    expect_close(got, want, what, variants, nonfinite_mistake="unstable_softmax", inputs=(x,))


def backward(s: Session, m, x: np.ndarray, g: np.ndarray, mask=None) -> dict[str, np.ndarray | None]:
    """{'W_q.weight': grad, 'W_q.bias': grad, ...} after out.backward(g) (None where no gradient arrived)."""
    for p in m.parameters():
        p.grad = None
    t = tinyattn.tensor(x, requires_grad=False)
    out = s.invoke("MultiHeadAttention.forward", m, t, copy_inputs=False, **({} if mask is None else {"mask": mask}))
    if not isinstance(out, tinyattn.Tensor):
        raise CheckFailed(f"forward should return a tinyattn Tensor, got {type(out).__name__}")
    s.invoke("out.backward(g)", out.backward, g, copy_inputs=False)
    grads = {}
    for name in PROJECTIONS:
        lin = getattr(m, name)
        for part, param in (("weight", lin.weight), ("bias", lin.bias)):
            grads[f"{name}.{part}"] = None if param.grad is None else np.array(param.grad.numpy(), np.float64)
    return grads


def run(s: Session) -> None:
    previous = tinyattn.get_default_dtype()
    tinyattn.set_default_dtype(np.float64)      # float64 parameters: exact comparisons with the NumPy reference
    try:
        _run(s)
    finally:
        tinyattn.set_default_dtype(previous)


def _run(s: Session) -> None:
    s.overflow_mistake = "unstable_softmax"
    rng = s.rng
    B, T, H, d_k = distinct(rng, 4, 2, 5)
    C = H * d_k
    x = rng.standard_normal((B, T, C))
    with s.check("__init__ makes W_q, W_k, W_v, W_o: nn.Linear(d_model, d_model) with a bias"):
        expect_projections(build(s, C, H), C)
    with s.check("forward (B, T, C) -> (B, T, C) equals attention computed from its weights and biases"):
        check_values(s, x, H)
    with s.check("a causal (T, T) mask: True = may attend"):
        check_values(s, x, H, ref.causal_mask(T), "forward(x, mask=causal)")
    with s.check("a (B, 1, 1, T) padding mask"):
        lengths = rng.integers(1, T, size=B)
        pad = (np.arange(T)[None, :] < lengths[:, None])[:, None, None, :]
        check_values(s, x, H, pad, "forward(x, mask=padding)")
    with s.check("backward: gradients reach every weight and bias, and match finite differences of your forward"):
        check_backward(s, x, H)
    with s.check("backward through a causal mask: the masked path stays in Tensor ops too"):
        # a mask applied in NumPy (np.where on scores.numpy()) gives the right values and cuts the graph: W_q and W_k
        # get no gradient, and only a backward WITH a mask shows it (it earned 15/15 when no check had one)
        check_backward(s, x, H, ref.causal_mask(T))
    with s.check("d_model not divisible by n_heads raises ValueError"):
        expect_raises(s, ValueError, "MultiHeadAttention", C + 1, H, naming=dict(d_model=C + 1, n_heads=H))


def check_backward(s: Session, x: np.ndarray, H: int, mask=None) -> None:
    """Every weight and bias gets a finite nonzero gradient from out.backward(g), equal to the reference's derived
    gradient, and W_q.bias's equals central differences of the learner's own forward (with the same mask)."""
    C = x.shape[-1]
    W, g = random_weights(s.rng, C), s.rng.standard_normal(x.shape)
    m = build(s, C, H)
    expect_projections(m, C)
    load(m, W)
    grads = backward(s, m, x, g, mask)
    for key, grad in grads.items():
        if grad is None or not np.isfinite(grad).all() or not np.any(grad):
            raise CheckFailed(f"self.{key} got no gradient{'' if mask is None else ' with a mask'}: stay in Tensor "
                              "ops (no .data / .numpy() / np.* in forward, the mask too: masked_fill), or autograd "
                              "can not reach the weights", GRAPH_CUT)
    # every weight and bias against the derived gradient of the reference (a backward that made up seven of the
    # eight, W_q.bias right, passed when only that one was compared: grading_fixtures/weak_checks/fake_backward_ex08)
    want = ref.multihead_grads(x, *W, H, mask, g)
    expect_each([(grads[key], want[i], f"self.{key}.grad", None, dict(inputs=(x,))) for i, key in enumerate(grads)])
    # the query projection's bias, by central differences of your own forward (no reference needed)

    def loss(bq):
        copy_into(m.W_q.bias, bq)
        return float(np.sum(forward(s, m, x, mask) * g))
    numeric = numerical_grad(loss, W[1])
    copy_into(m.W_q.bias, W[1])
    expect_close(grads["W_q.bias"], numeric, "W_q.bias.grad against finite differences of your forward",
                 rtol=1e-5, atol=1e-7)
