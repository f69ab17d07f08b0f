"""PyTorch's view rules, mixed into the Tensor: which ops return views, and which writes into views it refuses.

A view (``expand``, ``t``, ``select``, ``diagonal``, ``mT``, ``narrow``, basic slicing, ``reshape``
when it can, the outputs of ``split``/``chunk``/``unbind``) shares its base's memory and version
counter: a write into either is seen through the other (``Tensor._share_memory_of`` links them).
Writes PyTorch refuses, refused here with its words:

* into memory where one element stands for several (an ``expand``ed tensor) by an op that reads
  the old values or writes one value per element (``add_``, ``copy_``, ``e[:] = v``, ``exp_``);
  ``fill_``/``zero_`` with a number, ``masked_fill_``, ``index_fill_`` and ``e[index_tensor] = v``
  write the same value to every alias, and PyTorch lets them;
* from an operand that partly overlaps the written memory (``y[1:].add_(y[:-1])``): the result would
  depend on the order of the loop. The very same memory (``y.add_(y)``) is fine;
* into an output of ``split``/``chunk``/``unbind`` (or a view of one) while the graph is recorded:
  one node made all the outputs, so a write into one could not rewrite that node's history.
"""
from __future__ import annotations

import numpy as np

from tinyattn import autograd
from tinyattn.autograd import Function
from tinyattn.compat.args import _norm_dim, _shape_arg

SELF_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
                "location. Please clone() the tensor before performing the operation.")
PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                   "single memory location. Please clone() the tensor before performing the operation.")


def multi_output_error(who: str, indirect: bool = False) -> str:
    """PyTorch's words for a write into an output of split/unbind (``indirect``: into its base or a sibling,
    found when the output is next used)."""
    what = "its base or another view of its base has been modified inplace" if indirect else "is being modified inplace"
    return (f"{who} is a view and {what}. This view is the output of a function that returns "
            "multiple views. Such functions do not allow the output views to be modified inplace. You should "
            "replace the inplace operation by an out-of-place one. (e.g. q = q * scale instead of q *= scale, "
            "or clone() the output first.)")


def view_name(op, constants: dict) -> str:
    """PyTorch's name for a view op, for its messages: x[0] is a Select, x[1:] a Slice, reshape a View."""
    if op.__name__ == "GetItem":
        items = constants["idx"] if isinstance(constants["idx"], tuple) else (constants["idx"],)
        return "Select" if any(isinstance(i, (int, np.integer)) for i in items) else "Slice"
    return {"Reshape": "View"}.get(op.__name__, op.__name__)


def memory_root(a):
    """The object that owns the memory of array ``a`` (NumPy's ``.base`` chain to its end)."""
    while getattr(a, "base", None) is not None:
        a = a.base
    return a


