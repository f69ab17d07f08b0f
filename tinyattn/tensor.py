"""The Tensor: a NumPy array that remembers how it was made, and the ops it can go through.

Read it in this order:

1. ``tinyattn/autograd.py``, the engine: ``Function`` (an op is a small class with
   ``forward(ctx, *arrays)`` and ``backward(ctx, grad)`` side by side, the shape of
   ``torch.autograd.Function``), ``unbroadcast`` and the graph walk behind ``loss.backward()``.
2. ``Tensor``: the array (``_data``; ``.data`` and ``.grad`` are Tensors, as in PyTorch), its
   version counter, the in-place methods, and the methods that call the ops.
3. The ops, each next to its derivative.

This module imports only ``autograd``, ``checks`` and ``fastnp`` from the package (everything else imports it).
"""
from __future__ import annotations

import functools
import inspect
import math
from typing import Any, NamedTuple

import numpy as np

from tinyattn import autograd, checks, promotion
from tinyattn.autograd import Context, Function, enable_grad, is_grad_enabled, no_grad, unbroadcast  # noqa: F401
from tinyattn.fastnp import max_keepdims
from tinyattn.promotion import _combine, promote_types, result_type  # noqa: F401  (the ops and functions.py read these)

float32 = np.float32
float64 = np.float64

# ----------------------------------------------------------------------------------------------
# Global state: the default dtype and the one random generator (grad mode lives in autograd.py).
# ----------------------------------------------------------------------------------------------
_default_dtype: type = np.float32
_rng: np.random.Generator = np.random.default_rng(0)


def set_default_dtype(dt) -> None:
    """Set the dtype that Python floats and float lists become (float32 or float64)."""
    global _default_dtype
    dt = np.dtype(dt).type
    if dt not in (np.float32, np.float64):
        raise TypeError(f"default dtype must be float32 or float64, got {np.dtype(dt).name}")
    _default_dtype = dt


def get_default_dtype():
    """The dtype Python floats become (float32 unless changed)."""
    return _default_dtype


def manual_seed(n: int) -> np.random.Generator:
    """Seed the ONE generator behind init, dropout, randn and sampling: same seed, same numbers."""
    global _rng
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"manual_seed expects an int, got {type(n).__name__}")
    _rng = np.random.default_rng(int(n) % 2**64)  # PyTorch accepts negative seeds too
    return _rng


def get_rng() -> np.random.Generator:
    """The generator seeded by ``manual_seed``; library code draws all its randomness here."""
    return _rng


class Generator:
    """A random stream of its own, as ``torch.Generator``: ``g = Generator().manual_seed(2147483647)``,
    then ``randn(27, 27, generator=g)``. Seeded streams repeat exactly, but the numbers are NumPy's
    (PCG64), not PyTorch's, for the same seed."""

    def __init__(self, device=None) -> None:
        checks.device(device)
        self.manual_seed(67280421310721)  # PyTorch's default seed

    def manual_seed(self, seed: int) -> "Generator":
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
            raise TypeError(f"Generator.manual_seed expects an int, got {type(seed).__name__}")
        self._seed = int(seed)
        self.rng = np.random.default_rng(self._seed % 2**64)
        return self  # so that `g = torch.Generator().manual_seed(n)` works

    def seed(self) -> int:
        """Reseed from the operating system's entropy; returns the new seed."""
        return self.manual_seed(int(np.random.SeedSequence().entropy) % 2**63).initial_seed()

    def initial_seed(self) -> int:
        return self._seed

    @property
    def device(self) -> str:
        return "cpu"


def random_fill(t: "Tensor", dist: str, a: float, b: float, generator, who: str) -> "Tensor":
    """Overwrite t with draws of U(a, b) (dist 'uniform') or N(a, b^2) ('normal'), in place: the checks of
    Tensor.uniform_/normal_ and of nn.init's, in one place (``who`` names the caller in errors)."""
    if t.dtype.kind != "f":
        raise TypeError(f"{who} draws real numbers and needs a floating-point tensor, got dtype {t.dtype}")
    if dist == "uniform" and not a <= b:
        raise ValueError(f"{who}: needs a <= b, got a={a}, b={b}")
    if dist == "normal" and not b >= 0:
        raise ValueError(f"{who}: std must be >= 0, got {b}")
    rng = rng_of(generator)
    return t._inplace(who, rng.uniform(a, b, t.shape) if dist == "uniform" else rng.normal(a, b, t.shape))


def rng_of(generator) -> np.random.Generator:
    """The NumPy generator to draw from for a ``generator=`` argument: ``manual_seed``'s when None, a
    ``Generator``'s own stream, or a ``numpy.random.Generator`` as it is."""
    if generator is None:
        return _rng
    if isinstance(generator, Generator):
        return generator.rng
    if isinstance(generator, np.random.Generator):
        return generator
    raise TypeError(f"generator must be a tinyattn.Generator, a numpy.random.Generator or None (then "
                    f"manual_seed's), got {type(generator).__name__}")




# ----------------------------------------------------------------------------------------------
# Tensor
# ----------------------------------------------------------------------------------------------
def _as_array(data, dtype=None) -> np.ndarray:
    """The dtype rules: Python floats -> the default dtype, NumPy floats keep theirs, ints stay ints."""
    if isinstance(data, Tensor):
        arr = data._data
    elif isinstance(data, (np.ndarray, np.generic)):
        arr = np.asarray(data)
    else:
        try:
            arr = np.asarray(data)
        except ValueError:  # NumPy refuses nested lists of different lengths
            raise ValueError(f"cannot make a tensor from a ragged {type(data).__name__}: "
                             "every nested list must have the same length") from None
        if arr.dtype == np.float64:  # a Python float or a list of them
            arr = arr.astype(_default_dtype)
        elif arr.dtype.kind not in "biufc":
            got = type(data).__name__ if not isinstance(data, (list, tuple)) else f"a {type(data).__name__} holding non-numbers"
            raise TypeError(f"cannot make a tensor from {got}: expected numbers, (nested) lists of numbers, "
                            "an ndarray or a Tensor")
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    return arr


def _norm_dim(dim: int, ndim: int, op: str) -> int:
    if not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    n = max(ndim, 1)  # a 0-d tensor takes dim 0 and -1, as in PyTorch
    if not -n <= dim < n:
        raise IndexError(f"{op}: dim={dim} is out of range for a tensor with {ndim} dims")
    return int(dim) % n


_NUMPY_NAMES = (("axis", "dim"), ("keepdims", "keepdim"))


def numpy_names(method):
    """Let a reduction take NumPy's names, as PyTorch's do: ``axis=`` for ``dim=`` and ``keepdims=`` for
    ``keepdim=`` (``x.mean(axis=1)``, ``P.sum(1, keepdims=True)``); both names at once is an error."""
    after_self = list(inspect.signature(method).parameters)[1:]  # the parameters after self (or input)

    @functools.wraps(method)
    def reduction(self, *args, **kwargs):
        for numpy_name, name in _NUMPY_NAMES if kwargs else ():  # (no keywords, the common case: nothing to do)
            if numpy_name in kwargs:
                given = name in kwargs or name in after_self and len(args) > after_self.index(name)
                if given:
                    value = kwargs[name] if name in kwargs else args[after_self.index(name)]
                    raise TypeError(f"{method.__name__}() got both {name}={value!r} and "
                                    f"{numpy_name}={kwargs[numpy_name]!r}; they are one argument, pass one")
                kwargs[name] = kwargs.pop(numpy_name)
        return method(self, *args, **kwargs)
    return reduction


def _norm_dims(dim, ndim: int, op: str):
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        if not dim:  # dim=() means every dim, as in PyTorch
            return None
        dims = tuple(_norm_dim(d, ndim, op) for d in dim)
        if len(set(dims)) != len(dims):
            raise ValueError(f"{op}: dim={tuple(dim)} names a dim more than once (a tensor with {ndim} dims)")
        return dims
    return _norm_dim(dim, ndim, op)


def _n_reduced(shape: tuple, dim) -> int:
    """How many elements a reduction over ``dim`` (None = all, an int or a tuple of normalized dims) combines."""
    if dim is None:
        return math.prod(shape)
    return math.prod(shape[i] for i in (dim if isinstance(dim, tuple) else (dim,)))


def _var_args(dim, unbiased, correction) -> tuple:
    """var/std's (dim, correction) from PyTorch's two spellings: ``correction=`` (keyword only) or the
    older ``unbiased`` bool, which may even come first (``x.var(False)``)."""
    if isinstance(dim, bool):  # x.var(True): the bool is `unbiased`, over every dim
        if unbiased is not None:
            raise TypeError("var/std: got unbiased twice (a bool in dim's place, and unbiased=)")
        dim, unbiased = None, dim
    if unbiased is not None:
        if correction is not None:
            raise TypeError("var/std: pass correction= or unbiased=, not both")
        if not isinstance(unbiased, (bool, np.bool_)):
            raise TypeError(f"var/std: unbiased must be a bool, got {unbiased!r} (keepdim is keyword-only "
                            "after it: x.var(0, keepdim=True))")
        return dim, int(bool(unbiased))
    return dim, 1 if correction is None else correction


