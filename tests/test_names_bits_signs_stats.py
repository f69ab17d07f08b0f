"""Shifts, copysign / logaddexp / logaddexp2 / nextafter / heaviside, cov / corrcoef / cumulative_trapezoid,
channel_shuffle, local_response_norm, alpha dropout and gather(sparse_grad=) without PyTorch: values by hand or
by NumPy, every gradient by float64 finite differences over every element (tinyattn.gradcheck). Against
PyTorch: tests/oracle/test_names_bits_signs_stats_torch.py."""
import math

import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn.functional as F
from tinyattn import gradcheck

rng = np.random.default_rng(11)


def leaf(*shape):
    return torch.tensor(rng.standard_normal(shape), dtype=torch.float64, requires_grad=True)


# ------------------------------------------------------------------ shifts
def test_shifts_by_hand():
    x = torch.tensor([1, -8, 3])
    assert (x << 2).tolist() == [4, -32, 12] and (x >> 1).tolist() == [0, -4, 1]
    assert (2 << torch.tensor([0, 1, 3])).tolist() == [2, 4, 16]
    # out of range: to the left 0, to the right the sign
    assert (x << torch.tensor([64, -1, 63])).tolist() == [0, 0, -(2 ** 63)]
    assert (x >> torch.tensor([64, 70, -1])).tolist() == [0, -1, 0]
    u = torch.tensor([200], dtype=torch.uint8)
    assert (u << 1).tolist() == [144] and (u << 1).dtype == torch.uint8  # wraps in uint8
    assert (torch.tensor([True, False]) << 1).dtype == torch.int64
    assert torch.bitwise_left_shift(3, torch.tensor([1])).tolist() == [6]
    y = torch.tensor([1, 2])
    z = y
    z <<= 3
    assert z is y and y.tolist() == [8, 16]
    with pytest.raises(NotImplementedError, match="\"lshift_cpu\" not implemented for 'Float'"):
        torch.ones(2) << 1


# ------------------------------------------------------------------ sign arithmetic
def test_sign_ops_by_hand():
    a = torch.tensor([1.5, -2.0, 3.0], dtype=torch.float64)
    b = torch.tensor([-1.0, 0.0, -0.0], dtype=torch.float64)
    assert a.copysign(b).tolist() == [-1.5, 2.0, -3.0]
    assert torch.copysign(torch.tensor([1, 2]), -1).tolist() == [-1.0, -2.0]
    assert torch.copysign(torch.tensor([1, 2]), -1).dtype == torch.float32  # integers compute in floats
    np.testing.assert_allclose(torch.logaddexp(a, b)._data, np.log(np.exp(a._data) + np.exp(b._data)), rtol=1e-15)
    np.testing.assert_allclose(torch.logaddexp2(a, b)._data, np.log2(2 ** a._data + 2 ** b._data), rtol=1e-15)
    big = torch.tensor([1000.0, -1000.0], dtype=torch.float64)
    np.testing.assert_allclose(torch.logaddexp(big, big)._data, big._data + math.log(2), rtol=1e-15)  # no overflow
    assert torch.nextafter(torch.tensor([1.0], dtype=torch.float64), torch.tensor([2.0], dtype=torch.float64)
                           ).item() == 1.0 + 2 ** -52
    assert torch.nextafter(torch.tensor([1.0]), torch.tensor([0.0])).item() == np.float32(1) - np.float32(2 ** -24)
    h = torch.heaviside(torch.tensor([-2.0, 0.0, 3.0, float("nan")]), torch.tensor([0.5]))
    assert h.tolist()[:3] == [0.0, 0.5, 1.0] and h.tolist()[3] == 0.0
    with pytest.raises(RuntimeError, match="different dtypes"):
        torch.heaviside(torch.tensor([1.0]), torch.tensor([1], dtype=torch.int64))
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        torch.logaddexp(torch.ones(2), 2)
    with pytest.raises(NotImplementedError, match="\"logaddexp2_cpu\" not implemented for 'Long'"):
        torch.logaddexp2(torch.tensor([1]), torch.tensor([2]))


