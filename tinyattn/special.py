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

Exact GELU needs Phi(x) = (1 + erf(x / sqrt 2)) / 2 with small relative error where Phi is tiny (large
negative x), which 1/2 + erf/2 loses to cancellation; ``gelu_erf`` computes it for float32 in float32 from
the tail Phi(-|x|) = exp(-x^2/2) R(|x|) (see _gelu32_block), and returns the derivative with it.

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


def _erf_rational(x: np.ndarray) -> np.ndarray:
    """erf of a 1-D float32/float16 block to float32 accuracy: x P(x^2) / Q(x^2), in float64, clipped to [-1, 1]."""
    z = np.clip(x, -4.0, 4.0).astype(np.float64)  # erf(+-4) already rounds to +-1 in float32 (NaN stays NaN)
    u = z * z
    num = u * _P32[-1]
    num += _P32[-2]
    for c in _P32[-3::-1]:  # Horner, in place
        num *= u
        num += c
    den = u * _Q32[-1]
    den += _Q32[-2]
    for c in _Q32[-3::-1]:
        den *= u
        den += c
    num *= z
    num /= den
    return np.clip(num, -1.0, 1.0, out=num)


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


# Phi(-a) = erfc(a / sqrt 2) / 2 = exp(-a^2 / 2) R(a) for a >= 0, R = P / Q (degrees 4 and 5, all coefficients
# positive, so Horner in float32 never cancels), fitted for this file by weighted least squares against
# scipy's erfcx on [0, 15]: max relative error 6.8e-9, about 0.1 float32 ulp. Lowest power first.
_PT = (0.5000000033784343, 0.4393006533140936, 0.1839836723079297, 0.040886542954356335, 0.004154187507623364)
_QT = (1.0, 1.6764863226260236, 1.2056047871577178, 0.47144752910972904, 0.10249348255916854, 0.010412892134477991)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _horner(t: np.ndarray, c: tuple) -> np.ndarray:
    """c[0] + c[1] t + ... + c[n] t^n, in place on one new array."""
    r = t * c[-1]
    r += c[-2]
    for k in c[-3::-1]:
        r *= t
        r += k
    return r


def _gelu32_block(xb: np.ndarray, yb: np.ndarray, sb: np.ndarray | None) -> None:
    """Exact GELU x Phi(x) into yb and its slope Phi(x) + x phi(x) into sb, for one 1-D float32 block, all in
    float32 (no float64 round trip). One formula for every x, no branches: with a = |x|, the tail
    q = Phi(-a) = exp(-a^2/2) R(a) has small relative error for every a, so Phi(x) = q for x < 0 (large
    negative x keeps its relative accuracy, where 1/2 + erf/2 would cancel) and 1 - q for x >= 0.
    exp(-a^2/2) is taken from an exact -a^2/2 = w + err (a rounded to s on a 1/64 grid, s^2 exact; Fast2Sum):
    rounding a^2 would cost a^2/2 float32 ulps (4.5 at a = 3), and exp(w)(1 + err) costs one np.exp.
    The exp serves the backward too: the slope is saved, and the backward is one product.
    Against the float64 value of x Phi(x): <= 1 ulp at 80% of a dense grid, max 7.2 ulp (np.exp's float32
    kernel is itself within 2.4 ulp); measured in tests/test_special.py."""
    a = np.abs(xb)
    if not a.max() <= 15.0:  # +-inf, NaN or beyond 15 (where Phi(-a) underflows): clip so s*s stays finite
        np.minimum(a, 15.0, out=a)
    s = a + 131072.0
    s -= 131072.0  # a rounded to a multiple of 1/64 (the float32 spacing at 2^17): s*s is exact
    err = s * s
    err *= -0.5  # -s^2/2, exact
    r = s - a
    s += a
    r *= s
    r *= 0.5  # -(a^2 - s^2)/2 = -(a - s)(a + s)/2, |r| < a/128
    w = err + r  # -a^2/2, rounded once
    err -= w
    err += r  # what that rounding lost (Fast2Sum: |-s^2/2| >= |r|)
    e = np.exp(w)
    err *= e
    e += err  # exp(-a^2/2) = exp(w) (1 + err)
    q = _horner(a, _PT)
    q /= _horner(a, _QT)
    q *= e  # Phi(-a)
    np.subtract(np.greater_equal(xb, 0.0), q, out=q)  # 1 - q for x >= 0, -q below
    np.abs(q, out=q)  # Phi(x)  (arithmetic, not np.where or where=: 9 against 19-86 us per block)
    np.multiply(xb, q, out=yb)
    if sb is not None:  # None: no gradient follows (3 of 43 calls a block, and 4 bytes an element, fewer)
        e *= _INV_SQRT_2PI
        e *= xb
        np.add(q, e, out=sb)  # Phi(x) + x phi(x)


