"""tinyattn.special: the vectorized erf (Cody's rational approximations) against math.erf, and tinyattn.erf."""
import math

import numpy as np
import pytest

import tinyattn
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck
from tinyattn import special
from tinyattn.special import erf_array


def _ulps(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| in units of the last place of ref (the spacing of ref's dtype at ref)."""
    return np.abs(got.astype(np.float64) - ref.astype(np.float64)) / np.spacing(np.abs(ref)).astype(np.float64)


def _grid() -> np.ndarray:
    """A dense grid through every piece (|x| <= 0.46875, up to 4, beyond), tiny values and both signs."""
    x = np.concatenate([np.linspace(0.0, 6.0, 120_001), np.geomspace(1e-300, 30.0, 20_001),
                        np.linspace(0.46875 - 1e-3, 0.46875 + 1e-3, 2_001), np.linspace(3.99, 4.01, 2_001)])
    return np.concatenate([x, -x])


def test_erf_float64_within_a_few_ulps_of_math_erf_on_a_dense_grid():
    x = _grid()
    ref = np.array([math.erf(v) for v in x])
    err = _ulps(erf_array(x), ref)
    # Measured against glibc's math.erf: at most 5 ulp just above |x| = 0.46875 (where erf = 1 - erfc
    # halves the ulp), at most 2 ulp below it, 1 ulp for |x| >= 1; 99.7% of the grid within 1 ulp.
    assert err.max() <= 6
    assert err[np.abs(x) >= 1.0].max() <= 2
    assert np.mean(err <= 1) > 0.99


def test_erf_float32_rounds_like_math_erf():
    x = _grid().astype(np.float32)
    ref = np.array([math.erf(float(v)) for v in x]).astype(np.float32)  # the correctly rounded float32 (nearly always)
    got = erf_array(x)
    assert got.dtype == np.float32
    assert _ulps(got, ref).max() <= 1


def test_float32_rational_fit_is_good_to_a_small_fraction_of_a_float32_ulp():
    # the fitted x P(x^2) / Q(x^2) alone, in float64 (no float32 rounding): relative error <= 2.1e-9 measured
    x = np.linspace(1e-6, 4.0, 400_001)
    ref = np.array([math.erf(v) for v in x])
    rel = np.abs(_rational64(x) - ref) / ref
    assert rel.max() < 3e-9  # a float32 ulp is 6e-8 relative at most: this is under 0.05 of one


def _rational64(x):
    u = x * x
    return x * np.polyval(special._P32[::-1], u) / np.polyval(special._Q32[::-1], u)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_erf_special_values(dt):
    got = erf_array(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310 if dt == np.float64 else 1e-40, 27.0, -100.0],
                             dtype=dt))
    assert got.dtype == dt
    assert got[0] == 0.0 and not np.signbit(got[0]) and got[1] == 0.0 and np.signbit(got[1])
    assert got[2] == 1.0 and got[3] == -1.0 and np.isnan(got[4])
    assert got[5] == pytest.approx(2 / math.sqrt(math.pi) * float(np.array(1e-310 if dt == np.float64 else 1e-40, dt)),
                                   rel=1e-6)
    assert got[6] == 1.0 and got[7] == -1.0
    assert erf_array(np.array([[0.3, 2.0]])).shape == (1, 2)  # shape kept


def test_erf_tensor_function_and_gradcheck():
    x = tinyattn.tensor(np.array([-5.0, -2.5, -0.7, -0.2, 0.1, 0.45, 0.5, 1.3, 3.9, 4.2]), requires_grad=True)
    np.testing.assert_allclose(tinyattn.erf(x).numpy(), [math.erf(v) for v in x.numpy()], rtol=1e-15)
    assert gradcheck(tinyattn.erf, [x])
    ints = tinyattn.erf(tinyattn.tensor([1, 2]))  # an integer input computes in the default float dtype
    assert ints.dtype == tinyattn.float32
    np.testing.assert_allclose(ints.numpy(), [math.erf(1), math.erf(2)], rtol=1e-6)


def _phi64(x: np.ndarray) -> np.ndarray:
    """The normal CDF in float64 from math.erfc (relative accuracy in both tails): the reference for GELU."""
    return np.array([0.5 * math.erfc(-v / math.sqrt(2.0)) for v in x.astype(np.float64)])


def _gelu32_grid() -> np.ndarray:
    """float32 points from -12.9 (x Phi(x) is still a normal float32 there) to 12, tiny ones, both signs."""
    x = np.concatenate([np.linspace(-12.9, 12.0, 300_001), np.geomspace(1e-30, 12.0, 20_001),
                        -np.geomspace(1e-30, 12.9, 20_001)])
    return x.astype(np.float32)


