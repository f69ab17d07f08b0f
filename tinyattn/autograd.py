"""Reverse-mode autograd: grad mode, the graph's nodes, ``Context``, ``Function``, ``unbroadcast``, the walk.

This is the whole engine behind ``loss.backward()``; ``tinyattn/tensor.py`` holds the Tensor and
``tinyattn/ops.py`` the ops. Read it in this order:

1. ``Function.apply``: run an op's ``forward`` on arrays and, if a gradient is needed, give the output
   a ``Node`` (its ``grad_fn``): the op, its ``Context`` and ``next_functions``, the nodes of its inputs.
   A leaf that requires grad has a node of its own too, ``AccumulateGrad``, where its ``.grad`` is summed.
2. Why the node is not the tensor: an in-place op (``x.mul_(2)``, ``x[0] = v``) gives x a NEW node whose
   input is x's old node. Whatever read x before the write keeps the old node, so its gradient stays right.
3. ``Context``: what forward keeps for backward. Handing saved arrays back checks that no in-place op
   changed them since (every tensor has a version counter, shared with its views).
4. ``backward``: a topological order of the nodes, then the chain rule node by node, one
   ``unbroadcast``, and ``accumulate`` at the leaves. Afterwards what the nodes saved is freed.
   ``grad`` runs the same walk and returns the gradients instead of adding them to ``.grad``.

This module imports nothing from the package; ``tinyattn.tensor`` registers its Tensor class here.
"""
from __future__ import annotations

import contextlib
import weakref

import numpy as np

Tensor: type = None  # type: ignore[assignment]  (tinyattn.tensor sets it once its Tensor class exists)

# --- Grad mode: whether ops record the graph. --------------------------------------------------
_grad_enabled: bool = True


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


def inference_mode(mode: bool = True):
    """PyTorch's faster ``no_grad`` for evaluation; here the two are one (``inference_mode(False)`` records)."""
    return _set_grad(not mode)


class set_grad_enabled:
    """Turn graph recording on or off: at once when called (``set_grad_enabled(False)``), and back to
    what it was at the end of a ``with set_grad_enabled(is_train):`` block, as in PyTorch."""

    def __init__(self, mode: bool) -> None:
        global _grad_enabled
        if not isinstance(mode, (bool, np.bool_)):
            raise TypeError(f"set_grad_enabled expects a bool, got {type(mode).__name__}")
        self.prev, _grad_enabled = _grad_enabled, bool(mode)

    def __enter__(self) -> None: pass  # noqa: E704  (the mode changed when the object was made)

    def __exit__(self, *exc) -> None:
        global _grad_enabled
        _grad_enabled = self.prev


# --- Nodes, Context and Function: an op with its forward and its backward side by side. --------
SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.")


def _modified(array: np.ndarray, now: int, then: int, op) -> str:
    return ("one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: [{array.dtype} tensor of shape {tuple(array.shape)}] is at version {now}; expected "
            f"version {then} instead (saved by {op.__name__}Backward). Hint: an in-place op (x.mul_(...), x[...] = ..., "
            "x += ...) changed a tensor that the forward pass had saved; change a copy (x = x * ...), or "
            "change it after backward.")


class Node:
    """One op of the graph, as PyTorch's ``grad_fn``: ``<MulBackward>`` with the op's ``Context`` and
    ``next_functions``, one ``(node, 0)`` pair per input (``(None, 0)`` for an input that needs no gradient).
    A leaf that requires grad gets an ``AccumulateGrad`` node (``op`` None, ``variable`` the leaf).
    ``shapes`` are the inputs' shapes, for ``unbroadcast``. ``hooks`` run on the gradient that reaches
    this node before its backward does (``Tensor.register_hook``); ``retains`` keeps it (``retain_grad``)."""

    __slots__ = ("op", "ctx", "next_functions", "shapes", "variable", "hooks", "retains", "__weakref__")

    def __init__(self, op, ctx, next_functions: tuple, shapes: tuple = (), variable=None) -> None:
        self.op, self.ctx, self.next_functions, self.shapes = op, ctx, next_functions, shapes
        self.variable, self.hooks, self.retains = variable, None, None

    def name(self) -> str:
        return "AccumulateGrad" if self.op is None else f"{self.op.__name__}Backward"

    def __repr__(self) -> str:
        return f"<{self.name()}>"


class Context:
    """What ``forward`` leaves for ``backward``: saved arrays, ``needs_input_grad`` and constants (attributes)."""

    __slots__ = ("_saved", "_versions", "needs_input_grad", "__dict__")

    def __init__(self, needs_input_grad: tuple):
        self._saved: tuple | None = ()  # None once backward has freed them
        self._versions: tuple = ()  # (counter, version when saved, array, the op, weakref to its tensor)
        self.needs_input_grad = needs_input_grad

    def save_for_backward(self, *arrays) -> None:
        self._saved = arrays

    @property
    def saved_tensors(self) -> tuple:
        """The saved arrays, after checking that no in-place op changed them since forward (as PyTorch)."""
        if self._saved is None:
            raise RuntimeError(SECOND_BACKWARD)
        saved = self._saved
        for counter, version, array, op, tensor in self._versions:
            if counter[0] != version:
                raise RuntimeError(_modified(array, counter[0], version, op))
            t = tensor()  # PyTorch saves the tensor itself: `w.data = new` since forward is read here
            if t is not None and t._data is not array and t._data.shape == array.shape:
                saved = tuple(t._data if a is array else a for a in saved)
        return saved


