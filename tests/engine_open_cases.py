"""Differences from PyTorch the fuzzer found that the engine does not fix (classes F8 and F15 of the fuzz
log, both named in docs/pytorch.md), kept as ready tests: pytest does not collect this file (its name does
not start with test_). Each test asserts PyTorch's behaviour, measured with PyTorch 2.13 (tests/oracle runs
the same cases against real torch). If the engine ever fixes a class, move its test into
test_engine_fuzz_regressions.py.

F8: matching TensorIterator's output layout would cost every elementwise op a layout decision (and a
copy where NumPy chose otherwise); the values, gradients and dtypes are PyTorch's.
F15: split/unbind outputs are separate views here, each with its own node; calling a hook with None
needs the walk to know siblings, and a hook handed None can change no gradient.
"""
from __future__ import annotations

import pytest

import tinyattn as torch
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck


# -- layout ---------------------------------------------------------------------------------------
# found (fuzz seed 1158): a binary op of a transposed and a contiguous tensor came back contiguous
# either way; PyTorch's output takes the layout of the first operand (TensorIterator's order)
def test_binary_op_result_follows_the_first_operands_layout():
    x = torch.tensor([[1., 2., 3.], [4., 5., 6.]])
    a = x.t()                                   # (3, 2), strides of a transpose
    b = torch.tensor([[1., 2.], [3., 4.], [5., 6.]])
    assert not (a * b).is_contiguous() and not (a + b).is_contiguous()
    assert (b * a).is_contiguous()
    assert (a * b).tolist() == [[1., 8.], [6., 20.], [15., 36.]]


# -- hooks ----------------------------------------------------------------------------------------
# found (fuzz seed 4343; low priority): a hook on one output of unbind/split fires when the node runs,
# even if only a sibling output was used; PyTorch hands that hook None (tinyattn does not call it)
@pytest.mark.parametrize("parts", ["x.unbind(0)", "(x * 1.0).split(1)"])
def test_hook_on_an_unused_sibling_output_fires_with_none(parts):
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    a, b = eval(parts)
    seen = []
    b.register_hook(lambda g: seen.append(g))
    (a * 2).sum().backward()
    assert seen == [None]
    assert x.grad.tolist() == [[2., 2.], [0., 0.]]
