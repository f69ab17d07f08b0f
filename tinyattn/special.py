"""The error function, vectorized: NumPy has none, and exact GELU needs it for every activation.

``erf_array(x)`` evaluates W. J. Cody's rational Chebyshev approximations ("Rational Chebyshev
approximations for the error function", Math. Comp. 23, 1969), the ones behind most C libraries'
erf. The line is cut in three, and each piece has its own rational function R = P / Q:

* |x| <= 0.46875:     erf(x)  = x R1(x^2)                       (erf is close to 2x/sqrt(pi) here)
* 0.46875 < |x| <= 4: erfc(x) = exp(-x^2) R2(|x|)               (erfc = 1 - erf, the small part)
* |x| > 4:            erfc(x) = exp(-x^2) / |x| (1/sqrt(pi) + R3(1/x^2) / x^2)   (the asymptotic series)

and erf(x) = sign(x) (1 - erfc(|x|)) outside the first piece. exp(-x^2) is taken as
exp(-s^2) exp(-(x - s)(x + s)) with s = x rounded down to a multiple of 1/16: s^2 is then exact,
so the rounding error of x^2 (which exp would magnify by up to x^2 = 16 times) never arises.
Against ``math.erf`` on a dense grid (tests/test_special.py) it is within 1 ulp for 99.7% of the
points, 1 ulp for |x| >= 1, 2 ulp below 0.46875, and at most 5 ulp just above 0.46875, where
erf = 1 - erfc has half the ulp of erfc (Cody's fit there is itself good to about 0.3 ulp of erfc).

float32 needs only 24 bits, and GELU calls erf on every activation of a model, so float32 (and
float16) input takes a cheaper road: one rational function for the whole of |x| <= 4,
erf(x) = x P(x^2) / Q(x^2) with P of degree 6 and Q of degree 5 (fitted for this file by weighted
least squares against erf on [0, 4]; max relative error 2.1e-9, 0.04 float32 ulp), and erf = +-1
beyond (erf(4) rounds to 1 in float32). It is evaluated in float64 and rounded once, so it is within
1 ulp of math.erf in float32; no exp, no branches, about 25 array operations.

Both are computed block by block (_BLOCK elements at a time): each of their dozens of array
operations then works on data already in the CPU cache instead of streaming the whole array through
memory again (on (8, 128, 512) float32 this made the float32 road about 3x faster).
"""
from __future__ import annotations

import math

import numpy as np

from .tensor import Function, Tensor

# Cody's coefficients, highest power last in each tuple (Horner runs from the end).
_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02, 3.20937758913846947e03)
_A4 = 1.85777706184603153e-1  # the top coefficient of P1 (Q1's is 1)
_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03, 2.84423683343917062e03)
_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01, 2.98635138197400131e02,
      8.81952221241769090e02, 1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03)
_C8 = 2.15311535474403846e-8
_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02, 1.62138957456669019e03,
      3.29079923573345963e03, 4.36261909014324716e03, 3.43936767414372164e03, 1.23033935480374942e03)
_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1, 1.60837851487422766e-2,
      6.58749161529837803e-4)
_P5 = 1.63153871373020978e-2
_Q = (2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1, 6.05183413124413191e-2,
      2.33520497626869185e-3)
# float32's single rational function, in u = x^2, lowest power first: erf(x) = x P(u) / Q(u) for |x| <= 4.
_P32 = (1.1283791693680842, 0.18520697286517218, 0.05431701193931918, 0.0038497143681529046,
        0.00037959423905448755, 4.684289282793944e-06, -1.3199932455506554e-08)
_Q32 = (1.0, 0.49746881967940587, 0.11395961491075603, 0.01546224462046098, 0.0013075713564272766,
        6.31060093535824e-05)
_BLOCK = 16384  # elements per block: 128 KiB of float64, a few such arrays fit in a core's L2 cache
_A_MINUS_B = tuple(a - b for a, b in zip(_A, _B))  # R1 - 1 = (P1 - Q1) / Q1
_INV_SQRT_PI = 5.6418958354775628695e-1
_INV_SQRT_2 = 1.0 / math.sqrt(2.0)  # (a Python float: x * it keeps x's dtype)