def test_gelu_float32_within_a_few_ulps_of_the_exact_value_across_the_range_tails_included():
    """special.gelu_erf's float32 road (float32 throughout) against x Phi(x) in float64 at the same float32 x:
    measured max 7.2 ulp, 80% of the grid within 1 ulp; for x < -5, where 1/2 + erf/2 in float32 would have
    lost every digit (it is 0 below -5.7), the relative error stays as small. The bound 10 is for any CPU:
    NumPy's float32 exp is within 2.4 ulp with AVX2 (max here 7.2) and 0.5 ulp without SIMD (max 6.7)."""
    from tinyattn.special import gelu_erf
    x = _gelu32_grid()
    ref = x.astype(np.float64) * _phi64(x)
    y, _ = gelu_erf(x)
    assert y.dtype == np.float32
    err = np.abs(y - ref) / np.spacing(np.abs(ref).astype(np.float32))  # in float32 ulps of the exact value
    assert err.max() <= 10
    assert np.mean(err <= 1) > 0.75
    assert err[x < -5].max() <= 10 and (y[x < -5] < 0).all()  # relative accuracy where Phi is tiny
    assert err[x > 1].max() <= 2


def test_gelu_float32_slope_is_the_derivative():
    """The saved slope Phi(x) + x phi(x) (the backward's factor) against float64: measured 1.5e-7 at most."""
    from tinyattn.special import gelu_erf
    x = _gelu32_grid()[:340_000]
    x64 = x.astype(np.float64)
    want = _phi64(x) + x64 * np.exp(-x64 * x64 / 2) / math.sqrt(2 * math.pi)
    _, slope = gelu_erf(x.reshape(4, -1, 1))  # any shape: worked on flat blocks
    assert slope.shape == (4, x.size // 4, 1) and slope.dtype == np.float32
    assert np.abs(slope.reshape(-1) - want).max() <= 4 * 2.0 ** -24 * 1.13  # |slope| <= 1.13


def test_gelu_float32_backward_is_g_times_the_slope():
    x64 = np.random.default_rng(3).standard_normal(3 * 16384 + 7) * 3  # several blocks, the last one short
    x = tinyattn.tensor(x64.astype(np.float32), requires_grad=True)
    g = np.random.default_rng(4).standard_normal(x64.size).astype(np.float32)
    F.gelu(x).backward(tinyattn.tensor(g))
    xr = x64.astype(np.float32).astype(np.float64)
    want = g * (_phi64(xr) + xr * np.exp(-xr * xr / 2) / math.sqrt(2 * math.pi))
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=0, atol=4 * 2.0 ** -24 * 1.13 * np.abs(g).max())


def test_gelu_erf_float64_is_x_times_normal_cdf_bit_for_bit_and_edges_in_every_dtype():
    """float64 keeps Cody's erf: gelu_erf gives exactly x * normal_cdf(x), and the slope the formula
    Phi + x exp(-x^2/2)/sqrt(2 pi) in that order; float16/32 edge values (zeros, infinities, NaN, underflow)."""
    from tinyattn.special import _BLOCK, gelu_erf, normal_cdf
    x = np.random.default_rng(11).standard_normal(2 * _BLOCK + 127) * 3
    x[:9] = [0.0, -0.0, 5.7, -5.7, 40.0, -40.0, np.inf, -np.inf, np.nan]
    with np.errstate(invalid="ignore"):
        y, slope = gelu_erf(x.reshape(3, -1))
        cdf = normal_cdf(x)
        np.testing.assert_array_equal(y.reshape(-1), x * cdf)
        phi = np.exp(x * x * -0.5) * (1 / math.sqrt(2 * math.pi))
        np.testing.assert_array_equal(slope.reshape(-1), cdf + x * phi)
    for dt in (np.float16, np.float32):
        with np.errstate(invalid="ignore"):  # -inf * Phi(-inf) = -inf * 0: NaN, as in every dtype
            y, slope = gelu_erf(x[:9].astype(dt))
        assert y.dtype == slope.dtype == dt
        assert y[0] == 0 and not np.signbit(y[0]) and y[1] == 0 and np.signbit(y[1])
        assert y[2] == dt(5.7) and y[3] < 0 and y[4] == 40 and y[5] == 0 and y[6] == np.inf
        assert np.isnan(y[7]) and np.isnan(y[8]) and slope[0] == 0.5 and slope[4] == 1 and slope[5] == 0


def test_gelu_without_a_gradient_skips_the_slope_and_gives_the_same_values():
    from tinyattn.special import gelu_erf
    x = np.random.default_rng(6).standard_normal(70_000) * 3
    for dt in (np.float16, np.float32, np.float64):
        y, slope = gelu_erf(x.astype(dt))
        y2, none = gelu_erf(x.astype(dt), slope=False)
        assert none is None and y2.dtype == dt
        np.testing.assert_array_equal(y, y2)
        t = tinyattn.tensor(x.astype(dt), requires_grad=True)
        with tinyattn.no_grad():
            np.testing.assert_array_equal(F.gelu(t).numpy(), y)
        np.testing.assert_array_equal(F.gelu(tinyattn.tensor(x.astype(dt))).numpy(), y)  # no input needs a gradient
