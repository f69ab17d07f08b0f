"""nn/more_pooling.py without PyTorch: adaptive max pooling against a NumPy loop over PyTorch's bins,
3-D max/avg pooling against NumPy windows, every gradient by finite differences in float64."""
import itertools

import numpy as np
import pytest

import tinyattn
import tinyattn.nn.functional as F
from tinyattn import gradcheck, nn

rng = np.random.default_rng(8)


def t(a):
    return tinyattn.tensor(a, dtype=tinyattn.float64, requires_grad=True)


def adaptive_max_loop(x, out):
    """Bin i of n positions into o: floor(i n / o) .. ceil((i + 1) n / o) - 1, per spatial dim."""
    S = x.shape[2:]
    res = np.zeros(x.shape[:2] + out)
    for cell in itertools.product(*map(range, out)):
        win = tuple(slice(i * n // o, -(-(i + 1) * n // o)) for i, n, o in zip(cell, S, out))
        res[(Ellipsis,) + cell] = x[(slice(None), slice(None)) + win].reshape(*x.shape[:2], -1).max(-1)
    return res


@pytest.mark.parametrize("shape,out", [((2, 3, 7), (3,)), ((2, 2, 5, 7), (3, 4)), ((1, 2, 4, 5, 3), (2, 3, 2)),
                                       ((2, 3, 4), (4,)), ((1, 1, 3), (5,))])
def test_adaptive_max_pool_is_the_max_of_each_bin(shape, out):
    x = rng.standard_normal(shape)
    fn = getattr(F, f"adaptive_max_pool{len(out)}d")
    np.testing.assert_array_equal(fn(t(x), out).numpy(), adaptive_max_loop(x, out))
    assert gradcheck(lambda x: fn(x, out), (t(x),))


def test_adaptive_max_pool_indices_point_at_the_max_and_ties_take_the_first():
    x = rng.standard_normal((2, 3, 5, 6))
    out, idx = F.adaptive_max_pool2d(t(x), (2, 3), return_indices=True)
    np.testing.assert_array_equal(np.take_along_axis(x.reshape(2, 3, -1), idx.numpy().reshape(2, 3, -1), -1),
                                  out.numpy().reshape(2, 3, -1))
    ones = t(np.ones((1, 1, 3)))
    F.adaptive_max_pool1d(ones, 2).sum().backward()
    assert ones.grad.tolist() == [[[1.0, 1.0, 0.0]]]  # bins [0, 2) and [1, 3): each gives its first max
    assert F.adaptive_max_pool2d(tinyattn.ones(3, 4, 4), 1).shape == (3, 1, 1)  # unbatched
    assert nn.AdaptiveMaxPool2d((None, 2))(tinyattn.ones(1, 2, 3, 4)).shape == (1, 2, 3, 2)


def test_pooling_in_3d_against_numpy_windows():
    x = rng.standard_normal((2, 2, 4, 6, 4))
    win = x.reshape(2, 2, 2, 2, 3, 2, 2, 2).transpose(0, 1, 2, 4, 6, 3, 5, 7).reshape(2, 2, 2, 3, 2, -1)
    np.testing.assert_array_equal(F.max_pool3d(t(x), 2).numpy(), win.max(-1))
    np.testing.assert_allclose(F.avg_pool3d(t(x), 2).numpy(), win.mean(-1), rtol=1e-14)
    np.testing.assert_allclose(nn.AdaptiveAvgPool3d(1)(t(x)).numpy(), x.mean((2, 3, 4), keepdims=True), rtol=1e-14)
    assert gradcheck(lambda x: F.max_pool3d(x, 3, 1, 1), (t(x),))
    assert gradcheck(lambda x: F.avg_pool3d(x, 3, 2, 1, count_include_pad=False), (t(x),))
    assert gradcheck(lambda x: F.adaptive_avg_pool3d(x, (3, 4, 3)), (t(x),))
    assert nn.MaxPool3d(2)(tinyattn.ones(2, 4, 4, 4)).shape == (2, 2, 2, 2)
    assert repr(nn.MaxPool3d(2)) == "MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"


def test_errors():
    with pytest.raises(ValueError, match="tuple of 2"):
        F.adaptive_max_pool2d(tinyattn.ones(1, 1, 4, 4), (1, 2, 3))
    with pytest.raises(RuntimeError, match=">= 1"):
        F.adaptive_max_pool1d(tinyattn.ones(1, 1, 4), 0)
    with pytest.raises(RuntimeError, match="Expected 2D or 3D input"):
        F.adaptive_max_pool1d(tinyattn.ones(4), 2)
