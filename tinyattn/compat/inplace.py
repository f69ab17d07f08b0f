"""PyTorch's in-place family (``add_``, ``mul_``, ``masked_fill_``, ``copy_``, ``x[i] = v``, ``x += y``, ...)
and writes into views, mixed into the Tensor.

Outside the graph (nothing involved requires grad, or under ``no_grad``) an in-place op writes into the
array and adds 1 to its version counter. Inside it, as in PyTorch:

* the op is recorded out of place (``x.mul_(y)`` records ``x * y``) and the result is written into
  x's memory; x gets the new node, whose input is x's OLD node. Anything that read x before keeps the
  old node and gets the right gradient. Where the op saved x's old values, it keeps a copy of them.
* a write into a view also rewrites its base's history (``CopySlices``): the base's new node takes
  the untouched rest from the base's old node and the view's place from the view's new node. Every
  view of that base then rebuilds its node from the base's (``ViewOf``) when it is next used.
* refused, with PyTorch's message, on a leaf that requires grad and on a view of one, and where
  ``compat/views.py`` says (overlapping memory, outputs of ``split``/``unbind``).
* an op that saved its output (``exp_``, ``sigmoid_``) saved self's memory: a later write into self
  is caught by backward, as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from tinyattn import autograd, defaults, promotion
from tinyattn.autograd import Context, Function, Node, unbroadcast
from tinyattn.compat.args import _alpha, _array_of, _clamp_bound, _norm_dim, _number
from tinyattn.compat.indexing import _gather_where, _index_arg, _read_at, _write_at
from tinyattn.compat.ops import Clamp
from tinyattn.compat.views import multi_output_error, refuse_partial_overlap, refuse_self_overlap, same_memory
from tinyattn.ops import Add, Div, Exp, MaskedFill, Mul, ReLU, Sigmoid, Sub, Tanh


@np.errstate(divide="ignore", invalid="ignore")  # x /= 0 is inf or NaN silently, as Div's forward (tinyattn/quiet.py)
def _quiet_divide(a, o):
    return a / o


LEAF = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF = "a view of a leaf Variable that requires grad is being used in an in-place operation."
NO_GRAD_VIEW = (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
                "by moving both the view and the inplace either both inside the no_grad block (if you don't want the "
                "inplace to be tracked) or both outside (if you want the inplace to be tracked).")
_HINT = (" Change it under tinyattn.no_grad() (as an optimizer step does), or build a new tensor "
         "(x = x * y, x.masked_fill(mask, value), tinyattn.where(cond, a, b)).")


def _replay(arr: np.ndarray, view_fn: tuple) -> np.ndarray:
    """Take the same view of ``arr`` that the view ops in ``view_fn`` took of the base."""
    for op, kwargs in view_fn:
        arr = op.forward(Context(()), arr, **kwargs)
    return arr


def _wrapped(alpha, x):
    """An int alpha for an integer x, in x's dtype (u8.add_(y, alpha=-1) wraps, as PyTorch's)."""
    return promotion.number_as(alpha, x._data.dtype) if x._data.dtype.kind in "iu" and type(alpha) is int else alpha


class Overwrite(Function):
    """a with a[index] (or where ``where``) set to v;  da = g with the written places 0, dv = g at those places"""
    @staticmethod
    def forward(ctx, a, v, index, where):
        ctx.index, ctx.where, ctx.vshape = index, where, v.shape
        # positions given as arrays (a mask, index tensors) are saved, as PyTorch's index_put, masked_fill and
        # scatter save them, so a second backward raises; a write of all of a saves nothing and may run again
        ctx.save_for_backward(*(i for i in (*(index if isinstance(index, tuple) else (index,)), where)
                                if isinstance(i, np.ndarray)))
        if index is None:  # written straight into a's memory: only ever applied by an in-place op (_commit)
            np.copyto(a, v, casting="same_kind", where=where)
        else:
            _write_at(a, index, v)
        return a

    @staticmethod
    def backward(ctx, g):
        _ = ctx.saved_tensors  # (read for its check: it raises once an earlier backward freed them)
        da = dv = None
        if ctx.needs_input_grad[0]:
            da = np.array(g)  # a copy: the written entries came from v, not from a
            if ctx.index is None:
                np.copyto(da, 0, where=ctx.where)
            else:
                _write_at(da, ctx.index, 0)
        if ctx.needs_input_grad[1]:
            dv = _read_at(g, ctx.index) if ctx.index is not None else np.where(ctx.where, g, 0).astype(g.dtype)
            if dv.shape != ctx.vshape:  # v was broadcast into its place (buf[None] = v: v may have more leading 1s)
                dv = unbroadcast(dv, ctx.vshape[max(len(ctx.vshape) - dv.ndim, 0):]).reshape(ctx.vshape)
        return da, dv


class ViewOf(Function):
    """view_fn(base), a view rebuilt from its base's node (PyTorch's AsStridedBackward);  dbase = g put in the view's place"""
    @staticmethod
    def backward(ctx, g):
        out = np.zeros_like(ctx.like)  # (the base's memory layout, so the view is replayed exactly)
        place = _replay(out, ctx.view_fn)
        if any(s == 0 and n > 1 for s, n in zip(place.strides, place.shape)):  # expand(): the copies' gradients add
            flat = np.zeros(out.size, dtype=g.dtype)
            np.add.at(flat, _replay(np.arange(out.size).reshape(out.shape), ctx.view_fn), g)
            return flat.reshape(out.shape)
        place[...] = g
        return out