def test_sign_ops_gradients_over_every_element():
    a = torch.tensor(rng.uniform(0.5, 2, 6) * np.where(rng.random(6) < 0.5, -1, 1), requires_grad=True)
    b = torch.tensor(rng.standard_normal(6), requires_grad=True)
    assert gradcheck(lambda a, b: a.copysign(b), [a, b])
    assert gradcheck(lambda a, b: torch.logaddexp(a, b), [leaf(3, 4), leaf(4)])
    assert gradcheck(lambda a, b: torch.logaddexp2(a, b), [leaf(3, 4), leaf(3, 1)])
    # nextafter moves by one ulp: its derivative in a is 1 (where a != b), 0 in b
    x, y = leaf(5), leaf(5)
    torch.nextafter(x, y).backward(torch.arange(1.0, 6.0, dtype=torch.float64))
    np.testing.assert_array_equal(x.grad._data, np.arange(1.0, 6.0))
    np.testing.assert_array_equal(y.grad._data, 0)


def test_heaviside_backward_raises_pytorchs_words():
    y = torch.heaviside(leaf(3), torch.tensor([0.5], dtype=torch.float64))
    with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
        y.sum().backward()


# ------------------------------------------------------------------ statistics
X = np.array([[0.0, 1.0, 2.0, 5.0], [2.0, 1.0, 0.5, -1.0], [1.0, 1.0, 3.0, 0.0]])


def test_cov_and_corrcoef_match_numpy():
    x = torch.tensor(X)
    np.testing.assert_allclose(torch.cov(x)._data, np.cov(X), rtol=1e-14)
    np.testing.assert_allclose(torch.cov(x, correction=0)._data, np.cov(X, bias=True), rtol=1e-14)
    fw, aw = np.array([1, 2, 1, 3]), np.array([0.5, 1.0, 2.0, 0.25])
    np.testing.assert_allclose(torch.cov(x, fweights=torch.tensor(fw), aweights=torch.tensor(aw))._data,
                               np.cov(X, fweights=fw, aweights=aw), rtol=1e-14)
    np.testing.assert_allclose(x.corrcoef()._data, np.corrcoef(X), rtol=1e-14)
    assert torch.cov(torch.tensor([1.0, 2.0, 4.0])).item() == pytest.approx(7 / 3)  # one variable: a scalar
    assert torch.cov(torch.tensor([[0, 1, 2]])).dtype == torch.float32  # integers: the default float
    with pytest.raises(RuntimeError, match="fweights cannot be negative"):
        torch.cov(x, fweights=torch.tensor([1, -1, 1, 1]))
    with pytest.raises(RuntimeError, match="expected input to have two or fewer dimensions"):
        torch.corrcoef(torch.ones(2, 2, 2))


def test_cov_and_corrcoef_gradients_over_every_element():
    assert gradcheck(lambda x: torch.cov(x), [leaf(3, 5)])
    assert gradcheck(lambda x, w: torch.cov(x, aweights=w),
                     [leaf(2, 4), torch.tensor(rng.uniform(0.5, 2, 4), requires_grad=True)])
    assert gradcheck(lambda x: torch.corrcoef(x), [leaf(3, 5)])


def test_cumulative_trapezoid_by_hand_and_gradient():
    y = torch.tensor([1.0, 2.0, 4.0])
    assert torch.cumulative_trapezoid(y).tolist() == [1.5, 4.5]
    assert torch.cumulative_trapezoid(y, dx=2).tolist() == [3.0, 9.0]
    assert torch.cumulative_trapezoid(y, torch.tensor([0.0, 1.0, 3.0])).tolist() == [1.5, 7.5]
    assert torch.cumulative_trapezoid(torch.tensor([1.0])).shape == (0,)
    x = torch.tensor(X)
    assert torch.cumulative_trapezoid(x)[:, -1].tolist() == torch.trapezoid(x).tolist()  # the last is the total
    assert gradcheck(lambda y, x: torch.cumulative_trapezoid(y, x, dim=0), [leaf(4, 3), leaf(4)])
    with pytest.raises(RuntimeError, match="one `x` value for each sample point"):
        torch.cumulative_trapezoid(y, torch.tensor([0.0, 1.0]))


