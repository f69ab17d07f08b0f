"""cross_entropy / nll_loss in PyTorch's K-dimensional form (N, C, d1, ..., dk) against PyTorch:
values for every reduction, weight, label smoothing and ignore_index, and every gradient."""
import numpy as np
import pytest
import torch

import tinyattn

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("shape", [(6, 29, 5), (2, 4, 3, 2), (2, 3, 3), (4, 7)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("extra", ["plain", "weight", "smoothing", "ignore"])
def test_same_as_pytorch(shape, reduction, extra):
    x = RNG.standard_normal(shape)
    t = RNG.integers(0, shape[1], (shape[0], *shape[2:]))
    w = RNG.random(shape[1]) + 0.5
    if extra == "ignore":
        t.reshape(-1)[0] = -100
    got = []
    for lib in (torch, tinyattn):
        xt = lib.tensor(x, requires_grad=True)
        kw = {"weight": lib.tensor(w)} if extra == "weight" else {"label_smoothing": 0.1} if extra == "smoothing" else {}
        loss = lib.nn.functional.cross_entropy(xt, lib.tensor(t), reduction=reduction, **kw)
        nll = lib.nn.functional.nll_loss(lib.tensor(x).log_softmax(1), lib.tensor(t), reduction=reduction)
        loss.sum().backward()
        got.append((loss.detach().numpy(), nll.numpy(), xt.grad.numpy()))
    for a, b in zip(*got):
        assert a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)
