"""add/sub's alpha is cast to the result's dtype, as PyTorch does: a bool alpha for bool results (True + True * -1
is True: -1 is True), a wrapped one for unsigned results (u8 x + (-1) y is x - y mod 256; NumPy refused -1 there).
Expected values: the same arithmetic on Python ints."""
from __future__ import annotations

import itertools

import pytest

import tinyattn as torch

X, Y = [1, 0, 5, 200], [1, 1, 0, 100]


@pytest.mark.parametrize("alpha", [-1, 0, 2, -3])
def test_bool_results_take_alpha_as_a_bool(alpha):
    for x, y in itertools.product([True, False], repeat=2):
        want = x or (y and bool(alpha))
        assert torch.add(torch.tensor(x), torch.tensor(y), alpha=alpha).item() is want
        b = torch.tensor([x])
        b.add_(torch.tensor([y]), alpha=alpha)
        assert b.tolist() == [want]


@pytest.mark.parametrize("alpha", [-1, -3, 2])
def test_uint8_results_wrap_alpha(alpha):
    x, y = torch.tensor(X, dtype=torch.uint8), torch.tensor(Y, dtype=torch.uint8)
    assert torch.add(x, y, alpha=alpha).tolist() == [(p + alpha * q) % 256 for p, q in zip(X, Y)]
    assert torch.sub(x, y, alpha=alpha).tolist() == [(p - alpha * q) % 256 for p, q in zip(X, Y)]
    b = x.clone()
    b.sub_(y, alpha=alpha)
    assert b.tolist() == [(p - alpha * q) % 256 for p, q in zip(X, Y)]
    empty = torch.add(torch.zeros((0, 2), dtype=torch.uint8), torch.tensor(0), alpha=alpha)
    assert empty.shape == (0, 2) and empty.dtype == torch.uint8


def test_signed_and_float_alphas_are_unchanged():
    assert torch.add(torch.tensor(X, dtype=torch.int32), torch.tensor(Y, dtype=torch.int32), alpha=-3).tolist() == \
        [p - 3 * q for p, q in zip(X, Y)]
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    torch.sub(torch.ones(2), x, alpha=-0.5).sum().backward()
    assert x.grad.tolist() == [0.5, 0.5]
