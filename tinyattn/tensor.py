"""The engine: a NumPy array that remembers how it was made, and reverse-mode autograd over it.

Read it in this order:

1. ``Function`` / ``Context``: an op is a small class with ``forward(ctx, *arrays)`` and
   ``backward(ctx, grad)`` side by side, exactly the shape of ``torch.autograd.Function``.
2. ``unbroadcast``: the ONE place where a gradient is summed back to its input's shape.
3. ``Tensor.backward``: an iterative topological sort, then the chain rule, node by node.
4. The ops, each next to its derivative.

This module imports nothing from the package (everything else imports it).
"""
from __future__ import annotations

import contextlib
import math
from typing import Any, NamedTuple

import numpy as np

float32 = np.float32
float64 = np.float64

# ----------------------------------------------------------------------------------------------
# Global state: default dtype, grad mode, the one random generator.
# ----------------------------------------------------------------------------------------------
_default_dtype: type = np.float32
_grad_enabled: bool = True
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


def is_grad_enabled() -> bool:
    return _grad_enabled


@contextlib.contextmanager
def _set_grad(mode: bool):
    global _grad_enabled
    prev, _grad_enabled = _grad_enabled, mode
    try:
        yield
    finally:
        _grad_enabled = prev


def no_grad():
    """Context manager (or decorator): ops inside record no graph. Use for evaluation and updates."""
    return _set_grad(False)


def enable_grad():
    """Context manager that turns graph recording back on (e.g. inside ``no_grad``)."""
    return _set_grad(True)


# ----------------------------------------------------------------------------------------------
# Function: an op with its forward and its backward side by side.
# ----------------------------------------------------------------------------------------------
class Context:
    """What ``forward`` leaves for ``backward``: saved arrays and any attributes it sets."""

    __slots__ = ("saved_tensors", "needs_input_grad", "__dict__")

    def __init__(self, needs_input_grad: tuple):
        self.saved_tensors: tuple = ()
        self.needs_input_grad = needs_input_grad

    def save_for_backward(self, *arrays) -> None:
        self.saved_tensors = arrays


class Function:
    """Base class of every op. Subclasses define ``forward`` and ``backward`` on NumPy arrays.

    ``Op.apply(*inputs, **consts)`` wraps the inputs, runs ``forward`` on their arrays and, when a
    gradient is needed, links the result into the graph so ``backward`` can replay it.
    """

    @staticmethod
    def forward(ctx: Context, *args: np.ndarray, **kwargs) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray):  # pragma: no cover
        raise NotImplementedError

    @classmethod
    def apply(cls, *inputs, **kwargs) -> "Tensor":
        # (one plain loop: this runs for every op, and on small arrays its cost is the engine's overhead)
        tensors, arrays, needs = [], [], []
        for x in inputs:
            if not isinstance(x, Tensor):
                x = Tensor(x)
            tensors.append(x)
            arrays.append(x.data)
            needs.append(x._rg)
        ctx = Context(tuple(needs))
        y = cls.forward(ctx, *arrays, **kwargs)
        out = Tensor.__new__(Tensor)  # (Tensor._make, inlined: this line runs for every op)
        out.data = y if type(y) is np.ndarray else np.asarray(y)
        out.grad, out._retain = None, False
        if _grad_enabled and True in needs:  # record the op only if some input needs a gradient
            out._rg, out._op, out._ctx, out._parents = True, cls, ctx, tensors
        else:
            out._rg, out._op, out._ctx, out._parents = False, None, None, []
        return out


