"""``Tensor.to_sparse()``: a sparse COO tensor as a holder of its indices and values.

Code keeps a small bool table sparse to list the entries that are set: a speech model registers its
alignment heads as ``all_heads.to_sparse()`` and later walks ``heads.indices().T`` as (layer, head) pairs.
What is here: ``indices()``, ``values()``, ``to_dense()``, ``_nnz()``, ``sparse_dim()``, ``dense_dim()``,
``coalesce()``, ``is_coalesced()``, ``shape``/``size()``, ``dtype``, ``device``, ``is_sparse``, ``layout``,
``to(dtype or device)``, ``float()``/``double()``, and PyTorch's printout. No operation computes on it:
an op given one raises a TypeError that says to call ``.to_dense()`` (see docs/pytorch.md).
"""
from __future__ import annotations

import numpy as np

from .tensor import Tensor

__all__ = ["sparse_coo"]


class _Layout:
    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


sparse_coo = _Layout("torch.sparse_coo")


class SparseCOOTensor:
    """indices (sparse_dim, nnz) int64 in row-major order, values (nnz, *dense dims), size (the dense shape)."""

    is_sparse, layout, requires_grad, grad = True, sparse_coo, False, None

    def __init__(self, indices: np.ndarray, values: np.ndarray, size: tuple) -> None:
        self._idx, self._vals, self.shape = indices.astype(np.int64), values, tuple(int(n) for n in size)

    def indices(self) -> Tensor:
        return Tensor(self._idx.copy())

    def values(self) -> Tensor:
        return Tensor(self._vals.copy())

    _indices, _values = indices, values

    def _nnz(self) -> int:
        return self._idx.shape[1]

    def sparse_dim(self) -> int:
        return self._idx.shape[0]

    def dense_dim(self) -> int:
        return len(self.shape) - self.sparse_dim()

    def coalesce(self) -> SparseCOOTensor:
        return self  # built from a dense tensor: each index once, in order

    def is_coalesced(self) -> bool:
        return True

    def to_dense(self) -> Tensor:
        out = np.zeros(self.shape, dtype=self._vals.dtype)
        out[tuple(self._idx)] = self._vals
        return Tensor(out)

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self) -> int:
        return len(self.shape)

    ndim = property(dim)

    @property
    def dtype(self):
        return Tensor(self._vals[:0]).dtype

    @property
    def device(self):
        return Tensor(self._vals[:0]).device

    def to(self, *args, **kwargs) -> SparseCOOTensor:
        vals = Tensor(self._vals).to(*args, **kwargs)._data  # a dtype converts the values; a device is checked
        return self if vals is self._vals else SparseCOOTensor(self._idx, vals, self.shape)

    def float(self) -> SparseCOOTensor:
        return SparseCOOTensor(self._idx, self._vals.astype(np.float32), self.shape)

    def double(self) -> SparseCOOTensor:
        return SparseCOOTensor(self._idx, self._vals.astype(np.float64), self.shape)

    def cpu(self) -> SparseCOOTensor:
        return self

    def __array__(self, *args, **kwargs):
        raise TypeError("a sparse COO tensor here holds only its indices and values and no operation computes on "
                        "it: call .to_dense() first (or keep the dense tensor)")

    def __repr__(self) -> str:
        pad = " " * 7
        ind = repr(self.indices()).replace("\n", "\n" + pad + " " * 8)
        val = repr(self.values()).replace("\n", "\n" + pad + " " * 7)
        return (f"tensor(indices={ind},\n{pad}values={val},\n{pad}size={self.shape}, nnz={self._nnz()}, "
                f"layout={sparse_coo})")


def to_sparse(self: Tensor, sparse_dim: int | None = None) -> SparseCOOTensor:
    """The entries of self that are not zero (all dims sparse), or, with ``sparse_dim=k``, the index
    tuples over the first k dims whose slice holds any non-zero, each with its whole slice as the value."""
    a = self._data
    k = a.ndim if sparse_dim is None else int(sparse_dim)
    if not 0 < k <= a.ndim if a.ndim else k != 0:
        raise RuntimeError(f"to_sparse: sparse_dim must be in [1, {a.ndim}] for a {a.ndim}-D tensor, got {sparse_dim}")
    keep = a != 0 if k == a.ndim else (a != 0).reshape(*a.shape[:k], -1).any(-1)
    idx = np.array(np.nonzero(keep), dtype=np.int64).reshape(k, -1)  # (k, nnz), row-major order
    return SparseCOOTensor(idx, a[tuple(idx)].copy(), a.shape)


Tensor.to_sparse = to_sparse
Tensor.is_sparse = False
