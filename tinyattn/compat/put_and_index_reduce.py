"""``put``/``put_`` (writes at flat positions) and ``index_reduce``/``index_reduce_`` (index_add's prod, mean,
amax and amin), mixed into the Tensor (through MethodsMixin), as PyTorch 2.13 does them
(tests/oracle/test_names_put_index_reduce_torch.py).

Both are other ops in disguise, so their gradients are those ops': ``put`` is ``index_copy`` (``index_add``
with accumulate=True) on self flattened; ``index_reduce(dim, index, source, reduce)`` is ``scatter_reduce``
with index spread along source's other dims. The in-place forms write the result with ``copy_`` (one
version bump; recorded out of place, as every in-place op here).
"""
from __future__ import annotations

import numpy as np

from tinyattn import autograd
from tinyattn.compat.args import _norm_dim
from tinyattn.promotion import torch_name

_REDUCES = ("prod", "mean", "amax", "amin")


def _put_args(x, index, source) -> np.ndarray:
    """index as flat, non-negative int64 positions; PyTorch's checks in its order."""
    if not isinstance(index, autograd.Tensor) or not isinstance(source, autograd.Tensor):
        raise TypeError(f"put(): index and source must be tensors, got {type(index).__name__} and "
                        f"{type(source).__name__}")
    if index._data.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {torch_name(index._data)}")
    if source._data.dtype != x._data.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{torch_name(x._data)} and source.dtype = {torch_name(source._data)}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    flat, n = index._data.reshape(-1), x.numel()
    bad = flat[(flat < -n) | (flat >= n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor of {n} elements.")
    return np.where(flat < 0, flat + n, flat)


def _index_reduce_args(x, dim, index, source, reduce):
    """(dim, index spread to source's shape) for scatter_reduce; PyTorch's checks."""
    if reduce not in _REDUCES:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    if not isinstance(index, autograd.Tensor) or not isinstance(source, autograd.Tensor):
        raise TypeError(f"index_reduce(): index and source must be tensors, got {type(index).__name__} and "
                        f"{type(source).__name__}")
    d = _norm_dim(dim, x.ndim, "index_reduce")
    idx = index._data
    if idx.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {idx.ndim} with type: "
                         f"{torch_name(idx)} and size: {list(idx.shape)}")
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {torch_name(idx)}")
    n_src = source.shape[d] if source.ndim else 1
    if idx.size != n_src:
        raise RuntimeError(f"index_reduce_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
                           f"({n_src}), for dim: {d}")
    if source._data.dtype != x._data.dtype:
        raise RuntimeError(f"index_reduce_(): self ({torch_name(x._data)}) and source ({torch_name(source._data)}) must have "
                           "the same scalar type")
    if source.ndim != x.ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape, source.shape)) if i != d):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(x.shape)} source.shape = {list(source.shape)}")
    n = x.shape[d] if x.ndim else 1
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError("index out of range in self")
    along = [1] * max(source.ndim, 1)
    along[d] = idx.size
    spread = np.broadcast_to(idx.astype(np.int64).reshape(along), source.shape or (1,)).reshape(source.shape).copy()
    return d, autograd.Tensor._make(spread)


class PutAndIndexReduceMixin:
    """put(_), index_reduce(_) on the Tensor."""

    __slots__ = ()

    def put(self, index, source, accumulate: bool = False):
        """A copy of self with source's values at the flat positions ``index`` (added there if accumulate)."""
        pos = autograd.Tensor._make(_put_args(self, index, source))
        flat = self.reshape(-1)  # (N,)
        src = source.reshape(-1)  # (K,)
        out = flat.index_add(0, pos, src) if accumulate else flat.index_copy(0, pos, src)
        return out.reshape(self.shape)

    def put_(self, index, source, accumulate: bool = False):
        """put, in place."""
        return self.copy_(self.put(index, source, accumulate))

    def index_reduce(self, dim: int, index, source, reduce: str, *, include_self: bool = True):
        """Combine source's slices along dim into self's slices ``index`` by reduce (prod, mean, amax, amin)."""
        d, spread = _index_reduce_args(self, dim, index, source, reduce)
        return self.scatter_reduce(d, spread, source, reduce, include_self=include_self)

    def index_reduce_(self, dim: int, index, source, reduce: str, *, include_self: bool = True):
        """index_reduce, in place."""
        d, spread = _index_reduce_args(self, dim, index, source, reduce)
        return self.scatter_reduce_(d, spread, source, reduce, include_self=include_self)