class CopySlices(Function):
    """base with its view's place overwritten by the view's new value;  dbase = g with that place 0, dview = g there"""
    @staticmethod
    def backward(ctx, g):
        like, = ctx.saved_tensors  # (the base's layout, freed by backward: PyTorch's CopySlices runs once too)
        gb = np.empty_like(like)
        gb[...] = g
        place = _replay(gb, ctx.view_fn)
        refuse_self_overlap(place)  # a write into an expanded view: PyTorch's backward refuses it here
        dv = np.array(place) if ctx.needs_input_grad[1] else None
        place[...] = 0
        return (gb if ctx.needs_input_grad[0] else None), dv


def view_node(view) -> Node:
    """A ``ViewOf`` node reading the base's node: the view's history after its base was written."""
    base = view._base
    ctx = Context((True,))
    ctx.view_fn, ctx.like = view._view_fn, base._data
    return Node(ViewOf, ctx, ((base._node(), 0),), (base.shape,))


def random_fill(t, dist: str, a: float, b: float, generator, who: str):
    """Overwrite t with draws of U(a, b) (dist 'uniform') or N(a, b^2) ('normal'), in place: the checks of
    Tensor.uniform_/normal_ and of nn.init's, in one place (``who`` names the caller in errors)."""
    if t.dtype.kind != "f":
        raise TypeError(f"{who} draws real numbers and needs a floating-point tensor, got dtype {t.dtype}")
    if dist == "uniform" and not a <= b:
        raise ValueError(f"{who}: needs a <= b, got a={a}, b={b}")
    if dist == "normal" and not b >= 0:
        raise ValueError(f"{who}: std must be >= 0, got {b}")
    rng = defaults.rng_of(generator)
    return t._inplace(who, rng.uniform(a, b, t.shape) if dist == "uniform" else rng.normal(a, b, t.shape))


