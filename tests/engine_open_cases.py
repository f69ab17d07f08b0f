"""Differences from PyTorch the fuzzer found that the engine does not fix yet (classes F8, F10-F16 of the
fuzz log), kept as ready tests: pytest does not collect this file (its name does not start with test_).
Each test asserts PyTorch's behaviour, measured with PyTorch 2.13 (tests/oracle runs the same cases against
real torch). When the engine fixes a class, move its test back into test_engine_fuzz_regressions.py.
"""
from __future__ import annotations

import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck


def _fd(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the scalar NumPy function f at x, over every element."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


# -- values ---------------------------------------------------------------------------------------
# found: torch.tensor([0.71], dtype=float64) held 0.7099999785423279 (the list went through float32)
def test_binary_op_result_follows_the_first_operands_layout():
    x = torch.tensor([[1., 2., 3.], [4., 5., 6.]])
    a = x.t()                                   # (3, 2), strides of a transpose
    b = torch.tensor([[1., 2.], [3., 4.], [5., 6.]])
    assert not (a * b).is_contiguous() and not (a + b).is_contiguous()
    assert (b * a).is_contiguous()
    assert (a * b).tolist() == [[1., 8.], [6., 20.], [15., 36.]]


# found (fuzz seed 2192): clone() of an expanded tensor kept the stride-0 layout (not contiguous);
# PyTorch keeps strides only of a dense, non-overlapping layout and otherwise returns a contiguous clone
@pytest.mark.parametrize("op,grad", [("torch.add(x, x, alpha=2)", 3.), ("torch.sub(x, x, alpha=2)", -1.),
                                     ("torch.einsum('ij->ji', x)", 1.)])
def test_backward_again_after_the_graph_was_freed_where_nothing_was_saved(op, grad):
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    h = eval(op)
    h.sum().backward()
    (h * 1.0).sum().backward()
    assert x.grad.tolist() == [[2 * grad] * 2] * 2   # twice d(sum h)/dx


# found (probe of 66 ops x {write the output, write the input} then backward): a one-operand einsum
# that only permutes is a view in both libraries, but tinyattn's node saved its input, so a write into
# the view raised at backward; PyTorch's einsum is a permute there, whose backward reads nothing
def test_permuting_einsum_output_written_in_place_then_backward():
    x0 = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    x = x0 * 1.0
    h = torch.einsum('ij->ji', x)
    h.add_(1)
    assert x.tolist() == [[2., 3., 4.], [5., 6., 7.]]  # a view: the write reached x
    (h * torch.tensor([[0., 1.], [2., 3.], [4., 5.]])).sum().backward()
    assert x0.grad.tolist() == [[0., 2., 4.], [1., 3., 5.]]  # the weights, transposed back


# found (fuzz seed 3436): after a write into the base, reading retains_grad of a split output raised
# the multi-output-view error; PyTorch raises it on grad_fn/is_leaf and use, and retains_grad is False
def test_retains_grad_of_a_split_output_after_a_base_write_is_false():
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    h = x * 1.0
    _, s = h.chunk(2)
    h.mul_(2)
    assert s.retains_grad is False
    assert s.requires_grad is True
    assert s.tolist() == [[6., 8.]]
    with pytest.raises(RuntimeError, match="multiple views"):
        _ = s.is_leaf


# found (fuzz seed 3260): a masked assignment h[h > 0] = 0. was backwarded through again after its graph
# was freed; PyTorch's index_put saved the mask's indices, so the second backward raises
def test_second_backward_through_a_masked_assignment_raises():
    x = torch.tensor([-1., 2., 3.], requires_grad=True)
    h = x.clone()
    h[h > 0] = 0.
    h.sum().backward()
    assert x.grad.tolist() == [1., 0., 0.]
    with pytest.raises(RuntimeError, match="second time"):
        (h * 1.0).sum().backward()


# found (fuzz seed 89 of the recorded set): a view taken under no_grad, its base then set to
# requires_grad_(False): a write into the view raised the no_grad-view error; PyTorch checks that rule
# only while the view requires grad (it follows its base), so it computes
def test_no_grad_view_of_a_base_that_no_longer_requires_grad_can_be_written():
    x = torch.tensor([0.5, -1.], requires_grad=True)
    with torch.no_grad():
        v = x[0]
    x.requires_grad_(False)
    v.mul_(2)
    assert v.tolist() == 1.0 and x.tolist() == [1.0, -1.0]


# found (fuzz seed 4343; low priority): a hook on one output of unbind/split fires when the node runs,
# even if only a sibling output was used; PyTorch hands that hook None (tinyattn did not call it)
@pytest.mark.parametrize("parts", ["x.unbind(0)", "(x * 1.0).split(1)"])
def test_hook_on_an_unused_sibling_output_fires_with_none(parts):
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    a, b = eval(parts)
    seen = []
    b.register_hook(lambda g: seen.append(g))
    (a * 2).sum().backward()
    assert seen == [None]
    assert x.grad.tolist() == [[2., 2.], [0., 0.]]


# found (fuzz seed 4324; low priority): e.copy_(e) on an expanded tensor raised the self-overlap error;
# PyTorch's copy_ of a tensor onto itself returns at once
def test_copy_of_an_expanded_tensor_onto_itself_is_a_no_op():
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    e = (x * 1.0).expand(2, 2, 2)
    assert e.copy_(e) is e
    assert e.tolist() == [[[1., 2.], [3., 4.]]] * 2
