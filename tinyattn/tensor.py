"""The Tensor: a NumPy array that knows the node (``grad_fn``) of the op that made it.

Read it in this order:

1. ``tinyattn/autograd.py``, the engine: ``Function`` (an op is a small class with
   ``forward(ctx, *arrays)`` and ``backward(ctx, grad)`` side by side, the shape of
   ``torch.autograd.Function``), the graph's ``Node`` and the walk behind ``loss.backward()``.
2. ``Tensor`` below: the array (``_data``; ``.data`` and ``.grad`` are Tensors, as in PyTorch), its
   node, its version counter, views, and the methods the course uses.
3. ``tinyattn/ops.py``: the ops, each next to its derivative.

PyTorch's long tail is in ``tinyattn/compat/``, mixed into the class: the in-place family and
writes into views (``inplace.py``), which ops are views and which writes PyTorch refuses
(``views.py``), indexing rules, rare methods and ops.

This module is also PyTorch's factory ``tinyattn.tensor(data)``: calling it calls ``factories.tensor``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from tinyattn import autograd, checks, defaults, promotion
from tinyattn.autograd import Context, Function, enable_grad, is_grad_enabled, no_grad, unbroadcast  # noqa: F401
from tinyattn.compat.args import (  # noqa: F401
    _array_of, _as_array, _clamp_bound, _infer_shape, _n_reduced, _new_shape, _norm_dim, _norm_dims, _number,
    _shape_arg, _var_args, numpy_names, _binary_extreme,
)
from tinyattn.compat.complex import ComplexMixin
from tinyattn.compat.hooks import RemovableHandle
from tinyattn.compat.indexing import _index_arg, _pytorch_index_steps
from tinyattn.compat.inplace import NO_GRAD_VIEW, InplaceMixin, random_fill, view_node  # noqa: F401
from tinyattn.compat.methods import _TYPE_OF_NAME, MethodsMixin, MinMax  # noqa: F401
from tinyattn.compat.views import Expand, ViewsMixin, memory_root, multi_output_error, view_name  # noqa: F401
from tinyattn.compat.to import tensor_to
from tinyattn.compat.ops import Cast, Einsum, Pow, Reciprocal, Remainder, RoundedDiv, StdFromVar, Var  # noqa: F401
from tinyattn.defaults import (  # noqa: F401
    Generator, get_default_dtype, get_rng, manual_seed, rng_of, set_default_dtype,
)
from tinyattn.promotion import _combine, promote_types, result_type  # noqa: F401  (the ops and functions.py read these)
from tinyattn.ops import (  # noqa: F401  (the ops, importable from here as before)
    Add, Amax, Cat, Contiguous, Div, Exp, GetItem, Log, LogSoftmax, MaskedFill, MatMul, Mul, Neg,
    Permute, PowConst, ReLU, Reshape, Sigmoid, Softmax, Sqrt, Stack, Sub, Sum, Tanh, Where, _check_all_masked,
)

float32 = np.float32
float64 = np.float64


class Tensor(InplaceMixin, ViewsMixin, ComplexMixin, MethodsMixin):
    """An n-dimensional array with an optional gradient (``.grad``) and the op that made it.

    The NumPy array itself is ``_data``. As in PyTorch, ``.data`` is a Tensor without grad that shares
    that memory (an escape hatch from the graph), ``.grad`` is a Tensor too, and ``.numpy()`` gives the array.
    """

    __slots__ = ("_data", "_grad", "_counter", "_rg", "_grad_fn", "_acc", "_base", "_view_fn", "_view_version",
                 "_creation", "__weakref__")
    __array_priority__ = 1000  # make `ndarray + Tensor` call Tensor.__radd__
    __array_ufunc__ = None

    def __init__(self, data: Any = (), *sizes: int, requires_grad: bool = False, dtype=None):
        if sizes or type(data) is int:  # PyTorch's legacy torch.Tensor(2, 3): that shape, zeroed (PyTorch: garbage)
            data = np.zeros(_shape_arg((data, *sizes)), dtype or defaults.get_default_dtype())
        self._setup(_as_array(data, dtype))
        if requires_grad:
            self.requires_grad_(True)

    def _setup(self, arr: np.ndarray) -> None:
        """The one place a tensor's fields are set (Function.apply adds the graph fields to its outputs)."""
        self._data = arr            # the NumPy array
        self._grad = None           # a Tensor once backward reaches this tensor
        self._counter = [0]         # the version counter: in-place ops add 1 (views share the list)
        self._rg = False            # requires_grad
        self._grad_fn = None        # the node of the op that made this tensor (None: a leaf)
        self._acc = None            # a leaf's AccumulateGrad node, made when an op first reads the leaf
        self._base = None           # a view: the tensor whose memory it shares (PyTorch's ._base)
        self._view_fn = ()          # a view: the view ops that take it from _base, as (op, constants) pairs
        self._view_version = 0      # a view: the version its node was built at (see _refresh_view)
        self._creation = None       # a view taken under no_grad ("no_grad") or output i of split/unbind: see _in_graph

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
        if self._base is not None and self._view_version != self._counter[0]:
            self._refresh_view(query=True)
        if self._creation == "no_grad" and self._grad_fn is None:  # as PyTorch: a no_grad view follows its base
            return self._base._rg
        return self._rg

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    def requires_grad_(self, flag: bool = True) -> "Tensor":
        if flag and self._data.dtype.kind not in "fc":
            raise TypeError(f"requires_grad=True needs floating-point data, got dtype {self._data.dtype}; "
                            "integer tensors (token ids, indices) can not require grad (float and complex ones can)")
        if not flag and self._grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        self._rg = bool(flag) or self._creation == "no_grad" and self._base._rg  # (a no_grad view follows its base)
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
        return self.grad_fn is None

    @property
    def grad_fn(self):
        """The node of the op that made this tensor (``<MulBackward>``, with ``next_functions``); None for a leaf."""
        if self._base is not None and self._view_version != self._counter[0]:
            self._refresh_view()
        return self._grad_fn

    # --- the graph: a tensor points at its node; a view follows its base ------------------------
    def _node(self):
        """The node a gradient for this tensor flows into: its grad_fn, or a leaf's AccumulateGrad (or None)."""
        if self._grad_fn is not None:
            return self._grad_fn
        if not self._rg:
            return None
        if self._acc is None:
            self._acc = autograd.Node(None, None, (), variable=self)
        return self._acc

    def _share_memory_of(self, inputs: list, op, constants: dict) -> None:
        """``Function.apply`` found this output in an input's memory: share its version counter and, for
        a view op, become a view of that input's base (remembering how, to replay it on gradients)."""
        owner = memory_root(self._data)
        for t in inputs:
            if t._counter is not None and memory_root(t._data) is owner:
                self._counter = t._counter
                if op.view:
                    self._base = t if t._base is None else t._base
                    self._view_fn, self._view_version = t._view_fn + ((op, constants),), t._counter[0]
                    made = t._creation  # a view of a no_grad view or of a split output keeps its rule
                    self._creation = "no_grad" if not autograd.is_grad_enabled() else made and \
                        (made if made == "no_grad" else f"Output 0 of {view_name(op, constants)}")
                    if self._creation == "no_grad" and self._base._rg:  # as PyTorch: a leaf that requires grad,
                        self._rg = True  # which no gradient reaches (autograd.accumulate) nor leaves (no grad_fn)
                return

    def _sync_view(self) -> None:
        """Before an op reads this view: catch up with writes into its base, and a no_grad view with its
        base's requires_grad (PyTorch reads it from the base)."""
        if self._view_version != self._counter[0]:
            self._refresh_view()
        if self._creation == "no_grad" and self._grad_fn is None:
            self._rg = self._base._rg

    def _refresh_view(self, query: bool = False) -> None:
        """The base was written since this view's node was built: rebuild it from the base's node."""
        if self._base._rg or self._creation and self._grad_fn is not None:
            if not autograd.is_grad_enabled():
                return  # (rebuilt when it is next used with the graph on)
            if self._creation:  # a no_grad view or a split output: PyTorch can not tell which history it should have
                if query:  # reading requires_grad (a repr) answers; grad_fn, is_leaf and any use raise, as PyTorch
                    return
                raise RuntimeError(multi_output_error(self._creation, True) if self._creation != "no_grad" else
                                   "A view was created in no_grad mode and its base or another view of its base has "
                                   f"been modified inplace with grad mode enabled.{NO_GRAD_VIEW}")
            old, self._grad_fn, self._rg = self._grad_fn, view_node(self), True
            if old is not None and old.retains is self:  # retain_grad follows the view's newest value
                old.retains, self._grad_fn.retains = None, self
        if self._base._rg or self._grad_fn is not None:  # (else not caught up: the base may require grad by the
            self._view_version = self._counter[0]  # next use, and then the view is rebuilt, as PyTorch's grad_fn)

    def register_hook(self, hook):
        """Call ``hook(grad)`` when the gradient for this tensor is computed; a returned tensor replaces
        it. Returns a handle whose ``remove()`` takes the hook away (as PyTorch)."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        node = self._node()
        if node.hooks is None:
            node.hooks = {}
        handle = RemovableHandle(node.hooks)
        node.hooks[handle.id] = hook
        return handle

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
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is not None and self._grad_fn.retains is not self:  # (a leaf or retained: nothing to do)
            self.grad_fn.retains = self  # (a view is rebuilt first: a split output whose base was written raises)

    def backward(self, gradient=None, retain_graph: bool | None = None) -> None:
        """Fill ``.grad`` of every leaf that requires grad with d(self)/d(leaf), contracted with ``gradient``.

        The graph's saved arrays are freed afterwards, so a second backward through it raises unless
        ``retain_graph=True``. The walk itself is ``tinyattn.autograd.backward``.
        """
        autograd.backward(self, gradient, retain_graph)

    def float(self) -> "Tensor":
        return self if self.dtype == np.float32 else Cast.apply(self, dtype=np.float32)

    def double(self) -> "Tensor":
        return self if self.dtype == np.float64 else Cast.apply(self, dtype=np.float64)

    def to(self, *args, **kwargs) -> "Tensor":
        """PyTorch's to(dtype | device, dtype | other, non_blocking, copy, memory_format); see compat/to.py."""
        return tensor_to(self, *args, **kwargs)

    def is_contiguous(self) -> bool:
        return bool(self._data.flags.c_contiguous)

    def contiguous(self) -> "Tensor":
        """A C-ordered copy if needed. NumPy reshapes anything, so this only matters for speed."""
        return self if self._data.flags.c_contiguous else Contiguous.apply(self)

    def clone(self) -> "Tensor":  # (PyTorch's preserve_format: a transposed tensor's clone is transposed too)
        return Contiguous.apply(self, order="C" if 0 in self._data.strides and self._data.size > 1 else "K")

    def __repr__(self) -> str:
        body = np.array2string(self._data, separator=", ", prefix="tensor(", **defaults.array2string_kwargs())
        extra = ""
        default = np.dtype(defaults.get_default_dtype())  # and its complex (complex64 for float32), as PyTorch
        if self._data.dtype not in (default, np.promote_types(default, np.complex64), np.int64, np.bool_):
            extra += f", dtype={self._data.dtype}"
        if self._grad_fn is not None:
            extra += f", grad_fn={self._grad_fn!r}"
        elif self.requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise ValueError(f"the truth value of a tensor with shape {self.shape} is ambiguous; use .any() or .all()")
        return bool(self._data)

    # --- arithmetic (broadcasting like NumPy) -------------------------------------------------
    def _lift(self, other) -> "Tensor":
        """A Python number becomes a 0-d tensor of the dtype the pair promotes to (``result_type``), so
        `x32 * 0.5` stays float32 and `i32 + 1` stays int32."""
        if isinstance(other, Tensor):
            return other
        if isinstance(other, (bool, int, float)):
            t = Tensor._make(promotion.number_as(other, result_type(self, other)))
            t._counter = None  # a constant: no version (an op saving it, as x * 2.5 does, frees nothing)
            return t
        return Tensor(other)

    def _binary(self, op, other, reverse=False, **constants) -> "Tensor":
        if isinstance(other, Tensor) and other._data.dtype == (dt := self._data.dtype) and dt.kind == "f":
            # the common case: nothing to promote, nothing refused, no generator (a + b 5.2 -> 4.5 us per call)
            a, b = (other, self) if reverse else (self, other)
        else:  # the one promotion table: u8 - 1 wraps, bool - bool and bool // bool are refused, int / int is float
            dt = (self._data.dtype if type(other) in (int, float) and self._data.dtype.kind == "f" else  # x * 0.5: x's
                  promotion.op_dtype(op.__name__, *((other, self) if reverse else (self, other))))  # dtype (a * 2: -17%)
            sd = promotion.scalar_dtype(op.__name__, dt, reverse)  # (x16 / 1e5 reads 1e5 in float32, as PyTorch)
            if isinstance(other, (bool, int, float)):
                other = Tensor._make(promotion.number_as(other, sd))
                other._counter = None  # a constant (see _lift)
            else:
                other = self._lift(other)
            other = other if other._data.dtype == (want := sd if other.ndim == 0 else dt) else other.to(want)
            me = self if self._data.dtype == dt else self.to(dt)  # (a * 2: -9%)
            a, b = (other, me) if reverse else (me, other)
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

    def __add__(self, o): return self._binary(Add, o)
    def __radd__(self, o): return self._binary(Add, o, True)
    def __sub__(self, o): return self._binary(Sub, o)
    def __rsub__(self, o): return self._binary(Sub, o, True)
    def __mul__(self, o): return self._binary(Mul, o)
    def __rmul__(self, o): return self._binary(Mul, o, True)
    def __truediv__(self, o): return self._binary(Div, o)
    def __rtruediv__(self, o):
        if isinstance(o, (int, float)) and not isinstance(o, bool) and self.dtype.kind == "f":
            return Reciprocal.apply(self) if o == 1 else Reciprocal.apply(self) * o  # PyTorch's form: saves 1 / x
        return self._binary(Div, o, True)
    def __pow__(self, o):
        if (isinstance(o, (int, float)) and not isinstance(o, bool) and self._data.dtype.kind in "fc"
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

    def __eq__(self, o): return self._cmp(o, np.equal, "equal")  # type: ignore[override]  (complex too, unlike <)
    def __ne__(self, o): return self._cmp(o, np.not_equal, "equal")  # type: ignore[override]
    def __lt__(self, o): return self._cmp(o, np.less)
    def __le__(self, o): return self._cmp(o, np.less_equal)
    def __gt__(self, o): return self._cmp(o, np.greater)
    def __ge__(self, o): return self._cmp(o, np.greater_equal)
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
        return self._binary(Add, other, alpha=alpha)  # one node that scales b, as PyTorch's: it saves no array

    def sub(self, other, *, alpha=1) -> "Tensor":
        return self._binary(Sub, other, alpha=alpha)

    def mul(self, other) -> "Tensor": return self * other
    subtract, multiply, divide = sub, mul, MethodsMixin.div
    # --- elementwise --------------------------------------------------------------------------
    def exp(self): return Exp.apply(self)
    def log(self): return Log.apply(self)
    def sqrt(self): return Sqrt.apply(self)
    def tanh(self): return Tanh.apply(self)
    def sigmoid(self): return Sigmoid.apply(self)
    def relu(self): return ReLU.apply(self)
    def masked_fill(self, mask, value: float) -> "Tensor":
        """Where ``mask`` is True, put ``value``; elsewhere keep self (broadcast to the mask's shape, as PyTorch's)."""
        x, m, v = self._fill_args(mask, value, "masked_fill")
        if isinstance(value, Tensor) and value.requires_grad:  # a learned fill value gets its gradient
            return Where.apply(value.to(self.dtype), x, cond=np.broadcast_to(m, x.shape))
        return MaskedFill.apply(x, mask=m, value=v)

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
        scale = 1.0 / n if n else math.nan  # the mean of nothing is NaN
        if self.dtype.kind != "f":  # an integer mean is a float in the default dtype
            return Sum.apply(self, dim=d, keepdim=keepdim) * scale
        return Sum.apply(self, dim=d, keepdim=keepdim, scale=scale)

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
        x = self if self.dtype.kind in "fc" else self.to(defaults.get_default_dtype())
        return Var.apply(x, dim=d, keepdim=keepdim, n=n, correction=correction)

    @numpy_names
    def amax(self, dim=None, keepdim: bool = False) -> "Tensor":
        return Amax.apply(self, dim=_norm_dims(dim, self.ndim, "amax"), keepdim=keepdim, sign=1.0)

    @numpy_names
    def amin(self, dim=None, keepdim: bool = False) -> "Tensor":
        return Amax.apply(self, dim=_norm_dims(dim, self.ndim, "amin"), keepdim=keepdim, sign=-1.0)

    @numpy_names
    def max(self, dim: int | None = None, keepdim: bool = False):
        """The largest element (whole tensor); with ``dim``, PyTorch's ``(values, indices)`` pair along it."""
        if isinstance(dim, Tensor):  # max(other): PyTorch's elementwise overload
            return _binary_extreme(self, dim, keepdim, "max")
        if dim is None:  # the gradient is shared among ties, NaNs included (amax's is NaN there), as torch.max()
            return Amax.apply(self, dim=None, keepdim=False, sign=1.0, nan_ties=True)
        return self._pick(dim, keepdim, self._arg_extreme(np.argmax, "max", dim, True))  # (bools too)

    @numpy_names
    def min(self, dim: int | None = None, keepdim: bool = False):
        """The smallest element (whole tensor); with ``dim``, PyTorch's ``(values, indices)`` pair along it."""
        if isinstance(dim, Tensor):  # min(other): PyTorch's elementwise overload
            return _binary_extreme(self, dim, keepdim, "min")
        if dim is None:
            return Amax.apply(self, dim=None, keepdim=False, sign=-1.0, nan_ties=True)
        return self._pick(dim, keepdim, self._arg_extreme(np.argmin, "min", dim, True))  # (bools too)

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
        return Reshape.apply(self, shape=new)  # (a view whenever NumPy can: the same shape too, as PyTorch)

    def view(self, *shape) -> "Tensor":
        """The same memory seen with another shape. Unlike ``reshape`` it never copies, so it refuses a tensor
        whose memory is not laid out for the new shape (``x.transpose(1, 2).view(B, T, C)``), as PyTorch."""
        new = _infer_shape(_shape_arg(shape), self.shape, "view")
        seen = np.reshape(self._data, new)  # a view where the memory allows one, else a copy (NumPy 2.0 has no copy=)
        if seen.size and not np.may_share_memory(seen, self._data):
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                               "dimension spans across two contiguous subspaces). Use .reshape(...) instead "
                               "(or .contiguous().view(...)).")
        return Reshape.apply(self, shape=new)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> "Tensor":
        if self.ndim <= 1:  # as PyTorch: a 0-d tensor becomes (1,), a 1-D one comes back as itself
            return self.reshape(1) if self.ndim == 0 else self
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

    def permute(self, *dims) -> "Tensor":
        dims = _shape_arg(dims)
        axes = tuple(_norm_dim(d, self.ndim, "permute") for d in dims)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError(f"permute: dims {dims} are not a permutation of the {self.ndim} dims of shape {self.shape}")
        return Permute.apply(self, axes=axes)

    def unsqueeze(self, dim: int) -> "Tensor":
        d = _norm_dim(dim, self.ndim + 1, "unsqueeze")
        return self.reshape(*self.shape[:d], 1, *self.shape[d:])

    def squeeze(self, dim=None) -> "Tensor":
        """Without the size-1 dims among ``dim`` (an int, a tuple of them as in PyTorch 2, or None: all)."""
        ds = range(self.ndim) if dim is None else (_norm_dims(dim, self.ndim, "squeeze") or ()) if isinstance(
            dim, (tuple, list)) else (_norm_dim(dim, self.ndim, "squeeze"),)  # (a 0-d tensor has nothing to remove)
        keep = [n for i, n in enumerate(self.shape) if n != 1 or i not in ds]
        return self if len(keep) == self.ndim and dim is not None else self.reshape(*keep)

    def __getitem__(self, idx) -> "Tensor":
        idx = _index_arg(idx)
        try:
            out = self
            for step in _pytorch_index_steps(idx, self.ndim):
                out = GetItem.apply(out, idx=step)
            return out
        except IndexError as e:
            raise IndexError(f"indexing a tensor of shape {self.shape}: {e}") from None