# ------------------------------------------------------------------ channel and local layers
def test_channel_shuffle_by_hand():
    x = torch.arange(6.0).reshape(1, 6, 1)
    assert F.channel_shuffle(x, 2).reshape(-1).tolist() == [0, 3, 1, 4, 2, 5]
    assert torch.nn.ChannelShuffle(3)(x).reshape(-1).tolist() == [0, 2, 4, 1, 3, 5]
    assert gradcheck(lambda x: F.channel_shuffle(x, 2), [leaf(2, 4, 3)])
    with pytest.raises(RuntimeError, match="divisible by groups. Got 6 channels and 4 groups"):
        F.channel_shuffle(x, 4)


def test_local_response_norm_by_hand_and_gradient():
    x = torch.tensor([[[1.0], [2.0], [3.0]]], dtype=torch.float64)  # (1, 3, 1); size 3: neighbours c-1, c, c+1
    out = F.local_response_norm(x, 3, alpha=0.3, beta=0.5, k=1.0)._data.ravel()
    sums = np.array([0 + 1 + 4, 1 + 4 + 9, 4 + 9 + 0])
    np.testing.assert_allclose(out, np.array([1.0, 2.0, 3.0]) / np.sqrt(1 + 0.3 * sums / 3), rtol=1e-15)
    assert gradcheck(lambda x: F.local_response_norm(x, 2, alpha=0.5, beta=0.75, k=1.0), [leaf(2, 5, 3)])
    assert gradcheck(lambda x: torch.nn.LocalResponseNorm(3, 0.2, 0.6, 2.0)(x), [leaf(1, 4, 2, 2)])
    with pytest.raises(ValueError, match="Expected 3D or higher"):
        F.local_response_norm(torch.ones(2, 3), 2)


def test_alpha_dropout_keeps_mean_and_variance():
    torch.manual_seed(0)
    x = torch.randn(200_000, dtype=torch.float64)
    y = F.alpha_dropout(x, 0.2, training=True)._data
    assert abs(y.mean()) < 0.01 and abs(y.std() - 1) < 0.01  # the point of alpha dropout
    assert F.alpha_dropout(x, 0.2) is x  # training defaults to False, as PyTorch's
    assert F.alpha_dropout(torch.ones(3), 1.0, training=True).tolist() == [0.0, 0.0, 0.0]
    torch.manual_seed(1)
    xs = leaf(3, 4, 2)
    y = F.feature_alpha_dropout(xs, 0.5, training=True)
    y.sum().backward()
    kept = xs.grad._data > 0
    assert (kept == kept[:, :, :1]).all() and 0 < kept.mean() < 1
    a = 1 / math.sqrt((1.7580993408473766 ** 2 * 0.5 + 1) * 0.5)
    np.testing.assert_allclose(xs.grad._data[kept], a, rtol=1e-15)
    m = torch.nn.AlphaDropout(0.3)
    assert repr(m) == "AlphaDropout(p=0.3, inplace=False)" and m.eval()(xs) is xs


def test_gather_sparse_grad_keyword():
    x = leaf(3, 4)
    idx = torch.tensor([[0, 3], [1, 1], [2, 0]])
    np.testing.assert_array_equal(torch.gather(x, 1, idx, sparse_grad=True)._data, np.take_along_axis(x._data, idx._data, 1))
    assert gradcheck(lambda x: x.gather(1, idx, sparse_grad=True), [x])
    with pytest.raises(TypeError, match="sparse_grad' must be bool, not int"):
        x.gather(1, idx, sparse_grad=1)
