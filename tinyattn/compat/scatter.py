"""Scatters that combine: ``scatter_add`` and ``scatter_reduce`` (gather's adjoints), each forward above its backward.

``x.scatter_reduce(dim, index, src, reduce)`` combines ``src[i][j]`` into ``x[index[i][j]][j]`` (dim=0) with
``reduce`` in sum, prod, mean, amax, amin: where an index names one position several times, every value
takes part (NumPy's ``ufunc.at``, unlike a plain fancy write). ``include_self=False`` leaves out x's own
value at the positions something is scattered to; positions nothing reaches keep x's value either way.
``scatter_add`` is the sum with x included. The gradients are PyTorch's, measured against torch 2.13
(tests/oracle/test_scatter_reduce_torch.py): ties of amax/amin share the gradient evenly, and prod's
gradient at a zero is the product of the others.
"""
from __future__ import annotations

import numpy as np

from tinyattn import autograd
from tinyattn.autograd import Function
from tinyattn.compat.args import _norm_dim
from tinyattn.compat.indexing import _gather_where

_UFUNC = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum, "amin": np.minimum}
_ALIAS = {"max": "amax", "min": "amin"}  # (PyTorch 2.13 takes these two spellings as well)


def _identity(reduce: str, dtype: np.dtype):
    """The value that ``reduce`` leaves unchanged: where include_self=False starts a position."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = True if dtype == np.bool_ else np.inf if dtype.kind in "fc" else np.iinfo(dtype).max
    return big if reduce == "amin" else (False if dtype == np.bool_ else -big)


def _combine(a: np.ndarray, src: np.ndarray, where: tuple, reduce: str, include_self: bool):
    """(a with src combined in at ``where``, the count of values at each position (mean only, else None))."""
    out = a.copy()
    if not include_self:
        out[where] = _identity(reduce, a.dtype)
    _UFUNC[reduce].at(out, where, src)  # repeated positions combine
    if reduce != "mean":
        return out, None
    count = np.zeros(a.shape, dtype=np.int64)
    np.add.at(count, where, 1)
    count += include_self
    count[count == 0] = 1  # nothing reached it and self is left out: it keeps its value (divide by 1)
    if out.dtype.kind in "iub":
        # (PyTorch's integer mean rounds down; computed in int64: a uint8 or int8 cannot take an int64 count)
        return (out.astype(np.int64) // count).astype(out.dtype), count
    return (out / count).astype(out.dtype, copy=False), count


class ScatterReduce(Function):
    """out = a with src combined in at ``where`` by ``reduce``;
    sum:  da = g,             ds = g[where]
    mean: da = g / n,         ds = (g / n)[where]          (n: how many values each position averaged)
    amax, amin: da = g [a == out] / m,  ds = g[where] [src == out[where]] / m[where]  (m: how many equal out)
    prod: da = g out / a,     ds = g[where] out[where] / src  (at a zero: the product of the others)
    and with include_self=False, da = 0 wherever something was scattered (a's value took no part there)."""
    @staticmethod
    def forward(ctx, a, s, where, shape, reduce, include_self):
        src = s[tuple(slice(0, n) for n in shape)]  # only index's shape of src is read
        out, count = _combine(a, src, where, _ALIAS.get(reduce, reduce), include_self)
        if reduce not in ("sum", "mean"):  # (sum's and mean's gradients need no values)
            ctx.save_for_backward(a, src, out)
        ctx.where, ctx.src_shape, ctx.reduce, ctx.include_self, ctx.count = where, s.shape, reduce, include_self, count
        return out

    @staticmethod
    def backward(ctx, g):
        where, reduce = ctx.where, ctx.reduce
        if reduce in _ALIAS:  # PyTorch 2.13 computes 'max' and 'min' forward but has no gradient for them
            raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', 'amin' but got {reduce}.")
        a, src, out = ctx.saved_tensors if reduce not in ("sum", "mean") else (None, None, None)
        with np.errstate(divide="ignore", invalid="ignore"):
            if reduce == "sum":
                ga, gsrc = g, g[where]
            elif reduce == "mean":
                ga = g / ctx.count
                gsrc = ga[where]
            elif reduce in ("amax", "amin"):
                self_is, src_is = (a == out), (src == out[where])
                ties = self_is.astype(g.dtype)  # (a's own value counts as a tie even when include_self=False, as in PyTorch)
                np.add.at(ties, where, src_is)
                share = g / ties
                ga, gsrc = self_is * share, src_is * share[where]
            else:  # prod: divide the product by each factor, except at zeros, where that would be 0 / 0
                ga, gsrc = ScatterReduce._prod_grads(g, a, src, out, where, ctx.include_self)
        ga = np.array(ga, dtype=g.dtype)  # (a new array: it is written below)
        if not ctx.include_self:
            ga[where] = 0
        gs = np.zeros(ctx.src_shape, dtype=g.dtype)
        gs[tuple(slice(0, n) for n in gsrc.shape)] = gsrc  # src entries beyond index's shape took no part
        return ga, gs

    @staticmethod
    def _prod_grads(g, a, src, out, where, include_self):
        """prod's gradients without dividing by zero: a's zeros are taken out (set to 1) and the product
        recomputed; a src entry that is the only zero of its position gets the product of the others."""
        ones_for_zeros = np.where(a == 0, 1, a)
        ga = g * _combine(ones_for_zeros, src, where, "prod", include_self)[0] / ones_for_zeros
        zero = src == 0
        zeros_here = np.zeros(a.shape, dtype=np.int64)
        np.add.at(zeros_here, where, zero)
        lone = zero & (zeros_here[where] == 1)
        others = _combine(a, np.where(lone, 1, src), where, "prod", include_self)[0]
        gsrc = np.where(lone, (g * others)[where], (g * out)[where] / np.where(zero, 1, src))
        return ga, gsrc


class ScatterRefusesBackward(Function):
    """``scatter(..., reduce='add'|'multiply')``: PyTorch computes it but has no derivative for it."""
    @staticmethod
    def forward(ctx, a, s, where, shape, reduce, include_self):
        return _combine(a, s[tuple(slice(0, n) for n in shape)] if s.ndim else s, where, reduce, include_self)[0]

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("derivative for aten::scatter is not implemented (scatter with reduce=; "
                           "scatter_reduce has one)")


def _src_of(self, dim, index, src, op: str):
    """(where, index's shape, src as a tensor of self's dtype): the checks every combining scatter shares."""
    where = _gather_where(self.shape, dim, index, op)
    shape = where[_norm_dim(dim, self.ndim, op)].shape  # index's shape
    if not isinstance(src, autograd.Tensor):
        raise TypeError(f"{op}(): argument 'src' must be a Tensor, not {type(src).__name__}")
    if src.ndim != len(shape) or any(n > m for n, m in zip(shape, src.shape)):
        raise ValueError(f"{op}: index of shape {shape} needs a src of as many dims, at least as large "
                         f"in every dim; got src of shape {src.shape}")
    if src.dtype != self.dtype:
        raise RuntimeError(f"{op}(): Expected self.dtype to be equal to src.dtype "
                           f"(self is {self.dtype}, src is {src.dtype}; convert one with .to())")
    return where, shape, src


def _reduce_name(reduce: str) -> str:
    if _ALIAS.get(reduce, reduce) not in _UFUNC:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return reduce


class ScatterMixin:
    """The combining scatters as Tensor methods (mixed into Tensor through MethodsMixin)."""

    def scatter_add(self, dim: int, index, src) -> "autograd.Tensor":
        """A copy of self with each src entry added at its index along dim (repeats add up)."""
        where, shape, src = _src_of(self, dim, index, src, "scatter_add")
        return ScatterReduce.apply(self, src, where=where, shape=shape, reduce="sum", include_self=True)

    def scatter_add_(self, dim: int, index, src) -> "autograd.Tensor":
        return self.copy_(self.scatter_add(dim, index, src))

    def scatter_reduce(self, dim: int, index, src, reduce: str, *, include_self: bool = True) -> "autograd.Tensor":
        """A copy of self with src combined in at index along dim by ``reduce`` (sum, prod, mean, amax, amin);
        ``include_self=False`` leaves self's value out wherever something is scattered."""
        name = _reduce_name(reduce)
        where, shape, src = _src_of(self, dim, index, src, "scatter_reduce")
        return ScatterReduce.apply(self, src, where=where, shape=shape, reduce=name, include_self=bool(include_self))

    def scatter_reduce_(self, dim: int, index, src, reduce: str, *, include_self: bool = True) -> "autograd.Tensor":
        # (from a clone: amax, amin and prod save self's old values, which copy_ is about to overwrite)
        return self.copy_(self.clone().scatter_reduce(dim, index, src, reduce, include_self=include_self))

    def _scatter_reducing(self, dim: int, index, src, reduce: str) -> "autograd.Tensor":
        """scatter(dim, index, src or value, reduce='add' | 'multiply'): its values; its backward raises (as PyTorch)."""
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        name = "sum" if reduce == "add" else "prod"
        if isinstance(src, autograd.Tensor):
            where, shape, src = _src_of(self, dim, index, src, "scatter")
        else:  # a number: every indexed position combines with it
            where = _gather_where(self.shape, dim, index, "scatter")
            shape, src = (), autograd.Tensor._make(np.asarray(src, dtype=self.dtype))
        return ScatterRefusesBackward.apply(self, src, where=where, shape=shape, reduce=name, include_self=True)
