"""``as_strided(size, stride, storage_offset)``: the tensor whose element [i, j, ...] is storage element
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