def _ratio(t: np.ndarray, top: float, p: tuple, q: tuple) -> np.ndarray:
    """(top t^n + p0 t^(n-1) + ... + p_{n-1}) / (t^n + q0 t^(n-1) + ... + q_{n-1}): Cody's Horner scheme.

    The last entry of ``p`` and ``q`` is the constant term; numerator and denominator are built
    in place (two arrays for the whole evaluation, whatever the degree)."""
    num = top * t
    den = t.copy()
    for a, b in zip(p[:-1], q[:-1]):
        num += a
        num *= t
        den += b
        den *= t
    num += p[-1]
    den += q[-1]
    num /= den
    return num


def _exp_minus_square(y: np.ndarray) -> np.ndarray:
    """exp(-y^2) for y >= 0, without the rounding error of y*y: y = s + r, s on a 1/16 grid, s^2 exact."""
    s = np.floor(y * 16.0) * (1.0 / 16.0)
    rest = (y - s) * (y + s)  # y^2 - s^2, with no cancellation
    out = np.exp(-(s * s))
    out *= np.exp(-rest)
    return out


def _erf_small(z: np.ndarray) -> np.ndarray:
    """erf(z) for |z| <= 0.46875 as z + z (R1(z^2) - 1): R1 - 1 is at most 0.13, so its rounding
    error reaches the result 8 times smaller, and only the last addition rounds at full size."""
    return z + z * _ratio(z * z, _A4 - 1.0, _A_MINUS_B, _B)


def _erf_cody(z: np.ndarray) -> np.ndarray:
    """erf of a 1-D float64 block, by Cody's three pieces."""
    y = np.abs(z)
    out = np.empty_like(z)
    small = y <= 0.46875  # (the NaN entries fall in no piece: they are put back at the end)
    mid = (y > 0.46875) & (y <= 4.0)
    big = y > 4.0
    if small.all():  # common in tests and for small activations: skip the masks altogether
        return _erf_small(z)
    if small.any():
        out[small] = _erf_small(z[small])
    if mid.any():
        ym = y[mid]
        erfc = _ratio(ym, _C8, _C, _D)
        erfc *= _exp_minus_square(ym)
        out[mid] = np.copysign((0.5 - erfc) + 0.5, z[mid])  # (0.5 - erfc) is exact for erfc in [0.25, 1]
    if big.any():
        yb = y[big]
        # erfc(y) underflows to 0 for y > 26.6: erf is then +-1 exactly, and 1/y^2 below stays finite
        inv2 = 1.0 / (yb * yb)
        series = (_INV_SQRT_PI - inv2 * _ratio(inv2, _P5, _P, _Q)) / yb
        with np.errstate(under="ignore"):
            erfc = series * _exp_minus_square(np.minimum(yb, 27.0))
        out[big] = np.copysign(1.0 - erfc, z[big])
    nan = ~(small | mid | big)
    if nan.any():
        out[nan] = np.nan
    return out


def _erf_rational(x: np.ndarray, half: bool = False) -> np.ndarray:
    """erf of a 1-D float32/float16 block to float32 accuracy: x P(x^2) / Q(x^2), in float64, clipped to [-1, 1].

    ``half=True`` gives erf / 2 instead, unclipped (it may pass +-1/2 by the fit's 2e-9): the numerator's
    coefficients halved, which halves every step of its Horner exactly (a power of two), so the result
    is exactly half of erf's, and exact GELU saves one array operation (gelu_erf clips later)."""
    z = np.clip(x, -4.0, 4.0).astype(np.float64)  # erf(+-4) already rounds to +-1 in float32 (NaN stays NaN)
    u = z * z
    p = _P32_HALF if half else _P32
    num = u * p[-1]
    num += p[-2]
    for c in p[-3::-1]:  # Horner, in place
        num *= u
        num += c
    den = u * _Q32[-1]
    den += _Q32[-2]
    for c in _Q32[-3::-1]:
        den *= u
        den += c
    num *= z
    num /= den
    return num if half else np.clip(num, -1.0, 1.0, out=num)


