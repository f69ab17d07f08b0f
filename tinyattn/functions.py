"""The torch.* functions over tensors: ``cat``, ``stack``, ``where``, ``max``, ``sum``, ``exp``, ...

Most of them call the Tensor method of the same name, which does the work; ``cat``, ``stack`` and
``where`` take several tensors, so they check them here and call their op. This module defines
``max``, ``min``, ``sum``, ``abs``, ``pow``, ``all`` and ``any`` under PyTorch's names, so where it needs
Python's builtins of those names it writes ``builtins.any``. ``torch.sin(x)`` and ``x.sin()`` are one op: the derivative lives with the method's op.
"""
from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence

import numpy as np

from functools import reduce

from .tensor import Cat, MinMax, Stack, Tensor, Where, _as_array, _norm_dim, matmul, promote_types, result_type


def _t(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _tensors(seq, op: str) -> list:
    if isinstance(seq, Tensor) or not isinstance(seq, (Sequence, Iterable)):
        raise TypeError(f"{op} expects a list or tuple of tensors, got {type(seq).__name__}")
    ts = [x if isinstance(x, Tensor) else Tensor(x) for x in seq]
    if not ts:
        raise ValueError(f"{op} needs at least one tensor")
    dt = reduce(promote_types, (t.dtype for t in ts))  # float32 with int64 is float32, as in PyTorch
    return [t if t.dtype == dt else t.to(dt) for t in ts]


def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing dim; all other dims must match."""
    ts = _tensors(tensors, "cat")
    if builtins.any(t.ndim == 0 for t in ts):
        raise ValueError(f"cat: a 0-d tensor (a scalar) can not be concatenated; got shapes {[tuple(x.shape) for x in ts]} "
                         "(use stack to make a new dim)")
    d = _norm_dim(dim, ts[0].ndim, "cat")
    for t in ts[1:]:
        if t.ndim != ts[0].ndim or builtins.any(a != b for i, (a, b) in enumerate(zip(t.shape, ts[0].shape)) if i != d):
            raise ValueError(f"cat: shapes {[tuple(x.shape) for x in ts]} differ outside dim {dim}")
    return Cat.apply(*ts, dim=d)


def stack(tensors, dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dim."""
    ts = _tensors(tensors, "stack")
    if builtins.any(t.shape != ts[0].shape for t in ts):
        raise ValueError(f"stack: all tensors need the same shape, got {[tuple(x.shape) for x in ts]}")
    return Stack.apply(*ts, dim=_norm_dim(dim, ts[0].ndim + 1, "stack"))


def where(condition, a, b) -> Tensor:
    """Elementwise ``a if condition else b`` (condition is bool, gets no gradient)."""
    c = np.asarray(condition._data if isinstance(condition, Tensor) else condition)
    if c.dtype != bool:
        raise TypeError(f"where: condition must be bool, got dtype {c.dtype}")
    dt = result_type(a, b)  # PyTorch's promotion: float32 with int64 is float32, x with 0.5 keeps x's float dtype
    a, b = (x.to(dt) if isinstance(x, Tensor) else Tensor._make(np.asarray(_as_array(x), dtype=dt)) for x in (a, b))
    try:
        np.broadcast_shapes(c.shape, a.shape, b.shape)
    except ValueError:
        raise ValueError(f"where: condition {c.shape}, a {a.shape} and b {b.shape} do not broadcast") from None
    return Where.apply(a, b, cond=c)


def tril(x, diagonal: int = 0) -> Tensor:
    """Keep the lower triangle (j <= i + diagonal) of the last two dims, zero the rest."""
    return _t(x).tril(diagonal)


def triu(x, diagonal: int = 0) -> Tensor:
    """Keep the upper triangle (j >= i + diagonal) of the last two dims, zero the rest."""
    return _t(x).triu(diagonal)


def exp(x) -> Tensor: return _t(x).exp()
def log(x) -> Tensor: return _t(x).log()
def sqrt(x) -> Tensor: return _t(x).sqrt()
def tanh(x) -> Tensor: return _t(x).tanh()
def sigmoid(x) -> Tensor: return _t(x).sigmoid()
def relu(x) -> Tensor: return _t(x).relu()
def softmax(x, dim: int) -> Tensor: return _t(x).softmax(dim)
def log_softmax(x, dim: int) -> Tensor: return _t(x).log_softmax(dim)


# --- reductions and comparisons ----------------------------------------------------------------
def argmax(input, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest entry (of the flattened tensor, or along ``dim``); int64."""
    return _t(input).argmax(dim, keepdim)


def mean(input, dim=None, keepdim: bool = False, *, axis=None) -> Tensor:
    """sum(x) / N over ``dim`` (None = every element; ``axis`` is another name for it)."""
    return _t(input).mean(dim, keepdim, axis=axis)


def max(input, dim: int | None = None, keepdim: bool = False):  # noqa: A001  (torch.max)
    """The largest entry; with ``dim``, the ``(values, indices)`` pair along it (as ``Tensor.max``)."""
    return _t(input).max(dim, keepdim)


def min(input, dim: int | None = None, keepdim: bool = False):  # noqa: A001  (torch.min)
    """The smallest entry; with ``dim``, the ``(values, indices)`` pair along it (as ``Tensor.min``)."""
    return _t(input).min(dim, keepdim)


def sum(input, dim=None, keepdim: bool = False, *, axis=None) -> Tensor:  # noqa: A001  (torch.sum)
    """sum(x) over ``dim`` (None = every element; ``axis`` is another name for it)."""
    return _t(input).sum(dim, keepdim, axis=axis)


def allclose(input, other, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> bool:
    """True when |input - other| <= atol + rtol |other| everywhere (a Python bool, as torch.allclose)."""
    a, b = _as_array(input), _as_array(other)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"allclose: shapes {a.shape} and {b.shape} do not broadcast") from None
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def bmm(input, mat2) -> Tensor:
    """Batched matrix product: (B, n, m) @ (B, m, p) -> (B, n, p); no broadcasting (use matmul for that)."""
    a, b = _t(input), _t(mat2)
    if a.ndim != 3 or b.ndim != 3:
        raise ValueError(f"bmm: both operands must be 3-D (B, n, m) and (B, m, p), got shapes {a.shape} and {b.shape}")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"bmm: batch sizes differ: {a.shape} has {a.shape[0]}, {b.shape} has {b.shape[0]}")
    return matmul(a, b)


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> MinMax:
    """The k largest (or smallest) entries along ``dim``: ``(values, indices)`` (as ``Tensor.topk``)."""
    return _t(input).topk(k, dim, largest, sorted)


def sort(input, dim: int = -1, descending: bool = False, stable: bool = False) -> MinMax:
    """``(values, indices)`` sorted along ``dim`` (as ``Tensor.sort``)."""
    return _t(input).sort(dim, descending, stable)


def argsort(input, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim`` (as ``Tensor.argsort``)."""
    return _t(input).argsort(dim, descending, stable)


def unique(input, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim: int | None = None):
    """The distinct values in increasing order, optionally with inverse and counts (as ``Tensor.unique``)."""
    return _t(input).unique(sorted, return_inverse, return_counts, dim)


def all(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001  (torch.all)
    """True where every element (over ``dim``) is nonzero (as ``Tensor.all``)."""
    return _t(input).all(dim, keepdim)


def any(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001  (torch.any)
    """True where some element (over ``dim``) is nonzero (as ``Tensor.any``)."""
    return _t(input).any(dim, keepdim)


def numel(input) -> int:
    """The number of elements (a Python int, as torch.numel)."""
    return _t(input).numel()


# --- the top-level function of every other Tensor method (torch.pow, torch.sin, torch.transpose, ...)
def abs(input) -> Tensor: return _t(input).abs()  # noqa: A001
def sin(input) -> Tensor: return _t(input).sin()
def cos(input) -> Tensor: return _t(input).cos()
def neg(input) -> Tensor: return -_t(input)
def square(input) -> Tensor: return _t(input) ** 2


def pow(input, exponent) -> Tensor:  # noqa: A001
    """input ** exponent; either one may be a number (``torch.pow(2, x)`` is 2 ** x)."""
    if not isinstance(input, Tensor) and isinstance(exponent, Tensor):
        return exponent.__rpow__(input)
    return _t(input) ** exponent


def clamp(input, min=None, max=None) -> Tensor:  # noqa: A002
    """input clipped to [min, max] elementwise (either bound may be None)."""
    return _t(input).clamp(min, max)


clip = clamp  # PyTorch's alias


def cumsum(input, dim: int) -> Tensor: return _t(input).cumsum(dim)
def gather(input, dim: int, index) -> Tensor: return _t(input).gather(dim, index)
def masked_fill(input, mask, value) -> Tensor: return _t(input).masked_fill(mask, value)


def var(input, dim=None, keepdim: bool = False, correction: int = 1) -> Tensor:
    """sum((x - mean)^2) / (N - correction) over ``dim``."""
    return _t(input).var(dim, keepdim=keepdim, correction=correction)


def std(input, dim=None, keepdim: bool = False, correction: int = 1) -> Tensor:
    """sqrt(var(input, dim, correction))."""
    return _t(input).std(dim, keepdim=keepdim, correction=correction)


def amax(input, dim=None, keepdim: bool = False) -> Tensor: return _t(input).amax(dim, keepdim)
def amin(input, dim=None, keepdim: bool = False) -> Tensor: return _t(input).amin(dim, keepdim)
def argmin(input, dim=None, keepdim: bool = False) -> Tensor: return _t(input).argmin(dim, keepdim)


# --- shape functions --------------------------------------------------------------------------
def reshape(input, shape) -> Tensor: return _t(input).reshape(shape)
def flatten(input, start_dim: int = 0, end_dim: int = -1) -> Tensor: return _t(input).flatten(start_dim, end_dim)
def transpose(input, dim0: int, dim1: int) -> Tensor: return _t(input).transpose(dim0, dim1)
def permute(input, dims) -> Tensor: return _t(input).permute(dims)
def unsqueeze(input, dim: int) -> Tensor: return _t(input).unsqueeze(dim)
def squeeze(input, dim: int | None = None) -> Tensor: return _t(input).squeeze(dim)
def split(tensor, split_size_or_sections, dim: int = 0) -> tuple: return _t(tensor).split(split_size_or_sections, dim)
def chunk(input, chunks: int, dim: int = 0) -> tuple: return _t(input).chunk(chunks, dim)
def unbind(input, dim: int = 0) -> tuple: return _t(input).unbind(dim)


def repeat_interleave(input, repeats: int, dim: int | None = None) -> Tensor:
    """Each element ``repeats`` times along ``dim`` (flattened first when dim is None)."""
    return _t(input).repeat_interleave(repeats, dim)


def nonzero(input, as_tuple: bool = False):
    """The indices of the nonzero entries: (N, ndim) int64, or one 1-D tensor per dim with as_tuple=True."""
    return _t(input).nonzero(as_tuple=as_tuple)
