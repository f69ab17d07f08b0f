"""tinyattn.special: the vectorized erf (Cody's rational approximations) against math.erf, and tinyattn.erf."""
import math

import numpy as np
import pytest

import tinyattn
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


def test_gelu_erf_is_x_times_normal_cdf_bit_for_bit_in_every_float_dtype():
    """special.gelu_erf (exact GELU's forward: one pass of blocks, erf/2 from halved coefficients, the
    clip at 0 after rounding) gives exactly x * normal_cdf(x) and normal_cdf(x), the formula it replaces."""
    from tinyattn.special import _BLOCK, gelu_erf, normal_cdf
    rng = np.random.default_rng(11)
    for dt in (np.float16, np.float32, np.float64):
        x = (rng.standard_normal(2 * _BLOCK + 127) * 3).astype(dt)  # three blocks, the last one short
        edges = [0.0, -0.0, 5.6, -5.6, 5.7, -5.7, 8.0, -8.0, 40.0, -40.0, np.inf, -np.inf, np.nan]
        x[:len(edges)] = edges  # erf at and past its clip (|x| = 4 sqrt 2 = 5.657), zeros, infinities, NaN
        x[len(edges):len(edges) + 2000] = np.linspace(-6.0, -5.0, 2000)  # where erf/2 may pass -1/2
        x = x.reshape(3, -1)
        with np.errstate(invalid="ignore"):  # -inf * Phi(-inf) = -inf * 0: NaN, in both (as before)
            y, cdf = gelu_erf(x)
            want_cdf = normal_cdf(x)
            want_y = x * want_cdf
        assert y.dtype == cdf.dtype == dt and y.shape == cdf.shape == x.shape
        np.testing.assert_array_equal(cdf, want_cdf)
        np.testing.assert_array_equal(y, want_y)
        assert (np.signbit(cdf) == np.signbit(want_cdf)).all() and (np.signbit(y) == np.signbit(want_y)).all()
        assert (cdf[~np.isnan(cdf)] >= 0).all() and (cdf[~np.isnan(cdf)] <= 1).all()