def gelu_erf(x: np.ndarray, slope: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """(x Phi(x), Phi(x) + x phi(x)) for a float array: exact GELU and its derivative, block by block.
    float64 takes Cody's erf (exact to a few ulp, so gradchecks stay exact); float32 and float16 take
    _gelu32_block, in float32. The derivative is computed here because the forward already has what it
    needs (Phi, and for float32 exp(-x^2/2)): the backward is then one product, g * slope (``slope=False``:
    None in its place, for a forward that no gradient will follow).
    (8, 128, 512) float32, one thread, F.gelu in alternating processes, best of 30: forward 4.21-4.33 -> 3.47-3.68
    ms, forward+backward 5.74-6.15 -> 3.78-4.14 ms (from the float64 road before; torch 2.13 here: 0.48, 1.36 ms)."""
    flat = x.reshape(-1)
    y, slope = np.empty(flat.shape, dtype=x.dtype), np.empty(flat.shape, dtype=x.dtype) if slope else None
    # float32 blocks of 4 * _BLOCK: 43 NumPy calls a block, and the fewer calls beat the cache misses
    # ((8, 128, 512) float32, interleaved, best of 40: 4.14-4.20 ms at _BLOCK, 3.80-3.84 ms at 4 * _BLOCK)
    n = _BLOCK if x.dtype == np.float64 else 4 * _BLOCK
    for i in range(0, flat.size, n):
        xb, yb, sb = flat[i:i + n], y[i:i + n], None if slope is None else slope[i:i + n]
        if x.dtype == np.float32:
            _gelu32_block(xb, yb, sb)
        elif x.dtype != np.float64:  # float16: through float32, rounded once at the end
            y32, s32 = np.empty(xb.shape, np.float32), None if sb is None else np.empty(xb.shape, np.float32)
            _gelu32_block(xb.astype(np.float32), y32, s32)
            yb[...] = y32
            if sb is not None:
                sb[...] = s32
        else:
            cdf = _erf_cody(xb * _INV_SQRT_2)
            cdf *= 0.5
            cdf += 0.5  # Phi(x)
            np.multiply(xb, cdf, out=yb)
            if sb is None:
                continue
            t = xb * xb
            t *= -0.5
            np.exp(t, out=t)  # exp(-x^2 / 2)
            t *= _INV_SQRT_2PI  # phi(x)
            t *= xb
            t += cdf
            sb[...] = t  # Phi(x) + x phi(x)
    return y.reshape(x.shape), None if slope is None else slope.reshape(x.shape)


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


# torch.special's names for functions tinyattn has under other names (each the very same op, gradient included)
def expit(input) -> Tensor:
    """The logistic sigmoid 1 / (1 + exp(-x)) (torch.special.expit is torch.sigmoid)."""
    return (input if isinstance(input, Tensor) else Tensor(input)).sigmoid()


def logit(input, eps: float | None = None) -> Tensor:
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] first when eps is given (torch.special.logit)."""
    return (input if isinstance(input, Tensor) else Tensor(input)).logit(eps)


def xlogy(input, other) -> Tensor:
    """x log(y), 0 where x is 0 (torch.special.xlogy is torch.xlogy)."""
    from .functions import _t
    return _t(input).xlogy(other)


from .special_names import (  # noqa: E402,F401,A004  (the rest of torch.special; see special_names.py)
    digamma, entr, erfc, erfcx, exp2, expm1, gammaln, i0, i0e, i1, i1e, log1p, log_ndtr, log_softmax, logsumexp,
    multigammaln, ndtr, ndtri, polygamma, psi, round, sinc, softmax, xlog1py,
)
