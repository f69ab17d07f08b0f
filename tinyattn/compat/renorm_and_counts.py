"""``renorm``/``renorm_``, ``histc`` and ``unique_consecutive``, mixed into the Tensor (through MethodsMixin),
as PyTorch 2.13 does them (tests/oracle/test_names_renorm_counts_torch.py).

* ``renorm(p, dim, maxnorm)``: each slice along ``dim`` whose p-norm passes maxnorm is scaled by
  maxnorm / (norm + 1e-7) (PyTorch's factor; nn.Embedding(max_norm=) uses the same one).
* ``histc(bins, min, max)``: counts in ``bins`` equal-width bins over [min, max] (the data's own range
  when min == max, widened by 1 each way if that is one point); values outside are not counted; the last
  bin holds max. A value's bin is int((x - min) * bins / (max - min)) in the input's dtype, as PyTorch's.
* ``unique_consecutive``: drops the repeats that follow each other (NaNs never equal each other).
"""
from __future__ import annotations

import numpy as np

from tinyattn import autograd
from tinyattn.autograd import Function
from tinyattn.compat.args import _norm_dim
from tinyattn.promotion import _TORCH_NAME, _key


def _vector_norm(a: np.ndarray, p: float, axes: tuple) -> np.ndarray:
    """The p-norm over ``axes`` (kept, as 1s), computed in float64 at least."""
    x = np.abs(a.astype(np.promote_types(a.dtype, np.float64)))
    if p == np.inf:
        return x.max(axis=axes, keepdims=True) if x.size else np.zeros([1 if i in axes else n for i, n in enumerate(a.shape)])
    return (x ** p).sum(axis=axes, keepdims=True) ** (1.0 / p)


def _c_number(v: float) -> str:
    """A float as PyTorch's C++ messages print it: 6 significant digits (1, 2.5, 1e-07, inf), NaN with its sign."""
    return ("-nan" if np.signbit(v) else "nan") if v != v else f"{v:g}"


class Renorm(Function):
    """out = a * f, f = maxnorm / (n + 1e-7) where the slice's norm n > maxnorm, else 1;
    da = g where n <= maxnorm, else f g - maxnorm / (n + 1e-7)^2 * dn/da * sum(a g over the slice)
    (dn/da = sgn(a) |a|^(p-1) / n^(p-1); for p = inf, sgn(a) shared evenly among the |a| equal to n)."""
    @staticmethod
    def forward(ctx, a, p, dim, maxnorm):
        axes = tuple(i for i in range(a.ndim) if i != dim)
        norm = _vector_norm(a, p, axes)  # (1.., n_dim, 1..)
        over = norm > maxnorm
        factor = np.where(over, maxnorm / (norm + 1e-7), 1.0)
        ctx.save_for_backward(a)
        ctx.p, ctx.axes, ctx.maxnorm, ctx.norm, ctx.over, ctx.factor = p, axes, maxnorm, norm, over, factor
        return (a * factor).astype(a.dtype)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        p, axes, norm = ctx.p, ctx.axes, ctx.norm
        s = (a * g).sum(axis=axes, keepdims=True)  # (1.., n_dim, 1..)
        with np.errstate(divide="ignore", invalid="ignore"):
            if p == np.inf:
                hit = np.abs(a) == norm
                dn = np.sign(a) * hit / hit.sum(axis=axes, keepdims=True)
            else:
                dn = np.sign(a) * np.abs(a) ** (p - 1) / norm ** (p - 1)
            inv = 1 / (norm + 1e-7)
            ga = np.where(ctx.over, ctx.factor * g - ctx.maxnorm * inv * inv * dn * s, g)
        return ga.astype(a.dtype)


def _renorm_args(x, p, dim, maxnorm) -> tuple[float, int, float]:
    if x.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {x.ndim} dimensions")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = _norm_dim(dim, x.ndim, "renorm")
    if x._data.dtype.kind != "f":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_TORCH_NAME[_key(x._data.dtype)]}")
    return float(p), d, float(maxnorm)