_P32_HALF = tuple(0.5 * c for c in _P32)


def erf_block(dtype):
    """The erf of one 1-D block for arrays of ``dtype`` (Cody's for float64, the fitted rational otherwise);
    its result is float64 (the caller rounds once, when it stores it)."""
    return _erf_cody if np.dtype(dtype) == np.float64 else _erf_rational


def blockwise(fn, *arrays: np.ndarray, dtype) -> np.ndarray:
    """``fn(out_block, *blocks)`` over aligned blocks of same-shaped arrays; ``fn`` writes each block of one
    new array of ``dtype``, which is returned.

    A formula of many array operations, run on the whole array, streams it through memory once per
    operation; run on blocks of _BLOCK elements, every operation finds its data in the cache."""
    flat = [a.reshape(-1) for a in arrays]  # (a broadcast view, such as a gradient, is copied here)
    out = np.empty(flat[0].shape, dtype=dtype)
    for i in range(0, out.size, _BLOCK):
        fn(out[i:i + _BLOCK], *(f[i:i + _BLOCK] for f in flat))
    return out.reshape(arrays[0].shape)


def normal_cdf(x: np.ndarray) -> np.ndarray:
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2 elementwise for a float array, same shape and dtype: exact GELU's weight."""
    erf = erf_block(x.dtype)
    return blockwise(lambda out, xb: np.copyto(out, 0.5 + 0.5 * erf(xb * _INV_SQRT_2)), x, dtype=x.dtype)


def gelu_erf(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x Phi(x), Phi(x)) for a float array: exact GELU and the weight its backward needs, block by block.
    The same numbers as ``x * normal_cdf(x)``, bit for bit (tests/test_special.py), in fewer array passes:
    the product is taken while the block is in the cache, and for float32/float16 Phi = erf/2 + 1/2 comes
    from _erf_rational(half=True), then is clipped at 0 after rounding, in x's dtype. (erf/2 passes +-1/2
    by at most 1e-9: above, 1 + 1e-9 rounds to 1 in float32 and float16 as erf clipped to 1 would give;
    below, the maximum with 0 gives the 0 of erf clipped to -1.)"""
    flat = x.reshape(-1)
    y, cdf = np.empty(flat.shape, dtype=x.dtype), np.empty(flat.shape, dtype=x.dtype)
    wide = x.dtype == np.float64
    for i in range(0, flat.size, _BLOCK):
        xb, cb = flat[i:i + _BLOCK], cdf[i:i + _BLOCK]
        if wide:
            e = _erf_cody(xb * _INV_SQRT_2)  # a new float64 array: scaled in place
            e *= 0.5
        else:
            e = _erf_rational(xb * _INV_SQRT_2, half=True)  # erf / 2 in float64
        e += 0.5
        np.copyto(cb, e)  # Phi, rounded once to x's dtype
        if not wide:
            np.maximum(cb, 0.0, out=cb)  # (NaN stays NaN)
        np.multiply(xb, cb, out=y[i:i + _BLOCK])
    return y.reshape(x.shape), cdf.reshape(x.shape)


def erf_array(x) -> np.ndarray:
    """erf(x) elementwise for a float array, same shape and dtype (ints become float64); within 1 ulp of
    math.erf in float32, and as measured by the tests in float64."""
    x = np.asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    erf = erf_block(x.dtype)
    return blockwise(lambda out, xb: np.copyto(out, erf(xb)), x, dtype=x.dtype)


class Erf(Function):
    """erf(a);  da = g 2/sqrt(pi) exp(-a^2)"""
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return erf_array(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * (2 * _INV_SQRT_PI) * np.exp(-(a * a))


def erf(input) -> Tensor:
    """The error function erf(x) = 2/sqrt(pi) integral_0^x exp(-t^2) dt, elementwise (torch.erf)."""
    x = input if isinstance(input, Tensor) else Tensor(input)
    return x.erf()  # (an integer x computes in the default float dtype, as every float-valued op: promotion.py)
