"""Making tensors: ``tensor``, ``zeros``, ``ones``, ``full``, ``arange`` and the ``*_like`` forms (torch.* names).

Each builds a NumPy array and wraps it in a Tensor; ``device=`` is accepted (PyTorch code passes it
everywhere) and must name the CPU. Random tensors live in ``sampling.py``.
"""
from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np

from . import autograd, checks, promotion
from .checks import device as _device
from .compat.args import _sized
from .tensor import Tensor, _as_array, _new_shape, get_default_dtype


def tensor(data: Any, requires_grad: bool = False, dtype=None, device=None) -> Tensor:
    """Make a Tensor with memory of its own: an ndarray or a tensor is COPIED, as PyTorch's ``torch.tensor``
    (dense, in the array's own dim order), so a later write to either leaves the other alone.
    ``as_tensor`` and ``from_numpy`` share the array's memory instead."""
    _device(device)
    arr = _as_array(data, dtype)
    if isinstance(data, (np.ndarray, np.generic, Tensor)):
        arr = np.array(arr, order="K", copy=True)  # (a sliced array's gaps are gone: .view(-1) works)
    return Tensor(arr, requires_grad=requires_grad)


def as_tensor(data: Any, dtype=None, device=None) -> Tensor:
    """``data`` as a tensor, sharing memory where it can, as PyTorch: a tensor of that dtype comes back
    as itself, an ndarray of that dtype is shared (as ``from_numpy``); anything else is converted."""
    _device(device)
    if isinstance(data, Tensor):
        return data if dtype is None or np.dtype(dtype) == data.dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or np.dtype(dtype) == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


class _CallableModule(types.ModuleType):
    """``tinyattn.tensor``: the engine module, callable as PyTorch's ``torch.tensor(data, ...)`` factory.

    Why one object: Python sets a package's attribute to its submodule on import, so a function named
    ``tensor`` and a module ``tensor.py`` would replace each other depending on import order."""

    def __call__(self, data: Any, requires_grad: bool = False, dtype=None, device=None) -> Tensor:
        return tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


sys.modules[Tensor.__module__].__class__ = _CallableModule


def _factory(arr: np.ndarray, requires_grad: bool) -> Tensor:
    return Tensor(arr, requires_grad=requires_grad)


def Variable(data, requires_grad: bool = False):
    """``torch.autograd.Variable``: PyTorch before 0.4 wrapped tensors in a Variable to track gradients;
    a tensor does that now, so ``Variable(x)`` is x (made a tensor if it is not one), as in today's PyTorch."""
    t = data if isinstance(data, Tensor) else Tensor(data)
    if requires_grad:
        t.requires_grad_(True)
    return t


autograd.Variable = Variable  # (its name in PyTorch; autograd.py imports nothing from the package)


