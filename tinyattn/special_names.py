"""torch.special's names beyond erf/expit/logit/xlogy, and torch.lgamma/digamma/polygamma/mvlgamma/i0/sinc.

Most are aliases of tinyattn's own ops (softmax, expm1, psi = digamma, gammaln = lgamma, ...). New here: the
normal distribution's tails (erfc, erfcx, ndtr, log_ndtr, ndtri), entr and xlog1py, computed in float64 from
Cody's pieces in special.py so that the tails keep their relative accuracy (erfcx(x) = exp(x^2) erfc(x) never
forms exp(x^2) for x > 0.47; log_ndtr(x) for x < -1 is log(erfcx(-x/sqrt 2) / 2) - x^2/2), rounded once to the
input's dtype; each is a Function with PyTorch's gradient. The gamma family and the Bessel functions are in
compat/gamma_bessel.py.
"""
from __future__ import annotations

import math

import numpy as np

from .compat.gamma_bessel import Bessel, _Unary, _f64, _float
from .special import _C, _C8, _D, _P, _P5, _Q, _INV_SQRT_PI, _erf_small, _exp_minus_square, _ratio
from .tensor import Function, Tensor

_SQRT_2PI = math.sqrt(2 * math.pi)


def _t(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _erfcx_pos(y: np.ndarray) -> np.ndarray:
    """exp(y^2) erfc(y) for y >= 0 (NaN kept): Cody's rational functions carry the exp(-y^2) factor apart."""
    out = np.empty_like(y)
    small, big = y <= 0.46875, y > 4.0
    mid = ~small & ~big
    ys = y[small]
    out[small] = np.exp(ys * ys) * (1.0 - _erf_small(ys))
    out[mid] = _ratio(y[mid], _C8, _C, _D)
    yb = y[big]
    inv2 = 1.0 / (yb * yb)
    out[big] = (_INV_SQRT_PI - inv2 * _ratio(inv2, _P5, _P, _Q)) / yb
    return out


def erfcx_array(x) -> np.ndarray:
    x = _f64(x)
    with np.errstate(all="ignore"):
        pos = _erfcx_pos(np.where(np.isinf(x), 1e300, np.abs(x)))
        return np.where(x >= 0, pos, 2.0 * np.exp(x * x) - pos)


def erfc_array(x) -> np.ndarray:
    x = _f64(x)
    with np.errstate(all="ignore"):
        y = np.abs(x)
        tail = erfcx_array(y) * _exp_minus_square(np.minimum(y, 28.0)) * (y < 28.0)  # erfc(|x|), 0 past 27.3
        return np.where(y <= 0.46875, 1.0 - _erf_small(np.where(y <= 0.46875, x, 0.0)),
                        np.where(x < 0, 2.0 - tail, tail))


def ndtr_array(x) -> np.ndarray:
    return 0.5 * erfc_array(-_f64(x) / math.sqrt(2.0))


def log_ndtr_array(x) -> np.ndarray:
    x = _f64(x)
    with np.errstate(all="ignore"):
        left = np.log(0.5 * erfcx_array(-x / math.sqrt(2.0))) - 0.5 * x * x
        right = np.log1p(-0.5 * erfc_array(x / math.sqrt(2.0)))
        return np.where(x < -1.0, left, right)


def ndtri_array(p) -> np.ndarray:
    """The x with ndtr(x) = p: a rational first guess (Abramowitz-Stegun 26.2.23) for q = min(p, 1 - p), then
    Newton steps on log ndtr(x) = log q, which keep their relative accuracy however small q is."""
    p = _f64(p)
    with np.errstate(all="ignore"):
        q = np.where(p > 0.5, 1.0 - p, p)
        qs = np.clip(np.where(np.isnan(q), 0.25, q), 1e-300, 0.5)
        t = np.sqrt(-2.0 * np.log(qs))
        x = -(t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t
                                                                    + 0.001308 * t ** 3))
        logq = np.log(qs)
        for _ in range(6):
            ln = log_ndtr_array(x)
            x = x - (ln - logq) / (np.exp(-0.5 * x * x - ln) / _SQRT_2PI)
        x = np.where(p > 0.5, -x, x)
        x = np.where(p == 0.5, 0.0, x)
        x = np.where(p == 0, -np.inf, np.where(p == 1, np.inf, x))
        return np.where((p < 0) | (p > 1) | np.isnan(p), np.nan, x)


def entr_array(x) -> np.ndarray:
    x = _f64(x)
    with np.errstate(all="ignore"):
        return np.where(x > 0, -x * np.log(x), np.where(x == 0, 0.0, np.where(x < 0, -np.inf, x)))


class Erfc(_Unary):
    """erfc;  da = -g 2/sqrt(pi) exp(-a^2)"""
    f = staticmethod(erfc_array)
    slope = staticmethod(lambda a, y: -2 * _INV_SQRT_PI * np.exp(-a * a))


class Erfcx(_Unary):
    """erfcx;  da = g (2 a erfcx(a) - 2/sqrt(pi))"""
    f = staticmethod(erfcx_array)
    slope = staticmethod(lambda a, y: 2 * a * y - 2 * _INV_SQRT_PI)