autograd.Tensor = Tensor  # Function.apply and backward wrap arrays in this class


def matmul(a, b) -> Tensor:
    """a @ b with PyTorch/NumPy semantics; a clear error when the inner dims disagree."""
    a = a if isinstance(a, Tensor) else Tensor(a)
    b = b if isinstance(b, Tensor) else Tensor(b)
    sa, sb = a._data.shape, b._data.shape  # (not .shape: a property call each, 8 of them)
    if not sa or not sb:
        raise ValueError(f"matmul: both operands need at least 1 dim, got shapes {sa} and {sb}")
    k_a, k_b = sa[-1], (sb[0] if len(sb) == 1 else sb[-2])
    if k_a != k_b:
        raise ValueError(f"matmul: a has shape {sa} and b has shape {sb}: "
                         f"a's last dim ({k_a}) must equal b's {'only' if len(sb) == 1 else 'second-to-last'} dim ({k_b})")
    try:
        if len(sa) > 2 or len(sb) > 2:  # (only batch dims need it: 2-D a @ b 11.0 -> 7.6 us per call)
            np.broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:
        raise ValueError(f"matmul: batch dims of {sa} and {sb} do not broadcast") from None
    promotion.same_dtype(a, b)  # float32 @ float64 is refused, as in PyTorch
    return MatMul.apply(a, b)
