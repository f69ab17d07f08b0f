"""``as_strided(size, stride, storage_offset)`` and ``resize_``/``resize_as_`` (below).

``as_strided``: the tensor whose element [i, j, ...] is storage element
storage_offset + i stride[0] + j stride[1] + ..., mixed into the Tensor (through MethodsMixin); sliding
windows are its common use (``x.as_strided((n - k + 1, k), (1, 1))``). Checked against PyTorch 2.13
(tests/oracle/test_names_put_index_reduce_torch.py).

Unlike PyTorch's it returns a copy, not a view: a write into the result does not reach self. It reads self's
own elements in row-major order, which is PyTorch's storage exactly when self is contiguous and starts its
storage (storage_offset() == 0); other tensors are refused rather than read differently. The gradient adds
up g at every storage element read (overlapping windows read one element several times).
"""
from __future__ import annotations

import numpy as np

from tinyattn.autograd import Function


class AsStrided(Function):
    """out = flat(a)[where];  da = sum of g over the places that read each element (np.add.at)"""
    @staticmethod
    def forward(ctx, a, where):
        ctx.where, ctx.shape = where, a.shape
        return a.reshape(-1)[where]

    @staticmethod
    def backward(ctx, g):
        flat = np.zeros(int(np.prod(ctx.shape)), dtype=g.dtype)
        np.add.at(flat, ctx.where, g)
        return flat.reshape(ctx.shape)


class AsStridedMixin:
    """as_strided on the Tensor."""

    __slots__ = ()

    def as_strided(self, size, stride, storage_offset=None):
        """A (copied) strided read of self's storage: element [i, j, ...] = storage[offset + i stride[0] + ...]."""
        size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
        if len(size) != len(stride):
            raise RuntimeError("mismatch in length of strides and shape")
        if any(s < 0 for s in stride):
            raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
        offset = 0 if storage_offset is None else int(storage_offset)
        if offset < 0:
            raise RuntimeError(f"Tensor: invalid storage offset {offset}")
        if not self.is_contiguous() or self.storage_offset() != 0:
            raise NotImplementedError("as_strided: tinyattn reads self's own elements, so self must be contiguous "
                                      f"and start its storage (got is_contiguous()={self.is_contiguous()}, "
                                      f"storage_offset()={self.storage_offset()}); call .clone() first")
        item, n = self._data.dtype.itemsize, self.numel()
        needed = 0 if 0 in size else offset + sum((k - 1) * s for k, s in zip(size, stride)) + 1
        if needed > n:
            raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                               f"itemsize {item} requiring a storage size of {needed * item} are out of bounds for "
                               f"storage of size {n * item}")
        where = np.full(size, offset, dtype=np.int64)
        for d, (k, s) in enumerate(zip(size, stride)):
            where = where + (np.arange(k) * s).reshape((k,) + (1,) * (len(size) - d - 1))  # (size...)
        return AsStrided.apply(self, where=where)


def _sizes(size: tuple, who: str) -> tuple:
    """resize_'s sizes: ints, or one tuple/list/Size of them."""
    if not size:
        raise TypeError(f'{who}() missing 1 required positional arguments: "size"')
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in size):
        raise TypeError(f"{who}(): size must be ints, got {tuple(type(n).__name__ for n in size)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"{who}(): sizes must be non-negative, got {list(size)}")
    return tuple(int(n) for n in size)


class ResizeMixin:
    """resize_ and resize_as_ on the Tensor."""

    __slots__ = ()

    def resize_(self, *size):
        """Give self a new shape in place, reading its elements in storage order: the same count reshapes,
        fewer keep the first ones (the same memory), more keep all and add new ones (0 here; PyTorch leaves them
        uninitialised) in new memory, which views taken before no longer share. Refused on a tensor that
        requires grad (as PyTorch), and on a view or a non-contiguous tensor whose shape would change (PyTorch
        reads their storage beyond or across what they show)."""
        new = _sizes(size, "resize_")
        if self.requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        if new == tuple(self.shape):
            return self
        if self._base is not None or not self.is_contiguous():
            raise NotImplementedError("resize_: tinyattn resizes only a contiguous tensor that owns its memory (got "
                                      f"{'a view' if self._base is not None else 'a non-contiguous tensor'}); "
                                      "resize a .clone() instead")
        n, flat = int(np.prod(new)), self._data.reshape(-1)  # (a view of self's memory: it is contiguous)
        if n <= flat.size:
            self._data = flat[:n].reshape(new)  # the same memory
        else:
            grown = np.zeros(n, dtype=self._data.dtype)
            grown[:flat.size] = flat
            self._data = grown.reshape(new)
        return self._bump_version()

    def resize_as_(self, other):
        """resize_ to other's shape."""
        return self.resize_(tuple(other.shape))