class Function:
    """Base class of every op. Subclasses define ``forward`` and ``backward`` on NumPy arrays.

    ``Op.apply(*inputs, **consts)`` wraps the inputs, runs ``forward`` on their arrays and, when a
    gradient is needed, gives the result a ``Node`` so that ``backward`` can replay it.

    ``new_arrays = True`` promises that ``backward`` returns arrays nothing else holds (not ``grad``,
    not a saved array, not one array twice), so a leaf's ``.grad`` may keep one without a copy.
    ``view = True``: the output may share its input's memory (reshape, transpose, basic indexing); it then
    becomes a view of that input's base, sharing its version counter (``Tensor._share_memory_of``).
    """

    new_arrays = False
    view = False

    @staticmethod
    def forward(ctx: Context, *args: np.ndarray, **kwargs) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray):  # pragma: no cover
        raise NotImplementedError

    @classmethod
    def apply(cls, *inputs, **kwargs) -> "Tensor":
        tensors, arrays, needs, shapes = [], [], [], []
        for x in inputs:
            if not isinstance(x, Tensor):
                x = Tensor(x)
            elif x._base is not None:
                x._sync_view()  # its base was written since: the view's node is rebuilt from the base's
            tensors.append(x)
            arrays.append(a := x._data)
            needs.append(x._rg)
            shapes.append(a.shape)  # (here, not in a second list comprehension: a + b -3% instructions)
        ctx = Context(tuple(needs))
        res = cls.forward(ctx, *arrays, **kwargs)
        data = (out := Tensor._make(res))._data
        if data.dtype.kind == "c" or arrays[0].dtype.kind == "c":  # complex: the op's twin, or an error
            cls = Tensor._complex_op(cls)
        if data is not res and ctx._saved:  # a NumPy scalar (np.exp of a 0-d array): save the array instead
            ctx._saved = tuple(data if s is res else s for s in ctx._saved)
        if data.base is not None:  # shares an input's memory: one version counter for both
            out._share_memory_of(tensors, cls, kwargs)
        if _grad_enabled and True in needs:  # record the op only if some input needs a gradient
            out._rg = True
            out._grad_fn = Node(cls, ctx, tuple([(t._grad_fn or t._node(), 0) for t in tensors]), tuple(shapes))
            if ctx._saved:
                ctx._versions = _watch(ctx._saved, tensors, out, cls)
        return out


def _watch(saved: tuple, tensors: list, out, op) -> tuple:
    """For each saved array that is an input's or the output's memory: its counter and version now.
    (A Python number made a 0-d tensor, as in x * 2.5, has no counter: nothing can change it.)"""
    watched = []
    for a in saved:
        if isinstance(a, np.ndarray):
            for t in (out, *tensors):
                if t._data is a and t._counter is not None:  # (the op: its name is made only for an error; exp -2%)
                    watched.append((t._counter, t._counter[0], a, op, weakref.ref(t)))
                    break
    return tuple(watched)


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


# --- The graph walk, over nodes. ---------------------------------------------------------------
def topological_order(roots: list) -> list:
    """Every node the ``roots`` depend on, each after all of the nodes it feeds: a depth-first walk with
    an explicit stack of (node, iterator over its next_functions), so 20,000 ops do not recurse 20,000 deep."""
    order, visited = [], set()
    for root in roots:  # (several for autograd.grad's outputs; one found below another comes after it)
        if root in visited:
            continue
        visited.add(root)
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, inputs = stack[-1]
            for child, _ in inputs:
                if child is not None and child not in visited:
                    visited.add(child)
                    stack.append((child, iter(child.next_functions)))  # go deeper first; come back later
                    break
            else:  # every input of `node` is in `order`
                stack.pop()
                order.append(node)
    return order


def _start(root, gradient) -> tuple:
    """The node where backward from ``root`` starts, and d(root)/d(root) (``gradient``, or 1 for a scalar)."""
    start = root._node() if root.requires_grad else None  # (a view follows its base's latest write first)
    if start is None:
        raise RuntimeError("backward(): this tensor does not require grad and has no graph "
                           "(did you create it under no_grad(), or forget requires_grad=True?)")
    if gradient is None:
        if root._data.size != 1 or root._data.dtype.kind == "c":  # a complex loss: no direction to descend
            raise ValueError(f"backward() without a gradient needs a real scalar output, got shape {root.shape}, "
                             f"dtype {root.dtype}; reduce it (loss.mean(); loss.abs() if complex) or pass gradient=")
        gradient = np.ones(root._data.shape, dtype=root._data.dtype)  # d(root)/d(root) = 1
    seed = np.asarray(gradient._data if isinstance(gradient, Tensor) else gradient, dtype=root._data.dtype)
    if seed.shape != root.shape:
        raise ValueError(f"backward(gradient): gradient has shape {seed.shape} but the output has shape {root.shape}")
    return start, seed


