"""Augmented assignments (x //= y, x %= y, x **= y, x &= y, x |= y, x ^= y) and clamp_ with tensor bounds write
into x as PyTorch's do. Before, Python fell back to x = x // y for the six operators: a NEW tensor, so a view's
base kept its old values, an integer x //= 0.5 silently became float, and a bool x &= an int tensor gave no error;
clamp_ read a one-element tensor bound as a number (its gradient was lost) and refused a longer one.
Expected values are hand-computed; gradients are finite differences (gradcheck)."""
from __future__ import annotations

import numpy as np
import pytest

import tinyattn as torch
from tinyattn.gradcheck import gradcheck


def _apply(x, op, y):
    ns = {"x": x, "y": y}
    exec(f"x {op} y", ns)
    return ns["x"]


@pytest.mark.parametrize("op, y, want", [
    ("//=", 2, [3, -4, 0]), ("%=", 3, [1, 2, 1]), ("**=", 2, [49, 49, 1]),
    ("&=", 6, [6, 0, 0]), ("|=", 1, [7, -7, 1]), ("^=", 5, [2, -4, 4]),
])
def test_each_operator_writes_into_the_tensor_itself(op, y, want):
    x = torch.tensor([7, -7, 1])
    out = _apply(x, op, y)
    assert out is x and x.tolist() == want and x.dtype == torch.int64


@pytest.mark.parametrize("op", ["//=", "%=", "**=", "&=", "|=", "^="])
def test_a_write_through_a_view_reaches_its_base(op):
    base = torch.tensor([[7, 5], [3, 9]])
    row = base[1]
    _apply(row, op, 2)
    want = {"//=": [1, 4], "%=": [1, 1], "**=": [9, 81], "&=": [2, 0], "|=": [3, 11], "^=": [1, 11]}[op]
    assert base.tolist() == [[7, 5], want]


@pytest.mark.parametrize("op, y", [("//=", 0.5), ("%=", 1.5), ("**=", 0.5)])
def test_an_integer_tensor_refuses_a_float_result(op, y):
    x = torch.tensor([3, 4])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        _apply(x, op, y)
    assert x.tolist() == [3, 4] and x.dtype == torch.int64


@pytest.mark.parametrize("op", ["&=", "|=", "^=", "//="])
def test_a_bool_tensor_refuses_an_integer_result(op):
    x = torch.tensor([True, False])
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Bool"):
        _apply(x, op, torch.tensor([1, 2]))


def test_the_tensor_keeps_its_dtype_and_its_shape():
    x = torch.tensor(-3, dtype=torch.int16)
    _apply(x, "**=", torch.tensor(3, dtype=torch.int32))  # a 0-d int32 promotes, the result is written as int16
    assert x.dtype == torch.int16 and x.item() == -27
    u = torch.tensor([250, 3], dtype=torch.uint8)
    _apply(u, "//=", torch.tensor([2, 2], dtype=torch.int64))
    assert u.dtype == torch.uint8 and u.tolist() == [125, 1]
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        _apply(torch.tensor(5), "%=", torch.tensor([2, 3]))


def test_float_floor_divide_and_power_in_place_are_floats():
    x = torch.tensor([7.0, -7.0, 2.0])
    _apply(x, "//=", 2)
    assert x.tolist() == [3.0, -4.0, 1.0]
    _apply(x, "**=", 0.5)
    np.testing.assert_allclose(x.numpy(), [3 ** 0.5, np.nan, 1.0], equal_nan=True)


def test_power_in_place_gradient_through_a_view():
    def f(a):
        b = a * 1
        row = b[0]
        row **= 3.0
        return b

    a = torch.tensor([[0.5, -1.2], [0.7, 2.0]], dtype=torch.float64, requires_grad=True)
    assert gradcheck(f, [a])
    f(a).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [[3 * 0.25, 3 * 1.44], [1.0, 1.0]], rtol=1e-12)


def test_a_leaf_that_requires_grad_refuses_them():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        _apply(a, "**=", 2)


# ---- clamp_ with tensor bounds -----------------------------------------------------------------------------------

def test_clamp_min_with_a_one_element_tensor_passes_it_the_gradient():
    def f(x, m):
        b = x * 1
        b[1:].clamp_min_(m)
        return b

    x = torch.tensor([[-1.4], [-1.5]], dtype=torch.float64, requires_grad=True)
    m = torch.tensor(-1.45, dtype=torch.float64, requires_grad=True)
    out = f(x, m)
    assert out.tolist() == [[-1.4], [-1.45]]
    out.sum().backward()
    assert m.grad.item() == 1.0 and x.grad.tolist() == [[1.0], [0.0]]  # the clamped entry's gradient goes to m
    assert gradcheck(f, [x, m])


def test_clamp_in_place_takes_bounds_that_broadcast():
    b = torch.tensor([[1, 5], [3, 2]])
    b.clamp_(torch.tensor([2, 3]), torch.tensor(4))
    assert b.tolist() == [[2, 4], [3, 3]] and b.dtype == torch.int64
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        torch.tensor([1, 2]).clamp_max_(torch.tensor([0.5, 0.5]))