class Ndtr(_Unary):
    """ndtr;  da = g phi(a)"""
    f = staticmethod(ndtr_array)
    slope = staticmethod(lambda a, y: np.exp(-0.5 * a * a) / _SQRT_2PI)


class LogNdtr(_Unary):
    """log_ndtr;  da = g phi(a) / ndtr(a) = g exp(-a^2/2 - log_ndtr(a)) / sqrt(2 pi)"""
    f = staticmethod(log_ndtr_array)
    slope = staticmethod(lambda a, y: np.exp(-0.5 * a * a - y) / _SQRT_2PI)


class Ndtri(_Unary):
    """ndtri;  da = g sqrt(2 pi) exp(y^2 / 2)"""
    f = staticmethod(ndtri_array)
    slope = staticmethod(lambda a, y: _SQRT_2PI * np.exp(0.5 * y * y))


class Entr(_Unary):
    """entr;  da = -g (log a + 1) (inf at 0, NaN below)"""
    f = staticmethod(entr_array)
    slope = staticmethod(lambda a, y: -(np.log(a) + 1.0))


class Xlog1py(Function):
    """a log1p(b), 0 where a == 0 (unless b is NaN);  da = g log1p(b) (0 where a == 0), db = g a / (1 + b)"""
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        with np.errstate(all="ignore"):
            return np.where((a == 0) & ~np.isnan(b), 0, a * np.log1p(b)).astype(np.result_type(a, b), copy=False)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        with np.errstate(all="ignore"):
            return np.where((a == 0) & ~np.isnan(b), 0, g * np.log1p(b)), g * a / (1 + b)


def _unary(fn, input, half_kernel: str | None = None, **k) -> Tensor:
    """``fn`` on ``input``, an integer or bool input in the default float dtype; float16 refused where PyTorch
    has no Half kernel (``half_kernel``)."""
    x = _float(_t(input))
    if half_kernel and x._data.dtype == np.float16:
        raise NotImplementedError(f'"{half_kernel}" not implemented for \'Half\'')
    return fn.apply(x, **k)


def lgamma(input) -> Tensor: return _t(input).lgamma()
def digamma(input) -> Tensor: return _t(input).digamma()
def polygamma(n: int, input) -> Tensor: return _t(input).polygamma(n)
def mvlgamma(input, p: int) -> Tensor: return _t(input).mvlgamma(p)
def i0(input) -> Tensor: return _t(input).i0()
def sinc(input) -> Tensor: return _t(input).sinc()
def i0e(input) -> Tensor: return _unary(Bessel, input, order=0, scaled=True)
def i1(input) -> Tensor: return _unary(Bessel, input, order=1, scaled=False)
def i1e(input) -> Tensor: return _unary(Bessel, input, order=1, scaled=True)
def erfc(input) -> Tensor: return _unary(Erfc, input)
def erfcx(input) -> Tensor: return _unary(Erfcx, input, "erfcx_cpu")
def ndtr(input) -> Tensor: return _unary(Ndtr, input)
def log_ndtr(input) -> Tensor: return _unary(LogNdtr, input, "log_ndtr_cpu")
def ndtri(input) -> Tensor: return _unary(Ndtri, input, "ndtri_cpu")
def entr(input) -> Tensor: return _unary(Entr, input)


def xlog1py(input, other) -> Tensor:
    """x log1p(y), 0 where x is 0 (torch.special.xlog1py); either may be a Python number."""
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            raise TypeError("special.xlog1py: expected at least one tensor, got two numbers")
        return _t(other)._binary(Xlog1py, input, reverse=True)
    return input._binary(Xlog1py, other)


def multigammaln(input, p: int) -> Tensor: return mvlgamma(input, p)


# torch.*_ in place (each the Tensor method)
def erfc_(input) -> Tensor: return input.erfc_()
def i0_(input) -> Tensor: return input.i0_()
def sinc_(input) -> Tensor: return input.sinc_()
def rad2deg_(input) -> Tensor: return input.rad2deg_()
def deg2rad_(input) -> Tensor: return input.deg2rad_()


# torch.special's other names: the same ops as torch.*
psi, gammaln = digamma, lgamma


def softmax(input, dim: int, *, dtype=None) -> Tensor: return _t(input).softmax(dim, dtype=dtype)
def log_softmax(input, dim: int, *, dtype=None) -> Tensor: return _t(input).log_softmax(dim, dtype=dtype)
def logsumexp(input, dim, keepdim: bool = False) -> Tensor: return _t(input).logsumexp(dim, keepdim)
def expm1(input) -> Tensor: return _t(input).expm1()
def log1p(input) -> Tensor: return _t(input).log1p()
def exp2(input) -> Tensor: return _t(input).exp2()
def round(input, *, decimals: int = 0) -> Tensor: return _t(input).round(decimals=decimals)  # noqa: A001


SPECIAL_NAMES = ["softmax", "log_softmax", "logsumexp", "expm1", "log1p", "exp2", "round", "sinc", "entr", "xlog1py",
                 "ndtr", "log_ndtr", "ndtri", "gammaln", "digamma", "psi", "polygamma", "multigammaln", "i0", "i0e",
                 "i1", "i1e", "erfc", "erfcx"]
TORCH_NAMES = ["lgamma", "digamma", "polygamma", "mvlgamma", "i0", "sinc", "erfc"]
