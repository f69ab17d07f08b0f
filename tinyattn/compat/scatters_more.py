"""The out-of-place writes ``select_scatter``, ``slice_scatter`` and ``diagonal_scatter`` (a copy of self with
src put where ``select``/slicing/``diagonal`` would read), and the number-part functions ``frexp``, ``ldexp``,
``gcd`` and ``lcm``, mixed into the Tensor (through MethodsMixin), as PyTorch 2.13 does them
(tests/oracle/test_names_scatters_more_torch.py).

The three scatters take src of exactly the read place's shape (no broadcasting) and cast it to self's
dtype; the gradient is Overwrite's (compat/inplace.py): g with the written place 0 for self, g there for src.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tinyattn import autograd
from tinyattn.autograd import Function
from tinyattn.compat.args import _norm_dim
from tinyattn.defaults import get_default_dtype
from tinyattn.promotion import result_type, torch_name


class FrexpResult(NamedTuple):
    mantissa: "autograd.Tensor"
    exponent: "autograd.Tensor"


class Mantissa(Function):
    """m = a / 2^e with 0.5 <= |m| < 1 (e from np.frexp);  da = g / 2^e  (e is held still, as PyTorch's)"""
    @staticmethod
    def forward(ctx, a):
        m, e = np.frexp(a)
        ctx.e = e
        return m

    @staticmethod
    def backward(ctx, g):
        return np.ldexp(g, -ctx.e).astype(g.dtype)


def _scatter_into(x, src, index, read, who: str):
    """A copy of x with ``src`` written at ``index``, where ``read`` (x's array at index) gives the place's shape."""
    if not isinstance(src, autograd.Tensor):
        raise TypeError(f"{who}(): argument 'src' (position 2) must be Tensor, not {type(src).__name__}")
    if tuple(src.shape) != read.shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(read.shape)}")
    if src.requires_grad and autograd.is_grad_enabled() and x._data.dtype.kind not in "fc":  # (its cast loses it)
        raise RuntimeError(f"Autograd not support dtype: {torch_name(x._data.dtype)}")
    from tinyattn.compat.inplace import Overwrite
    src = src if src.dtype == x.dtype else src.to(x.dtype)
    return Overwrite.apply(x.clone(), src, index=index, where=True)  # (Overwrite writes into its first input)


def _int_pair(x, other, who: str):
    if not isinstance(other, autograd.Tensor):
        raise TypeError(f"{who}(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    dt = result_type(x, other)  # (a bool with an int is the int; a 0-d int64 leaves an int32 tensor int32)
    if dt.kind not in "iu":
        raise NotImplementedError(f'"{who}_cpu" not implemented for \'{torch_name(dt)}\'')
    return x._data.astype(dt), other._data.astype(dt)


class ScattersMoreMixin:
    """select_scatter, slice_scatter, diagonal_scatter, frexp, ldexp, gcd and lcm on the Tensor."""

    __slots__ = ()

    def select_scatter(self, src, dim: int, index: int):
        """A copy of self whose ``select(dim, index)`` is src."""
        d = _norm_dim(dim, self.ndim, "select_scatter")
        n = self.shape[d]
        if not -n <= index < n:
            raise IndexError(f"select(): index {index} out of range for tensor of size {list(self.shape)} "
                             f"at dimension {d}")
        at = (slice(None),) * d + (index % n,)
        return _scatter_into(self, src, at, self._data[at], "select_scatter")

    def slice_scatter(self, src, dim: int = 0, start=None, end=None, step: int = 1):
        """A copy of self whose ``[start:end:step]`` along dim is src."""
        d = _norm_dim(dim, self.ndim, "slice_scatter")
        if step <= 0:
            raise RuntimeError("slice step must be positive")
        at = (slice(None),) * d + (slice(start, end, step),)
        return _scatter_into(self, src, at, self._data[at], "slice_scatter")

    def diagonal_scatter(self, src, offset: int = 0, dim1: int = 0, dim2: int = 1):
        """A copy of self whose ``diagonal(offset, dim1, dim2)`` is src (of that diagonal's shape)."""
        d1, d2 = _norm_dim(dim1, self.ndim, "diagonal_scatter"), _norm_dim(dim2, self.ndim, "diagonal_scatter")
        if d1 == d2:
            raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
        diag = np.diagonal(self._data, offset, d1, d2)  # (others..., L)
        grid = np.indices(diag.shape, sparse=True)  # one index array per dim of the diagonal's shape
        k = grid[-1]
        at, rest = [None] * self.ndim, iter(grid[:-1])
        for i in range(self.ndim):
            at[i] = k + max(-offset, 0) if i == d1 else k + max(offset, 0) if i == d2 else next(rest)
        return _scatter_into(self, src, tuple(at), diag, "diagonal_scatter")

    def frexp(self):
        """(mantissa, exponent): self = mantissa * 2^exponent, 0.5 <= |mantissa| < 1 (0, inf and NaN: exponent 0);
        exponent is int32. The mantissa's gradient is 1 / 2^exponent."""
        if self._data.dtype.kind != "f":
            raise RuntimeError("torch.frexp() only supports floating-point dtypes")
        return FrexpResult(Mantissa.apply(self), autograd.Tensor._make(np.frexp(self._data)[1].astype(np.int32)))

    def ldexp(self, other):
        """self * 2^other, in floating point (integers: the default dtype)."""
        if not isinstance(other, autograd.Tensor):
            raise TypeError(f"ldexp(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
        kinds = (self._data.dtype.kind == "f", other._data.dtype.kind == "f")
        dt = (result_type(self, other) if all(kinds) else self._data.dtype if kinds[0]
              else other._data.dtype if kinds[1] else np.dtype(get_default_dtype()))
        return self.to(dt) * (2.0 ** other.to(dt))

    def gcd(self, other):
        """The greatest common divisor, elementwise (integers; gcd(0, 0) = 0)."""
        a, b = _int_pair(self, other, "gcd")
        return autograd.Tensor._make(np.gcd(a, b))

    def lcm(self, other):
        """The least common multiple, elementwise (integers; 0 where either is 0), as |a / gcd * b|."""
        a, b = _int_pair(self, other, "lcm")
        g = np.gcd(a, b)
        with np.errstate(all="ignore"):
            out = np.where(g == 0, 0, np.abs(a // np.where(g == 0, 1, g) * b))  # (wraps as PyTorch's on overflow)
        return autograd.Tensor._make(out.astype(a.dtype))
