"""PyTorch's long tail of elementwise functions, reductions and scans, mixed into the Tensor (through
MethodsMixin): ``prod``, ``cumprod``, ``nansum``, ``count_nonzero``, ``median``, ``kthvalue``, ``diff``,
``tan``, ``atan``, ``atan2``, ``hypot``, ``fmax``/``fmin``, ``xlogy``, ``nan_to_num``, ``isclose``, the
``bitwise_*`` names, ``positive``, ``neg``, ``sgn``, ``signbit``, ``frac``, ``exp2``, ``erf``, ``where``.

The op-surface fuzzer (tests/surface_fuzz.py) found each of them missing. The dtype each computes in
follows tinyattn/promotion.py (a one-tensor op's table, or the binary op table), as every other op's.
"""
from __future__ import annotations

import numpy as np

from tinyattn import autograd, checks
from tinyattn.autograd import Function
from tinyattn.compat.args import _norm_dim, _norm_dims, numpy_names


class Prod(Function):
    """prod(a) along dim (every element if None);  da_i = g * (the product of the other a_j). PyTorch's choice of
    formula, which decides what comes out where an inf or NaN meets a 0 (measured, torch 2.13): with no 0 in a,
    g * prod / a_i; otherwise the products of the others from prefix and suffix products (prod / a_i would be
    0 / 0), except that a whole-tensor prod with two or more 0s gives 0 everywhere. The choice is made once
    for the whole tensor, not per slice."""
    @staticmethod
    def forward(ctx, a, dim, keepdim):
        ctx.save_for_backward(a)
        ctx.dim, ctx.keepdim = dim, keepdim
        with np.errstate(invalid="ignore", over="ignore"):  # 0 * inf is NaN silently, as PyTorch's
            return np.asarray(np.prod(a, axis=dim, keepdims=keepdim))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        d = ctx.dim
        if a.size == 0:  # an empty product is 1, whatever nothing is
            return np.zeros_like(a)
        if d is not None and not ctx.keepdim:
            g = np.expand_dims(g, d)
        zeros = int(np.count_nonzero(a == 0))
        if zeros == 0:
            with np.errstate(all="ignore"):
                return g * (np.prod(a, axis=d, keepdims=True) / a)
        if d is None and zeros > 1:
            return np.zeros_like(a) * g
        x = a.reshape(-1) if d is None else np.moveaxis(a, d, -1)  # (..., n): the reduced dim last
        ones = np.ones(x.shape[:-1] + (1,), dtype=a.dtype)
        before = np.cumprod(np.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)  # prod of a_j, j < i
        after = np.flip(np.cumprod(np.flip(np.concatenate([x[..., 1:], ones], axis=-1), -1), axis=-1), -1)  # j > i
        with np.errstate(all="ignore"):
            others = (before * after).reshape(a.shape) if d is None else np.moveaxis(before * after, -1, d)
            return g * others


class CumProd(Function):
    """y_i = a_0 ... a_i along dim;  da_k = sum_{i >= k} g_i y_i / a_k where no a is 0 (PyTorch's formula, and its
    choice, made once for the whole tensor). Otherwise, per slice, as PyTorch (measured, torch 2.13): before the
    slice's first 0 the same division over the y_i before that 0; at the first 0, z, the sum of g_i times the
    product of the a_j, j <= i, j != z, formed without dividing, over the i up to the slice's second 0; after z,
    0 (every such product holds the 0 at z), whatever NaN or inf comes later."""
    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        with np.errstate(invalid="ignore", over="ignore"):
            y = np.cumprod(a, axis=dim)
        ctx.save_for_backward(a, y)
        return y

    @staticmethod
    def backward(ctx, g):
        a, y = ctx.saved_tensors
        d = ctx.dim
        if a.shape[d] == 1:  # y = a: the gradient is g, whatever a is (NaN, inf)
            return g
        with np.errstate(all="ignore"):
            if np.all(a != 0):
                return np.flip(np.cumsum(np.flip(g * y, d), axis=d), d) / a
            a, g, y = (np.moveaxis(t, d, -1) for t in (a, g, y))  # (..., n)
            n = a.shape[-1]
            k = np.arange(n)
            z = np.where((a == 0).any(-1), (a == 0).argmax(-1), n)[..., None]  # each slice's first 0 (n: none)
            head = np.take_along_axis(np.concatenate([np.ones_like(y[..., :1]), y], -1), np.minimum(z, n), -1)
            second = np.cumsum(a == 0, -1) >= 2
            z2 = np.where(second.any(-1), second.argmax(-1), n)[..., None]  # each slice's second 0 (n: none)
            tail = np.cumprod(np.where((k > z) & (k <= z2), a, 1), -1)  # prod_{z < j <= i} a_j (1 for i <= z)
            at_z = head * np.sum(np.where((k >= z) & (k <= z2), g * tail, 0), -1, keepdims=True)  # y_i to z2
            # before z: only the y_i, i < z, count (every later y_i holds the 0 at z, even where a NaN or inf follows)
            before = np.flip(np.cumsum(np.flip(np.where(k < z, g * y, 0), -1), -1), -1) / a
            out = np.where(k < z, before, np.where(k == z, at_z, 0))
        return np.moveaxis(out, -1, d).astype(a.dtype, copy=False)  # a's shape again


