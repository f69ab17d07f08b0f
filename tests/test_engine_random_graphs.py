"""Random expression graphs with heavy reuse, checked by finite differences.

The backward walk sums the gradients of a node used more than once, stores fresh arrays as .grad
without copying, and adds into its own sums in place. Each of those is a place to lose or corrupt a
gradient (an array handed to two inputs, a 0-d sum that comes back as a NumPy scalar, ...), and
hand-picked graphs only hit the cases someone thought of. These graphs are drawn from a seeded
generator, so a failure reproduces exactly.
"""
from __future__ import annotations

import numpy as np
import pytest

import tinyattn as ta
from tinyattn.gradcheck import gradcheck

SHAPES = [(), (3,), (2, 3)]
BINARY = ["add", "sub", "mul", "div"]
UNARY = ["tanh", "neg", "scale", "square", "sum_keep", "transpose", "reshape_back"]


def _unary(op: str, x: ta.Tensor) -> ta.Tensor:
    if op == "tanh":
        return x.tanh()
    if op == "neg":
        return -x
    if op == "scale":
        return x * 0.7
    if op == "square":
        return x * x  # the same node twice in one op
    if op == "sum_keep":
        return x.sum(-1, keepdim=True) if x.ndim else x + 0.0  # broadcasts back out when combined
    if op == "transpose":
        return x.transpose(0, 1).transpose(0, 1) if x.ndim == 2 else x
    return x.reshape(-1).reshape(x.shape)  # reshape_back: a view there and back


def _binary(op: str, a: ta.Tensor, b: ta.Tensor) -> ta.Tensor:
    if op == "add":
        return a + b
    if op == "sub":
        return a - b
    if op == "mul":
        return a * b
    return a / (b * b + 1.0)  # div, kept away from 0


def _random_graph(rng: np.random.Generator, n_ops: int):
    """A function of two leaves: n_ops ops, each reading earlier nodes at random (so most are reused)."""
    plan = []
    for i in range(n_ops):
        if rng.random() < 0.6:
            plan.append(("b", BINARY[rng.integers(len(BINARY))], int(rng.integers(i + 2)), int(rng.integers(i + 2))))
        else:
            plan.append(("u", UNARY[rng.integers(len(UNARY))], int(rng.integers(i + 2)), None))
    n_out = int(rng.integers(2, 4))  # the output sums a few nodes, reusing them once more

    def f(a: ta.Tensor, b: ta.Tensor) -> ta.Tensor:
        nodes = [a * 1.0, b * 1.0]  # non-leaf starts, so even the first uses go through the sums
        for kind, op, i, j in plan:
            nodes.append(_binary(op, nodes[i], nodes[j]) if kind == "b" else _unary(op, nodes[i]))
        out = nodes[-1]
        for k in range(1, n_out):
            out = out + nodes[-1 - k]
        return out

    return f


@pytest.mark.parametrize("seed", range(40))
def test_random_graph_gradients_match_finite_differences(seed):
    rng = np.random.default_rng(seed)
    shape = SHAPES[seed % len(SHAPES)]
    f = _random_graph(rng, n_ops=int(rng.integers(3, 9)))
    a = ta.tensor(rng.standard_normal(shape) * 0.5, requires_grad=True)
    b = ta.tensor(rng.standard_normal(shape) * 0.5, requires_grad=True)
    assert gradcheck(f, [a, b])


@pytest.mark.parametrize("seed", range(10))
def test_random_graph_with_an_explicit_gradient_leaves_it_untouched(seed):
    rng = np.random.default_rng(100 + seed)
    shape = SHAPES[seed % len(SHAPES)]
    f = _random_graph(rng, n_ops=int(rng.integers(3, 9)))
    a = ta.tensor(rng.standard_normal(shape), requires_grad=True)
    b = ta.tensor(rng.standard_normal(shape), requires_grad=True)
    out = f(a, b)
    g = rng.standard_normal(out.shape)
    kept = g.copy()
    out.backward(g)
    first = [None if t.grad is None else t.grad.numpy().copy() for t in (a, b)]  # None: that leaf is not used
    assert any(g1 is not None for g1 in first)
    f(a, b).backward(g)  # a second pass adds into .grad in place
    np.testing.assert_array_equal(g, kept)  # the caller's gradient is never written
    for t, g1 in zip((a, b), first):
        if g1 is None:
            assert t.grad is None
        else:
            np.testing.assert_allclose(t.grad.numpy(), 2 * g1, rtol=1e-12, atol=1e-12)
