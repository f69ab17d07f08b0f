"""x.norm(p) for p > 0 other than 1 and 2: the gradient is 0 at a zero entry (where |x|^p has slope inf for p < 1)
and at a zero norm (0 / 0), the convention the 2-norm already follows here and PyTorch's for every p; elsewhere
the derivative itself (checked by finite differences). The forward and backward of the zero vector were NaN."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinyattn as torch
from tinyattn.gradcheck import gradcheck


@pytest.mark.parametrize("p", [0.5, 1.5, 3, 4])
def test_zero_vector_and_zero_entries(p):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = torch.zeros(3, dtype=torch.float64, requires_grad=True)
        y = x.norm(p)
        y.backward()
        assert y.item() == 0.0 and x.grad.tolist() == [0.0, 0.0, 0.0]
        x = torch.tensor([0.0, 2.0, -1.0], dtype=torch.float64, requires_grad=True)
        y = x.norm(p)
        y.backward()
    a = np.array([0.0, 2.0, -1.0])
    norm = (np.abs(a) ** p).sum() ** (1 / p)
    want = np.zeros(3)
    want[1:] = np.sign(a[1:]) * np.abs(a[1:]) ** (p - 1) / norm ** (p - 1)  # d/dx_i (sum |x|^p)^(1/p)
    np.testing.assert_allclose(y.item(), norm, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("p", [0.5, 1.5, 3])
def test_gradcheck_away_from_zero(p):
    x = torch.tensor([[0.7, -1.3, 2.1], [-0.4, 0.9, 1.6]], dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda t: t.norm(p, dim=1), (x,))


def test_negative_p_keeps_a_zero_entry_in_the_sum():
    # |0|^-1 = inf: the sum is inf and the norm 0 (a harmonic-type mean with a zero in it)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert torch.tensor([0.0, 2.0]).norm(-1).item() == 0.0