@np.errstate(all="ignore")  # 0 * inf, log 0 in a derivative give NaN/inf silently, as PyTorch's (one per walk: ~1 us)
def backward(root, gradient=None, retain_graph: bool | None = None, capture: dict | None = None) -> None:
    """Add d(root)/d(leaf), contracted with ``gradient``, to ``.grad`` of every leaf that requires grad. ``root`` may
    be a list of (node, seed) pairs; ``capture`` (node -> None) keeps what reaches those nodes instead (``grad``)."""
    starts = root if isinstance(root, list) else [_start(root, gradient)]
    grads = {}  # node -> d(root)/d(its output), summed over every path found so far
    for node, seed in starts:
        grads[node] = grads[node] + seed if node in grads else seed
    owned = set()  # nodes whose array in `grads` nothing else holds (accumulate may keep it uncopied)
    for node in reversed(topological_order([n for n, _ in starts])):  # each node after all its users
        g = grads.pop(node, None)
        if g is None:
            continue
        if node.hooks:  # Tensor.register_hook: each may replace the gradient
            for hook in list(node.hooks.values()):
                new = hook(Tensor._make(g))
                if new is not None:
                    g, owned = np.asarray(new._data if isinstance(new, Tensor) else new, dtype=g.dtype), owned - {node}
        if node.retains is not None:  # retain_grad on a non-leaf
            accumulate(node.retains, g, copy=True)
        if capture is not None and node in capture:
            capture[node] = np.array(g)
        if node.op is None:  # AccumulateGrad
            if capture is None:
                accumulate(node.variable, g, copy=node not in owned)
            continue
        in_grads = node.op.backward(node.ctx, g)  # the chain rule: d(root)/d(input) for each input
        if type(in_grads) is not tuple:
            in_grads = (in_grads,)
        for i, ((child, _), pg) in enumerate(zip(node.next_functions, in_grads)):
            if pg is None or child is None:
                continue
            if type(pg) is not np.ndarray:  # a NumPy scalar, e.g. from a full reduction
                pg = np.asarray(pg)
            shape = node.shapes[i]
            if pg.shape != shape:  # (tested first: most gradients already have their input's shape)
                pg = unbroadcast(pg, shape)
                if pg.shape != shape:
                    raise RuntimeError(f"{node.op.__name__}.backward returned a gradient of shape {pg.shape} "
                                       f"for input {i}, which has shape {shape}")
            if child in grads:  # a tensor used twice gets the sum of both gradients
                pg = np.asarray(grads[child] + pg)  # (new memory: either term may be another node's)
                owned.add(child)
            elif node.op.new_arrays:
                owned.add(child)
            grads[child] = pg
        if not retain_graph and node.ctx._saved:  # free what forward kept, as PyTorch does; a node
            node.ctx._saved, node.ctx._versions = None, ()  # that kept nothing can run again (x + 1, x.sum())


def accumulate(t, g: np.ndarray, copy: bool = True) -> None:
    """``t.grad += g``. The first write copies ``g``: a backward may return an array it still holds
    (a saved one, or a view of its input), and a later ``+=`` must never write into that. With
    ``copy=False`` (an array nothing else holds) it keeps ``g``: a copy per weight per step is a visible
    share of a small MLP's step (benchmarks/RESULTS.md). As in PyTorch, nothing reaches a leaf whose
    requires_grad was turned off after the graph was built, nor a view taken under no_grad."""
    if not t._rg or t._creation == "no_grad":
        return
    if t._grad is None:
        if copy or g.dtype != t._data.dtype:
            g = np.array(g, dtype=t._data.dtype)  # np.array copies
        t._grad = Tensor._make(g)
    else:
        t._grad._data += g


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None, create_graph: bool = False,
         allow_unused: bool = False) -> tuple:
    """d(outputs)/d(each input) as a tuple, added to no ``.grad`` (PyTorch's ``torch.autograd.grad``):
    the outputs' gradients are summed, each contracted with its ``grad_outputs`` entry (backward's ``gradient``)."""
    if create_graph:
        raise NotImplementedError("autograd.grad(create_graph=True): tinyattn's backward computes on arrays and "
                                  "records no graph of its own, so derivatives of gradients are not supported")
    listed = lambda x: [x] if isinstance(x, Tensor) else list(x)  # noqa: E731
    outs, ins = listed(outputs), listed(inputs)
    gos = [None] * len(outs) if grad_outputs is None else listed(grad_outputs)
    if not all(t.requires_grad for t in ins):
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    capture = dict.fromkeys(t._node() for t in ins)
    backward([_start(o, go) for o, go in zip(outs, gos, strict=True)], None, retain_graph, capture)
    found = [capture[t._node()] for t in ins]
    for i, g in enumerate(found):
        if g is None and not allow_unused:
            raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                               "Set allow_unused=True if this is the desired behavior.")
    return tuple(None if g is None else Tensor._make(g) for g in found)
