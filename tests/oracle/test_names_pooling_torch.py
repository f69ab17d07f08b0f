"""nn/more_pooling.py against PyTorch 2.13: max/avg pooling in 3-D, adaptive max pooling in 1-3 D and
adaptive average pooling in 3-D: values, indices, the input's gradient (overlapping bins, ties), reprs."""
import numpy as np
import pytest
import torch

import tinyattn

rng = np.random.default_rng(7)
X3 = rng.standard_normal((2, 3, 5, 6, 4))
X2 = np.round(rng.standard_normal((2, 3, 7, 5)), 1)  # rounded: ties inside bins
X1 = np.round(rng.standard_normal((2, 3, 9)), 1)

CASES = [("max_pool3d", X3, (2,), {}), ("max_pool3d", X3, ((3, 2, 2),), {"stride": 1, "padding": 1, "dilation": (1, 2, 1)}),
         ("max_pool3d", X3, (2,), {"ceil_mode": True}), ("avg_pool3d", X3, (2,), {}),
         ("avg_pool3d", X3, (3,), {"stride": 2, "padding": 1, "count_include_pad": False, "ceil_mode": True}),
         ("avg_pool3d", X3, (2,), {"divisor_override": 3}), ("adaptive_avg_pool3d", X3, ((2, 4, 3),), {}),
         ("adaptive_avg_pool3d", X3, (1,), {}), ("adaptive_max_pool1d", X1, (4,), {}),
         ("adaptive_max_pool1d", X1, (9,), {}), ("adaptive_max_pool1d", X1[0], (5,), {}),
         ("adaptive_max_pool2d", X2, ((3, 4),), {}), ("adaptive_max_pool2d", X2, (1,), {}),
         ("adaptive_max_pool2d", X2, ((None, 3),), {}), ("adaptive_max_pool3d", X3, ((2, 3, 3),), {})]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("fn,x,args,kw", CASES)
def test_values_and_input_gradient_match_pytorch(fn, x, args, kw, dtype):
    got = []
    for lib in (torch, tinyattn):
        t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        out = getattr(lib.nn.functional, fn)(t, *args, **kw)
        out.backward(lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)), dtype=getattr(lib, dtype)))
        got.append((out.detach().numpy(), t.grad.numpy()))
    tol = 1e-13 if dtype == "float64" else 1e-5
    for a, b in zip(got[1], got[0]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("fn,x,size", [("adaptive_max_pool1d", X1, 4), ("adaptive_max_pool2d", X2, (3, 2)),
                                       ("adaptive_max_pool3d", X3, (2, 2, 3)), ("max_pool3d", X3, 2)])
def test_indices_match_pytorch(fn, x, size):
    got = [getattr(lib.nn.functional, fn)(lib.tensor(x), size, return_indices=True) for lib in (torch, tinyattn)]
    assert got[1][1].dtype == tinyattn.int64
    np.testing.assert_array_equal(got[1][1].numpy(), got[0][1].numpy())
    np.testing.assert_array_equal(got[1][0].numpy(), got[0][0].numpy())


@pytest.mark.parametrize("make", [lambda nn: nn.MaxPool3d(2), lambda nn: nn.MaxPool3d(3, 1, 1), lambda nn: nn.AvgPool3d(2),
                                  lambda nn: nn.AdaptiveMaxPool1d(3), lambda nn: nn.AdaptiveMaxPool2d((2, None), True),
                                  lambda nn: nn.AdaptiveMaxPool3d(2), lambda nn: nn.AdaptiveAvgPool3d(1)])
def test_modules_repr(make):
    assert repr(make(tinyattn.nn)) == repr(make(torch.nn))


def test_module_with_return_indices_returns_both():
    for lib in (torch, tinyattn):
        out, idx = lib.nn.AdaptiveMaxPool2d(2, return_indices=True)(lib.tensor(X2))
        assert tuple(out.shape) == tuple(idx.shape) == (2, 3, 2, 2)
