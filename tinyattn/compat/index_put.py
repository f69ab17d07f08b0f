"""``index_put``/``index_put_`` (``torch.index_put``): a copy of self with ``values`` written at
``self[indices]``, or added there with ``accumulate=True`` (repeated positions then add up), mixed into the
Tensor (through MethodsMixin), as PyTorch 2.13 does them (tests/oracle/test_names_index_put_torch.py).

indices is a tuple (or list) of index tensors, one per leading dim: integer positions (negative ones count
from the end; several broadcast together) or bool masks (each covering as many dims as it has). values
broadcasts to the indexing result's shape and has self's dtype. The gradient is PyTorch's: self gets g with
the written places 0 (all of g when accumulating: self is added to, not overwritten); values gets g read
at the places, summed over what broadcasting stretched (so a repeated position passes g to each write).
"""
from __future__ import annotations

import numpy as np

from tinyattn import autograd
from tinyattn.autograd import Function, unbroadcast
from tinyattn.promotion import torch_name


class IndexPut(Function):
    """a with v at a[idx] (added if accumulate);  da = g (0 at idx unless accumulate), dv = g[idx] unbroadcast"""
    @staticmethod
    def forward(ctx, a, v, idx=(), accumulate=False):
        out = a.copy()
        if accumulate:  # np.add.at adds once per occurrence: a repeated position gets every value
            np.add.at(out, idx, np.broadcast_to(v, out[idx].shape))
        else:
            out[idx] = v
        ctx.idx, ctx.accumulate, ctx.v_shape = idx, accumulate, v.shape
        return out

    @staticmethod
    def backward(ctx, g):
        ga = gv = None
        if ctx.needs_input_grad[0]:
            ga = g if ctx.accumulate else g.copy()
            if not ctx.accumulate:
                ga[ctx.idx] = 0  # overwritten places: self's old values there reach nothing
        if ctx.needs_input_grad[1]:
            gv = unbroadcast(g[ctx.idx], ctx.v_shape)
        return ga, gv


def _index_put_args(x, indices, values, name: str) -> tuple:
    """indices as a NumPy index (a tuple of int64 position arrays); PyTorch's checks, each naming what came."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{name}(): argument 'indices' (position 1) must be tuple of Tensors, not "
                        f"{type(indices).__name__}")
    if not isinstance(values, autograd.Tensor):
        raise TypeError(f"{name}(): argument 'values' (position 2) must be Tensor, not {type(values).__name__}")
    if not indices:
        raise RuntimeError(f"{name}(): indices must hold at least one index tensor, got an empty "
                           f"{type(indices).__name__}")
    if values._data.dtype != x._data.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got {torch_name(x._data)} "
                           f"for the destination and {torch_name(values._data)} for the source.")
    dim, positions = 0, []
    for k, ind in enumerate(indices):
        if not isinstance(ind, autograd.Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got {type(ind).__name__}")
        a = ind._data
        if a.dtype == np.uint8:
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
        if a.dtype.kind not in "biu":
            raise IndexError(f"tensors used as indices must be long, int, byte or bool tensors, got {torch_name(a)}")
        if a.dtype.kind == "b" and a.ndim == 0:  # (PyTorch's own reading of one differs by position: not taken)
            raise IndexError(f"{name}(): a 0-d bool mask (element {k}) is not supported here; use a mask of the "
                             f"indexed dims' shape, or torch.where(mask, values, self)")
        if a.dtype.kind == "b":
            covered = x.shape[dim:dim + a.ndim]
            if a.ndim and dim + a.ndim <= x.ndim and a.shape != covered:
                raise IndexError(f"The shape of the mask {list(a.shape)} at index {dim} does not match the shape of "
                                 f"the indexed tensor {list(x.shape)} at index {dim}")
            positions += [(dim + j, p) for j, p in enumerate(np.nonzero(a))]  # the positions of its True entries
            dim += a.ndim
        else:
            positions.append((dim, a.astype(np.int64)))
            dim += 1
    if dim > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} (got {dim})")
    idx = []
    for d, p in positions:
        n = x.shape[d]
        bad = p[(p < -n) | (p >= n)]
        if bad.size:
            raise IndexError(f"index {int(bad.flat[0])} is out of bounds for dimension {d} with size {n}")
        idx.append(np.where(p < 0, p + n, p))
    try:
        lead = np.broadcast_shapes(*(p.shape for p in idx))
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(p.shape)) for p in idx)) from None
    result = lead + x.shape[dim:]
    if not _broadcastable(values.shape, result) or np.broadcast_shapes(values.shape, result) != result:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(result)}")
    return tuple(idx)


def _broadcastable(shape: tuple, to: tuple) -> bool:
    try:
        np.broadcast_shapes(shape, to)
        return True
    except ValueError:
        return False


class IndexPutMixin:
    """index_put(_) on the Tensor."""

    __slots__ = ()

    def index_put(self, indices, values, accumulate: bool = False):
        """A copy of self with values at self[indices] (added there, repeats included, if accumulate)."""
        idx = _index_put_args(self, indices, values, "index_put")
        return IndexPut.apply(self, values, idx=idx, accumulate=bool(accumulate))

    def index_put_(self, indices, values, accumulate: bool = False):
        """index_put, in place (returns self)."""
        idx = _index_put_args(self, indices, values, "index_put_")
        return self.copy_(IndexPut.apply(self, values, idx=idx, accumulate=bool(accumulate)))