def same_memory(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays are the very same elements: the same first byte, shape, strides and dtype."""
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and a.shape == b.shape
            and a.strides == b.strides and a.dtype == b.dtype)


def refuse_self_overlap(arr: np.ndarray) -> None:
    """PyTorch's internal-overlap check: a size > 1 dim of stride 0 (``expand``) is one element many times."""
    if arr.size and any(s == 0 and n > 1 for s, n in zip(arr.strides, arr.shape)):  # (an empty one holds none)
        raise RuntimeError(SELF_OVERLAP)


def _span(a: np.ndarray):
    """[start, end) of a dense array's bytes, or None where PyTorch's check gives up (strided, gaps)."""
    if not (a.flags.c_contiguous or a.flags.f_contiguous) or a.size == 0:
        return None
    start = a.__array_interface__["data"][0]
    return start, start + a.nbytes


def refuse_partial_overlap(dst: np.ndarray, src) -> None:
    """PyTorch's operand-overlap check: ``src`` may be ``dst``'s very memory, or apart from it; two dense
    ranges that share some bytes but are not the same tensor are refused (where either is strided with
    gaps PyTorch does not tell, and neither does this)."""
    if not isinstance(src, np.ndarray) or src.size <= 1 and src.ndim == 0 or not np.may_share_memory(dst, src):
        return
    a, b = _span(dst), _span(src)
    same = a == b and dst.shape == src.shape and dst.strides == src.strides
    if a is not None and b is not None and not same and a[0] < b[1] and b[0] < a[1]:
        raise RuntimeError(PARTIAL_OVERLAP)


def multi_output(outs: tuple, op: str) -> tuple:
    """Mark the views a function returned together (PyTorch's MULTI_OUTPUT_NODE creation). Of a tensor that
    does not require grad, PyTorch makes them no_grad views (they follow their base's requires_grad)."""
    if autograd.is_grad_enabled():
        for i, o in enumerate(outs):
            if o._base is not None:
                o._creation = f"Output {i} of {op}" if o._rg else "no_grad"
    return outs


class Expand(Function):
    """broadcast_to(a, shape), a view (one element of a many times);  da = g summed over the stretched dims"""
    view = True

    @staticmethod
    def forward(ctx, a, shape):
        out = np.broadcast_to(a, shape)
        out.flags.writeable = a.flags.writeable  # a view: the writes PyTorch allows reach a's memory
        return out

    @staticmethod
    def backward(ctx, g):
        return g  # (the engine's unbroadcast sums the copies)


class Diagonal(Function):
    """a.diagonal(offset, dim1, dim2), a view;  da = zeros with g on that diagonal"""
    view = True

    @staticmethod
    def forward(ctx, a, offset, dim1, dim2):
        ctx.shape, ctx.offset, ctx.dim1, ctx.dim2 = a.shape, offset, dim1, dim2
        out = np.diagonal(a, offset, dim1, dim2)
        out.flags.writeable = a.flags.writeable  # (NumPy hands out a read-only view; PyTorch's is writable)
        return out

    @staticmethod
    def backward(ctx, g):
        da = np.zeros(ctx.shape, dtype=g.dtype)
        Diagonal.forward(ctx, da, ctx.offset, ctx.dim1, ctx.dim2)[...] = g
        return da


class ViewsMixin:
    """The view methods of Tensor that are not the course's own (those are in tinyattn/tensor.py)."""

    __slots__ = ()

    def expand(self, *shape):
        """Broadcast to ``shape`` (-1 keeps a dim): a view, each size-1 dim one element seen many times."""
        shape = _shape_arg(shape)
        lead = len(shape) - self.ndim
        if lead < 0:
            raise ValueError(f"expand: target {shape} has fewer dims than the tensor's shape {self.shape}")
        target = tuple(self.shape[i - lead] if (n == -1 and i >= lead) else n for i, n in enumerate(shape))
        try:
            if np.broadcast_shapes(self.shape, target) != target:
                raise ValueError
        except ValueError:
            raise ValueError(f"expand: shape {self.shape} can not be expanded to {shape} (only size-1 dims stretch)") from None
        return Expand.apply(self, shape=target)

    def t(self):
        """The transpose of a matrix; a 0-d or 1-D tensor comes back as a new view of itself, as PyTorch's ``t()``."""
        if self.ndim > 2:
            raise ValueError(f"t() expects a tensor with at most 2 dims, got shape {self.shape}; "
                             "use transpose(dim0, dim1) or mT")
        return self.transpose(0, -1) if self.ndim == 2 else self[...]

    def select(self, dim: int, index: int):
        """``x.select(1, 2)`` is ``x[:, 2]``: the slice at ``index`` along ``dim``, without that dim (a view)."""
        d = _norm_dim(dim, self.ndim, "select")
        n = self.shape[d]
        if not isinstance(index, (int, np.integer)) or not -n <= index < n:
            raise IndexError(f"select(): index {index} out of range for tensor of size {self.shape} at dimension {dim}")
        return self[(slice(None),) * d + (int(index),)]

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1):
        """The diagonal of the (dim1, dim2) matrices, moved to the last dim (a view, as PyTorch's)."""
        d1, d2 = _norm_dim(dim1, self.ndim, "diagonal"), _norm_dim(dim2, self.ndim, "diagonal")
        if d1 == d2:
            raise ValueError(f"diagonal: dim1 and dim2 can not be the same dim ({dim1}, {dim2})")
        return Diagonal.apply(self, offset=int(offset), dim1=d1, dim2=d2)

    def stride(self, dim: int | None = None):
        """How many elements apart neighbours along each dim are in memory (0 along an expanded dim)."""
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[_norm_dim(dim, self.ndim, "stride")]

    @property
    def mT(self):
        """The last two dims swapped (a batch of matrices transposed), a view."""
        if self.ndim < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {self.ndim}-D tensor.")
        return self.transpose(-2, -1)

    @property
    def mH(self):
        """The conjugate transpose of the last two dims: mT for real tensors (a copy for complex ones: conj() is)."""
        return self.mT if self.dtype.kind != "c" else self.conj().mT

    def detach_(self):
        """Cut this tensor from the graph in place: it becomes a leaf that does not require grad."""
        if self._base is not None and self.dtype.kind in "fc":  # (every float view, as PyTorch: its base may need it)
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn, self._rg = None, False
        return self

    @property
    def retains_grad(self) -> bool:
        """Whether ``retain_grad()`` was called on this non-leaf tensor (False for a leaf). It reads the node
        as it is: rebuilding a view's node (``grad_fn``) after a write into its base moves the mark along, and for a
        split output or a no_grad view raises, where PyTorch's flag answers."""
        return self._grad_fn is not None and self._grad_fn.retains is self
