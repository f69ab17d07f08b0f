"""x.norm(p) at zero entries and zero norms against PyTorch (tests/test_pnorm_at_zero.py checks without torch)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import tinyattn


@pytest.mark.parametrize("p", [0.5, 1.5, 2.5, 3, 4])
@pytest.mark.parametrize("v", [[0.0, 0.0], [0.0, 2.0], [1.0, -2.0], [float("inf"), 1.0], [0.0, -0.0, 3.0]])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pnorm_value_and_gradient(p, v, dtype):
    out = []
    for lib in (tinyattn, torch):
        x = lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=True)
        y = x.norm(p)
        y.backward()
        out.append((y.item(), x.grad.numpy(), str(y.dtype).split(".")[-1]))
    assert out[0][2] == out[1][2]
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-6)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-5, equal_nan=True)
