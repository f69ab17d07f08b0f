"""Reverse-mode autograd: grad mode, ``Context``, ``Function``, ``unbroadcast`` and the graph walk.

This is the whole engine behind ``loss.backward()``; ``tinyattn/tensor.py`` holds the Tensor and the
ops. Read it in this order:

1. ``Function.apply``: run an op's ``forward`` on arrays and, if a gradient is needed, record the op,
   its inputs and its ``Context`` on the output. That record is the graph.
2. ``Context``: what forward keeps for backward. Arrays go through ``save_for_backward``; handing
   them back checks that no in-place op changed them since (each tensor has a version counter).
3. ``backward``: a topological order, then the chain rule node by node, one ``unbroadcast``, and
   ``.grad += g`` on the leaves. Afterwards the graph's saved arrays are freed, as in PyTorch.

This module imports nothing from the package; ``tinyattn.tensor`` imports it and registers its
Tensor class here (``Tensor`` below), the one name the engine needs from there.
"""
from __future__ import annotations

import contextlib

import numpy as np

Tensor: type = None  # type: ignore[assignment]  (tinyattn.tensor sets it once its Tensor class exists)

# ----------------------------------------------------------------------------------------------
# Grad mode: whether ops record the graph.
# ----------------------------------------------------------------------------------------------
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


def Variable(data, requires_grad: bool = False):
    """PyTorch before 0.4 wrapped tensors in a Variable to track gradients; a tensor does that now, so
    ``Variable(x)`` is x (made a tensor if it is not one), as in today's PyTorch."""
    t = data if isinstance(data, Tensor) else Tensor(data)
    if requires_grad:
        t.requires_grad_(True)
    return t


class set_grad_enabled:
    """Turn graph recording on or off: at once when called (``set_grad_enabled(False)``), and back to
    what it was at the end of a ``with set_grad_enabled(is_train):`` block, as in PyTorch."""

    def __init__(self, mode: bool) -> None:
        global _grad_enabled
        if not isinstance(mode, (bool, np.bool_)):
            raise TypeError(f"set_grad_enabled expects a bool, got {type(mode).__name__}")
        self.prev, _grad_enabled = _grad_enabled, bool(mode)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        global _grad_enabled
        _grad_enabled = self.prev


# ----------------------------------------------------------------------------------------------
# Context and Function: an op with its forward and its backward side by side.
# ----------------------------------------------------------------------------------------------
SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward.")


def _modified(array: np.ndarray, now: int, then: int) -> str:
    return ("one of the variables needed for gradient computation has been modified by an inplace "
            f"operation: [{array.dtype} tensor of shape {tuple(array.shape)}] is at version {now}; expected "
            f"version {then} instead. Hint: an in-place op (x.mul_(...), x[...] = ..., x += ...) changed a "
            "tensor that the forward pass had saved; change a copy (x = x * ...), or change it after backward.")


class Context:
    """What ``forward`` leaves for ``backward``: saved arrays, ``needs_input_grad`` and constants (attributes)."""

    __slots__ = ("_saved", "_versions", "needs_input_grad", "__dict__")

    def __init__(self, needs_input_grad: tuple):
        self._saved: tuple = ()
        self._versions: tuple = ()  # (counter, version when saved, array) for saved arrays that are tensors' memory
        self.needs_input_grad = needs_input_grad

    def save_for_backward(self, *arrays) -> None:
        self._saved = arrays

    @property
    def saved_tensors(self) -> tuple:
        """The saved arrays, after checking that no in-place op changed them since forward (as PyTorch)."""
        for counter, version, array in self._versions:
            if counter[0] != version:
                raise RuntimeError(_modified(array, counter[0], version))
        return self._saved


class Function:
    """Base class of every op. Subclasses define ``forward`` and ``backward`` on NumPy arrays.

    ``Op.apply(*inputs, **consts)`` wraps the inputs, runs ``forward`` on their arrays and, when a
    gradient is needed, links the result into the graph so ``backward`` can replay it.

    ``new_arrays = True`` promises that ``backward`` returns arrays nothing else holds (not ``grad``,
    not a saved array, not one array twice), so a leaf's ``.grad`` may keep one without a copy.
    """

    new_arrays = False

    @staticmethod
    def forward(ctx: Context, *args: np.ndarray, **kwargs) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    @staticmethod
    def backward(ctx: Context, grad: np.ndarray):  # pragma: no cover
        raise NotImplementedError

    @classmethod
    def apply(cls, *inputs, **kwargs) -> "Tensor":
        tensors, arrays, needs = [], [], []
        for x in inputs:
            if not isinstance(x, Tensor):
                x = Tensor(x)
            tensors.append(x)
            arrays.append(x._data)
            needs.append(x._rg)
        ctx = Context(tuple(needs))
        out = Tensor._make(cls.forward(ctx, *arrays, **kwargs))
        if out._data.base is not None:  # a view (reshape, transpose, slice) changes with its input:
            out._counter = _owner_counter(out._data, tensors, out._counter)  # one version counter for both
        if _grad_enabled and True in needs:  # record the op only if some input needs a gradient
            out._rg, out._op, out._ctx, out._parents = True, cls, ctx, tensors
            for t in tensors:  # each input now has a user in the graph (x[i] = v checks this)
                t._consumed = True
            if ctx._saved:
                ctx._versions = _watch(ctx._saved, tensors, out)
        return out