class RenormAndCountsMixin:
    """renorm(_), histc and unique_consecutive on the Tensor."""

    __slots__ = ()

    def renorm(self, p: float, dim: int, maxnorm: float):
        """Each slice along ``dim`` whose p-norm is above maxnorm, scaled down to (about) maxnorm."""
        p, d, maxnorm = _renorm_args(self, p, dim, maxnorm)
        return Renorm.apply(self, p=p, dim=d, maxnorm=maxnorm)

    def renorm_(self, p: float, dim: int, maxnorm: float):
        """renorm, in place."""
        p, d, maxnorm = _renorm_args(self, p, dim, maxnorm)
        if self._in_graph("renorm_"):
            return self._commit(Renorm.apply(self, p=p, dim=d, maxnorm=maxnorm))
        out = Renorm.forward(autograd.Context(()), self._data, p, d, maxnorm)
        return self._plain("renorm_", lambda a: np.copyto(a, out))

    def histc(self, bins: int = 100, min: float = 0, max: float = 0):  # noqa: A002  (PyTorch's names)
        """How many elements fall in each of ``bins`` equal bins over [min, max]: self's dtype, no gradient."""
        a = self._data
        if a.dtype.kind != "f":
            raise NotImplementedError(f'"histogram_cpu" not implemented for \'{_TORCH_NAME[_key(a.dtype)]}\'')
        if not isinstance(bins, int) or isinstance(bins, bool):
            raise TypeError(f"histc(): argument 'bins' must be int, not {type(bins).__name__}")
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        lo, hi = float(min), float(max)
        if lo == hi and a.size:  # the data's own range (a NaN there is -nan in PyTorch's message: its sign set)
            lo, hi = (v if v == v else -abs(v) for v in (float(a.min()), float(a.max())))
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise RuntimeError(f"torch.histc: range of [{_c_number(lo)}, {_c_number(hi)}] is not finite")
        if not lo < hi:
            raise RuntimeError("torch.histc: max must be larger than min")
        x = a.reshape(-1)
        left, right = a.dtype.type(lo), a.dtype.type(hi)
        x = x[(x >= left) & (x <= right)]  # (NaN is neither)
        with np.errstate(over="ignore"):
            pos = ((x - left) * a.dtype.type(bins) / (right - left)).astype(np.int64)  # truncated, as a C++ cast
        pos = np.clip(pos, 0, bins - 1)  # (max itself is in the last bin)
        return autograd.Tensor._make(np.bincount(pos, minlength=bins).astype(a.dtype))

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False, dim=None):
        """The elements (or slices along ``dim``) with each run of equal neighbours kept once; with
        return_inverse, where each input element (slice) went; with return_counts, each run's length."""
        a = self._data
        if dim is None:
            flat = a.reshape(-1)
            starts = np.concatenate([[True], flat[1:] != flat[:-1]]) if flat.size else np.zeros(0, dtype=bool)
            out, inv_shape = flat[starts], a.shape
        else:
            d = _norm_dim(dim, self.ndim, "unique_consecutive")
            n = a.shape[d] if a.ndim else 1
            if n and a.size == 0:
                raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
            rows = np.moveaxis(a, d, 0).reshape(n, a.size // n if n else 0) if a.ndim else a.reshape(1, 1)  # (n, rest)
            starts = np.concatenate([[True], (rows[1:] != rows[:-1]).any(axis=1)]) if n else np.zeros(0, dtype=bool)
            out, inv_shape = (np.compress(starts, a, axis=d) if a.ndim else a.reshape(1)), (n,)
        result = (autograd.Tensor._make(np.ascontiguousarray(out)),)
        if return_inverse:
            result += (autograd.Tensor._make((np.cumsum(starts) - 1).astype(np.int64).reshape(inv_shape)),)
        if return_counts:
            where = np.flatnonzero(starts)
            result += (autograd.Tensor._make(np.diff(np.append(where, starts.size)).astype(np.int64)),)
        return result[0] if len(result) == 1 else result