class _Elementwise(Function):
    """An elementwise f(a) with f'(a) given as a function of a and f(a) (``deriv``)."""
    fn = deriv = None

    @classmethod
    def forward(cls, ctx, a):
        with np.errstate(all="ignore"):  # tan(pi/2)-like overflows are inf, silently, as PyTorch's
            y = cls.fn(a)
        ctx.save_for_backward(a, y)
        return y

    @classmethod
    def backward(cls, ctx, g):
        a, y = ctx.saved_tensors
        with np.errstate(all="ignore"):
            return g * cls.deriv(a, y)


class Tan(_Elementwise):
    """tan(a);  da = g (1 + tan(a)^2)"""
    fn, deriv = staticmethod(np.tan), staticmethod(lambda a, y: 1 + y * y)


class Atan(_Elementwise):
    """atan(a);  da = g / (1 + a^2)"""
    fn, deriv = staticmethod(np.arctan), staticmethod(lambda a, y: 1 / (1 + a * a))


class NanToNum(Function):
    """NaN -> nan, +inf -> posinf, -inf -> neginf (the dtype's largest finite values by default);  da = g where a
    was finite, 0 where it was replaced"""
    @staticmethod
    def forward(ctx, a, nan, posinf, neginf):
        ctx.finite = np.isfinite(a)
        return np.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.finite