def unbroadcast(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum ``grad`` over the axes that broadcasting stretched, so it has ``shape`` again.

    Broadcasting copies an input along new leading axes and along its size-1 axes; each copy sent a
    gradient back, and the chain rule adds them up. This is the only place in the engine that does it.
    """
    if grad.shape == shape:
        return grad
    extra = grad.ndim - len(shape)
    if extra > 0:  # leading axes the input never had
        grad = grad.sum(axis=tuple(range(extra)))
    if extra >= 0 and grad.ndim == len(shape):
        axes = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
        if axes:  # axes where the input had size 1
            grad = grad.sum(axis=axes, keepdims=True)
    return grad


def max_keepdims(a: np.ndarray, axis: int) -> np.ndarray:
    """``a.max(axis, keepdims=True)``: the same numbers, several times faster when ``axis`` is last and short.

    NumPy reduces a short contiguous last axis row by row, without SIMD: for a (4096, 16) array that
    is about 10x slower than the elementwise maximum of the 16 columns of a transposed copy, which is
    what this does for last axes of up to 32 entries (softmax over a few classes, or over the keys
    of a short sequence). A maximum does not depend on the order it is taken in.
    """
    n = a.shape[axis] if a.ndim else 0
    if 1 < n <= 32 and axis in (-1, a.ndim - 1) and a.size >= 16 * n:
        cols = np.ascontiguousarray(a.reshape(-1, n).T)  # (n, rows): row i of `a` is column i here
        return cols.max(axis=0).reshape(*a.shape[:-1], 1)  # (rows,) -> (..., 1)
    return a.max(axis=axis, keepdims=True)


# ----------------------------------------------------------------------------------------------
# Tensor
# ----------------------------------------------------------------------------------------------
def _as_array(data, dtype=None) -> np.ndarray:
    """Apply the dtype rules: Python floats -> default dtype, NumPy floats kept, ints stay ints."""
    if isinstance(data, Tensor):
        arr = data.data
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
    if not -ndim <= dim < max(ndim, 1):
        raise IndexError(f"{op}: dim={dim} is out of range for a tensor with {ndim} dims")
    return int(dim) % max(ndim, 1)


def _norm_dims(dim, ndim: int, op: str):
    if dim is None:
        return None
    if isinstance(dim, (tuple, list)):
        return tuple(_norm_dim(d, ndim, op) for d in dim)
    return _norm_dim(dim, ndim, op)


def _n_reduced(shape: tuple, dim) -> int:
    """How many elements a reduction over ``dim`` (None = all, an int or a tuple of normalized dims) combines."""
    if dim is None:
        return math.prod(shape)
    return math.prod(shape[i] for i in (dim if isinstance(dim, tuple) else (dim,)))


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


class Tensor:
    """An n-dimensional array (``.data``) with an optional gradient (``.grad``) and the op that made it."""

    __slots__ = ("data", "grad", "_rg", "_op", "_ctx", "_parents", "_retain", "__weakref__")
    __array_priority__ = 1000  # make `ndarray + Tensor` call Tensor.__radd__
    __array_ufunc__ = None

    def __init__(self, data: Any, requires_grad: bool = False, dtype=None):
        self.data: np.ndarray = _as_array(data, dtype)
        self.grad: np.ndarray | None = None
        self._op = None
        self._ctx = None
        self._parents: list = []
        self._retain = False
        self._rg = False
        if requires_grad:
            self.requires_grad_(True)

    @classmethod
    def _make(cls, arr: np.ndarray) -> "Tensor":
        """Wrap an op's output array without re-checking it (the hot path)."""
        t = Tensor.__new__(Tensor)
        t.data = arr if isinstance(arr, np.ndarray) else np.asarray(arr)
        t.grad, t._op, t._ctx, t._parents, t._retain, t._rg = None, None, None, [], False, False
        return t

    @property
    def requires_grad(self) -> bool:
        """Whether backward() computes a gradient for this tensor (checked on assignment: floats only)."""
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, flag: bool = True) -> "Tensor":
        if flag and not np.issubdtype(self.data.dtype, np.floating):
            raise TypeError(f"requires_grad=True needs floating-point data, got dtype {self.data.dtype}; "
                            "integer tensors (token ids, indices) can not require grad")
        self._rg = bool(flag)
        return self

    # --- attributes ---------------------------------------------------------------------------
    @property
    def shape(self) -> tuple:
        return self.data.shape

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def is_leaf(self) -> bool:
        return self._op is None

    @property
    def T(self) -> "Tensor":
        """All dims reversed (the matrix transpose for 2-D tensors)."""
        return self.permute(*range(self.ndim - 1, -1, -1))

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[_norm_dim(dim, self.ndim, "size")]

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return int(self.data.size)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def item(self) -> float:
        if self.data.size != 1:
            raise ValueError(f"item() needs a tensor with one element, got shape {self.shape}")
        return self.data.item()

    def numpy(self) -> np.ndarray:
        return self.data

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        """An integer tensor with one element works as a Python index: ``data[i:i + T]``, ``range(n)``."""
        if self.data.size != 1 or self.data.dtype.kind not in "iu":
            raise TypeError(f"only an integer tensor with one element can be used as an index, "
                            f"got dtype {self.dtype} and shape {self.shape}")
        return int(self.data.item())

    def __format__(self, spec: str) -> str:
        """``f"{loss:.4f}"`` formats a one-element tensor like its number (as PyTorch)."""
        return format(self.item(), spec) if spec and self.data.size == 1 else format(str(self), spec)

    def __array__(self, dtype=None, copy=None):
        return self.data if dtype is None else self.data.astype(dtype)

    def tolist(self):
        return self.data.tolist()

    def detach(self) -> "Tensor":
        """The same data, cut from the graph."""
        return Tensor._make(self.data)

    def retain_grad(self) -> None:
        """Keep ``.grad`` on this non-leaf tensor after backward (handy for inspecting a graph)."""
        self._retain = True

    def zero_(self) -> "Tensor":
        self.data[...] = 0
        return self

    def float(self) -> "Tensor":
        return self if self.dtype == np.float32 else Cast.apply(self, dtype=np.float32)

    def double(self) -> "Tensor":
        return self if self.dtype == np.float64 else Cast.apply(self, dtype=np.float64)

    def to(self, dtype) -> "Tensor":
        """Cast to ``dtype``; ``to('cpu')`` is accepted and changes nothing (NumPy is the device)."""
        if isinstance(dtype, str) and dtype.split(":")[0] in ("cpu", "cuda", "mps"):
            if dtype.split(":")[0] != "cpu":
                raise ValueError(f"Tensor.to({dtype!r}): tinyattn runs on the CPU with NumPy; use 'cpu' (or nothing)")
            return self
        dt = np.dtype(dtype)
        if self.dtype == dt:
            return self
        if dt.kind not in "fc":  # an integer/bool copy leaves the graph, like .long() (ints can not require grad)
            return Tensor._make(self.data.astype(dt))
        return Cast.apply(self, dtype=dt.type)

    def cpu(self) -> "Tensor":
        """This tensor (it already lives in NumPy's memory)."""
        return self

    @property
    def device(self) -> str:
        return "cpu"

    def bool(self) -> "Tensor":
        return Tensor._make(self.data.astype(bool))

    def long(self) -> "Tensor":
        return Tensor._make(self.data.astype(np.int64))

    def contiguous(self) -> "Tensor":
        """A C-ordered copy if needed. NumPy reshapes anything, so this only matters for speed."""
        return self if self.data.flags.c_contiguous else Contiguous.apply(self)

    def clone(self) -> "Tensor":
        return Contiguous.apply(self)

    def __repr__(self) -> str:
        body = np.array2string(self.data, separator=", ", precision=4, prefix="tensor(")
        extra = ""
        if self.data.dtype not in (np.dtype(_default_dtype), np.dtype(np.int64), np.dtype(bool)):
            extra += f", dtype={self.data.dtype}"
        if self._op is not None:
            extra += f", grad_fn=<{self._op.__name__}Backward>"
        elif self.requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        if self.data.size != 1:
            raise ValueError(f"the truth value of a tensor with shape {self.shape} is ambiguous; use .any() or .all()")
        return bool(self.data)

    def any(self) -> bool:
        return bool(self.data.any())

    def all(self) -> bool:
        return bool(self.data.all())

    # --- autograd -----------------------------------------------------------------------------
    def backward(self, gradient=None) -> None:
        """Fill ``.grad`` of every leaf that requires grad with d(self)/d(leaf), contracted with ``gradient``.

        1. Topologically sort the graph (iteratively: a chain of 20,000 ops must not recurse 20,000 deep).
        2. Walk it from the output back, applying each op's backward (the chain rule) and summing the
           gradients of nodes used more than once.
        """
        if not self._rg:
            raise RuntimeError("backward(): this tensor does not require grad and has no graph "
                               "(did you create it under no_grad(), or forget requires_grad=True?)")
        if gradient is None:
            if self.data.size != 1:
                raise ValueError(f"backward() without a gradient needs a scalar output, got shape {self.shape}; "
                                 "reduce it first (e.g. loss.mean()) or pass gradient= of that shape")
            seed = np.array(1, dtype=self.data.dtype)  # d(self)/d(self) = 1
            if seed.shape != self.data.shape:  # (1,) or (1, 1) rather than a 0-d scalar
                seed = seed.reshape(self.data.shape)
        else:
            # Not copied: no backward writes into the gradient it receives, and `handed` below makes sure
            # the caller's array is never stored as a .grad (a later += would write into it).
            seed = np.asarray(gradient.data if isinstance(gradient, Tensor) else gradient, dtype=self.data.dtype)
            if seed.shape != self.shape:
                raise ValueError(f"backward(gradient): gradient has shape {seed.shape} but the output has shape {self.shape}")

        # 1. topological order: a node comes after everything it was computed from. A depth-first
        #    walk with an explicit stack of (node, iterator over its parents): a node is appended once
        #    all its parents are, and no Python recursion is involved. (Tensors hash by identity, so
        #    they can be set members and dict keys directly.)
        order, visited, stack = [], {self}, [(self, iter(self._parents))]
        while stack:
            node, parents = stack[-1]
            for p in parents:
                if p._rg and p not in visited:
                    visited.add(p)
                    if p._parents:
                        stack.append((p, iter(p._parents)))  # go deeper first; come back to `node` later
                        break
                    order.append(p)  # a leaf: nothing below it to wait for
            else:  # every parent of `node` is in `order`
                stack.pop()
                order.append(node)

        # 2. chain rule, from the output back to the leaves.
        grads = {self: seed}
        handed: set = {id(seed if seed.base is None else seed.base)}  # arrays already stored as some .grad
        # in this pass, or not ours to store: never store one twice (seeded with the caller's gradient)
        summed: set = set()  # sums made below: only these may be added into in place
        for node in reversed(order):
            g = grads.pop(node, None)
            if g is None:
                continue
            if summed:  # (g leaves the dict here, so its id could be reused by a new array)
                summed.discard(id(g))
            op = node._op
            if op is None or node._retain:  # a leaf (or a kept non-leaf): accumulate with +=
                g = node._accumulate(g, handed)
                if op is None:
                    continue
            in_grads = op.backward(node._ctx, g)
            if type(in_grads) is not tuple:
                in_grads = (in_grads,)
            for parent, pg in zip(node._parents, in_grads):
                if pg is None or not parent._rg:
                    continue
                if type(pg) is not np.ndarray:  # a NumPy scalar (e.g. from a full reduction)
                    pg = np.asarray(pg)
                shape = parent.data.shape
                if pg.shape != shape:  # (checked first: most gradients already have the input's shape)
                    pg = unbroadcast(pg, shape)
                    if pg.shape != shape:
                        i = next(i for i, p in enumerate(node._parents) if p is parent)
                        raise RuntimeError(f"{op.__name__}.backward returned a gradient of shape {pg.shape} "
                                           f"for input {i}, which has shape {shape}")
                prev = grads.get(parent)
                if prev is None:
                    grads[parent] = pg
                elif id(prev) in summed and prev.dtype == pg.dtype:  # our own earlier sum: add in place
                    prev += pg
                else:  # a node used twice gets both gradients, in a new array (prev may be shared)
                    summed.discard(id(prev))
                    total = prev + pg
                    if type(total) is not np.ndarray:  # 0-d + 0-d gives a NumPy scalar, which += can't update
                        total = np.asarray(total)
                    grads[parent] = total
                    summed.add(id(total))

    def _accumulate(self, g: np.ndarray, handed: set) -> np.ndarray:
        """``self.grad += g``, or on the first gradient, keep ``g`` itself when that is safe; returns g in self's dtype.

        A fresh array that nothing else holds can be kept as is; anything else is copied, so a later
        `+=` never writes into another tensor's gradient. (By convention a backward returns new arrays
        or views of `grad`, never a saved array.) ``handed`` holds the ids of arrays already stored as
        some ``.grad`` in this backward pass.
        """
        if g.dtype != self.data.dtype:
            g = g.astype(self.data.dtype)
        if self.grad is not None:
            self.grad += g
            return g
        owner = g if g.base is None else g.base
        fresh = g.flags.writeable and owner.flags.owndata and id(owner) not in handed
        self.grad = g if fresh else g.copy()
        handed.add(id(owner) if fresh else id(self.grad))
        return g

    # --- arithmetic (broadcasting like NumPy) -------------------------------------------------
    def _lift(self, other) -> "Tensor":
        """Python numbers take this tensor's float dtype, so `x32 * 0.5` stays float32."""
        if isinstance(other, Tensor):
            return other
        if isinstance(other, (int, float)) and not isinstance(other, bool) and np.issubdtype(self.dtype, np.floating):
            return Tensor._make(np.asarray(other, dtype=self.dtype))
        return Tensor(other)

    def _binary(self, op, other, reverse=False) -> "Tensor":
        other = self._lift(other)
        a, b = (other, self) if reverse else (self, other)
        a, b = _promote(a, b, op)
        try:
            return op.apply(a, b)
        except ValueError:
            try:
                np.broadcast_shapes(a.shape, b.shape)
            except ValueError:
                raise ValueError(f"{op.__name__.lower()}: shapes {a.shape} and {b.shape} do not broadcast "
                                 "(sizes must match or be 1, aligned from the right)") from None
            raise

    def __add__(self, o): return self._binary(Add, o)
    def __radd__(self, o): return self._binary(Add, o, True)
    def __sub__(self, o): return self._binary(Sub, o)
    def __rsub__(self, o): return self._binary(Sub, o, True)
    def __mul__(self, o): return self._binary(Mul, o)
    def __rmul__(self, o): return self._binary(Mul, o, True)
    def __truediv__(self, o): return self._binary(Div, o)
    def __rtruediv__(self, o): return self._binary(Div, o, True)
    def __pow__(self, o): return self._binary(Pow, o)
    def __rpow__(self, o): return self._binary(Pow, o, True)
    def __neg__(self): return Neg.apply(self)
    def __matmul__(self, o): return matmul(self, o)
    def __rmatmul__(self, o): return matmul(o, self)

    # comparisons: bool tensors, outside the graph
    def _cmp(self, other, fn) -> "Tensor":
        other = other.data if isinstance(other, Tensor) else other
        return Tensor._make(fn(self.data, other))

    def __eq__(self, o): return self._cmp(o, np.equal)  # type: ignore[override]
    def __ne__(self, o): return self._cmp(o, np.not_equal)  # type: ignore[override]
    def __lt__(self, o): return self._cmp(o, np.less)
    def __le__(self, o): return self._cmp(o, np.less_equal)
    def __gt__(self, o): return self._cmp(o, np.greater)
    def __ge__(self, o): return self._cmp(o, np.greater_equal)
    def __invert__(self): return Tensor._make(~self.data)
    def __and__(self, o): return self._cmp(o, np.logical_and)
    def __or__(self, o): return self._cmp(o, np.logical_or)

    def matmul(self, other) -> "Tensor":
        return matmul(self, other)

    # --- elementwise --------------------------------------------------------------------------
    def exp(self): return Exp.apply(self)
    def log(self): return Log.apply(self)
    def sqrt(self): return Sqrt.apply(self)
    def tanh(self): return Tanh.apply(self)
    def sigmoid(self): return Sigmoid.apply(self)
    def relu(self): return ReLU.apply(self)
    def abs(self): return Abs.apply(self)

    def masked_fill(self, mask, value: float) -> "Tensor":
        """Where ``mask`` is True, put ``value``; elsewhere keep self. (PyTorch's meaning.)"""
        m = np.asarray(mask.data if isinstance(mask, Tensor) else mask)
        if m.dtype != bool:
            raise TypeError(f"masked_fill expects a bool mask (True = fill), got dtype {m.dtype}; "
                            "build one with a comparison, e.g. mask == 0")
        try:
            if np.broadcast_shapes(m.shape, self.shape) != self.shape:
                raise ValueError
        except ValueError:
            raise ValueError(f"masked_fill: mask of shape {m.shape} does not broadcast to the tensor's shape {self.shape}") from None
        v = value.item() if isinstance(value, Tensor) else value
        if self.dtype.kind in "iub" and isinstance(v, float) and not float(v).is_integer():
            raise TypeError(f"masked_fill: a {self.dtype} tensor can not hold {v}; make the scores float first "
                            "(an integer tensor has no -inf)")
        return MaskedFill.apply(self, mask=m, value=value)

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
        order = np.argsort(self.data, axis=d, kind="stable")  # ascending along d
        if largest:
            order = np.flip(order, axis=d)
        indices = np.take(order, np.arange(k), axis=d)  # the first k along d
        return MinMax(self.gather(d, indices), Tensor._make(indices))

    # --- reductions ---------------------------------------------------------------------------
    def sum(self, dim=None, keepdim: bool = False) -> "Tensor":
        return Sum.apply(self, dim=_norm_dims(dim, self.ndim, "sum"), keepdim=keepdim)

    def mean(self, dim=None, keepdim: bool = False) -> "Tensor":
        d = _norm_dims(dim, self.ndim, "mean")
        n = _n_reduced(self.shape, d)
        return Sum.apply(self, dim=d, keepdim=keepdim) * (1.0 / max(n, 1))

    def var(self, dim=None, keepdim: bool = False, correction: int = 1) -> "Tensor":
        """sum((x - mean)^2) / (N - correction), as PyTorch (correction=1 is the unbiased estimate)."""
        d = _norm_dims(dim, self.ndim, "var")
        n = _n_reduced(self.shape, d)
        if n - correction <= 0:
            raise ValueError(f"var: {n} element(s) with correction={correction} leaves no degrees of freedom")
        centered = self - self.mean(dim=d, keepdim=True)
        return (centered * centered).sum(dim=d, keepdim=keepdim) * (1.0 / (n - correction))

    def amax(self, dim=None, keepdim: bool = False) -> "Tensor":
        return Amax.apply(self, dim=_norm_dims(dim, self.ndim, "amax"), keepdim=keepdim, sign=1.0)

    def amin(self, dim=None, keepdim: bool = False) -> "Tensor":
        return Amax.apply(self, dim=_norm_dims(dim, self.ndim, "amin"), keepdim=keepdim, sign=-1.0)

    def max(self, dim: int | None = None, keepdim: bool = False):
        """The largest element (whole tensor); with ``dim``, PyTorch's ``(values, indices)`` pair along it."""
        if dim is None:
            return self.amax()
        return MinMax(self.amax(dim, keepdim), self.argmax(dim, keepdim))

    def min(self, dim: int | None = None, keepdim: bool = False):
        """The smallest element (whole tensor); with ``dim``, PyTorch's ``(values, indices)`` pair along it."""
        if dim is None:
            return self.amin()
        return MinMax(self.amin(dim, keepdim), self.argmin(dim, keepdim))

    def std(self, dim=None, keepdim: bool = False, correction: int = 1) -> "Tensor":
        """sqrt(var(dim, correction)), as PyTorch."""
        return self.var(dim=dim, keepdim=keepdim, correction=correction).sqrt()

    def argmin(self, dim=None, keepdim: bool = False) -> "Tensor":
        d = _norm_dims(dim, self.ndim, "argmin")
        return Tensor._make(np.argmin(self.data, axis=d, keepdims=keepdim))

    def argmax(self, dim=None, keepdim: bool = False) -> "Tensor":
        d = _norm_dims(dim, self.ndim, "argmax")
        return Tensor._make(np.argmax(self.data, axis=d, keepdims=keepdim))

    def softmax(self, dim: int) -> "Tensor":
        return Softmax.apply(self, dim=_norm_dim(dim, self.ndim, "softmax"))

    def log_softmax(self, dim: int) -> "Tensor":
        return LogSoftmax.apply(self, dim=_norm_dim(dim, self.ndim, "log_softmax"))

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
        return self.reshape(*self.shape[:s], -1, *self.shape[e + 1:])

    def transpose(self, dim0: int, dim1: int) -> "Tensor":
        d0, d1 = _norm_dim(dim0, self.ndim, "transpose"), _norm_dim(dim1, self.ndim, "transpose")
        axes = list(range(self.ndim))
        axes[d0], axes[d1] = axes[d1], axes[d0]
        return Permute.apply(self, axes=tuple(axes))

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
        if not isinstance(repeats, (int, np.integer)) or repeats < 1:
            raise ValueError(f"repeat_interleave: repeats must be a positive int, got {repeats!r}")
        if dim is None:
            return self.flatten().repeat_interleave(repeats, 0)
        return RepeatInterleave.apply(self, repeats=int(repeats), dim=_norm_dim(dim, self.ndim, "repeat_interleave"))

    def split(self, split_size, dim: int = 0) -> tuple:
        """Pieces of ``split_size`` along dim (the last may be smaller), or of the sizes in a list (as PyTorch)."""
        d = _norm_dim(dim, self.ndim, "split")
        n = self.shape[d]
        if isinstance(split_size, (int, np.integer)) and not isinstance(split_size, bool):
            if split_size <= 0:
                raise ValueError(f"split: split_size must be a positive int, got {split_size}")
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
        if isinstance(chunks, bool) or not isinstance(chunks, (int, np.integer)) or chunks <= 0:
            raise ValueError(f"chunk: chunks must be a positive int, got {chunks!r}")
        n = self.shape[_norm_dim(dim, self.ndim, "chunk")]
        return self.split(max(1, -(-n // chunks)), dim)

    def __getitem__(self, idx) -> "Tensor":
        idx = _index_arg(idx)
        try:
            return GetItem.apply(self, idx=idx)
        except IndexError as e:
            raise IndexError(f"indexing a tensor of shape {self.shape}: {e}") from None

    def __setitem__(self, idx, value) -> None:
        """x[idx] = value, in place (nanoGPT's ``logits[logits < v[:, [-1]]] = -float('inf')``).

        Only outside the graph: on a tensor that needs no gradient, or under ``no_grad()`` (as when
        initialising weights). A tensor that requires grad may already have been read by recorded ops,
        and changing it in place would silently change their gradients; build a new tensor instead
        with ``x.masked_fill(mask, value)`` or ``tinyattn.where(cond, a, b)``.
        """
        if self._rg and _grad_enabled:
            raise RuntimeError("in-place assignment x[...] = ... on a tensor that requires grad: use "
                               "x = x.masked_fill(mask, value) or tinyattn.where(cond, a, b) (new tensors the "
                               "graph can differentiate), or assign under tinyattn.no_grad()")
        idx = _index_arg(idx)
        value = value.data if isinstance(value, Tensor) else value
        try:
            self.data[idx] = value
        except (IndexError, ValueError, TypeError, OverflowError) as e:
            raise type(e)(f"x[...] = value on a tensor of shape {self.shape} and dtype {self.dtype}: {e}") from None


class MinMax(NamedTuple):
    """What ``x.max(dim)`` / ``x.min(dim)`` return, as in PyTorch: the values and where they are."""
    values: Tensor
    indices: Tensor


def _promote(a: Tensor, b: Tensor, op) -> tuple:
    """PyTorch's promotion for mixed ints and floats: the int side takes the float side's dtype, and
    int / int gives the default float dtype (NumPy alone would give float64 in both cases)."""
    fa, fb = a.data.dtype.kind == "f", b.data.dtype.kind == "f"
    if fa == fb:
        if not fa and op is Div:
            return a.to(_default_dtype), b.to(_default_dtype)
        return a, b
    return (a.to(b.dtype), b) if fb else (a, b.to(a.dtype))


def _index_arg(idx):
    """Unwrap Tensors used as indices (token ids, masks) into arrays."""
    if isinstance(idx, tuple):
        return tuple(_index_arg(i) for i in idx)
    if isinstance(idx, Tensor):
        return idx.data
    if isinstance(idx, list):
        return np.asarray(idx)
    return idx


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


def _gather_where(shape: tuple, dim: int, index) -> tuple:
    """The advanced index that makes ``a[where]`` PyTorch's ``a.gather(dim, index)``.

    Every dim but ``dim`` is indexed by its own position (np.indices), ``dim`` by ``index``:
    out[i, j, k] = a[i, index[i, j, k], k] for dim=1.
    """
    idx = np.asarray(index.data if isinstance(index, Tensor) else index)
    d = _norm_dim(dim, len(shape), "gather")
    if idx.dtype.kind not in "iu":
        raise TypeError(f"gather: index must hold integer positions (e.g. int64), got dtype {idx.dtype}")
    if idx.ndim != len(shape):
        raise ValueError(f"gather: index has shape {idx.shape} but the input has shape {shape}: "
                         "both need the same number of dims")
    if any(n > m for i, (n, m) in enumerate(zip(idx.shape, shape)) if i != d):
        raise ValueError(f"gather: index of shape {idx.shape} is larger than the input's shape {shape} "
                         f"outside dim {dim}")
    if idx.size and (idx.min() < 0 or idx.max() >= shape[d]):
        bad = int(idx.min() if idx.min() < 0 else idx.max())
        raise IndexError(f"gather: index holds {bad}, out of range for dim {dim} of size {shape[d]} "
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
    """a / b;  da = g / b, db = -g a / b^2"""
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a / b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        ga = g / b if ctx.needs_input_grad[0] else None
        gb = -g * a / (b * b) if ctx.needs_input_grad[1] else None
        return ga, gb


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
        gb = g * out * np.log(a) if ctx.needs_input_grad[1] else None
        return ga, gb


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
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        # Treat vectors as matrices: a (n,) -> (1, n), b (n,) -> (n, 1), and g to match.
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        if a.ndim == 1 and b.ndim == 1:
            g2 = np.reshape(g, (1, 1))
        elif a.ndim == 1:
            g2 = np.expand_dims(g, -2)
        elif b.ndim == 1:
            g2 = np.expand_dims(g, -1)
        else:
            g2 = g
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = g2 @ np.swapaxes(b2, -1, -2)                      # (..., n, k) = (..., n, m) @ (..., m, k)
            ga = unbroadcast(ga, a2.shape).reshape(a.shape)
        if ctx.needs_input_grad[1]:
            if b2.ndim == 2:
                # x (B, T, k) @ W (k, m): fold the batch into rows -> one (k, m) GEMM, no (B, k, m) temporary
                a_rows, g_rows = a2.reshape(-1, a2.shape[-1]), g2.reshape(-1, g2.shape[-1])  # (N, k), (N, m)
                if b2.flags.f_contiguous and not b2.flags.c_contiguous:
                    # b is W.T (a transposed weight): build the gradient as (m, k) so that after
                    # Permute's backward the weight's gradient is C-ordered like the weight itself.
                    gb = (g_rows.T @ a_rows).T
                else:
                    gb = a_rows.T @ g_rows
            else:
                gb = unbroadcast(np.swapaxes(a2, -1, -2) @ g2, b2.shape)  # (..., k, m)
            gb = gb.reshape(b.shape)
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


class Sigmoid(Function):
    """sigmoid(a) = 1 / (1 + exp(-a));  da = g s (1 - s)"""
    @staticmethod
    def forward(ctx, a):
        # Written via tanh so it never overflows: sigmoid(a) = (1 + tanh(a/2)) / 2.
        y = 0.5 * (1 + np.tanh(0.5 * a))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * (1 - y)


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
        ctx.inside = inside
        y = np.clip(a, lo, hi)
        return y.astype(a.dtype, copy=False) if a.dtype.kind == "f" else y

    @staticmethod
    def backward(ctx, g):
        return g * ctx.inside


def _check_all_masked(m: np.ndarray, dim: int, op: str) -> None:
    """A row of only -inf has no softmax (0/0); a row with NaN or +inf has none either.
    Say which rows instead of returning NaN. (``m`` is the row max: one cheap check covers both.)"""
    if np.isfinite(m).all():
        return
    row_max = np.squeeze(m, axis=dim)
    if np.isneginf(row_max).any():
        rows = [tuple(int(i) for i in r) for r in np.argwhere(np.isneginf(row_max))[:5]]
        raise ValueError(f"{op}: every entry is -inf in row(s) {rows} (along dim {dim}); "
                         "a fully masked row has no softmax. Keep at least one key per query.")
    rows = [tuple(int(i) for i in r) for r in np.argwhere(~np.isfinite(row_max))[:5]]
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


class MaskedFill(Function):
    """where(mask, value, a);  da = g where mask is False, 0 where it was filled"""
    @staticmethod
    def forward(ctx, a, mask, value):
        ctx.mask = mask
        return np.where(mask, np.asarray(value, dtype=a.dtype), a)

    @staticmethod
    def backward(ctx, g):
        return np.where(ctx.mask, 0, g).astype(g.dtype, copy=False)


class Where(Function):
    """where(cond, a, b);  da = g [cond], db = g [not cond]"""
    @staticmethod
    def forward(ctx, a, b, cond):
        ctx.cond = cond
        return np.where(cond, a, b)

    @staticmethod
    def backward(ctx, g):
        c = ctx.cond
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