class GradFn:
    """What ``t.grad_fn`` shows: the op that made t, e.g. ``<MulBackward>`` (PyTorch prints ``<MulBackward0 ...>``)."""

    __slots__ = ("op",)

    def __init__(self, op: type) -> None:
        self.op = op  # the Function class whose backward this node runs

    def name(self) -> str:
        return f"{self.op.__name__}Backward"

    def __repr__(self) -> str:
        return f"<{self.name()}>"


def _owner_counter(array: np.ndarray, tensors: list, default: list) -> list:
    """The version counter of the tensor whose memory ``array`` lies in (``default`` if none)."""
    owner = array if array.base is None else array.base
    for t in tensors:
        if t._data is owner or t._data.base is owner:
            return t._counter
    return default


def _watch(saved: tuple, tensors: list, out) -> tuple:
    """For each saved array that is (a view of) an input's or the output's memory: its counter and version now."""
    watched = []
    for a in saved:
        if isinstance(a, np.ndarray):
            counter = _owner_counter(a, [out, *tensors], None)
            if counter is not None:
                watched.append((counter, counter[0], a))
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


# ----------------------------------------------------------------------------------------------
# The graph walk.
# ----------------------------------------------------------------------------------------------
def topological_order(root) -> list:
    """Every tensor ``root`` was computed from (that requires grad), each after all of its inputs.

    A depth-first walk with an explicit stack of (node, iterator over its inputs), so a chain of
    20,000 ops does not recurse 20,000 deep. Tensors hash by identity: they can be set members.
    """
    order, visited, stack = [], {root}, [(root, iter(root._parents))]
    while stack:
        node, parents = stack[-1]
        for p in parents:
            if p._rg and p not in visited:
                visited.add(p)
                if not p._parents:  # a leaf: nothing below it to wait for
                    order.append(p)
                    continue
                stack.append((p, iter(p._parents)))  # go deeper first; come back to `node` later
                break
        else:  # every input of `node` is in `order`
            stack.pop()
            order.append(node)
    return order


def backward(root, gradient=None, retain_graph: bool | None = None) -> None:
    """Add d(root)/d(leaf), contracted with ``gradient``, to ``.grad`` of every leaf that requires grad."""
    if not root._rg:
        raise RuntimeError("backward(): this tensor does not require grad and has no graph "
                           "(did you create it under no_grad(), or forget requires_grad=True?)")
    if gradient is None:
        if root._data.size != 1:
            raise ValueError(f"backward() without a gradient needs a scalar output, got shape {root.shape}; "
                             "reduce it first (e.g. loss.mean()) or pass gradient= of that shape")
        gradient = np.ones(root._data.shape, dtype=root._data.dtype)  # d(root)/d(root) = 1
    seed = np.asarray(gradient._data if isinstance(gradient, Tensor) else gradient, dtype=root._data.dtype)
    if seed.shape != root.shape:
        raise ValueError(f"backward(gradient): gradient has shape {seed.shape} but the output has shape {root.shape}")

    grads = {root: seed}  # node -> d(root)/d(node), summed over every path found so far
    owned = set()  # nodes whose array in `grads` nothing else holds: .grad may keep it uncopied
    for node in reversed(topological_order(root)):  # the output first, each node after all its users
        g = grads.pop(node, None)
        if g is None:
            continue
        if node._op is None or node._retain:  # a leaf (or a non-leaf that asked to keep its gradient)
            accumulate(node, g, copy=node not in owned or node._op is not None)
        if node._op is None:
            continue
        if node._ctx is None:  # freed by an earlier backward
            raise RuntimeError(SECOND_BACKWARD)
        in_grads = node._op.backward(node._ctx, g)  # the chain rule: d(root)/d(input) for each input
        if type(in_grads) is not tuple:
            in_grads = (in_grads,)
        for i, (parent, pg) in enumerate(zip(node._parents, in_grads)):
            if pg is None or not parent._rg:
                continue
            if type(pg) is not np.ndarray:  # a NumPy scalar, e.g. from a full reduction
                pg = np.asarray(pg)
            shape = parent._data.shape
            if pg.shape != shape:  # (tested first: most gradients already have their input's shape)
                pg = unbroadcast(pg, shape)
                if pg.shape != shape:
                    raise RuntimeError(f"{node._op.__name__}.backward returned a gradient of shape {pg.shape} "
                                       f"for input {i}, which has shape {shape}")
            if parent in grads:  # a tensor used twice gets the sum of both gradients
                pg = np.asarray(grads[parent] + pg)  # (new memory: either term may be another node's)
                owned.add(parent)
            elif node._op.new_arrays:
                owned.add(parent)
            grads[parent] = pg
        if not retain_graph:  # free what forward kept, and the links to the inputs, as PyTorch does
            node._ctx, node._parents = None, ()


def accumulate(t, g: np.ndarray, copy: bool = True) -> None:
    """``t.grad += g``. The first write copies ``g``: a backward may return an array it still holds
    (a saved one, or a view of its input), and a later ``+=`` must never write into that. With
    ``copy=False`` (an array nothing else holds) it keeps ``g``: copying a 512 x 512 weight gradient
    was 4% of a small MLP's training step."""
    if t._grad is None:
        if copy or g.dtype != t._data.dtype:
            g = np.array(g, dtype=t._data.dtype)  # np.array copies
        t._grad = Tensor._make(g)
    else:
        t._grad._data += g
