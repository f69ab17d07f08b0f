"""PyTorch's rarer Tensor methods, mixed into the Tensor: type names and ``new_*`` factories, rounding,
sorting, logical ops, ``flip``/``roll``, ``split``/``chunk``/``unbind``, ``norm``, ``topk``, ...

The course's own methods are in ``tinyattn/tensor.py``; these make the rest of PyTorch's surface work.
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np

from tinyattn import autograd, checks, defaults, promotion
from tinyattn.compat.args import (
    _array_of, _as_array, _clamp_bound, _new_shape, _norm_dim, _norm_dims, _shape_arg, no_extreme, numpy_names,
)
from tinyattn.compat.indexing import _gather_where
from tinyattn.compat.census_tail import CensusTailMixin
from tinyattn.compat.scatter import ScatterMixin
from tinyattn.compat.scans_and_writes import ScansAndWritesMixin
from tinyattn.compat.statistics import StatisticsMixin
from tinyattn.compat.scatters_more import ScattersMoreMixin
from tinyattn.compat.put_and_index_reduce import PutAndIndexReduceMixin
from tinyattn.compat.index_put import IndexPutMixin
from tinyattn.compat.as_strided import AsStridedMixin, ResizeMixin
from tinyattn.compat.renorm_and_counts import RenormAndCountsMixin
from tinyattn.compat.longtail import LongTailMixin
from tinyattn.compat.bits_and_signs import BitsAndSignsMixin
from tinyattn.compat.gamma_bessel import GammaBesselMixin
from tinyattn.compat.cross_and_powers import CrossAndPowersMixin
from tinyattn.compat.views import multi_output
from tinyattn.compat.ops import (
    Abs, Cast, Clamp, Cos, CumSum, Flip, Maximum, Remainder, Repeat, Roll, Rounding, RoundedDiv,
    Sin, StdFromVar, Tri, Expm1, Log1p,
)
from tinyattn.ops import Contiguous, GetItem, Where


def _sign(a: np.ndarray) -> np.ndarray:
    """-1, 0 or 1; NaN's sign is 0, as PyTorch's (NumPy's is NaN)."""
    s = np.sign(a)
    return np.where(s != s, 0, s).astype(a.dtype, copy=False)


class MinMax(NamedTuple):
    """What ``x.max(dim)`` / ``x.min(dim)`` return, as in PyTorch: the values and where they are."""
    values: "autograd.Tensor"
    indices: "autograd.Tensor"


_TYPE_NAMES = {np.dtype(k): "torch." + v for k, v in (
    (np.float32, "FloatTensor"), (np.float64, "DoubleTensor"), (np.float16, "HalfTensor"),
    (np.int64, "LongTensor"), (np.int32, "IntTensor"), (np.int16, "ShortTensor"), (np.int8, "CharTensor"),
    (np.uint8, "ByteTensor"), (np.bool_, "BoolTensor"), (np.complex64, "ComplexFloatTensor"),
    (np.complex128, "ComplexDoubleTensor"))}
_TYPE_OF_NAME = {v.split(".")[1]: k for k, v in _TYPE_NAMES.items()}


def _with_op_input(name: str, method):
    """``method`` run on ``promotion.op_input(name, self, dtype)``: the one rule for the dtype a one-tensor op
    computes in (``x.exp()`` of an int tensor is float32, ``x.sum(dtype=torch.float64)`` casts first)."""
    if name in promotion.DTYPE_ARGUMENT:
        def op(self, *args, dtype=None, **kwargs):
            x = promotion.op_input(name, self, dtype)
            return promotion.op_output(name, method(x, *args, **kwargs), x._data.dtype)
    else:
        def op(self, *args, **kwargs):
            return method(promotion.op_input(name, self), *args, **kwargs)
    op = functools.wraps(method)(op)
    op.op_input = name
    return op


class MethodsMixin(LongTailMixin, CensusTailMixin, ScatterMixin, StatisticsMixin, ScansAndWritesMixin,
                   RenormAndCountsMixin, ScattersMoreMixin, PutAndIndexReduceMixin, IndexPutMixin,
                   AsStridedMixin, ResizeMixin, BitsAndSignsMixin, GammaBesselMixin, CrossAndPowersMixin):
    """The rarer methods of Tensor."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs):
        """The Tensor class gets promotion's dtype rule on each one-tensor op it names (promotion.ONE_TENSOR_OPS),
        wherever the op is defined: those methods' bodies then see an input of the dtype PyTorch computes in."""
        super().__init_subclass__(**kwargs)
        for name in promotion.ONE_TENSOR_OPS:
            method = getattr(cls, name, None)
            if method is not None and not hasattr(method, "op_input"):  # (a subclass inherits it wrapped)
                setattr(cls, name, _with_op_input(name, method))

    def bool(self) -> "Tensor":
        return autograd.Tensor._make(self._data.astype(bool))

    def long(self) -> "Tensor":
        return self._as_int(np.int64)

    def int(self) -> "Tensor":  # noqa: A003  (torch's int is int32)
        return self._as_int(np.int32)

    def _as_int(self, dt) -> "Tensor":
        with np.errstate(invalid="ignore"):  # NaN and inf become the type's minimum silently, as in PyTorch
            return autograd.Tensor._make(self._data.astype(dt))

    def half(self) -> "Tensor":
        return self if self.dtype == np.float16 else Cast.apply(self, dtype=np.float16)

    def byte(self) -> "Tensor":
        return autograd.Tensor._make(self._data.astype(np.uint8))

    # --- PyTorch's type names and new_* factories (out of place: each returns a new tensor) ----
    def type(self, dtype=None):
        """With no argument, PyTorch's type name ('torch.FloatTensor'); otherwise ``self.to(dtype)``,
        where dtype may also be a name such as 'torch.LongTensor' or a constructor such as LongTensor."""
        if dtype is None:
            return _TYPE_NAMES.get(self._data.dtype, f"torch.{self._data.dtype.name}")
        if isinstance(dtype, str):
            dt = _TYPE_OF_NAME.get(dtype.rsplit(".", 1)[-1])
            if dt is None:
                raise ValueError(f"type({dtype!r}): unknown tensor type; expected one of "
                                 f"{sorted(set(_TYPE_NAMES.values()))} or a dtype")
            dtype = dt
        return self.to(dtype)

    def type_as(self, other) -> "Tensor":
        """This tensor cast to ``other``'s dtype."""
        return self.to(checks.tensor_arg(other, "type_as", "other", 1).dtype)

    def repeat(self, *sizes) -> "Tensor":
        """Tile the tensor: dim i is repeated sizes[i] times ([a, b].repeat(2) = [a, b, a, b]), as PyTorch.

        More sizes than dims put new leading dims in front; fewer is an error (as in PyTorch)."""
        reps = _shape_arg(sizes)
        if len(reps) < self.ndim:
            raise ValueError(f"repeat: {len(reps)} sizes {reps} for a tensor with {self.ndim} dims (shape "
                             f"{self.shape}); give at least one per dim")
        if any(r < 0 for r in reps):
            raise ValueError(f"repeat: sizes must be >= 0, got {reps}")
        return Repeat.apply(self, reps=reps)

    def nonzero(self, as_tuple: bool = False):
        """Where the tensor is nonzero: an int64 (N, ndim) tensor of indices, one row per entry (in
        C order), or with as_tuple=True one 1-D index tensor per dim (usable as ``x[...]``)."""
        where = np.nonzero(self._data)
        if as_tuple:
            return tuple(autograd.Tensor._make(w.astype(np.int64, copy=False)) for w in where)
        return autograd.Tensor._make(np.stack(where, axis=1).astype(np.int64, copy=False).reshape(-1, self.ndim))

    def new_tensor(self, data, dtype=None, requires_grad: bool = False, device=None) -> "Tensor":
        """A new tensor holding (a copy of) ``data``, with this tensor's dtype unless ``dtype`` is given."""
        if device is not None:
            self.to(str(device))  # raises for anything but the CPU
        return autograd.Tensor(np.array(_as_array(data), dtype=dtype or self._data.dtype), requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, requires_grad: bool = False, device=None) -> "Tensor":
        """A new tensor of shape ``size`` filled with ``fill_value``, with this tensor's dtype by default."""
        if device is not None:
            self.to(str(device))  # raises for anything but the CPU
        size = (size,) if isinstance(size, (int, np.integer)) else size
        return autograd.Tensor(np.full(_new_shape((size,)), fill_value, dtype=dtype or self._data.dtype),
                      requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, requires_grad: bool = False, device=None) -> "Tensor":
        """Zeros of shape ``size``, with this tensor's dtype by default (``x.new_zeros(B, T)``)."""
        return self.new_full(_new_shape(size), 0, dtype, requires_grad, device)

    def new_ones(self, *size, dtype=None, requires_grad: bool = False, device=None) -> "Tensor":
        """Ones of shape ``size``, with this tensor's dtype by default."""
        return self.new_full(_new_shape(size), 1, dtype, requires_grad, device)

    def _reduce_axes(self, dim, op: str):
        """NumPy's axis for a reduction over ``dim`` (a 0-d tensor takes dim 0 or -1 and reduces nothing)."""
        axes = _norm_dims(dim, self.ndim, op)
        return None if self.ndim == 0 else axes

    @numpy_names
    def any(self, dim=None, keepdim: bool = False) -> "Tensor":
        """True where some element (over ``dim``; every dim if None) is nonzero: a bool tensor, as in PyTorch."""
        return self._truth(np.any(self._data, axis=self._reduce_axes(dim, "any"), keepdims=keepdim))

    @numpy_names
    def all(self, dim=None, keepdim: bool = False) -> "Tensor":
        """True where every element (over ``dim``; every dim if None) is nonzero: a bool tensor."""
        return self._truth(np.all(self._data, axis=self._reduce_axes(dim, "all"), keepdims=keepdim))

    def _truth(self, arr: np.ndarray) -> "Tensor":
        """any/all's answer: bool, except uint8 for a uint8 input (PyTorch's rule, kept from its byte masks)."""
        return autograd.Tensor._make(arr.astype(np.uint8) if self._data.dtype == np.uint8 else arr)

    def eq(self, o): return self == o
    def ne(self, o): return self != o
    def lt(self, o): return self < o
    def le(self, o): return self <= o
    def gt(self, o): return self > o
    def ge(self, o): return self >= o
    def logical_not(self): return autograd.Tensor._make(np.logical_not(self._data))
    def logical_and(self, o): return self._cmp(checks.tensor_arg(o, "logical_and", "other", 1), np.logical_and, None)
    def logical_or(self, o): return self._cmp(checks.tensor_arg(o, "logical_or", "other", 1), np.logical_or, None)
    def logical_xor(self, o): return self._cmp(checks.tensor_arg(o, "logical_xor", "other", 1), np.logical_xor, None)

    def true_divide(self, other) -> "Tensor": return self / other
    def floor_divide(self, other) -> "Tensor": return self // other
    def remainder(self, other) -> "Tensor": return self % other

    def fmod(self, other) -> "Tensor":
        """The remainder with the sign of self (C's fmod): fmod(-7, 2) == -1, where -7 % 2 == 1."""
        return self._binary(Remainder, other, mode="trunc")

    def div(self, other, *, rounding_mode: str | None = None) -> "Tensor":
        """self / other; ``rounding_mode='floor'`` rounds the quotient down (``//``), ``'trunc'`` toward 0."""
        if rounding_mode is None:
            return self / other
        if rounding_mode not in ("floor", "trunc"):
            raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
        return self._binary(RoundedDiv, other, mode=rounding_mode)


    def maximum(self, other) -> "Tensor":
        """The larger of self and other, elementwise (NaN wins); the gradient of a tie is split evenly."""
        return self._binary(Maximum, checks.tensor_arg(other, "maximum", "other", 1), larger=True)

    def minimum(self, other) -> "Tensor":
        """The smaller of self and other, elementwise (NaN wins); the gradient of a tie is split evenly."""
        return self._binary(Maximum, checks.tensor_arg(other, "minimum", "other", 1), larger=False)

    def log10(self): return self.log() * (1 / math.log(10))  # log10 x = ln x / ln 10
    def abs(self): return Abs.apply(self)
    def sin(self): return Sin.apply(self)
    def cos(self): return Cos.apply(self)
    def sinh(self): return (self.exp() - (-self).exp()) * 0.5  # (e^x - e^-x) / 2
    def cosh(self): return (self.exp() + (-self).exp()) * 0.5
    def log2(self): return self.log() * (1 / math.log(2))  # log2 x = ln x / ln 2
    def log1p(self): return Log1p.apply(self)
    def expm1(self): return Expm1.apply(self)
    def reciprocal(self): return 1.0 / self
    def rsqrt(self): return 1.0 / self.sqrt()  # 1 / sqrt(x), as in RMSNorm

    # floor, ceil, round, trunc and sign: steps, so their gradient is 0 (as in PyTorch)
    def floor(self): return self._rounded(np.floor)
    def ceil(self): return self._rounded(np.ceil)
    def trunc(self): return self._rounded(np.trunc)
    def sign(self): return Rounding.apply(self, fn=_sign) if self.dtype.kind != "b" else Contiguous.apply(self)

    def round(self, *, decimals: int = 0):
        """To the nearest integer (ties to even, as PyTorch), or to ``decimals`` places."""
        if isinstance(decimals, bool) or not isinstance(decimals, (int, np.integer)):
            raise TypeError(f"round: decimals must be an int (negative rounds to tens, hundreds, ...), got {decimals!r}")
        return self._rounded(functools.partial(np.round, decimals=decimals) if decimals else np.round)

    def _rounded(self, fn) -> "Tensor":
        # an integer tensor is whole already: a copy, of its own dtype (np.floor would make it float)
        return Contiguous.apply(self) if self.dtype.kind in "biu" else Rounding.apply(self, fn=fn)

    # NaN and inf tests: bool tensors, outside the graph
    def isnan(self): return autograd.Tensor._make(np.isnan(self._data))
    def isinf(self): return autograd.Tensor._make(np.isinf(self._data))
    def isfinite(self): return autograd.Tensor._make(np.isfinite(self._data))
    def is_floating_point(self) -> bool: return self.dtype.kind == "f"

    def flip(self, *dims) -> "Tensor":
        """The order reversed along each of ``dims`` (``x.flip(0)``, ``x.flip([0, 1])``, ``torch.flip(x, (1,))``)."""
        axes = _norm_dims(_shape_arg(dims) if dims else None, self.ndim, "flip")
        if axes is None:
            raise TypeError("flip: name the dims to reverse, e.g. x.flip(0) or torch.flip(x, [0, 1])")
        return Flip.apply(self, dims=axes)

    def roll(self, shifts, dims=None) -> "Tensor":
        """Shift elements along ``dims`` by ``shifts``, wrapping around (no dims: over the flattened tensor)."""
        for s in (shifts if isinstance(shifts, (tuple, list)) else (shifts,)):
            if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
                raise TypeError(f"roll: shifts must be ints, got {shifts!r}")
        if dims is None:
            return Roll.apply(self, shifts=shifts, dims=None)
        axes = _norm_dims(dims, self.ndim, "roll")
        if np.ndim(shifts) != np.ndim(axes) or np.size(shifts) != np.size(axes):
            raise ValueError(f"roll: shifts={shifts!r} and dims={dims!r} must have the same length")
        return Roll.apply(self, shifts=shifts, dims=axes)

    def outer(self, vec2) -> "Tensor":
        """The outer product of two 1-D tensors: out[i, j] = self[i] * vec2[j], shape (n, m)."""
        v = self._lift(vec2)
        if self.ndim != 1 or v.ndim != 1:
            raise ValueError(f"outer expects two 1-D tensors, got shapes {self.shape} and {v.shape}")
        return self.reshape(-1, 1) * v.reshape(1, -1)  # (n, 1) * (1, m) -> (n, m)

    ger = outer  # PyTorch's older name

    # mm, bmm and dot are matmul restricted to one rank each, as PyTorch's: no broadcasting, so a
    # (B, T, C) passed where a matrix was meant is an error here rather than a batched product.
    # (Shape errors are ValueErrors, as matmul's; PyTorch raises RuntimeError.)
    def mm(self, mat2) -> "Tensor":
        """The product of two matrices, (n, k) @ (k, m) -> (n, m) (only 2-D, unlike matmul)."""
        m = self._lift(mat2)
        if self.ndim != 2 or m.ndim != 2:
            raise ValueError(f"mm expects two 2-D tensors, got shapes {self.shape} and {m.shape} (matmul broadcasts)")
        return self @ m  # (n, k) @ (k, m) -> (n, m)

    def bmm(self, mat2) -> "Tensor":
        """Batched matrix product: (B, n, k) @ (B, k, m) -> (B, n, m); no broadcasting (matmul has it)."""
        m = self._lift(mat2)
        if self.ndim != 3 or m.ndim != 3:
            raise ValueError(f"bmm: both operands must be 3-D (B, n, m) and (B, m, p), got shapes {self.shape} and "
                             f"{m.shape}")
        if self.shape[0] != m.shape[0]:
            raise ValueError(f"bmm: batch sizes differ: {self.shape} has {self.shape[0]}, {m.shape} has {m.shape[0]}")
        return self @ m  # (B, n, k) @ (B, k, m) -> (B, n, m)

    def dot(self, other) -> "Tensor":
        """The inner product of two 1-D tensors of one length and one dtype: a 0-d tensor."""
        v = self._lift(other)
        if self.ndim != 1 or v.ndim != 1:
            raise ValueError(f"dot: 1D tensors expected, but got {self.ndim}D and {v.ndim}D tensors")
        if self.shape[0] != v.shape[0]:
            raise ValueError(f"dot: the vectors have {self.shape[0]} and {v.shape[0]} elements; they must match")
        return self @ v  # (n,) @ (n,) -> (), the same dtype rule as matmul

    def clamp_min(self, min) -> "Tensor": return self.clamp(min=min)  # noqa: A002
    def clamp_max(self, max) -> "Tensor": return self.clamp(max=max)  # noqa: A002

    def clamp(self, min: float | None = None, max: float | None = None) -> "Tensor":
        """x clipped to [min, max] elementwise (either bound may be None);  gradient 1 inside, 0 where clipped."""
        if min is None and max is None:
            raise ValueError("clamp: give at least one of min= or max=")
        if isinstance(min, autograd.Tensor) or isinstance(max, autograd.Tensor):
            return self._clamp_tensors(min, max)
        lo, hi = (None if v is None else _clamp_bound(v, name) for v, name in ((min, "min"), (max, "max")))
        dt = promotion.result_type(self, *(b for b in (lo, hi) if b is not None))  # int.clamp(0.5) is float32
        lo, hi = (None if b is None else promotion.number_as(b, dt) for b in (lo, hi))  # u8.clamp(-1): 255
        return Clamp.apply(self if dt == self._data.dtype else self.to(dt), lo=lo, hi=hi)

    def _clamp_tensors(self, min, max) -> "Tensor":  # noqa: A002
        """clamp with tensor bounds, which broadcast and promote as operands do; each bound gets the gradient
        where it is the answer (x < min), x where it is inside [min, max]; a NaN anywhere gives NaN (and no
        gradient to x or a NaN bound there, as PyTorch's)."""
        dt = promotion.result_type(self, *(b for b in (min, max) if b is not None))
        out = self.to(dt)
        for b, lower in ((min, True), (max, False)):
            if b is None:
                continue
            b = b.to(dt) if isinstance(b, autograd.Tensor) else autograd.Tensor._make(promotion.number_as(b, dt))
            x = out._data
            out = Where.apply(b, out, cond=(x < b._data) if lower else (x > b._data))
            nan = np.broadcast_to((b._data != b._data) | (x != x), out.shape)  # (v != v: NaN)
            out = out.masked_fill(autograd.Tensor._make(nan), float("nan")) if nan.any() else out
        return out

    clip = clamp  # PyTorch's alias

    def tril(self, diagonal: int = 0) -> "Tensor":
        """Keep the lower triangle (j <= i + diagonal) of the last two dims, zero the rest."""
        return self._last_two("tril") and Tri.apply(self, k=diagonal, upper=False)

    def triu(self, diagonal: int = 0) -> "Tensor":
        """Keep the upper triangle (j >= i + diagonal) of the last two dims, zero the rest."""
        return self._last_two("triu") and Tri.apply(self, k=diagonal, upper=True)

    def _last_two(self, op: str) -> tuple:
        """The last two dims, the matrices tril/triu (and tril_/triu_) act on; fewer dims are refused."""
        if self.ndim < 2:
            raise ValueError(f"{op} needs at least 2 dims, got shape {self.shape}")
        return self.shape[-2:]

    def cumsum(self, dim: int) -> "Tensor":
        """y_i = x_0 + ... + x_i along ``dim``;  shape unchanged."""
        d = _norm_dim(dim, self.ndim, "cumsum")
        return CumSum.apply(self, dim=d) if self.ndim else self.clone()  # (np.cumsum of a 0-d array is 1-D)

    def gather(self, dim: int, index, *, sparse_grad: bool = False) -> "Tensor":
        """out[i][j][k] = self[i][index[i][j][k]][k] (for dim=1);  out has index's shape. (sparse_grad=True: the
        gradient is dense here, the same numbers as PyTorch's sparse one: docs/pytorch.md)"""
        if not isinstance(sparse_grad, (bool, np.bool_)):
            raise TypeError(f"gather(): argument 'sparse_grad' must be bool, not {type(sparse_grad).__name__}")
        return GetItem.apply(self, idx=_gather_where(self.shape, dim, index))

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> MinMax:
        """The k largest (or smallest) entries along ``dim``: ``(values, indices)``, each of shape with dim -> k.

        The values are ``self.gather(dim, indices)``, so the gradient flows to the picked entries only.
        They always come sorted (best first); ``sorted=False`` is accepted and changes nothing.
        """
        d = _norm_dim(dim, self.ndim, "topk")
        if self.ndim == 0 and k in (0, 1):  # a 0-d tensor is its own top 1 (and, in PyTorch, top 0)
            return MinMax(Contiguous.apply(self), autograd.Tensor._make(np.zeros((), dtype=np.int64)))
        if self.ndim == 0:
            raise ValueError(f"topk: k={k!r} is out of range for a 0-d tensor (k must be 0 or 1)")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= self.shape[d]:
            raise ValueError(f"topk: k={k!r} is out of range for dim {dim} of size {self.shape[d]} (shape {self.shape}); "
                             f"k must be an int in 0..{self.shape[d]}")
        # best first; among equal entries the first one first, as PyTorch's (a flipped ascending sort put it last)
        order = self.argsort(dim=d, descending=largest)._data
        indices = np.take(order, np.arange(k), axis=d)  # the first k along d
        return MinMax(self.gather(d, indices), autograd.Tensor._make(indices))

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> "Tensor":
        """The indices that sort ``self`` along ``dim`` (int64). Equal entries keep their order, in both
        directions, so ``stable=True`` changes nothing; NaN sorts as the largest value, as in PyTorch."""
        d = _norm_dim(dim, self.ndim, "argsort")
        if self.ndim == 0:
            return autograd.Tensor._make(np.zeros((), dtype=np.int64))
        if not descending:
            return autograd.Tensor._make(np.argsort(self._data, axis=d, kind="stable"))
        # descending with ties in their first order: sort the reversed array ascending, reverse that,
        # and map the positions back (position r of the reversed array is n - 1 - r of this one)
        n = self.shape[d]
        order = np.flip(np.argsort(np.flip(self._data, axis=d), axis=d, kind="stable"), axis=d)
        return autograd.Tensor._make(n - 1 - order)

    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> MinMax:
        """``(values, indices)`` sorted along ``dim``; the values are gathered, so each one's gradient goes
        back to the entry it came from."""
        indices = self.argsort(dim, descending, stable)
        if self.ndim == 0:
            return MinMax(self, indices)
        return MinMax(self.gather(dim, indices), indices)

    def unique(self, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
               dim: int | None = None):
        """The distinct values (or distinct slices along ``dim``), in increasing order; optionally also
        where each element went (``inverse``, self's shape) and how often each value occurs. Like
        PyTorch's, the result carries no gradient."""
        d = None if dim is None else _norm_dim(dim, self.ndim, "unique")
        values, inverse, counts = np.unique(self._data, return_inverse=True, return_counts=True, axis=d,
                                            equal_nan=False)  # (each NaN is its own value, as in PyTorch)
        out = [autograd.Tensor._make(values)]
        if return_inverse:
            out.append(autograd.Tensor._make(inverse.reshape(self.shape if d is None else -1).astype(np.int64)))
        if return_counts:
            out.append(autograd.Tensor._make(counts.astype(np.int64)))
        return out[0] if len(out) == 1 else tuple(out)

    @numpy_names
    def logsumexp(self, dim, keepdim: bool = False) -> "Tensor":
        """log(sum(exp(x))) over ``dim``, as m + log(sum(exp(x - m))) with m the max, so that exp never
        overflows; its gradient is softmax(x). m is a constant here (detached): the result does not
        depend on it, so neither does the gradient."""
        d = _norm_dims(dim, self.ndim, "logsumexp")
        if self.numel() == 0:  # nothing to overflow: log(sum(exp(x))), -inf where nothing is summed
            with np.errstate(divide="ignore"):
                return self.exp().sum(dim=d, keepdim=keepdim).log()
        m = self.detach().amax(dim=d, keepdim=True)
        m = m.masked_fill(~m.isfinite(), 0.0)  # a slice of all -inf: exp(-inf - 0) = 0, log 0 = -inf
        m_out = m if keepdim else m.sum(dim=d)  # the max without its size-1 dims
        with np.errstate(divide="ignore"):  # log 0 = -inf is the right answer for an all -inf slice
            return (self - m).exp().sum(dim=d, keepdim=keepdim).log() + m_out

    def view_as(self, other) -> "Tensor": return self.view(checks.tensor_arg(other, "view_as", "other", 1).shape)
    def reshape_as(self, other) -> "Tensor": return self.reshape(checks.tensor_arg(other, "reshape_as", "other", 1).shape)
    def expand_as(self, other) -> "Tensor": return self.expand(checks.tensor_arg(other, "expand_as", "other", 1).shape)

    def narrow(self, dim: int, start: int, length: int) -> "Tensor":
        """The slice start : start + length along dim (``x.narrow(0, 2, 3)`` is ``x[2:5]``)."""
        d = _norm_dim(dim, self.ndim, "narrow")
        n = self.shape[d]
        start = checks.int_at_least("start", start, -n, "narrow")  # (a negative start counts from the end)
        length = checks.nonneg_int("length", length, "narrow")
        start = start + n if start < 0 else start
        if start + length > n:
            raise IndexError(f"narrow: start={start}, length={length} leaves dim {dim} (size {n}); "
                             f"need 0 <= start and start + length <= {n}")
        return self[(slice(None),) * d + (slice(start, start + length),)]

    def index_select(self, dim: int, index) -> "Tensor":
        """The entries at ``index`` (1-D ints) along ``dim``: ``x.index_select(0, i)`` is ``x[i]``."""
        d = _norm_dim(dim, self.ndim, "index_select")
        idx = _array_of(index)
        if idx.ndim > 1 or idx.dtype.kind not in "iu":
            raise TypeError(f"index_select: index must be a 1-D integer tensor, got shape {idx.shape} and dtype {idx.dtype}")
        out = self[(slice(None),) * d + (autograd.Tensor._make(idx.reshape(-1)),)]
        return out if out.is_contiguous() else out.contiguous()  # (PyTorch's index_select is always C-ordered)

    def norm(self, p=2, dim=None, keepdim: bool = False) -> "Tensor":
        """The p-norm over dim (every element if None): p=2 (Euclid), 1, inf, -inf (the smallest |x|), 0 (how many
        are nonzero; no gradient) or any other number. For p > 0 the gradient at a 0 norm is 0, not NaN (as PyTorch)."""
        if isinstance(p, bool) or not isinstance(p, (int, float)) and p != "fro":
            raise TypeError(f"norm: p must be a number or 'fro', got {p!r}")
        if p == 0:
            return (self != 0).sum(dim=dim, keepdim=keepdim).to(self.dtype)
        if p in ("fro", 2, 2.0):
            return StdFromVar.apply((self * self).sum(dim=dim, keepdim=keepdim))  # sqrt, gradient 0 at 0
        if p in (1, 1.0):
            return self.abs().sum(dim=dim, keepdim=keepdim)
        if (p < 0 or p == math.inf) and self.numel() == 0 and (dim is None or 0 in np.take(self.shape, np.atleast_1d(dim))):
            raise RuntimeError(f"linalg.vector_norm cannot compute the {p} norm on an empty tensor because the "
                               "operation does not have an identity")  # (no smallest or largest |x| of nothing)
        if p in (math.inf, -math.inf):
            return self.abs().amax(dim=dim, keepdim=keepdim) if p > 0 else self.abs().amin(dim=dim, keepdim=keepdim)
        a, zero = self.abs(), self == 0
        if p < 0:  # a 0 entry makes the sum inf and the norm 0, with gradient 0 to the whole slice (PyTorch's)
            s = (a.masked_fill(zero, 1.0) ** p).sum(dim=dim, keepdim=keepdim)
            return (s ** (1 / p)).masked_fill(zero.sum(dim=dim, keepdim=keepdim) > 0, 0.0)  # gradient 0 at a 0 entry (inf for p < 1) and at a 0 norm (0 / 0): PyTorch's
        s = (a.masked_fill(zero, 1.0) ** p).masked_fill(zero, 0.0).sum(dim=dim, keepdim=keepdim)
        return (s.masked_fill(s == 0, 1.0) ** (1 / p)).masked_fill(s == 0, 0.0)

    def split(self, split_size, dim: int = 0) -> tuple:
        """Pieces of ``split_size`` along dim (the last may be smaller), or of the sizes in a list (as PyTorch)."""
        d = _norm_dim(dim, self.ndim, "split")
        n = self.shape[d]
        if isinstance(split_size, (int, np.integer)) and not isinstance(split_size, bool):
            split_size = checks.positive_int("split_size", split_size, "split")
            sizes = [min(split_size, n - i) for i in range(0, n, split_size)] or [0]  # (an empty dim: one empty piece)
        else:
            sizes = [int(s) for s in split_size]
            if sum(sizes) != n or any(s < 0 for s in sizes):
                raise ValueError(f"split: sizes {sizes} must be >= 0 and add up to dim {dim}'s size {n} (shape {self.shape})")
        out, start = [], 0
        for size in sizes:
            out.append(self[(slice(None),) * d + (slice(start, start + size),)])
            start += size
        return multi_output(tuple(out), "Split")  # (chunk's outputs too, as PyTorch's)

    def unbind(self, dim: int = 0) -> tuple:
        """The slices along ``dim``, each without that dim: a (B, T, C) tensor's unbind(1) is T tensors (B, C).

        Slicing x[:, t] for every t would make backward add T gradients of x's full size: O(T^2) work
        for a sequence. So the tensor is cut in halves, and the halves again, down to 8 slices a piece;
        each slice's gradient lands in a small parent, and the total is O(T log T). Same values, same
        gradients (each element still gets exactly one nonzero contribution).
        """
        if self.ndim == 0:
            raise ValueError("unbind needs a tensor with at least 1 dim, got a 0-d tensor")
        d = _norm_dim(dim, self.ndim, "unbind")
        head = (slice(None),) * d  # the dims before `dim`, kept whole

        def pieces(x: Tensor) -> list:
            n = x.shape[d]
            if n <= 8:
                return [x[head + (i,)] for i in range(n)]
            half = n // 2
            return pieces(x[head + (slice(0, half),)]) + pieces(x[head + (slice(half, n),)])

        return multi_output(tuple(pieces(self)), "Unbind")

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        """``chunks`` pieces along dim of size ceil(n / chunks) (fewer if n is small), as PyTorch."""
        chunks = checks.positive_int("chunks", chunks, "chunk")
        n = self.shape[_norm_dim(dim, self.ndim, "chunk")]
        return self.split(max(1, -(-n // chunks)) if n else [0] * chunks, dim)  # (an empty dim: ``chunks`` empty pieces)

    def __index__(self) -> int:
        """An integer tensor with one element works as a Python index: ``data[i:i + T]``, ``range(n)``."""
        if self._data.size != 1 or self._data.dtype.kind not in "iu":
            raise TypeError(f"only an integer tensor with one element can be used as an index, "
                            f"got dtype {self.dtype} and shape {self.shape}")
        return int(self._data.item())

    def __format__(self, spec: str) -> str:
        """``f"{loss:.4f}"`` and ``f"{score}"`` format a 0-d tensor as its number (as PyTorch), and a
        one-element tensor too when a format is given."""
        if self.ndim == 0 or spec and self._data.size == 1:
            return format(self.item(), spec)
        return format(str(self), spec)

    def cpu(self) -> "Tensor":
        """This tensor (it already lives in NumPy's memory)."""
        return self

    @property
    def device(self) -> str:
        return "cpu"

    @numpy_names
    def argmin(self, dim=None, keepdim: bool = False) -> "Tensor":
        return self._arg_extreme(np.argmin, "argmin", dim, keepdim)

    @numpy_names
    def argmax(self, dim=None, keepdim: bool = False) -> "Tensor":
        return self._arg_extreme(np.argmax, "argmax", dim, keepdim)

    def _arg_extreme(self, fn, op: str, dim, keepdim: bool) -> "Tensor":
        """argmax/argmin (and so max/min along a dim): an empty slice has no extreme, PyTorch's IndexError."""
        d = _norm_dims(dim, self.ndim, op)
        if d is None and self.numel() == 0 or d is not None and self.shape[d] == 0:
            raise no_extreme(op, dim)
        return autograd.Tensor._make(fn(self._data, axis=d, keepdims=keepdim))

    def _fill_args(self, mask, value, op: str) -> tuple:
        """masked_fill's checks: a bool mask that broadcasts to self (out of place, self may broadcast to the mask:
        PyTorch's), a value self's dtype can hold (promotion.fill_number). Returns self (so broadcast), mask, value."""
        m = np.asarray(mask._data if isinstance(mask, autograd.Tensor) else mask)
        if m.dtype != bool:
            raise TypeError(f"{op} expects a bool mask (True = fill), got dtype {m.dtype}; "
                            "build one with a comparison, e.g. mask == 0")
        try:
            shape = np.broadcast_shapes(m.shape, self.shape)
            if shape != self.shape and op != "masked_fill":
                raise ValueError
        except ValueError:
            raise ValueError(f"{op}: mask of shape {m.shape} does not broadcast to the tensor's shape {self.shape}") from None
        if isinstance(value, autograd.Tensor) and value.ndim:
            raise ValueError(f"{op}: value must be a number or a 0-d tensor, got shape {value.shape}")
        v = value.item() if isinstance(value, autograd.Tensor) else value
        if self.dtype.kind in "iub" and isinstance(v, float) and not float(v).is_integer():
            raise TypeError(f"{op}: a {self.dtype} tensor can not hold {v}; make the scores float first "
                            "(an integer tensor has no -inf)")
        return (self if shape == self.shape else self.expand(shape)), m, promotion.fill_number(v, self._data.dtype)

    # --- names the census of public teaching code found missing (tests/data/census_names.csv) ----
    def cuda(self, device=None, non_blocking: bool = False, memory_format=None) -> "Tensor":
        """No GPU: PyTorch's CPU build raises AssertionError for ``x.cuda()``, RuntimeError for ``x.cuda(0)``."""
        if device is None:
            raise AssertionError("Torch not compiled with CUDA enabled (tinyattn runs on the CPU with NumPy)")
        raise RuntimeError("Cannot access accelerator device when none is available.")

    def pin_memory(self, device=None) -> "Tensor":
        """Page-locked memory speeds copies to a GPU; with none, PyTorch's CPU build raises this."""
        raise RuntimeError("Cannot access accelerator device when none is available.")

    is_cuda = property(lambda self: False, doc="False: every tensor lives on the CPU.")
    itemsize = property(lambda self: self._data.itemsize, doc="Bytes per element (4 for float32).")
    nbytes = property(lambda self: self._data.nbytes, doc="Bytes of all the elements: numel() * itemsize.")

    def element_size(self) -> int:
        return self._data.itemsize

    def data_ptr(self) -> int:
        """The address of the first element (two views of one storage at one offset give the same number)."""
        return self._data.__array_interface__["data"][0]

    def stride(self, dim: int | None = None):
        """Steps in elements between neighbours along each dim: (3, 1) for a contiguous (2, 3) tensor."""
        st = tuple(s // self._data.itemsize for s in self._data.strides)
        return st if dim is None else st[_norm_dim(dim, self.ndim, "stride")]

    def bfloat16(self) -> "Tensor":
        from tinyattn.dtypes import bfloat16
        return self.to(bfloat16)  # raises: NumPy has no bfloat16 (the stand-in's message says what to use)

    def square(self) -> "Tensor":
        x = self.long() if self._data.dtype == np.bool_ else self  # (bool ** 2 is int64 in PyTorch)
        return x * x  # d/dx x^2 = 2x, through Mul; an integer tensor stays integer, as in PyTorch

    def lerp(self, end, weight) -> "Tensor":
        """self + weight (end - self), computed as PyTorch does: from the nearer end (exact at weight 0 and 1).
        self and end are float tensors of one dtype, as PyTorch requires (no promotion here)."""
        if getattr(end, "dtype", self.dtype) != self.dtype:
            raise RuntimeError(f"lerp: expected dtype {self.dtype} for `end` but got dtype {end.dtype}")
        if self.dtype.kind not in "fc":
            raise NotImplementedError(f"\"lerp_kernel_scalar\" not implemented for '{promotion.torch_name(self.dtype)}'")
        diff = end - self
        w = weight if isinstance(weight, autograd.Tensor) else autograd.Tensor._make(np.asarray(weight, self.dtype))
        from_self, from_end = self + w * diff, end - diff * (1 - w)
        near_self = np.broadcast_to(np.abs(w._data) < 0.5, from_self.shape)
        return Where.apply(from_self, from_end, cond=near_self)

    def new_empty(self, *size, dtype=None, requires_grad: bool = False, device=None) -> "Tensor":
        """A new tensor of ``size`` (self's dtype unless given); its values are unspecified (here zeros)."""
        return self.new_zeros(*size, dtype=dtype, requires_grad=requires_grad, device=device)

    def triu_(self, diagonal: int = 0) -> "Tensor":
        keep = np.triu(np.ones(self._last_two("triu_"), dtype=bool), diagonal)
        return self.masked_fill_(autograd.Tensor._make(~keep), 0)

    def tril_(self, diagonal: int = 0) -> "Tensor":
        keep = np.tril(np.ones(self._last_two("tril_"), dtype=bool), diagonal)
        return self.masked_fill_(autograd.Tensor._make(~keep), 0)

    def masked_select(self, mask) -> "Tensor":
        """The entries where ``mask`` (bool; self and mask broadcast together) is True, as a 1-D tensor."""
        m = np.asarray(mask._data if isinstance(mask, autograd.Tensor) else mask)
        if m.dtype != bool:
            raise TypeError(f"masked_select expects a bool mask, got dtype {m.dtype}")
        shape = np.broadcast_shapes(self.shape, m.shape)
        x = self if self.shape == shape else self.expand(*shape)
        return x[np.broadcast_to(m, shape)]

    def unfold(self, dimension: int, size: int, step: int) -> "Tensor":
        """Every window of ``size`` along ``dimension``, ``step`` apart, as a new last dim: (N,) -> ((N - size)
        // step + 1, size). A copy here (PyTorch returns a view: writing into it does not reach self)."""
        d = _norm_dim(dimension, max(self.ndim, 1), "unfold")
        n = self.shape[d] if self.ndim else 1
        if size > n or size < 0 or step <= 0:
            raise RuntimeError(f"unfold: maximum size for tensor at dimension {d} is {n} but size is {size}"
                               if size > n else f"unfold: size must be >= 0 and step > 0, got size={size}, step={step}")
        count = (n - size) // step + 1
        idx = np.arange(count)[:, None] * step + np.arange(size)[None, :]  # (count, size) positions
        x = self[(slice(None),) * d + (idx,)]  # (..., count, size, ...rest)
        order = list(range(x.ndim))
        order.append(order.pop(d + 1))  # the window dim last
        return x.permute(*order)

    def scatter(self, dim: int, index, src=None, *, value=None, reduce=None) -> "Tensor":
        """Out-of-place scatter_: a copy of self with src (or value) written at index along dim; with
        ``reduce='add'`` or ``'multiply'``, combined in instead (compat/scatter.py)."""
        src = value if src is None else src
        return self.clone().scatter_(dim, index, src) if reduce is None else self._scatter_reducing(dim, index, src, reduce)

    def index_copy_(self, dim: int, index, source) -> "Tensor":
        """Write ``source``'s slices along ``dim`` at positions ``index`` (1-D ints): self[:, index] = source (dim=1)."""
        d = _norm_dim(dim, max(self.ndim, 1), "index_copy_")
        idx = np.asarray(index._data if isinstance(index, autograd.Tensor) else index)
        if idx.dtype.kind not in "iu" or idx.ndim > 1:
            raise TypeError(f"index_copy_: index must be a 1-D tensor of ints, got dtype {idx.dtype} and shape {idx.shape}")
        return self._inplace("index_copy_", source, index=(slice(None),) * d + (idx,))

    def index_copy(self, dim: int, index, source) -> "Tensor":
        return self.clone().index_copy_(dim, index, source)