def _shape_arg(shape) -> tuple:
    """Accept both ``f(2, 3)`` and ``f((2, 3))``, as PyTorch does."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"a shape needs ints, got {shape}")
    return tuple(int(s) for s in shape)


def _new_shape(shape) -> tuple:
    """The shape of a new tensor (zeros, ones, randn, rand): ints >= 0."""
    shape = _shape_arg(shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"a new tensor's shape needs sizes >= 0, got {shape}")
    return shape


# PyTorch's name for the tensors of each dtype (what x.type() returns), and back.
_TYPE_NAMES = {np.dtype(k): "torch." + v for k, v in (
    (np.float32, "FloatTensor"), (np.float64, "DoubleTensor"), (np.float16, "HalfTensor"),
    (np.int64, "LongTensor"), (np.int32, "IntTensor"), (np.int16, "ShortTensor"), (np.int8, "CharTensor"),
    (np.uint8, "ByteTensor"), (np.bool_, "BoolTensor"))}
_TYPE_OF_NAME = {v.split(".")[1]: k for k, v in _TYPE_NAMES.items()}


class Tensor:
    """An n-dimensional array with an optional gradient (``.grad``) and the op that made it.

    The NumPy array itself is ``_data``. As in PyTorch, ``.data`` is a Tensor without grad that shares
    that memory (an escape hatch from the graph), ``.grad`` is a Tensor too, and ``.numpy()`` gives the array.
    """

    __slots__ = ("_data", "_grad", "_counter", "_rg", "_op", "_ctx", "_parents", "_retain", "_consumed",
                 "__weakref__")
    __array_priority__ = 1000  # make `ndarray + Tensor` call Tensor.__radd__
    __array_ufunc__ = None

    def __init__(self, data: Any, requires_grad: bool = False, dtype=None):
        self._setup(_as_array(data, dtype))
        if requires_grad:
            self.requires_grad_(True)

    def _setup(self, arr: np.ndarray) -> None:
        """The one place a tensor's fields are set (Function.apply adds the graph fields to its outputs)."""
        self._data = arr            # the NumPy array
        self._grad = None           # a Tensor once backward reaches this tensor
        self._counter = [0]         # the version counter: in-place ops add 1 (views share the list)
        self._rg = False            # requires_grad
        self._op = None             # the Function that made this tensor (None: a leaf)
        self._ctx = None            # what that op's forward kept for its backward (freed by backward)
        self._parents = ()          # the op's input tensors (dropped by backward, with the ctx)
        self._retain = False        # keep .grad on a non-leaf (retain_grad)
        self._consumed = False      # an op that autograd recorded has taken this tensor as an input

    @staticmethod
    def _make(arr: np.ndarray) -> "Tensor":
        """Wrap an op's output array without re-checking it (the hot path)."""
        t = Tensor.__new__(Tensor)
        t._setup(arr if type(arr) is np.ndarray else np.asarray(arr))
        return t

    @property
    def data(self) -> "Tensor":
        """The same values as a Tensor outside the graph, sharing memory (``p.data.mul_(0.5)`` changes p).

        As in PyTorch, changes made through ``.data`` are invisible to autograd (it has its own
        version counter); ``with no_grad(): p.mul_(0.5)`` is the checked way.
        """
        return Tensor._make(self._data)

    @data.setter
    def data(self, value) -> None:
        self._data = _as_array(value)

    @property
    def grad(self) -> "Tensor | None":
        """d(output)/d(self) after ``backward()``: a Tensor of self's shape, or None before any backward."""
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad must be a Tensor or None, got {type(value).__name__}")
            if value.shape != self.shape or value.dtype != self.dtype:
                raise ValueError(f"assigned grad has shape {value.shape} and dtype {value.dtype} but the tensor "
                                 f"has shape {self.shape} and dtype {self.dtype}")
        self._grad = value

    @property
    def _version(self) -> int:
        """How many in-place changes this tensor's memory has seen (PyTorch's ``x._version``)."""
        return self._counter[0]

    def _bump_version(self) -> "Tensor":
        """Count one in-place change of this tensor's memory; backward compares the count with the one
        at forward time. Every writer calls it: the in-place methods below, an optimizer step,
        ``nn.init.*_`` and ``load_state_dict`` (PyTorch's do these under no_grad, and they count too)."""
        self._counter[0] += 1
        return self

    @property
    def requires_grad(self) -> bool:
        """Whether backward() computes a gradient for this tensor (checked on assignment: floats only)."""
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, flag: bool = True) -> "Tensor":
        if flag and not np.issubdtype(self._data.dtype, np.floating):
            raise TypeError(f"requires_grad=True needs floating-point data, got dtype {self._data.dtype}; "
                            "integer tensors (token ids, indices) can not require grad")
        self._rg = bool(flag)
        return self

    # --- attributes ---------------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self._data.shape

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def dtype(self):
        return self._data.dtype

    @property
    def is_leaf(self) -> bool:
        return self._op is None

    @property
    def grad_fn(self):
        """The op that made this tensor in the graph (``<MulBackward>``); None for a leaf or outside the graph."""
        return None if self._op is None else autograd.GradFn(self._op)

    @property
    def T(self) -> "Tensor":
        """All dims reversed (the matrix transpose for 2-D tensors)."""
        return self.permute(*range(self.ndim - 1, -1, -1))

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[_norm_dim(dim, self.ndim, "size")]

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel  # PyTorch's older name

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def item(self) -> float:
        if self._data.size != 1:
            raise ValueError(f"item() needs a tensor with one element, got shape {self.shape}")
        return self._data.item()

    def numpy(self) -> np.ndarray:
        return self._data

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

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

    def __array__(self, dtype=None, copy=None):
        return self._data if dtype is None else self._data.astype(dtype)

    def tolist(self):
        return self._data.tolist()

    def detach(self) -> "Tensor":
        """The same data, cut from the graph (sharing memory and the version counter, as in PyTorch)."""
        t = Tensor._make(self._data)
        t._counter = self._counter
        return t

    def retain_grad(self) -> None:
        """Keep ``.grad`` on this non-leaf tensor after backward (handy for inspecting a graph)."""
        self._retain = True

    def backward(self, gradient=None, retain_graph: bool | None = None) -> None:
        """Fill ``.grad`` of every leaf that requires grad with d(self)/d(leaf), contracted with ``gradient``.

        The graph's saved arrays are freed afterwards, so a second backward through it raises unless
        ``retain_graph=True``. The walk itself is ``tinyattn.autograd.backward``.
        """
        autograd.backward(self, gradient, retain_graph)

    # --- in place: outside the graph (on .data, on .grad, on tensors without grad, or under no_grad) --
    def _inplace(self, op: str, value, index=None, where=True) -> "Tensor":
        """Write ``value`` into self's array (all of it, ``[index]``, or where ``where`` is True); count the change.

        A tensor that requires grad is refused while the graph is recorded: its old values may be saved
        for a backward. Every change adds 1 to the version counter, which backward checks.
        """
        if self._rg and autograd.is_grad_enabled():
            if self._op is None:
                raise RuntimeError(f"{op}: a leaf Variable that requires grad is being used in an in-place operation; "
                                   "change it under tinyattn.no_grad() (as an optimizer step does), or build a new "
                                   "tensor (x.masked_fill(mask, value), tinyattn.where(cond, a, b))")
            raise RuntimeError(f"{op}: in-place change of a tensor that is part of the graph; build a new tensor "
                               "instead (x = x * y, x.masked_fill(mask, value), tinyattn.where(cond, a, b))")
        if isinstance(value, Tensor):
            value = value._data
        try:
            if callable(value):  # the new values, computed from the old ones (add_, mul_, ...)
                value = value(self._data)
            if index is None:
                np.copyto(self._data, value, casting="same_kind", where=where)
            else:
                _write_at(self._data, index, value)
        except (IndexError, ValueError, TypeError, OverflowError) as e:
            raise type(e)(f"{op} on a tensor of shape {self.shape} and dtype {self.dtype}: {e}") from None
        return self._bump_version()

    def zero_(self) -> "Tensor":
        return self._inplace("zero_", 0)

    def fill_(self, value) -> "Tensor":
        return self._inplace("fill_", _number(value, "fill_"))

    def copy_(self, src) -> "Tensor":
        return self._inplace("copy_", src)

    def add_(self, other, alpha=1) -> "Tensor":
        """self += alpha * other"""
        o = promotion.inplace_operand("Add", self, other)  # (the promotion table: u8 += -1 wraps, bool -= refused)
        return self._inplace("add_", lambda a: a + o if alpha == 1 else a + alpha * o)  # (1 * a bool is an int)

    def sub_(self, other, alpha=1) -> "Tensor":
        """self -= alpha * other"""
        o = promotion.inplace_operand("Sub", self, other)  # (the promotion table: u8 += -1 wraps, bool -= refused)
        return self._inplace("sub_", lambda a: a - o if alpha == 1 else a - alpha * o)

    def mul_(self, other) -> "Tensor":
        o = promotion.inplace_operand("Mul", self, other)  # (the promotion table: u8 += -1 wraps, bool -= refused)
        return self._inplace("mul_", lambda a: a * o)

    def div_(self, other) -> "Tensor":
        o = promotion.inplace_operand("Div", self, other)  # (the promotion table: u8 += -1 wraps, bool -= refused)
        return self._inplace("div_", lambda a: a / o)

    def clamp_(self, min=None, max=None) -> "Tensor":
        if min is None and max is None:
            raise ValueError("clamp_: give at least one of min= or max=")
        lo, hi = (None if v is None else _clamp_bound(v, name) for v, name in ((min, "min"), (max, "max")))
        return self._inplace("clamp_", lambda a: np.clip(a, lo, hi))

    def masked_fill_(self, mask, value) -> "Tensor":
        """Where ``mask`` (bool, broadcast to self's shape) is True, put ``value``."""
        m, v = self._fill_args(mask, value, "masked_fill_")
        return self._inplace("masked_fill_", v, where=m)

    def index_fill_(self, dim: int, index, value) -> "Tensor":
        """Put ``value`` at positions ``index`` (ints, 1-D) along ``dim``: ``x.index_fill_(1, [0, 2], v)`` fills columns 0 and 2."""
        d = _norm_dim(dim, self.ndim, "index_fill_")
        idx = np.asarray(index._data if isinstance(index, Tensor) else index)
        if idx.dtype.kind not in "iu" or idx.ndim > 1:
            raise TypeError(f"index_fill_: index must be a 1-D tensor of ints, got dtype {idx.dtype} and shape {idx.shape}")
        n = self.shape[d] if self.ndim else 1
        if idx.size and (idx.min() < -n or idx.max() >= n):
            raise IndexError(f"index_fill_: index holds {int(idx.max() if idx.max() >= n else idx.min())}, "
                             f"out of range for dim {dim} of size {n}")
        return self._inplace("index_fill_", _number(value, "index_fill_"), index=(slice(None),) * d + (idx,))

    def scatter_(self, dim: int, index, src) -> "Tensor":
        """Gather's inverse: self[index[i][j]][j] = src[i][j] for dim=0, self[i][index[i][j]] = src[i][j] for dim=1.

        ``src`` is a tensor (only its first index.shape entries are read) or a number. Where ``index``
        names one position twice, which value lands there is not defined (as in PyTorch).
        """
        where = _gather_where(self.shape, dim, index, "scatter_")
        shape = where[_norm_dim(dim, self.ndim, "scatter_")].shape  # index's shape
        if isinstance(src, (Tensor, np.ndarray, list)):
            src = _array_of(src)
            if src.ndim != len(shape) or any(n > m for n, m in zip(shape, src.shape)):
                raise ValueError(f"scatter_: index of shape {shape} needs a src of as many dims, at least as large "
                                 f"in every dim; got src of shape {src.shape}")
            src = src[tuple(slice(0, n) for n in shape)]
        else:
            src = _number(src, "scatter_")
        return self._inplace("scatter_", src, index=where)

    def _iop(self, other, name: str, inplace, op) -> "Tensor":
        """``x += y``: in place outside the graph (as PyTorch); where a gradient is being recorded, a new
        tensor instead (the same values, and a graph the backward can walk)."""
        if autograd.is_grad_enabled() and (self._rg or (isinstance(other, Tensor) and other._rg)):
            if self._rg and self._op is None:
                raise RuntimeError(f"x {name}= y on a leaf tensor that requires grad: write x = x {name} y, "
                                   "or update it under tinyattn.no_grad()")
            return self._binary(op, other)
        return inplace(self, other)

    def float(self) -> "Tensor":
        return self if self.dtype == np.float32 else Cast.apply(self, dtype=np.float32)

    def double(self) -> "Tensor":
        return self if self.dtype == np.float64 else Cast.apply(self, dtype=np.float64)

    def to(self, dtype) -> "Tensor":
        """Cast to ``dtype``; ``to('cpu')`` is accepted and changes nothing (NumPy is the device)."""
        if isinstance(dtype, str) and dtype.split(":")[0] in ("cpu", "cuda", "mps"):
            kind = dtype.split(":")[0]  # (a tinyattn.device is a str too)
            if kind != "cpu":  # a CPU-only PyTorch's errors (the full rule is tinyattn.checks.device)
                raise (AssertionError if kind == "cuda" else RuntimeError)(
                    ("Torch not compiled with CUDA enabled" if kind == "cuda" else
                     "PyTorch is not linked with support for mps devices")
                    + f" (Tensor.to={dtype!r}: tinyattn runs on the CPU with NumPy)")
            return self
        dt = np.dtype(dtype)
        if self.dtype == dt:
            return self
        if dt.kind not in "fc":  # an integer/bool copy leaves the graph, like .long() (ints can not require grad)
            return Tensor._make(self._data.astype(dt))
        return Cast.apply(self, dtype=dt.type)

    def cpu(self) -> "Tensor":
        """This tensor (it already lives in NumPy's memory)."""
        return self

    @property
    def device(self) -> str:
        return "cpu"

    def bool(self) -> "Tensor":
        return Tensor._make(self._data.astype(bool))

    def long(self) -> "Tensor":
        return Tensor._make(self._data.astype(np.int64))

    def int(self) -> "Tensor":  # noqa: A003  (torch's int is int32)
        return Tensor._make(self._data.astype(np.int32))

    def half(self) -> "Tensor":
        return self if self.dtype == np.float16 else Cast.apply(self, dtype=np.float16)

    def byte(self) -> "Tensor":
        return Tensor._make(self._data.astype(np.uint8))

    def is_contiguous(self) -> bool:
        return bool(self._data.flags.c_contiguous)

    # in-place random fills (``weight.data.uniform_(-r, r)``)
    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None) -> "Tensor":
        return random_fill(self, "uniform", a, b, generator, "uniform_")

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> "Tensor":
        return random_fill(self, "normal", mean, std, generator, "normal_")

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
        return self.to(_as_array(other).dtype)

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
            return tuple(Tensor._make(w.astype(np.int64, copy=False)) for w in where)
        return Tensor._make(np.stack(where, axis=1).astype(np.int64, copy=False).reshape(-1, self.ndim))

    def new_tensor(self, data, dtype=None, requires_grad: bool = False, device=None) -> "Tensor":
        """A new tensor holding (a copy of) ``data``, with this tensor's dtype unless ``dtype`` is given."""
        if device is not None:
            self.to(str(device))  # raises for anything but the CPU
        return Tensor(np.array(_as_array(data), dtype=dtype or self._data.dtype), requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, requires_grad: bool = False, device=None) -> "Tensor":
        """A new tensor of shape ``size`` filled with ``fill_value``, with this tensor's dtype by default."""
        if device is not None:
            self.to(str(device))  # raises for anything but the CPU
        size = (size,) if isinstance(size, (int, np.integer)) else size
        return Tensor(np.full(_new_shape((size,)), fill_value, dtype=dtype or self._data.dtype),
                      requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, requires_grad: bool = False, device=None) -> "Tensor":
        """Zeros of shape ``size``, with this tensor's dtype by default (``x.new_zeros(B, T)``)."""
        return self.new_full(_new_shape(size), 0, dtype, requires_grad, device)

    def new_ones(self, *size, dtype=None, requires_grad: bool = False, device=None) -> "Tensor":
        """Ones of shape ``size``, with this tensor's dtype by default."""
        return self.new_full(_new_shape(size), 1, dtype, requires_grad, device)

    def contiguous(self) -> "Tensor":
        """A C-ordered copy if needed. NumPy reshapes anything, so this only matters for speed."""
        return self if self._data.flags.c_contiguous else Contiguous.apply(self)

    def clone(self) -> "Tensor":
        return Contiguous.apply(self)

    def __repr__(self) -> str:
        body = np.array2string(self._data, separator=", ", precision=4, prefix="tensor(")
        extra = ""
        if self._data.dtype not in (np.dtype(_default_dtype), np.dtype(np.int64), np.dtype(bool)):
            extra += f", dtype={self._data.dtype}"
        if self._op is not None:
            extra += f", grad_fn=<{self._op.__name__}Backward>"
        elif self.requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise ValueError(f"the truth value of a tensor with shape {self.shape} is ambiguous; use .any() or .all()")
        return bool(self._data)

    def _reduce_axes(self, dim, op: str):
        """NumPy's axis for a reduction over ``dim`` (a 0-d tensor takes dim 0 or -1 and reduces nothing)."""
        axes = _norm_dims(dim, self.ndim, op)
        return None if self.ndim == 0 else axes

    @numpy_names
    def any(self, dim=None, keepdim: bool = False) -> "Tensor":
        """True where some element (over ``dim``; every dim if None) is nonzero: a bool tensor, as in PyTorch."""
        return Tensor._make(np.any(self._data, axis=self._reduce_axes(dim, "any"), keepdims=keepdim))

    @numpy_names
    def all(self, dim=None, keepdim: bool = False) -> "Tensor":
        """True where every element (over ``dim``; every dim if None) is nonzero: a bool tensor."""
        return Tensor._make(np.all(self._data, axis=self._reduce_axes(dim, "all"), keepdims=keepdim))

    # --- arithmetic (broadcasting like NumPy) -------------------------------------------------
    def _lift(self, other) -> "Tensor":
        """A Python number becomes a 0-d tensor of the dtype the pair promotes to (``result_type``), so
        `x32 * 0.5` stays float32 and `i32 + 1` stays int32."""
        if isinstance(other, Tensor):
            return other
        if isinstance(other, (bool, int, float)):
            return Tensor._make(promotion.number_as(other, result_type(self, other)))
        return Tensor(other)

    def _binary(self, op, other, reverse=False, **constants) -> "Tensor":
        if isinstance(other, Tensor) and other._data.dtype == self._data.dtype and self._data.dtype.kind == "f":
            dt = self._data.dtype  # the common case: nothing to promote, nothing refused
        else:  # the one promotion table: u8 - 1 wraps, bool - bool and bool // bool are refused, int / int is float
            dt = promotion.op_dtype(op.__name__, *((other, self) if reverse else (self, other)))
            other = Tensor._make(promotion.number_as(other, dt)) if isinstance(other, (bool, int, float)) else self._lift(other)
        a, b = (other, self) if reverse else (self, other)
        a, b = (x if x.dtype == dt else x.to(dt) for x in (a, b))
        try:
            out = op.apply(a, b, **constants)
            return out if out._data.dtype == dt else out.to(dt)  # (NumPy's bool ** bool is int8; PyTorch keeps bool)
        except ValueError:
            try:
                np.broadcast_shapes(a.shape, b.shape)
            except ValueError:
                raise ValueError(f"{op.__name__.lower()}: shapes {a.shape} and {b.shape} do not broadcast "
                                 "(sizes must match or be 1, aligned from the right)") from None
            raise

    def __iadd__(self, o): return self._iop(o, "+", Tensor.add_, Add)
    def __isub__(self, o): return self._iop(o, "-", Tensor.sub_, Sub)
    def __imul__(self, o): return self._iop(o, "*", Tensor.mul_, Mul)
    def __itruediv__(self, o): return self._iop(o, "/", Tensor.div_, Div)
    def __add__(self, o): return self._binary(Add, o)
    def __radd__(self, o): return self._binary(Add, o, True)
    def __sub__(self, o): return self._binary(Sub, o)
    def __rsub__(self, o): return self._binary(Sub, o, True)
    def __mul__(self, o): return self._binary(Mul, o)
    def __rmul__(self, o): return self._binary(Mul, o, True)
    def __truediv__(self, o): return self._binary(Div, o)
    def __rtruediv__(self, o): return self._binary(Div, o, True)
    def __pow__(self, o):
        if (isinstance(o, (int, float)) and not isinstance(o, bool) and self._data.dtype.kind == "f"
                and math.isfinite(o)):  # x ** 2, x ** 0.5: a constant exponent, no gradient for it
            return PowConst.apply(self, p=float(o))
        return self._binary(Pow, o)

    def pow(self, exponent) -> "Tensor":
        """self ** exponent (a number or a tensor), as PyTorch's Tensor.pow."""
        return self ** exponent

    def __rpow__(self, o): return self._binary(Pow, o, True)
    # floor division and remainder with Python's signs, as PyTorch: 7 // -2 == -4 and 7 % -2 == -1
    def __floordiv__(self, o): return self._binary(RoundedDiv, o, mode="floor")
    def __rfloordiv__(self, o): return self._binary(RoundedDiv, o, True, mode="floor")
    def __mod__(self, o): return self._binary(Remainder, o, mode="floor")
    def __rmod__(self, o): return self._binary(Remainder, o, True, mode="floor")
    def __neg__(self):
        if self._data.dtype == np.bool_:
            raise RuntimeError(promotion.NEG_BOOL)
        return Neg.apply(self)
    def __abs__(self): return self.abs()
    def __matmul__(self, o): return matmul(self, o)
    def __rmatmul__(self, o): return matmul(o, self)

    # comparisons: bool tensors, outside the graph
    def _cmp(self, other, fn, op: str = "compare") -> "Tensor":
        if other is None or isinstance(other, str):
            return NotImplemented  # as PyTorch: x == None is False, x < None a TypeError
        dt = promotion.op_dtype(op, self, other) if op else None  # both sides in one dtype: u8 < -1 is u8 < 255
        other = other._data if isinstance(other, Tensor) else other
        try:
            if dt is None:
                return Tensor._make(fn(self._data, other))
            other = promotion.number_as(other, dt) if isinstance(other, (bool, int, float)) else np.asarray(other, dtype=dt)
            return Tensor._make(fn(self._data.astype(dt, copy=False), other))
        except ValueError:
            raise ValueError(f"{fn.__name__}: shapes {self.shape} and {np.shape(other)} do not broadcast "
                             "(sizes must match or be 1, aligned from the right)") from None

    def __eq__(self, o): return self._cmp(o, np.equal)  # type: ignore[override]
    def __ne__(self, o): return self._cmp(o, np.not_equal)  # type: ignore[override]
    def __lt__(self, o): return self._cmp(o, np.less)
    def __le__(self, o): return self._cmp(o, np.less_equal)
    def __gt__(self, o): return self._cmp(o, np.greater)
    def __ge__(self, o): return self._cmp(o, np.greater_equal)
    def eq(self, o): return self == o
    def ne(self, o): return self != o
    def lt(self, o): return self < o
    def le(self, o): return self <= o
    def gt(self, o): return self > o
    def ge(self, o): return self >= o
    def logical_not(self): return Tensor._make(np.logical_not(self._data))
    def logical_and(self, o): return self._cmp(o, np.logical_and, None)
    def logical_or(self, o): return self._cmp(o, np.logical_or, None)
    def logical_xor(self, o): return self._cmp(o, np.logical_xor, None)

    def __invert__(self):
        if self.dtype.kind not in "biu":
            raise TypeError(f"~x needs a bool (logical not) or integer (bitwise not) tensor, got dtype {self.dtype}")
        return Tensor._make(~self._data)
    # & | ^ are bitwise, as PyTorch's: on bools the logical ones, on ints bit by bit (bool & uint8 is uint8)
    def __and__(self, o): return self._cmp(o, np.bitwise_and, "bitwise_and")
    def __or__(self, o): return self._cmp(o, np.bitwise_or, "bitwise_or")
    def __xor__(self, o): return self._cmp(o, np.bitwise_xor, "bitwise_xor")
    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def matmul(self, other) -> "Tensor":
        return matmul(self, other)

    # PyTorch's names for the operators: x.add(y, alpha=2) is x + 2 * y
    def add(self, other, *, alpha=1) -> "Tensor":
        return self + (other if alpha == 1 else alpha * other)

    def sub(self, other, *, alpha=1) -> "Tensor":
        return self - (other if alpha == 1 else alpha * other)

    def mul(self, other) -> "Tensor": return self * other
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

    subtract, multiply, divide = sub, mul, div

    def maximum(self, other) -> "Tensor":
        """The larger of self and other, elementwise (NaN wins); the gradient of a tie is split evenly."""
        return self._binary(Maximum, other, larger=True)

    def minimum(self, other) -> "Tensor":
        """The smaller of self and other, elementwise (NaN wins); the gradient of a tie is split evenly."""
        return self._binary(Maximum, other, larger=False)

    # --- elementwise --------------------------------------------------------------------------
    def exp(self): return Exp.apply(self)
    def log(self): return Log.apply(self)
    def log10(self): return self.log() * (1 / math.log(10))  # log10 x = ln x / ln 10
    def sqrt(self): return Sqrt.apply(self)
    def tanh(self): return Tanh.apply(self)
    def sigmoid(self): return Sigmoid.apply(self)
    def relu(self): return ReLU.apply(self)
    def abs(self): return Abs.apply(self)
    def sin(self): return Sin.apply(self)
    def cos(self): return Cos.apply(self)
    def sinh(self): return (self.exp() - (-self).exp()) * 0.5  # (e^x - e^-x) / 2
    def cosh(self): return (self.exp() + (-self).exp()) * 0.5
    def log2(self): return self.log() * (1 / math.log(2))  # log2 x = ln x / ln 2
    def log1p(self): return Log1p.apply(self._floating())
    def expm1(self): return Expm1.apply(self._floating())
    def reciprocal(self): return 1.0 / self._floating()
    def rsqrt(self): return 1.0 / self._floating().sqrt()  # 1 / sqrt(x), as in RMSNorm

    def _floating(self) -> "Tensor":
        """self, or self in the default float dtype if it holds integers (torch.log1p(int) is a float)."""
        return self if self.dtype.kind in "fc" else self.to(_default_dtype)

    # floor, ceil, round, trunc and sign: steps, so their gradient is 0 (as in PyTorch)
    def floor(self): return self._rounded(np.floor)
    def ceil(self): return self._rounded(np.ceil)
    def trunc(self): return self._rounded(np.trunc)
    def sign(self): return Rounding.apply(self, fn=np.sign)

    def round(self, *, decimals: int = 0):
        """To the nearest integer (ties to even, as PyTorch), or to ``decimals`` places."""
        if isinstance(decimals, bool) or not isinstance(decimals, (int, np.integer)):
            raise TypeError(f"round: decimals must be an int (negative rounds to tens, hundreds, ...), got {decimals!r}")
        return self._rounded(functools.partial(np.round, decimals=decimals) if decimals else np.round)

    def _rounded(self, fn) -> "Tensor":
        # an integer tensor is whole already: a copy, of its own dtype (np.floor would make it float)
        return Contiguous.apply(self) if self.dtype.kind in "biu" else Rounding.apply(self, fn=fn)

    # NaN and inf tests: bool tensors, outside the graph
    def isnan(self): return Tensor._make(np.isnan(self._data))
    def isinf(self): return Tensor._make(np.isinf(self._data))
    def isfinite(self): return Tensor._make(np.isfinite(self._data))
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

    def clamp_min(self, min) -> "Tensor": return self.clamp(min=min)  # noqa: A002
    def clamp_max(self, max) -> "Tensor": return self.clamp(max=max)  # noqa: A002

    def masked_fill(self, mask, value: float) -> "Tensor":
        """Where ``mask`` is True, put ``value``; elsewhere keep self. (PyTorch's meaning.)"""
        m, _ = self._fill_args(mask, value, "masked_fill")
        if isinstance(value, Tensor) and value.requires_grad:  # a learned fill value gets its gradient
            return Where.apply(value.to(self.dtype), self, cond=np.broadcast_to(m, self.shape))
        return MaskedFill.apply(self, mask=m, value=value)

    def _fill_args(self, mask, value, op: str) -> tuple:
        """masked_fill's checks: a bool mask that broadcasts to self, a value self's dtype can hold."""
        m = np.asarray(mask._data if isinstance(mask, Tensor) else mask)
        if m.dtype != bool:
            raise TypeError(f"{op} expects a bool mask (True = fill), got dtype {m.dtype}; "
                            "build one with a comparison, e.g. mask == 0")
        try:
            if np.broadcast_shapes(m.shape, self.shape) != self.shape:
                raise ValueError
        except ValueError:
            raise ValueError(f"{op}: mask of shape {m.shape} does not broadcast to the tensor's shape {self.shape}") from None
        if isinstance(value, Tensor) and value.ndim:
            raise ValueError(f"{op}: value must be a number or a 0-d tensor, got shape {value.shape}")
        v = value.item() if isinstance(value, Tensor) else value
        if self.dtype.kind in "iub" and isinstance(v, float) and not float(v).is_integer():
            raise TypeError(f"{op}: a {self.dtype} tensor can not hold {v}; make the scores float first "
                            "(an integer tensor has no -inf)")
        return m, v

    def clamp(self, min: float | None = None, max: float | None = None) -> "Tensor":
        """x clipped to [min, max] elementwise (either bound may be None);  gradient 1 inside, 0 where clipped."""
        if min is None and max is None:
            raise ValueError("clamp: give at least one of min= or max=")
        lo, hi = (None if v is None else _clamp_bound(v, name) for v, name in ((min, "min"), (max, "max")))
        return Clamp.apply(self, lo=lo, hi=hi)

    clip = clamp  # PyTorch's alias

    def tril(self, diagonal: int = 0) -> "Tensor":
        """Keep the lower triangle (j <= i + diagonal) of the last two dims, zero the rest."""
        if self.ndim < 2:
            raise ValueError(f"tril needs at least 2 dims, got shape {self.shape}")
        return Tri.apply(self, k=diagonal, upper=False)

    def triu(self, diagonal: int = 0) -> "Tensor":
        """Keep the upper triangle (j >= i + diagonal) of the last two dims, zero the rest."""
        if self.ndim < 2:
            raise ValueError(f"triu needs at least 2 dims, got shape {self.shape}")
        return Tri.apply(self, k=diagonal, upper=True)

    def cumsum(self, dim: int) -> "Tensor":
        """y_i = x_0 + ... + x_i along ``dim``;  shape unchanged."""
        return CumSum.apply(self, dim=_norm_dim(dim, self.ndim, "cumsum"))

    def gather(self, dim: int, index) -> "Tensor":
        """out[i][j][k] = self[i][index[i][j][k]][k] (for dim=1);  out has index's shape."""
        return GetItem.apply(self, idx=_gather_where(self.shape, dim, index))

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> MinMax:
        """The k largest (or smallest) entries along ``dim``: ``(values, indices)``, each of shape with dim -> k.

        The values are ``self.gather(dim, indices)``, so the gradient flows to the picked entries only.
        They always come sorted (best first); ``sorted=False`` is accepted and changes nothing.
        """
        if self.ndim == 0:
            raise ValueError("topk needs a tensor with at least 1 dim, got a 0-d tensor")
        d = _norm_dim(dim, self.ndim, "topk")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= self.shape[d]:
            raise ValueError(f"topk: k={k!r} is out of range for dim {dim} of size {self.shape[d]} (shape {self.shape}); "
                             f"k must be an int in 0..{self.shape[d]}")
        order = np.argsort(self._data, axis=d, kind="stable")  # ascending along d
        if largest:
            order = np.flip(order, axis=d)
        indices = np.take(order, np.arange(k), axis=d)  # the first k along d
        return MinMax(self.gather(d, indices), Tensor._make(indices))

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> "Tensor":
        """The indices that sort ``self`` along ``dim`` (int64). Equal entries keep their order, in both
        directions, so ``stable=True`` changes nothing; NaN sorts as the largest value, as in PyTorch."""
        if self.ndim == 0:
            return Tensor._make(np.zeros((), dtype=np.int64))
        d = _norm_dim(dim, self.ndim, "argsort")
        if not descending:
            return Tensor._make(np.argsort(self._data, axis=d, kind="stable"))
        # descending with ties in their first order: sort the reversed array ascending, reverse that,
        # and map the positions back (position r of the reversed array is n - 1 - r of this one)
        n = self.shape[d]
        order = np.flip(np.argsort(np.flip(self._data, axis=d), axis=d, kind="stable"), axis=d)
        return Tensor._make(n - 1 - order)

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
        values, inverse, counts = np.unique(self._data, return_inverse=True, return_counts=True, axis=d)
        out = [Tensor._make(values)]
        if return_inverse:
            out.append(Tensor._make(inverse.reshape(self.shape if d is None else -1).astype(np.int64)))
        if return_counts:
            out.append(Tensor._make(counts.astype(np.int64)))
        return out[0] if len(out) == 1 else tuple(out)

    # --- reductions ---------------------------------------------------------------------------
    # Every reduction also takes NumPy's names axis= and keepdims= (see numpy_names).
    @numpy_names
    def sum(self, dim=None, keepdim: bool = False) -> "Tensor":
        """Sum over dim (all dims if None)."""
        return Sum.apply(self, dim=_norm_dims(dim, self.ndim, "sum"), keepdim=keepdim)

    @numpy_names
    def mean(self, dim=None, keepdim: bool = False) -> "Tensor":
        d = _norm_dims(dim, self.ndim, "mean")
        n = _n_reduced(self.shape, d)
        return Sum.apply(self, dim=d, keepdim=keepdim) * (1.0 / n if n else math.nan)  # the mean of nothing is NaN

    @numpy_names
    def var(self, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
            correction: int | None = None) -> "Tensor":
        """sum((x - mean)^2) / (N - correction), as PyTorch: correction=1 (the default) is the unbiased
        estimate. PyTorch's older ``unbiased`` (True = correction 1, False = 0) is the second positional
        argument, as there: ``x.var(0, False)`` is the biased variance over dim 0, not keepdim."""
        dim, correction = _var_args(dim, unbiased, correction)
        d = _norm_dims(dim, self.ndim, "var")
        n = _n_reduced(self.shape, d)
        if n - correction <= 0:
            raise ValueError(f"var: {n} element(s) with correction={correction} leaves no degrees of freedom")
        centered = self - self.mean(dim=d, keepdim=True)
        return (centered * centered).sum(dim=d, keepdim=keepdim) * (1.0 / (n - correction))

    @numpy_names
    def amax(self, dim=None, keepdim: bool = False) -> "Tensor":
        return Amax.apply(self, dim=_norm_dims(dim, self.ndim, "amax"), keepdim=keepdim, sign=1.0)

    @numpy_names
    def amin(self, dim=None, keepdim: bool = False) -> "Tensor":
        return Amax.apply(self, dim=_norm_dims(dim, self.ndim, "amin"), keepdim=keepdim, sign=-1.0)

    @numpy_names
    def max(self, dim: int | None = None, keepdim: bool = False):
        """The largest element (whole tensor); with ``dim``, PyTorch's ``(values, indices)`` pair along it."""
        if dim is None:
            return self.amax()  # (the gradient is shared among ties, as torch.max() without dim)
        return self._pick(dim, keepdim, self.argmax(dim, keepdim=True))

    @numpy_names
    def min(self, dim: int | None = None, keepdim: bool = False):
        """The smallest element (whole tensor); with ``dim``, PyTorch's ``(values, indices)`` pair along it."""
        if dim is None:
            return self.amin()
        return self._pick(dim, keepdim, self.argmin(dim, keepdim=True))

    def _pick(self, dim: int, keepdim: bool, index: "Tensor") -> MinMax:
        """max/min along dim: the values are gathered at ``index``, so with ties the whole gradient goes
        to the entry whose index is returned, as in PyTorch."""
        if self.ndim == 0:
            return MinMax(self, Tensor._make(np.zeros((), dtype=np.int64)))
        d = _norm_dim(dim, self.ndim, "max/min")
        values = self.gather(d, index)
        return MinMax(values, index) if keepdim else MinMax(values.squeeze(d), index.squeeze(d))

    @numpy_names
    def std(self, dim=None, unbiased: bool | None = None, keepdim: bool = False, *,
            correction: int | None = None) -> "Tensor":
        """sqrt(var(...)) with var's arguments (a constant slice has std 0 and gradient 0, not NaN)."""
        dim, correction = _var_args(dim, unbiased, correction)
        return StdFromVar.apply(self.var(dim=dim, keepdim=keepdim, correction=correction))

    @numpy_names
    def argmin(self, dim=None, keepdim: bool = False) -> "Tensor":
        d = _norm_dims(dim, self.ndim, "argmin")
        return Tensor._make(np.argmin(self._data, axis=d, keepdims=keepdim))

    @numpy_names
    def argmax(self, dim=None, keepdim: bool = False) -> "Tensor":
        d = _norm_dims(dim, self.ndim, "argmax")
        return Tensor._make(np.argmax(self._data, axis=d, keepdims=keepdim))

    @numpy_names
    def logsumexp(self, dim, keepdim: bool = False) -> "Tensor":
        """log(sum(exp(x))) over ``dim``, as m + log(sum(exp(x - m))) with m the max, so that exp never
        overflows; its gradient is softmax(x). m is a constant here (detached): the result does not
        depend on it, so neither does the gradient."""
        d = _norm_dims(dim, self.ndim, "logsumexp")
        m = self.detach().amax(dim=d, keepdim=True)
        m = m.masked_fill(~m.isfinite(), 0.0)  # a slice of all -inf: exp(-inf - 0) = 0, log 0 = -inf
        m_out = m if keepdim else m.sum(dim=d)  # the max without its size-1 dims
        with np.errstate(divide="ignore"):  # log 0 = -inf is the right answer for an all -inf slice
            return (self - m).exp().sum(dim=d, keepdim=keepdim).log() + m_out

    def softmax(self, dim: int) -> "Tensor":
        d = _norm_dim(dim, self.ndim, "softmax")
        if self.ndim and self.shape[d] == 0:  # nothing to normalise: an empty result, as in PyTorch
            return Contiguous.apply(self)
        return Softmax.apply(self, dim=d)

    def log_softmax(self, dim: int) -> "Tensor":
        d = _norm_dim(dim, self.ndim, "log_softmax")
        if self.ndim and self.shape[d] == 0:
            return Contiguous.apply(self)
        return LogSoftmax.apply(self, dim=d)

    # --- shape ops ----------------------------------------------------------------------------
    def reshape(self, *shape) -> "Tensor":
        shape = _shape_arg(shape)
        new = _infer_shape(shape, self.shape, "reshape")
        return self if new == self.shape else Reshape.apply(self, shape=new)

    def view(self, *shape) -> "Tensor":
        shape = _shape_arg(shape)
        new = _infer_shape(shape, self.shape, "view")
        return self if new == self.shape else Reshape.apply(self, shape=new)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> "Tensor":
        if self.ndim == 0:
            return self.reshape(1)
        s, e = _norm_dim(start_dim, self.ndim, "flatten"), _norm_dim(end_dim, self.ndim, "flatten")
        if s > e:
            raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} (dims {s} and {e} of "
                             f"shape {self.shape}); the dims start_dim..end_dim are merged, so start_dim <= end_dim")
        # the merged size written out: -1 can not be inferred when another dim is 0
        return self.reshape(*self.shape[:s], math.prod(self.shape[s:e + 1]), *self.shape[e + 1:])

    def transpose(self, dim0: int, dim1: int) -> "Tensor":
        d0, d1 = _norm_dim(dim0, self.ndim, "transpose"), _norm_dim(dim1, self.ndim, "transpose")
        if self.ndim == 0:  # a 0-d tensor takes dim 0 or -1, as in PyTorch, and has nothing to swap
            return self
        axes = list(range(self.ndim))
        axes[d0], axes[d1] = axes[d1], axes[d0]
        return Permute.apply(self, axes=tuple(axes))

    swapaxes = swapdims = transpose  # NumPy's and PyTorch's other names

    def t(self) -> "Tensor":
        """The transpose of a matrix (a 0-d or 1-D tensor comes back as it is), as PyTorch's ``t()``."""
        if self.ndim > 2:
            raise ValueError(f"t() expects a tensor with at most 2 dims, got shape {self.shape}; "
                             "use transpose(dim0, dim1) or mT")
        return self.transpose(0, -1) if self.ndim == 2 else self

    def view_as(self, other) -> "Tensor": return self.view(other.shape)
    def reshape_as(self, other) -> "Tensor": return self.reshape(other.shape)
    def expand_as(self, other) -> "Tensor": return self.expand(other.shape)

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
        return self[(slice(None),) * d + (Tensor._make(idx.reshape(-1)),)]

    def norm(self, p=2, dim=None, keepdim: bool = False) -> "Tensor":
        """The p-norm over dim (every element if None): p=2 (Euclid), 1, inf or any p > 0. The gradient of
        the 2-norm at 0 is 0, not NaN (as in PyTorch)."""
        if p in ("fro", 2, 2.0):
            return StdFromVar.apply((self * self).sum(dim=dim, keepdim=keepdim))  # sqrt, gradient 0 at 0
        if p in (1, 1.0):
            return self.abs().sum(dim=dim, keepdim=keepdim)
        if p == math.inf:
            return self.abs().amax(dim=dim, keepdim=keepdim)
        if not isinstance(p, (int, float)) or not p > 0:
            raise ValueError(f"norm: p must be a number > 0, inf or 'fro', got {p!r}")
        return (self.abs() ** p).sum(dim=dim, keepdim=keepdim) ** (1 / p)

    def permute(self, *dims) -> "Tensor":
        dims = _shape_arg(dims)
        axes = tuple(_norm_dim(d, self.ndim, "permute") for d in dims)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError(f"permute: dims {dims} are not a permutation of the {self.ndim} dims of shape {self.shape}")
        return Permute.apply(self, axes=axes)

    def unsqueeze(self, dim: int) -> "Tensor":
        d = _norm_dim(dim, self.ndim + 1, "unsqueeze")
        return self.reshape(*self.shape[:d], 1, *self.shape[d:])

    def squeeze(self, dim: int | None = None) -> "Tensor":
        if dim is None:
            return self.reshape(*[n for n in self.shape if n != 1])
        d = _norm_dim(dim, self.ndim, "squeeze")
        if self.ndim == 0:  # dim 0 or -1 of a 0-d tensor: nothing to remove
            return self
        return self if self.shape[d] != 1 else self.reshape(*self.shape[:d], *self.shape[d + 1:])

    def expand(self, *shape) -> "Tensor":
        """Broadcast to ``shape`` (-1 keeps a dim). The backward sums the copies: that is ``unbroadcast``."""
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

    def repeat_interleave(self, repeats: int, dim: int | None = None) -> "Tensor":
        """Repeat each element ``repeats`` times along ``dim``: [a, b] -> [a, a, b, b] (GQA uses this on heads)."""
        repeats = checks.positive_int("repeats", repeats, "repeat_interleave")
        if dim is None:
            return self.flatten().repeat_interleave(repeats, 0)
        return RepeatInterleave.apply(self, repeats=repeats, dim=_norm_dim(dim, self.ndim, "repeat_interleave"))

    def split(self, split_size, dim: int = 0) -> tuple:
        """Pieces of ``split_size`` along dim (the last may be smaller), or of the sizes in a list (as PyTorch)."""
        d = _norm_dim(dim, self.ndim, "split")
        n = self.shape[d]
        if isinstance(split_size, (int, np.integer)) and not isinstance(split_size, bool):
            split_size = checks.positive_int("split_size", split_size, "split")
            sizes = [min(split_size, n - i) for i in range(0, n, split_size)]
        else:
            sizes = [int(s) for s in split_size]
            if sum(sizes) != n or any(s < 0 for s in sizes):
                raise ValueError(f"split: sizes {sizes} must be >= 0 and add up to dim {dim}'s size {n} (shape {self.shape})")
        out, start = [], 0
        for size in sizes:
            out.append(self[(slice(None),) * d + (slice(start, start + size),)])
            start += size
        return tuple(out)

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

        return tuple(pieces(self))

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        """``chunks`` pieces along dim of size ceil(n / chunks) (fewer if n is small), as PyTorch."""
        chunks = checks.positive_int("chunks", chunks, "chunk")
        n = self.shape[_norm_dim(dim, self.ndim, "chunk")]
        return self.split(max(1, -(-n // chunks)), dim)

    def __getitem__(self, idx) -> "Tensor":
        idx = _index_arg(idx)
        try:
            out = self
            for step in _pytorch_index_steps(idx, self.ndim):
                out = GetItem.apply(out, idx=step)
            return out
        except IndexError as e:
            raise IndexError(f"indexing a tensor of shape {self.shape}: {e}") from None

    def __setitem__(self, idx, value) -> None:
        """x[idx] = value, in place (nanoGPT's ``logits[logits < v[:, [-1]]] = -float('inf')``).

        Outside the graph (neither x nor value requires grad, or under ``no_grad()``) it is a plain write.
        Inside it, as in PyTorch, the write is recorded as an op, so gradients reach value (``out[t] = h``
        into a zeros buffer) and the rest of x: x becomes that op's output. Refused, with the fix named:
        a leaf that requires grad (a Parameter; write under ``no_grad()``), and a tensor that a recorded
        op has already read (``h[t] = f(h[t - 1])``), whose node here is the tensor itself, so writing
        would change what that op's gradient flows into; collect the pieces in a list and ``stack`` them.
        """
        index = _index_arg(idx)
        value_rg = isinstance(value, Tensor) and value._rg
        if not (autograd.is_grad_enabled() and (value_rg or self._rg)) or (self._rg and self._op is None):
            self._inplace("x[...] = value", value, index=index)  # outside the graph (or a leaf: its error)
            return
        if self._consumed:
            raise RuntimeError("x[...] = value: x is already the input of an op that autograd recorded, and a "
                               "write would change what that op's gradient flows into; collect the pieces in "
                               "a list and tinyattn.stack / cat them, or write before x is read")
        before = Tensor._make(self._data)  # x as it was, taking over x's place in the graph
        before._rg, before._op, before._ctx, before._parents = self._rg, self._op, self._ctx, self._parents
        before._counter = self._counter  # one memory, one version counter
        value = self._lift(value)
        value = value if value.dtype == self.dtype else value.to(self.dtype)
        try:
            node = SetItem.apply(before, value, index=index)  # writes into x's memory
        except (IndexError, ValueError, TypeError) as e:  # (NumPy checks before it writes anything)
            raise type(e)(f"x[...] = value on a tensor of shape {self.shape} and dtype {self.dtype}: {e}") from None
        self._op, self._ctx, self._parents, self._rg = node._op, node._ctx, node._parents, node._rg
        self._bump_version()  # ops that saved x's old values see the change at backward and say so


autograd.Tensor = Tensor  # Function.apply and backward wrap arrays in this class


class MinMax(NamedTuple):
    """What ``x.max(dim)`` / ``x.min(dim)`` return, as in PyTorch: the values and where they are."""
    values: Tensor
    indices: Tensor


def _index_arg(idx):
    """Unwrap Tensors used as indices (token ids, masks) into arrays."""
    if isinstance(idx, tuple):
        return tuple(_index_arg(i) for i in idx)
    if isinstance(idx, Tensor):
        return idx._data
    if isinstance(idx, list):
        return np.asarray(idx)
    return idx


def _is_int_index(i) -> bool:
    return (isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))) or \
        (isinstance(i, np.ndarray) and i.ndim == 0 and i.dtype.kind in "iu")


def _write_at(arr: np.ndarray, index, value) -> None:
    """arr[index] = value with PyTorch's indexing: an int selects first (a view), then the array indices."""
    steps = _pytorch_index_steps(index, arr.ndim)
    target = arr[steps[0]] if len(steps) == 2 else arr
    target[steps[-1]] = value


def _read_at(arr: np.ndarray, index) -> np.ndarray:
    """arr[index] with PyTorch's indexing (see _pytorch_index_steps)."""
    steps = _pytorch_index_steps(index, arr.ndim)
    return arr[steps[0]][steps[1]] if len(steps) == 2 else arr[steps[0]]


def _pytorch_index_steps(idx, ndim: int) -> tuple:
    """The index as one or two NumPy indexing steps that give PyTorch's result shape.

    PyTorch reads an int as a select: its dim goes away first, and only then are the array indices
    placed (where the first of them stood if they are adjacent, at the front if a slice, None or a
    non-empty Ellipsis separates them). NumPy counts the int as one more array index, so on shape
    (2, 3, 4) ``x[0, :, [1, 2]]`` is (2, 3) in NumPy and (3, 2) in PyTorch. When ints and arrays are
    mixed, step 1 applies the ints (and slices and None) and step 2 the arrays.
    """
    items = idx if isinstance(idx, tuple) else (idx,)
    if not (any(_is_int_index(i) for i in items) and any(isinstance(i, np.ndarray) and i.ndim for i in items)):
        return (idx,)
    if sum(i is Ellipsis for i in items) > 1:
        return (idx,)  # NumPy's error says it
    used = sum(i.ndim if isinstance(i, np.ndarray) and i.dtype == bool else 1 for i in items
               if i is not None and i is not Ellipsis)  # the dims the index names (a bool mask names its ndim)
    expanded = []
    for i in items:
        expanded += [slice(None)] * max(ndim - used, 0) if i is Ellipsis else [i]
    n_dims = lambda i: i.ndim if isinstance(i, np.ndarray) and i.dtype == bool else 1  # noqa: E731
    first, second = [], []
    for i in expanded:
        if _is_int_index(i):
            first.append(i)  # selected away in step 1
        elif i is None or isinstance(i, slice):
            first.append(i)
            second.append(slice(None))  # the dim step 1 made (None) or cut (slice), kept whole
        else:  # an array index: step 1 keeps its dims whole
            first += [slice(None)] * n_dims(i)
            second.append(i)
    return tuple(first), tuple(second)


def _infer_shape(shape: tuple, old: tuple, op: str) -> tuple:
    size = math.prod(old)
    if shape.count(-1) > 1:
        raise ValueError(f"{op}: only one dim can be -1, got {shape}")
    if -1 in shape:
        rest = math.prod(n for n in shape if n != -1)
        if rest == 0 or size % rest:
            raise ValueError(f"{op}: cannot {op} a tensor of shape {old} ({size} elements) as {shape}")
        shape = tuple(size // rest if n == -1 else n for n in shape)
    if math.prod(shape) != size or any(n < 0 for n in shape):
        raise ValueError(f"{op}: cannot {op} a tensor of shape {old} ({size} elements) "
                         f"as {shape} ({math.prod(shape)} elements)")
    return shape


def _clamp_bound(v, name: str) -> float:
    """A clamp bound: a number (or a one-element tensor), not a string or an array."""
    if isinstance(v, Tensor) and v.numel() == 1:
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float, np.number)):
        raise TypeError(f"clamp: {name} must be a number, got {type(v).__name__}")
    return v