class Atan2(Function):
    """atan2(a, b) (the angle of the point (b, a));  da = g b / (a^2 + b^2), db = -g a / (a^2 + b^2)"""
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.arctan2(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        with np.errstate(all="ignore"):
            r2 = a * a + b * b
            return g * b / r2, -g * a / r2


class Hypot(Function):
    """sqrt(a^2 + b^2);  da = g a / h, db = g b / h"""
    @staticmethod
    def forward(ctx, a, b):
        h = np.hypot(a, b)
        ctx.save_for_backward(a, b, h)
        return h

    @staticmethod
    def backward(ctx, g):
        a, b, h = ctx.saved_tensors
        with np.errstate(all="ignore"):
            return g * a / h, g * b / h


class Fmax(Function):
    """fmax(a, b) (or fmin): the larger (smaller) of the two, the number where one is NaN;  g goes to the
    answer's side, all of it to a on a tie (as PyTorch's)"""
    @staticmethod
    def forward(ctx, a, b, larger):
        ctx.a_wins = ((a >= b) if larger else (a <= b)) | np.isnan(b)
        return np.fmax(a, b) if larger else np.fmin(a, b)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.a_wins, g * ~ctx.a_wins


class Xlogy(Function):
    """a log(b), 0 where a == 0 (unless b is NaN);  da = g log(b), db = g a / b"""
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        with np.errstate(all="ignore"):
            return np.where((a == 0) & ~np.isnan(b), 0, a * np.log(b)).astype(np.result_type(a, b), copy=False)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        with np.errstate(all="ignore"):
            # PyTorch's da: xlogy(g, b) (so g log b at a == 0 too), but 0 where a == 0 and b <= 0 (no log there)
            return np.where((a == 0) & (b <= 0) | (g == 0) & ~np.isnan(b), 0, g * np.log(b)), g * a / b


def _no_bool(x, kernel: str) -> None:
    if x._data.dtype == np.bool_:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


class LongTailMixin:
    """The methods above, on the Tensor."""

    __slots__ = ()

    # --- reductions and scans --------------------------------------------------------------------
    def prod(self, dim=None, keepdim: bool = False) -> "Tensor":
        """The product of the elements (along ``dim``, an int); an integer tensor's is int64 (see promotion)."""
        d = None if dim is None else _norm_dim(dim, self.ndim, "prod")
        return Prod.apply(self, dim=None if self.ndim == 0 else d, keepdim=keepdim and self.ndim > 0)

    def cumprod(self, dim: int) -> "Tensor":
        """y_i = x_0 * ... * x_i along ``dim``;  shape unchanged."""
        d = _norm_dim(dim, self.ndim, "cumprod")
        return CumProd.apply(self, dim=d) if self.ndim else self.clone()

    @numpy_names
    def nansum(self, dim=None, keepdim: bool = False) -> "Tensor":
        """The sum with NaNs counted as 0 (their gradient is 0)."""
        x = self.masked_fill(self.isnan(), 0) if self.dtype.kind == "f" else self
        return x.sum(dim, keepdim)

    def count_nonzero(self, dim=None) -> "Tensor":
        """How many elements (along ``dim``, an int or a tuple) are not 0: int64."""
        axes = _norm_dims(dim, self.ndim, "count_nonzero")
        return autograd.Tensor._make(np.asarray(np.count_nonzero(self._data, axis=axes), dtype=np.int64))

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False):
        """The k-th smallest entry along ``dim`` (k from 1), with its index: ``(values, indices)``."""
        d = _norm_dim(dim, self.ndim, "kthvalue")
        n = self.shape[d] if self.ndim else 1
        if not 1 <= k <= n:
            raise IndexError(f"kthvalue(): selected number k out of range for dimension {dim} (k={k}, size {n})")
        return self._sorted_pick(d, keepdim, np.full(self.shape[:d] + self.shape[d + 1:], k - 1), "kthvalue")

    def median(self, dim=None, keepdim: bool = False):
        """The lower median (the ((n - 1) // 2)-th smallest entry); NaN if a NaN is there. Along ``dim``:
        ``(values, indices)``."""
        if dim is None:
            flat = self.reshape(-1)  # (N,)
            if flat.shape[0] == 0:  # NaN (the dtype's minimum for integers, as PyTorch's)
                if self.dtype.kind == "f":
                    return self.sum() * float("nan")
                low = True if self.dtype.kind == "b" else np.iinfo(self._data.dtype).min  # (bool's is True, as PyTorch's)
                return autograd.Tensor._make(np.asarray(low, dtype=self._data.dtype))
            if self.dtype.kind == "f":  # equal medians share the gradient evenly (all NaNs for a NaN), as PyTorch's
                from tinyattn.compat.statistics import EvenPick
                a = self._data.reshape(-1)
                return EvenPick.apply(self, value=np.nan if np.isnan(a).any() else np.sort(a)[(a.size - 1) // 2])
            return flat.median(0).values
        d = _norm_dim(dim, self.ndim, "median")
        if self.ndim and self.shape[d] == 0:
            raise IndexError(f"median(): Expected reduction dim {dim} to have non-zero size.")
        data = self._data if self.ndim else self._data.reshape(1)  # a 0-d tensor as (1,)
        k = np.full(data.shape[:d] + data.shape[d + 1:], (data.shape[d] - 1) // 2)
        if data.dtype.kind == "f":  # a NaN is the median of its slice: the first NaN, sorted last
            nans = np.isnan(data)
            k = np.where(nans.any(axis=d), np.sum(~nans, axis=d), k)
        return self._sorted_pick(d, keepdim, k, "median")

    def cummax(self, dim: int):
        """The running maximum along ``dim`` and where it was found (the latest of equal values; a NaN, once
        met, is the maximum from there on): ``(values, indices)``."""
        return self._cum_extreme(dim, True, "cummax")

    def cummin(self, dim: int):
        """The running minimum along ``dim``, as cummax."""
        return self._cum_extreme(dim, False, "cummin")

    def _cum_extreme(self, dim: int, larger: bool, op: str):
        from tinyattn.compat.methods import MinMax
        d = _norm_dim(dim, self.ndim, op)
        if self.ndim == 0:
            return MinMax(self.clone(), autograd.Tensor._make(np.zeros((), dtype=np.int64)))
        a = np.moveaxis(self._data, d, -1)  # (..., n): the scanned dim last
        where = np.zeros(a.shape, dtype=np.int64)
        best, at = np.zeros(a.shape[:-1], dtype=a.dtype), np.zeros(a.shape[:-1], dtype=np.int64)
        for i in range(a.shape[-1]):
            x = a[..., i]
            take = ((x >= best) if larger else (x <= best)) | (x != x) | (i == 0)  # (x != x: a NaN takes over)
            best, at = np.where(take, x, best), np.where(take, i, at)
            where[..., i] = at
        index = autograd.Tensor._make(np.moveaxis(where, -1, d))  # self's shape
        return MinMax(self.gather(d, index), index)

    def _sorted_pick(self, d: int, keepdim: bool, k: np.ndarray, op: str):
        """(values, indices) of the k-th entry (per slice) of self sorted along d."""
        from tinyattn.compat.methods import MinMax
        _no_bool(self, f"{op}_cpu" if op == "kthvalue" else f"{op}_out")
        if self.ndim == 0:
            return MinMax(self.clone(), autograd.Tensor._make(np.zeros((), dtype=np.int64)))
        values, indices = self.sort(dim=d, stable=True)
        at = autograd.Tensor._make(np.expand_dims(k, d).astype(np.int64))
        v, i = values.gather(d, at), indices.gather(d, at)
        return MinMax(v, i) if keepdim else MinMax(v.squeeze(d), i.squeeze(d))

    def trace(self) -> "Tensor":
        """The sum of a matrix's main diagonal (int64 for integers, as sum)."""
        if self.ndim != 2:
            raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
        _no_bool(self, "trace")
        return self.diagonal().sum()

    def bincount(self, weights=None, minlength: int = 0) -> "Tensor":
        """How often each value 0, 1, ... occurs in a 1-D tensor of non-negative ints (or the sum of ``weights``
        there): int64, or the weights' float dtype."""
        x = self._data
        if x.ndim != 1 or x.dtype.kind not in "iub" or x.size and x.min() < 0:
            raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
        w = None if weights is None else np.asarray(weights._data if isinstance(weights, autograd.Tensor) else weights)
        out = np.bincount(x, weights=w, minlength=minlength)
        wide = w is not None and w.dtype in (np.float32, np.float64)  # other weights (half, ints) sum in float64
        dt = np.int64 if w is None or not x.size else (w.dtype if wide else np.float64)  # (PyTorch's)
        return autograd.Tensor._make(out.astype(dt, copy=False))

    def index_fill(self, dim: int, index, value) -> "Tensor":
        """A copy of self with ``value`` at positions ``index`` along ``dim`` (index_fill_ out of place)."""
        return self.clone().index_fill_(dim, index, value)

    def index_add(self, dim: int, index, source, *, alpha=1) -> "Tensor":
        """A copy of self with source's slices along ``dim`` added at positions ``index`` (repeats add up)."""
        if not isinstance(source, autograd.Tensor) or source.dtype != self.dtype:
            from tinyattn.promotion import _TORCH_NAME, _key
            got = _TORCH_NAME[_key(source._data.dtype)] if isinstance(source, autograd.Tensor) else type(source).__name__
            raise RuntimeError(f"index_add_(): self ({_TORCH_NAME[_key(self._data.dtype)]}) and source ({got}) must "
                               "have the same scalar type")
        d = _norm_dim(dim, self.ndim, "index_add")
        idx = np.asarray(index._data if isinstance(index, autograd.Tensor) else index).reshape(-1)
        want = self.shape[:d] + (idx.size,) + self.shape[d + 1:] if self.ndim else ()
        if source.shape != want:  # (scatter_add would take any smaller source: a silent partial add)
            raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                               f"Got self.shape = {list(self.shape)} source.shape = {list(source.shape)}")
        if not self.ndim:  # a 0-d tensor: its one element, index 0, as a (1,) one
            return self.reshape(1).index_add(0, index, source.reshape(1), alpha=alpha).reshape(())
        where = [1] * source.ndim
        if source.ndim:
            where[d] = -1
        spread = np.broadcast_to(idx.reshape(where), source.shape)  # index i along dim d, source's shape
        scaled = source if alpha == 1 else (source * alpha).to(self.dtype)  # (bool * 2 is int64: back to self's dtype)
        return self.scatter_add(d, autograd.Tensor._make(spread), scaled)

    def float_power(self, exponent) -> "Tensor":
        """self ** exponent computed in float64, both sides (PyTorch's float_power)."""
        e = exponent.to(np.float64) if isinstance(exponent, autograd.Tensor) else float(exponent)
        return self.to(np.float64) ** e

    def diff(self, n: int = 1, dim: int = -1, prepend=None, append=None) -> "Tensor":
        """x[i + 1] - x[i] along ``dim`` (``n`` times); for bools, x[i + 1] != x[i]. ``prepend``/``append``
        (tensors of self's ndim, matching it outside ``dim``) are joined on along ``dim`` first, as PyTorch's."""
        if self.ndim == 0:
            raise RuntimeError("diff expects input to be at least one-dimensional")
        d = _norm_dim(dim, self.ndim, "diff")
        out = self
        for name, part in (("prepend", prepend), ("append", append)):
            if part is None:
                continue
            if not isinstance(part, autograd.Tensor):
                raise TypeError(f"diff(): argument '{name}' must be Tensor, not {type(part).__name__}")
            if part.ndim != self.ndim:
                raise RuntimeError(f"diff expects prepend or append to be the same dimension as input, got {name} "
                                   f"of shape {part.shape} for input of shape {self.shape}")
            from tinyattn.functions import cat
            out = cat([part, out] if name == "prepend" else [out, part], d)
        for _ in range(n):
            head, tail = ((slice(None),) * d + (s,) for s in (slice(1, None), slice(None, -1)))
            out = out[head] ^ out[tail] if out.dtype.kind == "b" else out[head] - out[tail]
        return out

    # --- elementwise ---------------------------------------------------------------------------
    def neg(self) -> "Tensor": return -self
    negative = neg

    def positive(self) -> "Tensor":
        """self (PyTorch's unary +), refused on bool as there."""
        if self._data.dtype == np.bool_:
            raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
        return self

    def sgn(self) -> "Tensor": return self.sign()  # (sign for real tensors)

    def signbit(self) -> "Tensor":
        """True where the sign bit is set: x < 0, and -0.0 and -NaN too for floats."""
        return autograd.Tensor._make(np.signbit(self._data) if self.dtype.kind == "f" else self._data < 0)

    def frac(self) -> "Tensor":
        """x - trunc(x) (the sign of x; gradient 1); floats only, as PyTorch."""
        if self.dtype.kind != "f":
            from tinyattn.promotion import _TORCH_NAME, _key
            raise NotImplementedError(f'"frac_cpu" not implemented for \'{_TORCH_NAME[_key(self._data.dtype)]}\'')
        return self - self.trunc()

    def exp2(self) -> "Tensor": return 2.0 ** self  # (an integer self is float already: promotion.FLOAT_RESULT)
    def tan(self) -> "Tensor": return Tan.apply(self)
    def atan(self) -> "Tensor": return Atan.apply(self)
    arctan = atan

    def erf(self) -> "Tensor":
        from tinyattn.special import Erf
        return Erf.apply(self)

    def nan_to_num(self, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> "Tensor":
        """NaN, +inf and -inf replaced (by 0 and the dtype's largest finite numbers unless given)."""
        if self.dtype.kind != "f":
            return self.clone()  # (no NaN or inf to replace: a copy, as PyTorch's)
        return NanToNum.apply(self, nan=nan, posinf=posinf, neginf=neginf)

    def atan2(self, other) -> "Tensor": return self._binary(Atan2, checks.tensor_arg(other, "atan2", "other", 1))
    arctan2 = atan2
    def hypot(self, other) -> "Tensor": return self._binary(Hypot, checks.tensor_arg(other, "hypot", "other", 1))
    def fmax(self, other) -> "Tensor": return self._binary(Fmax, checks.tensor_arg(other, "fmax", "other", 1), larger=True)
    def fmin(self, other) -> "Tensor": return self._binary(Fmax, checks.tensor_arg(other, "fmin", "other", 1), larger=False)
    def xlogy(self, other) -> "Tensor": return self._binary(Xlogy, other)

    def bitwise_and(self, other) -> "Tensor": return self & other
    def bitwise_or(self, other) -> "Tensor": return self | other
    def bitwise_xor(self, other) -> "Tensor": return self ^ other

    def bitwise_not(self) -> "Tensor":
        if self.dtype.kind not in "biu":
            from tinyattn.promotion import _TORCH_NAME, _key
            name = _TORCH_NAME[_key(self._data.dtype)]
            raise NotImplementedError(f'"bitwise_not_cpu" not implemented for \'{name}\'')
        return ~self

    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> "Tensor":
        """|self - other| <= atol + rtol |other| elementwise (a bool tensor); both tensors of one dtype."""
        checks.tensor_arg(other, "isclose", "other", 1)
        if other.dtype != self.dtype:
            from tinyattn.promotion import _TORCH_NAME, _key
            raise RuntimeError(f"{_TORCH_NAME[_key(self._data.dtype)]} did not match "
                               f"{_TORCH_NAME[_key(other._data.dtype)]}")
        with np.errstate(all="ignore"):
            return autograd.Tensor._make(np.isclose(self._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))

    def where(self, condition, other) -> "Tensor":
        """``torch.where(condition, self, other)``."""
        from tinyattn.functions import where
        return where(condition, self, other)
