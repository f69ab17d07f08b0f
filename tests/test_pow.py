"""x ** p for a constant p: the small integer and half-integer exponents by multiplication, the rest by np.power."""
import numpy as np
import pytest

import tinyattn as ta
from tinyattn.gradcheck import gradcheck

SMALL = [2, 3, 4, -1, -2, -3, 0.5, -0.5, 1.5, 2.5, -1.5, 3.5, 1, 0]


def _data(p, shape=(3, 4), seed=0):
    x = np.random.default_rng(seed).standard_normal(shape)
    return 0.2 + np.abs(x) if (p != int(p) or p < 0) else x  # half-integers need x >= 0, negative powers x != 0


@pytest.mark.parametrize("p", SMALL + [1.7, -0.3, 7])
def test_pow_values_match_np_power_within_rounding(p):
    for dt, ulps in ((np.float64, 4), (np.float32, 4)):
        a = _data(p, (64,)).astype(dt)
        got = (ta.tensor(a) ** p).numpy()
        ref = np.power(a.astype(np.float64), float(p))
        assert got.dtype == dt
        err = np.abs(got.astype(np.float64) - ref) / np.spacing(np.abs(ref).astype(dt)).astype(np.float64)
        assert err.max() <= ulps, (p, dt, err.max())


@pytest.mark.parametrize("p", SMALL + [1.7, -0.3])
def test_pow_gradcheck(p):
    x = ta.tensor(_data(p, seed=1), requires_grad=True)
    assert gradcheck(lambda a: a ** p, [x])
    assert gradcheck(lambda a: a.pow(p), [x])
    assert gradcheck(lambda a: ta.pow(a, p), [x])


def test_pow_edge_values_are_those_of_np_power():
    a = np.array([0.0, -0.0, 2.0, -3.0, np.inf])
    with np.errstate(divide="ignore", invalid="ignore"):
        for p in (-1, -2, 0.5, -0.5, -1.5, 1.5, 3):
            # the same infs and NaNs in the same places (assert_allclose compares those exactly); but x ** -0.5 is
            # PyTorch's rsqrt, 1 / sqrt(x): -inf at -0.0 (1 / -0.0), where C's pow gives +inf (measured in torch 2.13)
            want = 1 / np.sqrt(a) if p == -0.5 else np.power(a, float(p))
            np.testing.assert_allclose((ta.tensor(a) ** p).numpy(), want, rtol=4e-16)


def test_pow_one_returns_a_new_array_and_zero_ones():
    a = ta.tensor(np.array([1.0, 2.0]))
    y = a ** 1
    assert y.numpy() is not a.numpy() and not np.shares_memory(y.numpy(), a.numpy())
    np.testing.assert_array_equal((a ** 0).numpy(), [1.0, 1.0])


def test_pow_with_tensor_exponent_and_integer_tensors_keep_their_meaning():
    a = ta.tensor(np.array([1.5, 2.0]), requires_grad=True)
    b = ta.tensor(np.array([2.0, 0.5]), requires_grad=True)
    assert gradcheck(lambda a, b: a ** b, [a, b])  # a tensor exponent gets its own gradient
    i = ta.arange(4) ** 2
    assert i.dtype == np.int64 and i.tolist() == [0, 1, 4, 9]
    np.testing.assert_allclose((2.0 ** ta.tensor(np.array([1.0, 3.0]))).numpy(), [2.0, 8.0])
    np.testing.assert_allclose(ta.pow(2.0, ta.tensor(np.array([1.0, 3.0]))).numpy(), [2.0, 8.0])