def _number(v, op: str):
    """A fill value: a number, or a tensor with one element."""
    if isinstance(v, Tensor):
        if v.numel() != 1:
            raise ValueError(f"{op}: the value must be a number or a one-element tensor, got a tensor of shape {v.shape}")
        return v.item()
    if not isinstance(v, (int, float, np.number, np.bool_)):
        raise TypeError(f"{op}: the value must be a number, got {type(v).__name__}")
    return v


def _array_of(x):
    """A tensor's array; a number as it is (so x32.mul_(0.5) computes in float32); anything else as an array."""
    if isinstance(x, Tensor):
        return x._data
    return x if isinstance(x, (int, float, np.number)) else np.asarray(x)


def _gather_where(shape: tuple, dim: int, index, op: str = "gather") -> tuple:
    """The advanced index that makes ``a[where]`` PyTorch's ``a.gather(dim, index)``.

    Every dim but ``dim`` is indexed by its own position (np.indices), ``dim`` by ``index``:
    out[i, j, k] = a[i, index[i, j, k], k] for dim=1.
    """
    idx = np.asarray(index._data if isinstance(index, Tensor) else index)
    d = _norm_dim(dim, len(shape), op)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{op}: index must hold integer positions (e.g. int64), got dtype {idx.dtype}")
    if idx.ndim != len(shape):
        raise ValueError(f"{op}: index has shape {idx.shape} but the input has shape {shape}: "
                         "both need the same number of dims")
    if any(n > m for i, (n, m) in enumerate(zip(idx.shape, shape)) if i != d):
        raise ValueError(f"{op}: index of shape {idx.shape} is larger than the input's shape {shape} "
                         f"outside dim {dim}")
    if idx.size and (idx.min() < 0 or idx.max() >= shape[d]):
        bad = int(idx.min() if idx.min() < 0 else idx.max())
        raise IndexError(f"{op}: index holds {bad}, out of range for dim {dim} of size {shape[d]} "
                         f"(valid: 0..{shape[d] - 1})")
    where = list(np.indices(idx.shape, sparse=True))  # position arrays, each broadcastable to idx.shape
    where[d] = idx
    return tuple(where)


