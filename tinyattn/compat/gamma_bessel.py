"""The gamma family and modified Bessel functions in NumPy (SciPy is no dependency): ``lgamma``, ``digamma``,
``polygamma``, ``mvlgamma``, ``i0``/``i0e``/``i1``/``i1e``, ``sinc``, as Functions with their gradients and as
Tensor methods (GammaBesselMixin). Each array function computes in float64 and rounds once to the input's dtype.

* lgamma: Stirling's series (8 Bernoulli terms) for x >= 10; below, the recurrence lgamma(x) = lgamma(x + n) -
  log(x (x + 1) ... (x + n - 1)); for x < 0.5 the reflection lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x).
  Within 6.5e-15 of math.lgamma relative to max(1, |lgamma|) over 440,000 points from -170 to 1e300 (measured;
  tests/test_names_special_and_losses.py asserts 1e-14). digamma, polygamma(1) and polygamma(3) on [-20, 1e4]:
  within 1.5e-15 of mpmath relative to max(1, |value|) (measured); higher orders at large negative x lose digits
  to the alternating sum (polygamma(4, -40.5): 4e-8, as PyTorch's).
* digamma: the asymptotic series log x - 1/(2x) - sum B2k / (2k x^2k) for x >= 10, psi(x) = psi(x + 1) - 1/x
  below, reflection psi(x) = psi(1 - x) - pi / tan(pi x) for x < 0.
* polygamma(n, x), n >= 1: (-1)^(n+1) n! zeta(n + 1, x), the Hurwitz zeta by Euler-Maclaurin summation.
* i0, i1: the power series (all terms positive) for |x| <= 30, the asymptotic series e^x / sqrt(2 pi x) (...)
  beyond (its smallest term there is about e^-60); the exponentially scaled i0e, i1e never form e^x.
"""
from __future__ import annotations

import math

import numpy as np

from tinyattn import autograd
from tinyattn.autograd import Function