def zeros(*shape, size=None, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    _device(device)
    return _factory(np.zeros(_new_shape(_sized("zeros", shape, size)), dtype=dtype or get_default_dtype()), requires_grad)


def ones(*shape, size=None, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    _device(device)
    return _factory(np.ones(_new_shape(_sized("ones", shape, size)), dtype=dtype or get_default_dtype()), requires_grad)


def _fill_dtype(value):
    """The dtype ``full`` infers from its fill value, as PyTorch: bool -> bool, int -> int64, float -> default."""
    if isinstance(value, Tensor):
        value = value._data
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype
    if isinstance(value, bool):
        return np.bool_
    if isinstance(value, int):
        return np.int64
    if isinstance(value, float):
        return get_default_dtype()
    if isinstance(value, complex):  # the default dtype's complex (complex64), as PyTorch
        return np.promote_types(get_default_dtype(), np.complex64)
    raise TypeError(f"full: fill_value must be a number, got {type(value).__name__}")


def full(size, fill_value: float, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """A tensor of ``size`` holding ``fill_value``; its dtype follows the value (7 -> int64, True -> bool)."""
    _device(device)
    if not isinstance(size, (tuple, list)):  # (PyTorch refuses full(3, v) too: the size is a tuple)
        raise TypeError(f"full(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    shape = _new_shape(tuple(size))
    dt = np.dtype(dtype or _fill_dtype(fill_value))
    return _factory(np.full(shape, promotion.fill_number(fill_value, dt), dtype=dt), requires_grad)


def zeros_like(t: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    return _factory(np.zeros(np.shape(_as_array(t)), dtype=dtype or _as_array(t).dtype), requires_grad)


def ones_like(t: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    return _factory(np.ones(np.shape(_as_array(t)), dtype=dtype or _as_array(t).dtype), requires_grad)


def full_like(t: Tensor, fill_value, dtype=None, requires_grad: bool = False) -> Tensor:
    """A tensor of t's shape and dtype (unless dtype is given) holding fill_value."""
    dt = np.dtype(dtype or _as_array(t).dtype)  # (u8: -1 is 255, 300 overflows; promotion.fill_number says why)
    return _factory(np.full(np.shape(_as_array(t)), promotion.fill_number(fill_value, dt), dtype=dt), requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """Like torch.arange: ints give int64, floats give the default dtype."""
    _device(device)
    if end is None:
        start, end = 0, start
    for name, v in (("start", start), ("end", end), ("step", step)):
        checks.number(name, v, "arange")
    if step == 0:
        raise ValueError(f"arange: step must not be 0, got step={step!r}")
    is_int = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    dt = dtype or (np.int64 if is_int else get_default_dtype())
    if (end - start) * step < 0:
        raise RuntimeError(f"arange: upper bound and lower bound inconsistent with step sign (start={start!r}, "
                           f"end={end!r}, step={step!r}), as PyTorch")
    if np.dtype(dt).kind not in "iu":
        return _factory(np.arange(start, end, step, dtype=dt), requires_grad)
    if is_int:  # counted in int64, then cast: a uint8 arange from -3 wraps to 253, as PyTorch's (NumPy refuses)
        return _factory(np.arange(start, end, step, dtype=np.int64).astype(dt, copy=False), requires_grad)
    return _factory(_integer_arange(start, end, step, np.dtype(dt)), requires_grad)


def _integer_arange(start, end, step, dt: np.dtype) -> np.ndarray:
    """PyTorch's arange of an integer dtype from fractional bounds (measured, torch 2.13): int64 truncates
    start, end and step toward 0 first (arange(2.5, dtype=long) is [0, 1]); the other integer dtypes count
    ceil((end - start) / step) entries from the fractional bounds but step by the truncated step from the
    truncated start (arange(0, 2, 0.5, dtype=int32) is [0, 0, 0, 0]), wrapping as a cast does (uint8 -1 is 255)."""
    if dt == np.int64:
        start, end, step = int(start), int(end), int(step)
        if step == 0:
            raise ValueError("arange: step must be nonzero, and a fractional step truncated to int64 (dtype=long) "
                             "is 0; pass an integer step")
        return np.arange(start, end, step, dtype=np.int64)
    n = max(0, int(np.ceil((end - start) / step)))
    return (int(start) + np.arange(n, dtype=np.int64) * int(step)).astype(dt)


def empty(*shape, size=None, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """A tensor of ``shape`` to be filled in later. PyTorch leaves its memory uninitialised; here it
    holds zeros, so nothing ever depends on leftover memory."""
    return zeros(*_sized("empty", shape, size), dtype=dtype, requires_grad=requires_grad, device=device)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor that SHARES memory with ``ndarray`` (no copy, its dtype kept): writing to one changes the other."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(ndarray).__name__} "
                        "(use tinyattn.tensor(data) to copy other data into a tensor)")
    if ndarray.dtype.kind not in "biufc":
        raise TypeError(f"from_numpy: can not make a tensor of dtype {ndarray.dtype}; expected numbers or bools")
    return Tensor(ndarray)


def linspace(start, end, steps: int, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """``steps`` evenly spaced values from start to end, both included (the default float dtype)."""
    _device(device)
    steps = checks.nonneg_int("steps", steps, "linspace")
    dt = np.dtype(dtype or get_default_dtype())
    if dt.kind not in "iu":  # (bool: each point != 0, as a cast; PyTorch has one bool point, start != 0)
        return _factory(np.linspace(start, end, steps, dtype=np.float64 if dt.kind == "b" else dt).astype(dt), requires_grad)
    if dt.kind == "u" and min(start, end) < 0:
        raise ValueError(f"linspace: dtype {dt} holds no negative values, got start={start!r}, end={end!r}")
    return _factory(_integer_linspace(start, end, steps, dt), requires_grad)


def _integer_linspace(start, end, steps: int, dt: np.dtype) -> np.ndarray:
    """PyTorch's linspace of an integer dtype (measured, torch 2.13): start and end are truncated to integers
    first, the step (e - s) / (steps - 1) is a float, the first half counts up from s and the rest down from e,
    and each point is truncated toward 0: linspace(-3, 3, 5, dtype=long) is [-3, -1, 0, 1, 3] and
    linspace(0.5, -2, 5, dtype=int32) is [0, 0, -1, -1, -2]. (NumPy's integer linspace floors.)"""
    s, e = float(int(start)), float(int(end))
    i = np.arange(steps, dtype=np.float64)
    if steps == 1:
        return np.array([s]).astype(dt)
    step = (e - s) / (steps - 1)
    # PyTorch's kernel rounds s + step i and e - step (steps - 1 - i) once (a fused multiply-add), which decides
    # a point a hair from an integer (linspace(3, -1, 7, dtype=long)[3] is 0); long double's product is exact here
    k, ld = np.where(i < steps // 2, i, -(steps - 1 - i)), np.longdouble
    return (np.where(i < steps // 2, ld(s), ld(e)) + ld(step) * k.astype(ld)).astype(np.float64).astype(dt)


def eye(n: int, m: int | None = None, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """The (n, m) identity matrix (m = n by default): ones on the diagonal, zeros elsewhere."""
    _device(device)
    n, m = _new_shape((n, n if m is None else m))
    return _factory(np.eye(n, m, dtype=dtype or get_default_dtype()), requires_grad)


def meshgrid(*tensors, indexing: str = "ij") -> tuple:
    """Coordinate grids from 1-D tensors (sizes n0, n1, ...): each output has shape (n0, n1, ...) and
    output i varies along dim i only. indexing='xy' swaps the first two dims, (n1, n0, ...), as for
    plotting (x along columns). Differentiable: each grid is its input expanded.
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    ts = [t if isinstance(t, Tensor) else Tensor(t) for t in tensors]
    if not ts or any(t.ndim > 1 for t in ts):
        raise ValueError(f"meshgrid expects one or more 0-d or 1-D tensors, got shapes {[t.shape for t in ts]}")
    sizes = [t.numel() for t in ts]
    axis = list(range(len(ts)))  # the output dim along which input i varies
    if indexing == "xy" and len(ts) >= 2:
        axis[0], axis[1] = 1, 0
    shape = [0] * len(ts)
    for i, n in enumerate(sizes):
        shape[axis[i]] = n
    grids = []
    for t, a in zip(ts, axis):
        view = [1] * len(ts)
        view[a] = t.numel()
        grids.append(t.reshape(*view).expand(*shape))  # (1, .., n_i, .., 1) -> (n0, n1, ...)
    return tuple(grids)


def empty_like(input: Tensor, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
               memory_format=None) -> Tensor:
    """A tensor of input's shape and dtype (unless dtype is given) whose values are unspecified: zeros here,
    so nothing can depend on leftover memory."""
    _device(device, "empty_like")
    return zeros_like(input, dtype=dtype, requires_grad=requires_grad)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """The (2, N) row and column positions of the upper triangle of a row x col matrix (from diagonal
    ``offset`` up), row by row: ``x[tuple(triu_indices(3, 3, 1))]`` reads the entries above the diagonal."""
    _device(device, "triu_indices")
    return Tensor(np.stack(np.triu_indices(row, offset, col)).astype(_index_dtype(dtype, "triu_indices")))  # (2, N)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None) -> Tensor:
    """The (2, N) positions of the lower triangle (from diagonal ``offset`` down), row by row."""
    _device(device, "tril_indices")
    return Tensor(np.stack(np.tril_indices(row, offset, col)).astype(_index_dtype(dtype, "tril_indices")))  # (2, N)


def _index_dtype(dtype, who: str) -> np.dtype:
    dt = np.dtype(dtype or np.int64)
    if dt.kind not in "iu":  # PyTorch's words for a float dtype here
        raise NotImplementedError(f'"{who}" not implemented for {dt.name!r}: positions need an integer dtype')
    return dt