# ----------------------------------------------------------------------------------------------
# The ops. Each derivative sits right under its forward.
# ----------------------------------------------------------------------------------------------
class Add(Function):
    """a + b;  da = g, db = g"""
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, g):
        return g, g


class Sub(Function):
    """a - b;  da = g, db = -g"""
    @staticmethod
    def forward(ctx, a, b):
        return a - b

    @staticmethod
    def backward(ctx, g):
        return g, (-g if ctx.needs_input_grad[1] else None)


class Mul(Function):
    """a * b;  da = g * b, db = g * a"""
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return (g * b if ctx.needs_input_grad[0] else None,
                g * a if ctx.needs_input_grad[1] else None)


class Div(Function):
    """a / b;  da = g / b, db = -g a / b^2 = -(g / b) (a / b)"""
    @staticmethod
    def forward(ctx, a, b):
        out = a / b
        ctx.save_for_backward(b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        b, out = ctx.saved_tensors
        g_over_b = g / b  # da, and half of db
        # db as (g / b) * (a / b), never g * a / (b * b): b * b leaves the float range long before the
        # answer does (float32, b = 1e-23: b * b = 0 and db = -inf; b = 1e20: b * b = inf and db = -0).
        gb = -g_over_b * out if ctx.needs_input_grad[1] else None
        return (g_over_b if ctx.needs_input_grad[0] else None), gb


class Pow(Function):
    """a ** b;  da = g b a^(b-1), db = g a^b log(a)"""
    @staticmethod
    def forward(ctx, a, b):
        out = a ** b
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved_tensors
        # b * a^(b-1), with 0 where b == 0 (x^0 is constant; 0 * 0^-1 would be NaN)
        ga = g * np.where(b == 0, 0, b * a ** np.where(b == 0, 1, b - 1)) if ctx.needs_input_grad[0] else None
        gb = None
        if ctx.needs_input_grad[1]:  # a^b log(a), with 0 where a == 0 and b >= 0 (PyTorch's choice: 0^b is
            with np.errstate(divide="ignore", invalid="ignore"):  # 0 for b > 0, so 0 * log 0 would be NaN)
                gb = g * np.where((a == 0) & (b >= 0), 0, out * np.log(a))
        return ga, gb


def _small_power(a: np.ndarray, p: float) -> np.ndarray:
    """a ** p for p in _SMALL_POWERS, by multiplications (and one sqrt for half-integers).

    np.power with a general exponent computes exp(p log a) element by element: on (8, 128, 512)
    float32 it took 26 ms for x ** 3.0 against 0.09 ms for x * x * x. Squaring and multiplying
    give the same values up to float rounding (an ulp or two), and the same inf/NaN (0 ** -1 = inf,
    sqrt of a negative = NaN).
    """
    n = int(abs(p))
    out = None
    if abs(p) != n:  # the half of a half-integer
        out = np.sqrt(a)
        if p < 0:
            out += 0.0  # sqrt(-0.0) is -0.0, but (-0.0) ** -0.5 is +inf: -0.0 + 0.0 = +0.0
    base = a
    while n:  # binary powering: a^5 = a^4 * a
        if n & 1:
            out = base if out is None else out * base
        n >>= 1
        if n:
            base = base * base
    if out is None:  # p == 0
        return np.ones_like(a)
    if out is a:  # p == 1: a new array, never the input itself
        out = a.copy()
    if p < 0:
        with np.errstate(divide="ignore"):  # 0 ** -1 = inf, as np.power gives it
            out = np.reciprocal(out, out=out if out is not a else None)
    return out


# Exponents that _small_power computes: the integers and half-integers from -4 to 4.
_SMALL_POWERS = frozenset(k / 2 for k in range(-8, 9))


class PowConst(Function):
    """a ** p for a constant number p;  da = g p a^(p-1)"""
    @staticmethod
    def forward(ctx, a, p):
        ctx.save_for_backward(a)
        ctx.p = p
        return _small_power(a, p) if p in _SMALL_POWERS else np.power(a, np.asarray(p, dtype=a.dtype))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        p = ctx.p
        if p == 0:
            return np.zeros_like(g)
        q = p - 1
        d = _small_power(a, q) if q in _SMALL_POWERS else np.power(a, np.asarray(q, dtype=a.dtype))
        d *= g.dtype.type(p) if g.dtype.kind == "f" else p
        d *= g
        return d


class Neg(Function):
    """-a;  da = -g"""
    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def backward(ctx, g):
        return -g


class MatMul(Function):
    """a @ b (batched, broadcasting);  da = g @ b^T, db = a^T @ g"""
    @staticmethod
    def forward(ctx, a, b):
        # da needs only b and db only a: keep what a gradient needs (as PyTorch), so a frozen side's
        # partner is not held, and an in-place change of it after forward is no error.
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[0] else None)
        ctx.a_shape, ctx.b_shape = a.shape, b.shape
        return a @ b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        a_shape, b_shape = ctx.a_shape, ctx.b_shape
        # Treat vectors as matrices: a (n,) -> (1, n), b (n,) -> (n, 1), and g to match.
        a2_shape = (1, *a_shape) if len(a_shape) == 1 else a_shape
        if len(a_shape) == 1 and len(b_shape) == 1:
            g2 = np.reshape(g, (1, 1))
        elif len(a_shape) == 1:
            g2 = np.expand_dims(g, -2)
        elif len(b_shape) == 1:
            g2 = np.expand_dims(g, -1)
        else:
            g2 = g
        ga = gb = None
        if ctx.needs_input_grad[0]:
            b2 = b[:, None] if b.ndim == 1 else b
            ga = g2 @ np.swapaxes(b2, -1, -2)                      # (..., n, k) = (..., n, m) @ (..., m, k)
            ga = unbroadcast(ga, a2_shape).reshape(a_shape)
        if ctx.needs_input_grad[1]:
            a2 = a[None, :] if a.ndim == 1 else a
            b2_shape = (*b_shape, 1) if len(b_shape) == 1 else b_shape
            if len(b2_shape) == 2:
                # x (B, T, k) @ W (k, m): fold the batch into rows -> one (k, m) GEMM, no (B, k, m) temporary
                N = math.prod(a2.shape[:-1])  # (written out: reshape(-1, 0) can not infer N when k = 0)
                a_rows, g_rows = a2.reshape(N, a2.shape[-1]), g2.reshape(N, g2.shape[-1])  # (N, k), (N, m)
                gb = a_rows.T @ g_rows  # (k, N) @ (N, m) -> (k, m)
            else:
                gb = unbroadcast(np.swapaxes(a2, -1, -2) @ g2, b2_shape)  # (..., k, m)
            gb = gb.reshape(b_shape)
        return ga, gb