_B2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798)  # B2, B4, ...
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _f64(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _shift_up(x: np.ndarray, to: float):
    """(z, terms): z = x + n >= ``to`` for each element (x >= 0 where used), and the list of the x + k passed."""
    z = x.copy()
    terms = []
    while True:
        low = z < to
        if not low.any():
            return z, terms
        terms.append(np.where(low, z, np.nan))
        z = np.where(low, z + 1.0, z)


def lgamma_array(x) -> np.ndarray:
    """log |Gamma(x)| elementwise (inf at 0 and the negative integers, as math.lgamma's limit)."""
    x = _f64(x)
    with np.errstate(all="ignore"):
        refl = x < 0.5
        y = np.where(refl, 1.0 - x, x)
        y = np.where(np.isfinite(y), y, 20.0)  # (inf and NaN are put back at the end)
        z, terms = _shift_up(y, 10.0)
        prod = np.ones_like(z)
        for t in terms:
            prod *= np.where(np.isnan(t), 1.0, t)
        inv, inv2 = 1.0 / z, 1.0 / (z * z)
        series = np.zeros_like(z)
        for k in range(len(_B2K) - 1, -1, -1):
            series = series * inv2 + _B2K[k] / ((2 * k + 2) * (2 * k + 1))
        out = (z - 0.5) * np.log(z) - z + _HALF_LOG_2PI + series * inv - np.log(prod)
        s = np.abs(np.sin(math.pi * (x - np.round(x))))  # |sin(pi x)|, the period taken out exactly
        out = np.where(refl, np.log(math.pi / s) - out, out)
        out = np.where((x <= 0) & (x == np.floor(x)), np.inf, np.where((x == 1) | (x == 2), 0.0, out))
        out = np.where(np.isinf(x), np.inf, np.where(np.isnan(x), np.nan, out))
    return out


def digamma_array(x) -> np.ndarray:
    """psi(x) = Gamma'(x) / Gamma(x); -inf at +0, inf at -0 (PyTorch's), NaN at the negative integers and -inf."""
    x = _f64(x)
    with np.errstate(all="ignore"):
        refl = x < 0
        y = np.where(refl, 1.0 - x, x)
        y = np.where(np.isfinite(y), y, 20.0)
        z, terms = _shift_up(y, 10.0)
        acc = np.zeros_like(z)
        for t in terms:
            acc -= np.where(np.isnan(t), 0.0, 1.0 / t)
        inv2 = 1.0 / (z * z)
        series = np.zeros_like(z)
        for k in range(len(_B2K) - 1, -1, -1):
            series = series * inv2 + _B2K[k] / (2 * k + 2)
        out = np.log(z) - 0.5 / z - series * inv2 + acc
        frac = x - np.round(x)  # tan(pi x) = tan(pi frac), frac exact
        out = np.where(refl, out - math.pi / np.tan(math.pi * frac), out)
        out = np.where(refl & (frac == 0), np.nan, out)
        out = np.where(x == 0, np.copysign(np.inf, -x), out)
        out = np.where(x == np.inf, np.inf, np.where(np.isnan(x) | (x == -np.inf), np.nan, out))
    return out


def polygamma_array(n: int, x) -> np.ndarray:
    """The n-th derivative of digamma; for n >= 1, (-1)^(n+1) n! zeta(n + 1, x) (+-inf at 0 and the negative
    integers, the sign of (-1)^(n+1))."""
    if n == 0:
        return digamma_array(x)
    x = _f64(x)
    s = n + 1.0
    with np.errstate(all="ignore"):
        y = np.where(np.isfinite(x), x, 20.0)
        total = np.zeros_like(y)
        z = y.copy()
        while True:  # the first terms of the sum, until x + k >= 12 (as many as the most negative x needs)
            low = z < 12.0
            if not low.any():
                break
            total += np.where(low, z ** -s, 0.0)
            z = np.where(low, z + 1.0, z)
        for _ in range(12 - 0):  # 12 more terms, then the Euler-Maclaurin tail at a = x + k >= 24
            total += z ** -s
            z = z + 1.0
        tail = z ** (1.0 - s) / (s - 1.0) + 0.5 * z ** -s
        fact, power = s, z ** (-s - 1.0)  # s (s+1) ... (s+2j-2) and a^(-s-2j+1)
        for j, b in enumerate(_B2K, start=1):
            tail += b / math.factorial(2 * j) * fact * power
            fact *= (s + 2 * j - 1) * (s + 2 * j)
            power = power / (z * z)
        out = (-1.0) ** (n + 1) * math.factorial(n) * (total + tail)
        out = np.where((x <= 0) & (x == np.floor(x)), (-1.0) ** (n + 1) * np.inf, out)
        # PyTorch's at +-inf: trigamma 0 and NaN, higher orders NaN and the pole's infinity
        at_inf, at_minus_inf = (0.0, np.nan) if n == 1 else (np.nan, (-1.0) ** (n + 1) * np.inf)
        out = np.where(x == np.inf, at_inf, np.where(x == -np.inf, at_minus_inf, np.where(np.isnan(x), np.nan, out)))
    return out


def _bessel_series(x: np.ndarray, order: int) -> np.ndarray:
    """I_order(x) for |x| <= 30: sum (x/2)^(2k+order) / (k! (k+order)!), all terms of one sign."""
    q = 0.25 * x * x
    term = np.ones_like(x) if order == 0 else 0.5 * x
    total = term.copy()
    for k in range(1, 80):
        term = term * q / (k * (k + order))
        total += term
    return total


def _bessel_asymptotic(ax: np.ndarray, order: int) -> np.ndarray:
    """e^-|x| I_order(|x|) for |x| > 30: 1/sqrt(2 pi x) sum_k (-1)^k prod_j (mu - (2j-1)^2) / (k! (8x)^k)."""
    mu = 4.0 * order * order
    term = np.ones_like(ax)
    total = term.copy()
    for k in range(1, 40):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * ax)
        total += term
    return total / np.sqrt(2 * math.pi * ax)


def bessel_array(x, order: int, scaled: bool) -> np.ndarray:
    """i0/i1 (``scaled``: i0e/i1e = e^-|x| i0/i1) elementwise in float64."""
    x = _f64(x)
    ax = np.abs(x)
    small = ax <= 30.0
    with np.errstate(all="ignore"):
        out = np.empty_like(x)
        xs = np.where(small, x, 0.0)
        out[...] = _bessel_series(xs, order) * (np.exp(-np.abs(xs)) if scaled else 1.0)
        if not small.all():
            big = np.where(small, 31.0, np.where(np.isnan(ax), 31.0, ax))
            tail = _bessel_asymptotic(big, order) * (1.0 if scaled else np.exp(big))
            if order == 1:
                tail = np.copysign(tail, x)
            out = np.where(small | np.isnan(x), out, tail)
        out = np.where(np.isnan(x), np.nan, out)
    return out


def sinc_array(x) -> np.ndarray:
    """sin(pi x) / (pi x), 1 at 0 (as PyTorch: at nonzero integers the rounding of sin(pi x), about 4e-17)."""
    x = _f64(x)
    with np.errstate(all="ignore"):
        px = math.pi * x
        return np.where(x == 0, 1.0, np.sin(px) / px)


class _Unary(Function):
    """y = f(a) computed in float64, rounded to a's dtype; da = g f'(a) from ``slope(a, y)``."""
    @classmethod
    def forward(cls, ctx, a, **k):
        ctx.k = k
        with np.errstate(over="ignore"):  # (a float64 value beyond float32's range becomes inf, as PyTorch's)
            y = cls.f(a, **k).astype(a.dtype, copy=False)
        ctx.save_for_backward(a, y)
        return y

    @classmethod
    def backward(cls, ctx, g):
        a, y = ctx.saved_tensors
        with np.errstate(all="ignore"):
            return (g * cls.slope(_f64(a), _f64(y), **ctx.k)).astype(g.dtype, copy=False)


