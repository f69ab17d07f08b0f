"""The torch.* functions over tensors: ``cat``, ``stack``, ``where``, ``max``, ``sum``, ``exp``, ...

Most of them call the Tensor method of the same name, which does the work; ``cat``, ``stack`` and
``where`` take several tensors, so they check them here and call their op. This module defines
``max``, ``min`` and ``sum`` under PyTorch's names, so it never uses Python's builtins of those names.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from .tensor import Cat, MinMax, Stack, Tensor, Where, _as_array, _norm_dim, matmul


def _t(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _tensors(seq, op: str) -> list:
    if isinstance(seq, Tensor) or not isinstance(seq, (Sequence, Iterable)):
        raise TypeError(f"{op} expects a list or tuple of tensors, got {type(seq).__name__}")
    ts = [x if isinstance(x, Tensor) else Tensor(x) for x in seq]
    if not ts:
        raise ValueError(f"{op} needs at least one tensor")
    return ts


def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing dim; all other dims must match."""
    ts = _tensors(tensors, "cat")
    if any(t.ndim == 0 for t in ts):
        raise ValueError(f"cat: a 0-d tensor (a scalar) can not be concatenated; got shapes {[tuple(x.shape) for x in ts]} "
                         "(use stack to make a new dim)")
    d = _norm_dim(dim, ts[0].ndim, "cat")
    for t in ts[1:]:
        if t.ndim != ts[0].ndim or any(a != b for i, (a, b) in enumerate(zip(t.shape, ts[0].shape)) if i != d):
            raise ValueError(f"cat: shapes {[tuple(x.shape) for x in ts]} differ outside dim {dim}")
    return Cat.apply(*ts, dim=d)


def stack(tensors, dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dim."""
    ts = _tensors(tensors, "stack")
    if any(t.shape != ts[0].shape for t in ts):
        raise ValueError(f"stack: all tensors need the same shape, got {[tuple(x.shape) for x in ts]}")
    return Stack.apply(*ts, dim=_norm_dim(dim, ts[0].ndim + 1, "stack"))


def where(condition, a, b) -> Tensor:
    """Elementwise ``a if condition else b`` (condition is bool, gets no gradient)."""
    c = np.asarray(condition.data if isinstance(condition, Tensor) else condition)
    if c.dtype != bool:
        raise TypeError(f"where: condition must be bool, got dtype {c.dtype}")
    like = a if isinstance(a, Tensor) else b if isinstance(b, Tensor) else None
    a = like._lift(a) if like is not None else Tensor(a)
    b = like._lift(b) if like is not None else Tensor(b)
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


def mean(input, dim=None, keepdim: bool = False) -> Tensor:
    """sum(x) / N over ``dim`` (None = every element)."""
    return _t(input).mean(dim, keepdim)


def max(input, dim: int | None = None, keepdim: bool = False):  # noqa: A001  (torch.max)
    """The largest entry; with ``dim``, the ``(values, indices)`` pair along it (as ``Tensor.max``)."""
    return _t(input).max(dim, keepdim)


def min(input, dim: int | None = None, keepdim: bool = False):  # noqa: A001  (torch.min)
    """The smallest entry; with ``dim``, the ``(values, indices)`` pair along it (as ``Tensor.min``)."""
    return _t(input).min(dim, keepdim)


def sum(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001  (torch.sum)
    """sum(x) over ``dim`` (None = every element)."""
    return _t(input).sum(dim, keepdim)


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