def matmul(a, b) -> Tensor:
    """a @ b with PyTorch/NumPy semantics; a clear error when the inner dims disagree."""
    a = a if isinstance(a, Tensor) else Tensor(a)
    b = b if isinstance(b, Tensor) else Tensor(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: both operands need at least 1 dim, got shapes {a.shape} and {b.shape}")
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise ValueError(f"matmul: a has shape {a.shape} and b has shape {b.shape}: "
                         f"a's last dim ({k_a}) must equal b's {'only' if b.ndim == 1 else 'second-to-last'} dim ({k_b})")
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"matmul: batch dims of {a.shape} and {b.shape} do not broadcast") from None
    promotion.same_dtype(a, b)  # float32 @ float64 is refused, as in PyTorch
    return MatMul.apply(a, b)


class Exp(Function):
    """exp(a);  da = g exp(a)"""
    @staticmethod
    def forward(ctx, a):
        y = np.exp(a)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class Log(Function):
    """log(a);  da = g / a"""
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with np.errstate(divide="ignore"):  # log 0 = -inf, silently, as in PyTorch (log(tril(ones)) masks)
            return np.log(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g / a


class Sqrt(Function):
    """sqrt(a);  da = g / (2 sqrt(a))"""
    @staticmethod
    def forward(ctx, a):
        y = np.sqrt(a)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g / (2 * y)


class StdFromVar(Function):
    """sqrt(v) for a variance v;  dv = g / (2 sqrt(v)), and 0 where v = 0 (PyTorch's choice: no NaN)"""
    @staticmethod
    def forward(ctx, v):
        y = np.sqrt(v)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(y == 0, 0, g / (2 * y)).astype(g.dtype, copy=False)


class Tanh(Function):
    """tanh(a);  da = g (1 - tanh(a)^2)"""
    @staticmethod
    def forward(ctx, a):
        y = np.tanh(a)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (1 - y * y)


class Sin(Function):
    """sin(a);  da = g cos(a)"""
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.sin(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * np.cos(a)


class Cos(Function):
    """cos(a);  da = -g sin(a)"""
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.cos(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return -g * np.sin(a)


class Sigmoid(Function):
    """sigmoid(a) = 1 / (1 + exp(-a));  da = g s (1 - s) = g e / (1 + e)^2 with e = exp(-|a|)"""
    @staticmethod
    def forward(ctx, a):
        # Both branches through e = exp(-|a|), which lies in (0, 1] and so never overflows:
        # sigmoid(a) = 1 / (1 + e) for a >= 0 and e / (1 + e) for a < 0. The second keeps its relative
        # accuracy far into the tail (sigmoid(-40) = 4.2e-18, where 1 - (1 - tiny) would give 0), so
        # log(sigmoid(a)) stays about a instead of -inf. The numerator, 1 or e, is max(e, a >= 0):
        # one vectorised maximum instead of a masked copy (which measured several times slower).
        e = np.exp(-np.abs(a))
        ctx.save_for_backward(e)
        return np.maximum(e, a >= 0) / (1 + e)

    @staticmethod
    def backward(ctx, g):
        (e,) = ctx.saved_tensors
        d = 1 + e
        # s (1 - s) from e, not from s: once s rounds to 1 (a > 37 in float64) s (1 - s) is 0, e / d^2 is not.
        return g * e / (d * d)


class ReLU(Function):
    """max(a, 0);  da = g [a > 0]"""
    @staticmethod
    def forward(ctx, a):
        y = np.maximum(a, 0)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        # (the 0/1 mask cast to g's float dtype first: float * float is about 1.5x faster in NumPy than
        # float * bool, which casts element by element inside the multiply; the values are identical)
        return g * (y > 0).astype(g.dtype)


class Abs(Function):
    """|a|;  da = g sign(a)"""
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.abs(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * np.sign(a)


class Log1p(Function):
    """log(1 + a), exact for tiny a;  da = g / (1 + a)"""
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.log1p(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g / (1 + a)


class Expm1(Function):
    """exp(a) - 1, exact for tiny a;  da = g exp(a) = g (y + 1)"""
    @staticmethod
    def forward(ctx, a):
        y = np.expm1(a)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (y + 1)


class Rounding(Function):
    """floor, ceil, round, trunc or sign of a (``fn``);  da = 0: a step is flat wherever it is defined"""
    @staticmethod
    def forward(ctx, a, fn):
        return fn(a)

    @staticmethod
    def backward(ctx, g):
        return np.zeros_like(g)


def _check_divisor(b: np.ndarray, op: str) -> None:
    """Integer division by zero has no answer (NumPy would return 0 with a warning)."""
    if b.dtype.kind in "biu" and not b.all():
        raise ZeroDivisionError(f"{op}: integer division by zero (the divisor holds a 0); "
                                "use float tensors to get inf/nan instead")


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b rounded toward zero; for integers, exactly (a float quotient loses int64 digits)."""
    if a.dtype.kind in "biu":
        q = np.floor_divide(a, b)
        return q + ((q < 0) & (q * b != a))  # floor went one below zero's side: step back up
    return np.trunc(a / b)


class RoundedDiv(Function):
    """a / b rounded down (mode 'floor', a // b) or toward 0 ('trunc');  da = db = 0: a step in a and b"""
    @staticmethod
    def forward(ctx, a, b, mode):
        _check_divisor(b, f"{mode} division")
        with np.errstate(divide="ignore", invalid="ignore"):  # float x // 0 is inf or nan, as in PyTorch
            return np.floor_divide(a, b) if mode == "floor" else _trunc_div(a, b)

    @staticmethod
    def backward(ctx, g):
        return (np.zeros_like(g) if ctx.needs_input_grad[0] else None,
                np.zeros_like(g) if ctx.needs_input_grad[1] else None)


class Remainder(Function):
    """a - b q with q = a // b (mode 'floor', a % b) or q = trunc(a / b) ('trunc', fmod);  da = g, db = -g q"""
    @staticmethod
    def forward(ctx, a, b, mode):
        _check_divisor(b, "remainder" if mode == "floor" else "fmod")
        ctx.mode = mode
        ctx.save_for_backward(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.remainder(a, b) if mode == "floor" else np.fmod(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.floor_divide(a, b) if ctx.mode == "floor" else _trunc_div(a, b)
        return g, (-g * q if ctx.needs_input_grad[1] else None)


class Maximum(Function):
    """max(a, b) (or min, larger=False) elementwise;  g goes to the winner, half to each on a tie (as PyTorch)"""
    @staticmethod
    def forward(ctx, a, b, larger):
        ctx.larger = larger
        ctx.save_for_backward(a, b)
        return np.maximum(a, b) if larger else np.minimum(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        a_wins = (a > b) if ctx.larger else (a < b)
        share = (a_wins + 0.5 * (a == b)).astype(g.dtype)  # a's share of g: 1, 0.5 on a tie, or 0
        return g * share, g * (1 - share)


class Flip(Function):
    """a reversed along dims;  da = g reversed back along the same dims"""
    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return np.flip(a, dims).copy()  # a copy, as in PyTorch: the result shares no memory with a

    @staticmethod
    def backward(ctx, g):
        return np.flip(g, ctx.dims)


class Roll(Function):
    """a shifted along dims with wrap-around;  da = g shifted back by -shifts"""
    @staticmethod
    def forward(ctx, a, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        return np.roll(a, shifts, axis=dims)

    @staticmethod
    def backward(ctx, g):
        return np.roll(g, np.negative(ctx.shifts), axis=ctx.dims)


class Einsum(Function):
    """einsum(spec, *arrays), spec explicit ('bij,bjk->bik');  d(operand) = einsum of g with the other
    operands, back to that operand's letters; a letter summed in that operand alone is broadcast back"""
    @staticmethod
    def forward(ctx, *arrays, spec):
        ctx.spec = spec
        ctx.save_for_backward(*arrays)
        return np.einsum(spec, *arrays, optimize=len(arrays) > 2)

    @staticmethod
    def backward(ctx, g):
        arrays = ctx.saved_tensors
        inputs, out = ctx.spec.split("->")
        letters = inputs.split(",")
        grads = []
        for i, (mine, a) in enumerate(zip(letters, arrays)):
            if not ctx.needs_input_grad[i]:
                grads.append(None)
                continue
            others = [j for j in range(len(arrays)) if j != i]
            elsewhere = set(out).union(*(letters[j] for j in others))
            kept = "".join(c for c in mine if c in elsewhere)  # e.g. 'ij,jk->ik' gives dA over 'ij'
            spec = ",".join([out] + [letters[j] for j in others]) + "->" + kept
            gi = np.einsum(spec, g, *(arrays[j] for j in others), optimize=len(arrays) > 1)
            # a letter only this operand has (as i in 'ij->j') was summed: each entry gets the same g
            sizes = [n if c in elsewhere else 1 for c, n in zip(mine, a.shape)]
            grads.append(np.broadcast_to(gi.reshape(sizes), a.shape))
        return tuple(grads)


class Cast(Function):
    """a.astype(dtype);  da = g cast back"""
    @staticmethod
    def forward(ctx, a, dtype):
        ctx.in_dtype = a.dtype
        return a.astype(dtype)

    @staticmethod
    def backward(ctx, g):
        return g.astype(ctx.in_dtype)


class Contiguous(Function):
    """a copied into C order;  da = g"""
    @staticmethod
    def forward(ctx, a):
        return np.array(a, order="C", copy=True)

    @staticmethod
    def backward(ctx, g):
        return g


class Sum(Function):
    """sum(a, dim);  da = g broadcast back over the summed dims"""
    @staticmethod
    def forward(ctx, a, dim, keepdim):
        ctx.shape, ctx.dim, ctx.keepdim = a.shape, dim, keepdim
        return np.asarray(a.sum(axis=dim, keepdims=keepdim))

    @staticmethod
    def backward(ctx, g):
        if ctx.dim is not None and not ctx.keepdim:  # put the summed axes back as size 1
            g = np.expand_dims(g, ctx.dim)
        return np.broadcast_to(g, ctx.shape)


class Amax(Function):
    """max(a, dim) (sign=1) or min (sign=-1);  da = g split evenly among the tied extremes"""
    @staticmethod
    def forward(ctx, a, dim, keepdim, sign):
        if a.size == 0:
            raise ValueError("amax/amin of an empty tensor")
        m = a.max(axis=dim, keepdims=True) if sign > 0 else a.min(axis=dim, keepdims=True)
        hit = a == m
        ctx.save_for_backward(hit / hit.sum(axis=dim, keepdims=True))
        ctx.dim, ctx.keepdim = dim, keepdim
        return m if keepdim else (m.squeeze(axis=dim) if dim is not None else m.reshape(()))

    @staticmethod
    def backward(ctx, g):
        (share,) = ctx.saved_tensors
        if not ctx.keepdim:
            g = np.expand_dims(g, ctx.dim) if ctx.dim is not None else g.reshape((1,) * share.ndim)
        return (g * share).astype(g.dtype, copy=False)


class CumSum(Function):
    """y_i = sum_{j <= i} a_j along dim;  da_j = sum_{i >= j} g_i (a cumsum of g run backwards)"""
    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        return np.cumsum(a, axis=dim)

    @staticmethod
    def backward(ctx, g):
        d = ctx.dim
        return np.flip(np.cumsum(np.flip(g, axis=d), axis=d), axis=d)


class Clamp(Function):
    """clip(a, lo, hi);  da = g [lo <= a <= hi]"""
    @staticmethod
    def forward(ctx, a, lo, hi):
        inside = np.ones(a.shape, dtype=bool)
        if lo is not None:
            inside &= a >= lo
        if hi is not None:
            inside &= a <= hi
        ctx.save_for_backward(inside)
        y = np.clip(a, lo, hi)
        return y.astype(a.dtype, copy=False) if a.dtype.kind == "f" else y

    @staticmethod
    def backward(ctx, g):
        (inside,) = ctx.saved_tensors
        return g * inside


def _check_all_masked(m: np.ndarray, dim: int, op: str, first_row: int = 0) -> None:
    """A row of only -inf has no softmax (0/0); a row with NaN or +inf has none either.
    Say which rows instead of returning NaN. (``m`` is the row max: one cheap check covers both.)

    The one NaN rule of every softmax in tinyattn: F.softmax, log_softmax, F.attention, sdpa, flash
    attention and so every Attention backend raise here, naming the rows (at most five).
    ``first_row``: where ``m``'s rows start along the last row axis (flash attention checks one tile of
    queries at a time), so the rows named are those of the whole input."""
    if np.isfinite(m).all():
        return
    row_max = np.squeeze(m, axis=dim)

    def named(bad: np.ndarray) -> list[tuple[int, ...]]:
        found = np.argwhere(bad)[:5]
        if found.shape[1]:  # (a 1-D input has one row, with no index)
            found[:, -1] += first_row
        return [tuple(int(i) for i in r) for r in found]

    if np.isneginf(row_max).any():
        rows = named(np.isneginf(row_max))
        raise ValueError(f"{op}: every entry is -inf in row(s) {rows} (along dim {dim}); "
                         "a fully masked row has no softmax. Keep at least one key per query.")
    rows = named(~np.isfinite(row_max))
    raise ValueError(f"{op}: row(s) {rows} (along dim {dim}) contain NaN or +inf, so their softmax is NaN; "
                     "look for an overflow or a division by zero upstream")


class Softmax(Function):
    """y = exp(a - max) / sum exp(a - max);  da = y (g - sum(g y))"""
    @staticmethod
    def forward(ctx, a, dim):
        # Subtracting the row max changes nothing mathematically (it cancels) but keeps exp() <= 1,
        # so logits of 1e4 do not overflow to inf.
        m = max_keepdims(a, dim)
        _check_all_masked(m, dim, "softmax")
        e = np.exp(a - m)
        e /= e.sum(axis=dim, keepdims=True)
        ctx.save_for_backward(e)
        ctx.dim = dim
        return e

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        gy = g * y
        return gy - y * gy.sum(axis=ctx.dim, keepdims=True)


class LogSoftmax(Function):
    """y = a - max - log sum exp(a - max);  da = g - softmax(a) sum(g)"""
    @staticmethod
    def forward(ctx, a, dim):
        m = max_keepdims(a, dim)
        _check_all_masked(m, dim, "log_softmax")
        shifted = a - m
        y = shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g - np.exp(y) * g.sum(axis=ctx.dim, keepdims=True)


class Reshape(Function):
    """a.reshape(shape);  da = g.reshape(a.shape)"""
    @staticmethod
    def forward(ctx, a, shape):
        ctx.in_shape = a.shape
        return a.reshape(shape)

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.in_shape)


class Permute(Function):
    """a.transpose(axes);  da = g.transpose(inverse axes)"""
    @staticmethod
    def forward(ctx, a, axes):
        ctx.axes = axes
        return a.transpose(axes)

    @staticmethod
    def backward(ctx, g):
        return g.transpose(np.argsort(ctx.axes))


class Expand(Function):
    """broadcast_to(a, shape);  da = g summed over the stretched dims (the engine's unbroadcast)"""
    @staticmethod
    def forward(ctx, a, shape):
        return np.broadcast_to(a, shape)

    @staticmethod
    def backward(ctx, g):
        return g


class RepeatInterleave(Function):
    """np.repeat(a, n, dim);  da = g summed over each group of n copies"""
    @staticmethod
    def forward(ctx, a, repeats, dim):
        ctx.repeats, ctx.dim = repeats, dim
        return np.repeat(a, repeats, axis=dim)

    @staticmethod
    def backward(ctx, g):
        n, d = ctx.repeats, ctx.dim
        # (..., size*n, ...) -> (..., size, n, ...): copies of one element sit next to each other
        return g.reshape(g.shape[:d] + (g.shape[d] // n, n) + g.shape[d + 1:]).sum(axis=d + 1)


class Repeat(Function):
    """np.tile(a, reps) (PyTorch's repeat);  da = g summed over the copies"""
    @staticmethod
    def forward(ctx, a, reps):
        ctx.in_shape = a.shape
        return np.tile(a, reps)

    @staticmethod
    def backward(ctx, g):
        if g.size == 0:  # a size-0 input or a repeat count of 0: nothing flows back
            return np.zeros(ctx.in_shape, dtype=g.dtype)
        shape = (1,) * (g.ndim - len(ctx.in_shape)) + ctx.in_shape  # the input, with the new leading dims
        # (r0 * s0, r1 * s1, ...) -> (r0, s0, r1, s1, ...): copy j of dim i is block j along axis 2i
        split = g.reshape([n for r_s in zip((gs // s for gs, s in zip(g.shape, shape)), shape) for n in r_s])
        return split.sum(axis=tuple(range(0, split.ndim, 2))).reshape(ctx.in_shape)


def _is_advanced(idx) -> bool:
    items = idx if isinstance(idx, tuple) else (idx,)
    return any(isinstance(i, np.ndarray) and i.dtype != bool for i in items)


class GetItem(Function):
    """a[idx];  da = zeros with g scattered back (repeated indices accumulate)"""
    @staticmethod
    def forward(ctx, a, idx):
        ctx.shape, ctx.dtype, ctx.idx = a.shape, a.dtype, idx
        return np.asarray(a[idx])

    @staticmethod
    def backward(ctx, g):
        out = np.zeros(ctx.shape, dtype=g.dtype)
        if _is_advanced(ctx.idx):
            np.add.at(out, ctx.idx, g)  # x[[0, 0]] sends two gradients to x[0]: add, don't overwrite
        else:
            out[ctx.idx] = g
        return out


class SetItem(Function):
    """a[index] = v written into a's own memory (x[i] = v in the graph);  da = g with g[index] = 0, dv = g[index]"""
    @staticmethod
    def forward(ctx, a, v, index):
        ctx.index = index
        _write_at(a, index, v)
        return a

    @staticmethod
    def backward(ctx, g):
        da = None
        if ctx.needs_input_grad[0]:
            da = np.array(g)  # a copy: the written entries came from v, not from a
            _write_at(da, ctx.index, 0)
        return da, (_read_at(g, ctx.index) if ctx.needs_input_grad[1] else None)


class MaskedFill(Function):
    """where(mask, value, a);  da = g where mask is False, 0 where it was filled"""
    @staticmethod
    def forward(ctx, a, mask, value):
        ctx.save_for_backward(mask)
        return np.where(mask, np.asarray(value, dtype=a.dtype), a)

    @staticmethod
    def backward(ctx, g):
        (mask,) = ctx.saved_tensors
        return np.where(mask, 0, g).astype(g.dtype, copy=False)


class Where(Function):
    """where(cond, a, b);  da = g [cond], db = g [not cond]"""
    @staticmethod
    def forward(ctx, a, b, cond):
        ctx.save_for_backward(cond)
        return np.where(cond, a, b)

    @staticmethod
    def backward(ctx, g):
        (c,) = ctx.saved_tensors
        return (np.where(c, g, 0).astype(g.dtype, copy=False) if ctx.needs_input_grad[0] else None,
                np.where(c, 0, g).astype(g.dtype, copy=False) if ctx.needs_input_grad[1] else None)


class Cat(Function):
    """concatenate(tensors, dim);  each input gets its slice of g"""
    @staticmethod
    def forward(ctx, *arrays, dim):
        ctx.dim = dim
        ctx.splits = np.cumsum([x.shape[dim] for x in arrays])[:-1]
        return np.concatenate(arrays, axis=dim)

    @staticmethod
    def backward(ctx, g):
        return tuple(np.split(g, ctx.splits, axis=ctx.dim))


class Stack(Function):
    """stack(tensors, dim);  input i gets g.take(i, dim)"""
    @staticmethod
    def forward(ctx, *arrays, dim):
        ctx.dim = dim
        return np.stack(arrays, axis=dim)

    @staticmethod
    def backward(ctx, g):
        return tuple(np.moveaxis(g, ctx.dim, 0))


class Tri(Function):
    """tril/triu(a, k);  da = the same triangle of g"""
    @staticmethod
    def forward(ctx, a, k, upper):
        ctx.k, ctx.upper = k, upper
        return np.triu(a, k) if upper else np.tril(a, k)

    @staticmethod
    def backward(ctx, g):
        return np.triu(g, ctx.k) if ctx.upper else np.tril(g, ctx.k)