class Lgamma(_Unary):
    """lgamma;  da = g digamma(a)"""
    f = staticmethod(lgamma_array)
    slope = staticmethod(lambda a, y: digamma_array(a))


class Digamma(_Unary):
    """digamma;  da = g polygamma(1, a)"""
    f = staticmethod(digamma_array)
    slope = staticmethod(lambda a, y: polygamma_array(1, a))


class Polygamma(_Unary):
    """polygamma(n, a);  da = g polygamma(n + 1, a)"""
    f = staticmethod(lambda a, n: polygamma_array(n, a))
    slope = staticmethod(lambda a, y, n: polygamma_array(n + 1, a))


class Bessel(_Unary):
    """i0, i0e, i1, i1e;  i0' = i1, i0e' = i1e - sign(a) i0e, i1' = i0 - i1 / a, i1e' = i0e - i1e (sign(a) + 1/a)
    (both 1/2 at a = 0)"""
    f = staticmethod(lambda a, order, scaled: bessel_array(a, order, scaled))

    @staticmethod
    def slope(a, y, order, scaled):
        if order == 0:
            i1 = bessel_array(a, 1, scaled)
            return i1 - np.sign(a) * y if scaled else i1
        i0 = bessel_array(a, 0, scaled)
        out = i0 - y * (np.sign(a) + 1.0 / a) if scaled else i0 - y / a
        return np.where(a == 0, 0.5, out)


class Sinc(_Unary):
    """sinc;  da = g (cos(pi a) - sinc(a)) / a, 0 at a = 0"""
    f = staticmethod(sinc_array)
    slope = staticmethod(lambda a, y: np.where(a == 0, 0.0, (np.cos(math.pi * a) - y) / np.where(a == 0, 1, a)))


def _nonneg_int(v, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {type(v).__name__}")
    return int(v)


class GammaBesselMixin:
    """The methods above, on the Tensor (an integer or bool self computes in the default float dtype:
    promotion.FLOAT_RESULT names lgamma, digamma, i0 and sinc; polygamma and mvlgamma cast here)."""

    def lgamma(self) -> "autograd.Tensor":
        return Lgamma.apply(self)

    def digamma(self) -> "autograd.Tensor":
        return Digamma.apply(self)

    def polygamma(self, n: int) -> "autograd.Tensor":
        """The n-th derivative of digamma at self (PyTorch's method order: x.polygamma(n))."""
        n = _nonneg_int(n, "polygamma(): n")
        if n < 0:
            raise RuntimeError("polygamma(n, x) does not support negative n.")
        return Polygamma.apply(_float(self), n=n)

    def mvlgamma(self, p: int) -> "autograd.Tensor":
        """log of the multivariate gamma function of dimension p: sum_i lgamma(x - i/2) + p(p-1)/4 log pi."""
        p = _nonneg_int(p, "mvlgamma(): p")
        if p < 1:
            raise RuntimeError("p has to be greater than or equal to 1")
        x = _float(self)
        halves = autograd.Tensor._make(-0.5 * np.arange(p, dtype=x._data.dtype))  # (p,)
        return (x.unsqueeze(-1) + halves).lgamma().sum(-1) + p * (p - 1) / 4 * math.log(math.pi)

    def i0(self) -> "autograd.Tensor":
        return Bessel.apply(self, order=0, scaled=False)

    def sinc(self) -> "autograd.Tensor":
        return Sinc.apply(self)

    def erfc(self) -> "autograd.Tensor":
        from tinyattn.special_names import erfc
        return erfc(self)

    # in place: computed from a clone, then copied in (compat/census_tail.py's _inplace_from)
    def lgamma_(self): return self._inplace_from("lgamma_", lambda x: x.lgamma())
    def digamma_(self): return self._inplace_from("digamma_", lambda x: x.digamma())
    def polygamma_(self, n): return self._inplace_from("polygamma_", lambda x: x.polygamma(n))
    def mvlgamma_(self, p): return self._inplace_from("mvlgamma_", lambda x: x.mvlgamma(p))
    def i0_(self): return self._inplace_from("i0_", lambda x: x.i0())
    def sinc_(self): return self._inplace_from("sinc_", lambda x: x.sinc())
    def erfc_(self): return self._inplace_from("erfc_", lambda x: x.erfc())


def _float(x):
    """An integer or bool tensor in the default float dtype (as every float-valued op)."""
    from tinyattn import defaults
    return x if x._data.dtype.kind in "fc" else x.to(defaults.get_default_dtype())