class InplaceMixin:
    """The in-place methods of Tensor (see the module's docstring for the rules)."""

    __slots__ = ()

    def _in_graph(self, name: str, *others, region=None) -> bool:
        """Whether this write is recorded; refuses the writes PyTorch refuses, in its order (the graph's
        rules, then overlapping memory). ``region``: the memory written (None: all of self; an array:
        the view x[i] that ``x[i] = v`` writes; False: an op that writes one value to every alias, as fill_)."""
        recorded = autograd.is_grad_enabled() and self._graph_checks(name, others, region)
        if region is not False:  # (a recorded fill_ of an expanded view is refused by CopySlices' backward)
            dst = self._data if region is None else region
            refuse_self_overlap(dst)
            for o in others:
                if isinstance(o, autograd.Tensor):
                    refuse_partial_overlap(dst, o._data)
        return recorded

    def _graph_checks(self, name: str, others: tuple, region) -> bool:
        """With grad mode on: whether the write is recorded, after PyTorch's refusals (leaves, views of
        leaves, views taken under no_grad, outputs of split/unbind)."""
        if self._base is not None:  # (a no_grad view's requires_grad follows its base's, as PyTorch's)
            self._sync_view()
        recorded = self._rg or any(isinstance(o, autograd.Tensor) and o._rg for o in others)
        if self._creation and (recorded or self._base._rg):
            if self._creation != "no_grad":  # an output of split/chunk/unbind (compat/views.py)
                raise RuntimeError(f"{name}: {multi_output_error(self._creation)}")
            raise RuntimeError(f"{name}: A view was created in no_grad mode and is being modified inplace with grad "
                               f"mode enabled.{NO_GRAD_VIEW}")
        if self._rg and self._grad_fn is None:  # (x[i] = v writes the view x[i]: PyTorch names it so)
            raise RuntimeError(f"{name}: {LEAF if region is None or region is False else VIEW_OF_LEAF}{_HINT}")
        if self._base is not None and self._rg and self._base._grad_fn is None:  # (a leaf base, even one that
            raise RuntimeError(f"{name}: {VIEW_OF_LEAF}{_HINT}")  # stopped requiring grad: detach_(), as PyTorch)
        return recorded

    def _plain(self, name: str, write) -> "InplaceMixin":
        """Outside the graph: ``write(array)`` changes the array; count the change."""
        try:
            write(self._data)
        except (IndexError, ValueError, TypeError, OverflowError) as e:
            raise type(e)(f"{name} on a tensor of shape {self.shape} and dtype {self.dtype}: {e}") from None
        return self._bump_version()

    def _commit(self, out, aliased: bool = False) -> "InplaceMixin":
        """Write ``out`` (an op's result whose node reads self's old node) into self; it becomes self's history.
        ``aliased``: self was the op's other operand too (``t.mul_(t)``); the op saved it, and backward
        then finds it changed, as PyTorch's does."""
        if out.shape != self.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(out.shape)}")
        node, old, new = out._grad_fn, self._data, out._data
        ctx = node.ctx
        if ctx._saved:  # self's old values: a copy (PyTorch saves a clone); the result: self's memory, as PyTorch
            after = self._counter[0] + 1  # self's version once written
            ctx._saved = tuple(a.copy() if a is old else old if a is new else a for a in ctx._saved)
            ctx._versions = tuple((self._counter, after, old) + w[3:] if w[0] is out._counter else w
                                  for w in ctx._versions if aliased or w[2] is not old)
        if new is not old:  # (Overwrite wrote into self's memory already)
            np.copyto(old, new, casting="same_kind")
        self._bump_version()
        base = self._base
        if base is not None:  # a view: the base's history is rewritten (PyTorch's CopySlices)
            old = self._grad_fn  # (which skips the view's old node: its hooks fire only for uses before the write)
            if old is not None and old.hooks and node.next_functions[0][0] is old:
                node.next_functions = ((Node(old.op, old.ctx, old.next_functions, old.shapes), 0),) + node.next_functions[1:]
            ctx = Context((base._rg, True))
            ctx.view_fn, ctx._saved = self._view_fn, (base._data,)
            node = Node(CopySlices, ctx, ((base._node(), 0), (node, 0)), (base.shape, self.shape))
        owner = self if base is None else base
        if owner._grad_fn is not None and owner._grad_fn.retains is owner:  # retain_grad follows the newest value
            owner._grad_fn.retains, node.retains = None, owner
        owner._grad_fn, owner._rg = node, True
        if base is not None:
            self._refresh_view()
        return self

    def _inplace(self, name: str, value, index=None, where=True, region=None, view=None):
        """Write ``value`` into self (all of it, ``[index]``, or where ``where`` is True); ``region`` as in
        _in_graph. ``view``: the view self[index] that ``x[index] = v`` writes when it is recorded (PyTorch's
        copy_ into it: its history, and the rules for writes into views, are the view's)."""
        dst = self if view is None else view
        if dst._in_graph(name, value, region=region):
            v = dst._lift(value)
            v = v if v.dtype == self.dtype else v.to(self.dtype)
            if dst._rg or v._rg:  # (a float value cast into an integer self has no gradient left: a plain write)
                try:
                    return dst._commit(Overwrite.apply(dst, v, index=index if view is None else None, where=where))
                except (IndexError, ValueError, TypeError) as e:
                    raise type(e)(f"{name} on a tensor of shape {self.shape} and dtype {self.dtype}: {e}") from None
            value = v
        value = value._data if isinstance(value, autograd.Tensor) else value
        if index is None:
            return self._plain(name, lambda a: np.copyto(a, value, casting="same_kind", where=where))
        return self._plain(name, lambda a: _write_at(a, index, value))

    def _update(self, name: str, op, other, compute, **kw):
        """self = self (op) other: recorded as ``op`` in the graph, computed by ``compute`` outside it."""
        # the promotion table's operand (u8 += -1 wraps; an int x /= y is refused with PyTorch's words)
        o = None if op is Clamp else promotion.inplace_operand(op.__name__, self, other)
        if isinstance(other, autograd.Tensor) and other.shape != self.shape:  # self cannot grow to the result's shape
            try:
                shape = np.broadcast_shapes(self.shape, other.shape)
            except ValueError as e:
                raise ValueError(f"{name} on a tensor of shape {self.shape} and dtype {self.dtype}: {e}") from None
            if shape != self.shape:
                raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}")
        if self._in_graph(name, other):
            aliased = isinstance(other, autograd.Tensor) and other._data is self._data
            return self._commit(self._binary(op, other, **kw) if op is not Clamp else Clamp.apply(self, **kw), aliased)
        return self._plain(name, lambda a: np.copyto(a, compute(a, o), casting="unsafe"))  # (writable() checked it)

    def zero_(self):
        return self._inplace("zero_", promotion.fill_number(0, self._data.dtype), region=False)  # (False in a bool)

    def fill_(self, value):
        v = promotion.fill_number(_number(value, "fill_"), self._data.dtype)  # (u8.fill_(-1) is 255, 256 overflows)
        if isinstance(value, autograd.Tensor):  # (PyTorch's fill_ with a tensor copies it: an expanded self is refused)
            return self._inplace("fill_", value if value._rg else v)
        return self._inplace("fill_", v, region=False)

    def copy_(self, src):
        # from its very own elements (e.copy_(e), even expanded) PyTorch writes nothing, so checks no overlap;
        # the write is still counted and recorded
        same = isinstance(src, autograd.Tensor) and same_memory(self._data, src._data)
        if isinstance(src, autograd.Tensor) and np.broadcast_shapes(self.shape, src.shape) != self.shape:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(np.broadcast_shapes(self.shape, src.shape))}")
        if isinstance(src, autograd.Tensor) and src.dtype != self.dtype:
            src = src.to(self.dtype)  # copy_ casts any dtype into self's (a float into an int truncates), as PyTorch's
        return self._inplace("copy_", src, region=False if same else None)

    def add_(self, other, alpha=1):
        """self += alpha * other"""
        alpha = _wrapped(_alpha(alpha, self.dtype), self)  # (checked here too: an int tensor is written outside the graph)
        return self._update("add_", Add, other, lambda a, o: a + (o if alpha == 1 else alpha * o), alpha=alpha)

    def sub_(self, other, alpha=1):
        """self -= alpha * other"""
        alpha = _wrapped(_alpha(alpha, self.dtype), self)
        return self._update("sub_", Sub, other, lambda a, o: a - (o if alpha == 1 else alpha * o), alpha=alpha)

    def mul_(self, other):
        return self._update("mul_", Mul, other, lambda a, o: a * o)

    def div_(self, other):
        return self._update("div_", Div, other, _quiet_divide)

    def _unary_(self, name: str, op):
        """self = op(self): recorded as ``op``, whose saved output is then self's memory (see _commit)."""
        promotion.writable(promotion.op_input(name[:-1], self)._data.dtype, self._data.dtype)  # (i64.exp_(): no)
        if self._in_graph(name):
            return self._commit(op.apply(self))
        with autograd.no_grad():
            y = op.apply(self)._data
        return self._plain(name, lambda a: np.copyto(a, y, casting="same_kind"))

    def relu_(self): return self._unary_("relu_", ReLU)
    def exp_(self): return self._unary_("exp_", Exp)
    def sigmoid_(self): return self._unary_("sigmoid_", Sigmoid)
    def tanh_(self): return self._unary_("tanh_", Tanh)

    def __iadd__(self, o): return self.add_(o)
    def __isub__(self, o): return self.sub_(o)
    def __imul__(self, o): return self.mul_(o)
    def __itruediv__(self, o): return self.div_(o)

    def clamp_(self, min=None, max=None):
        if min is None and max is None:
            raise ValueError("clamp_: give at least one of min= or max=")
        if isinstance(min, autograd.Tensor) or isinstance(max, autograd.Tensor):  # tensor bounds: clamp's own rule
            return self._inplace_from("clamp_", lambda x: x.clamp(min, max))  # (their gradients, their broadcasting)
        lo, hi = (None if v is None else _clamp_bound(v, name) for v, name in ((min, "min"), (max, "max")))
        promotion.writable(promotion.result_type(self, *(v for v in (min, max) if v is not None)), self._data.dtype)
        if self._data.dtype.kind in "iu":  # int bounds wrap into self's dtype, as clamp's do (u8: -3 is 253)
            lo, hi = (v if not isinstance(v, int) else promotion.number_as(v, self._data.dtype) for v in (lo, hi))
        return self._update("clamp_", Clamp, None, lambda a, o: np.clip(a, lo, hi), lo=lo, hi=hi)

    def masked_fill_(self, mask, value):
        """Where ``mask`` (bool, broadcast to self's shape) is True, put ``value``."""
        _, m, v = self._fill_args(mask, value, "masked_fill_")
        if isinstance(value, autograd.Tensor) and value._rg or not self._in_graph("masked_fill_", value, region=False):
            return self._inplace("masked_fill_", value if isinstance(value, autograd.Tensor) else v, where=m, region=False)
        return self._commit(MaskedFill.apply(self, mask=m, value=v))

    def index_fill_(self, dim: int, index, value):
        """Put ``value`` at positions ``index`` (ints, 1-D) along ``dim``: ``x.index_fill_(1, [0, 2], v)`` fills columns 0 and 2."""
        d = _norm_dim(dim, self.ndim, "index_fill_")
        idx = np.asarray(index._data if isinstance(index, autograd.Tensor) else index)
        if idx.dtype.kind not in "iu" or idx.ndim > 1:
            raise TypeError(f"index_fill_: index must be a 1-D tensor of ints, got dtype {idx.dtype} and shape {idx.shape}")
        n = self.shape[d] if self.ndim else 1
        if idx.size and (idx.min() < -n or idx.max() >= n):
            raise IndexError(f"index_fill_: index holds {int(idx.max() if idx.max() >= n else idx.min())}, "
                             f"out of range for dim {dim} of size {n}")
        v = promotion.fill_number(_number(value, "index_fill_"), self._data.dtype)
        if not self.ndim:  # a 0-d tensor is its one element, index 0
            return self._inplace("index_fill_", v, region=False) if idx.size else self
        return self._inplace("index_fill_", v, index=(slice(None),) * d + (idx,), region=False)

    def scatter_(self, dim: int, index, src=None, *, value=None, reduce=None):
        """Gather's inverse: self[index[i][j]][j] = src[i][j] for dim=0, self[i][index[i][j]] = src[i][j] for dim=1.

        ``src`` is a tensor (only its first index.shape entries are read) or a number. Where ``index``
        names one position twice, which value lands there is not defined (as in PyTorch).
        ``reduce='add'`` or ``'multiply'`` combines instead of writing (compat/scatter.py).
        """
        src = value if src is None else src
        if reduce is not None:
            return self.copy_(self._scatter_reducing(dim, index, src, reduce))
        where = _gather_where(self.shape, dim, index, "scatter_")
        shape = where[_norm_dim(dim, self.ndim, "scatter_")].shape  # index's shape
        if isinstance(src, (autograd.Tensor, np.ndarray, list)):
            src = src if isinstance(src, autograd.Tensor) else self._make(np.asarray(_array_of(src)))
            if src.ndim != len(shape) or any(n > m for n, m in zip(shape, src.shape)):
                raise ValueError(f"scatter_: index of shape {shape} needs a src of as many dims, at least as large "
                                 f"in every dim; got src of shape {src.shape}")
            src = src[tuple(slice(0, n) for n in shape)]
        else:
            src = _number(src, "scatter_")
        return self._inplace("scatter_", src, index=where)

    def _reshape_(self, name: str, view) -> "InplaceMixin":
        """squeeze_/unsqueeze_/t_/transpose_/swapdims_: self becomes ``view(self)``, the same memory seen with
        another shape (no value is written). Its history is the view op's on top of the old one, and the write is
        counted, as PyTorch's; a view stays a view of its base (the op is appended to how it was taken)."""
        if autograd.is_grad_enabled():
            self._graph_checks(name, (), None)  # PyTorch's refusals: a leaf that requires grad, a view of one, ...
        out = view(self)  # (its dim checks are the out-of-place op's)
        self._data = out._data
        if out._grad_fn is not None or self._grad_fn is None:
            self._grad_fn = out._grad_fn
        if self._base is not None:
            self._view_fn, self._view_version, self._creation = out._view_fn, out._view_version, out._creation
        return self._bump_version()

    def squeeze_(self, dim=None):
        return self._reshape_("squeeze_", lambda t: t.squeeze() if dim is None else t.squeeze(dim))

    def unsqueeze_(self, dim: int):
        return self._reshape_("unsqueeze_", lambda t: t.unsqueeze(dim))

    def t_(self):
        if self.ndim > 2:
            raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return self._reshape_("t_", lambda t: t.t())

    def transpose_(self, dim0: int, dim1: int):
        return self._reshape_("transpose_", lambda t: t.transpose(dim0, dim1))

    swapdims_ = swapaxes_ = transpose_

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None):
        return random_fill(self, "uniform", a, b, generator, "uniform_")

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None):
        return random_fill(self, "normal", mean, std, generator, "normal_")

    def __setitem__(self, idx, value) -> None:
        """x[idx] = value, in place (nanoGPT's ``logits[logits < v[:, [-1]]] = -float('inf')``), with
        PyTorch's indexing rules. Inside the graph it is recorded like any in-place op (PyTorch's
        CopySlices), so gradients reach ``value`` (``out[t] = h`` into a zeros buffer) and the rest of x."""
        index = _index_arg(idx)
        index = (None,) if index is None else index  # x[None] = v writes all of x (None alone means no index below)
        items = index if isinstance(index, tuple) else (index,)
        if not all(i is None or i is Ellipsis or isinstance(i, (slice, int, np.integer)) and not isinstance(i, bool)
                   for i in items):  # index tensors: PyTorch's index_put_, which writes one value to every alias
            return self._inplace("x[...] = value", value, index=index, region=False)
        target = self[index]  # else the view x[idx] is written, as PyTorch's copy_ into it (x[:] is x itself)
        same = same_memory(target._data, self._data)
        self._inplace("x[...] = value", value, index=index, view=None if same else target)
