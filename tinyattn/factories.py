"""Making tensors: ``tensor``, ``zeros``, ``ones``, ``full``, ``arange`` and the ``*_like`` forms (torch.* names).

Each builds a NumPy array and wraps it in a Tensor; ``device=`` is accepted (PyTorch code passes it
everywhere) and must name the CPU. Random tensors live in ``sampling.py``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import checks
from .checks import device as _device
from .tensor import Tensor, _as_array, _new_shape, get_default_dtype


def tensor(data: Any, requires_grad: bool = False, dtype=None, device=None) -> Tensor:
    """Make a Tensor (same as ``Tensor(...)``)."""
    _device(device)
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


def _factory(arr: np.ndarray, requires_grad: bool) -> Tensor:
    return Tensor(arr, requires_grad=requires_grad)


def zeros(*shape, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    _device(device)
    return _factory(np.zeros(_new_shape(shape), dtype=dtype or get_default_dtype()), requires_grad)


def ones(*shape, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    _device(device)
    return _factory(np.ones(_new_shape(shape), dtype=dtype or get_default_dtype()), requires_grad)


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
    raise TypeError(f"full: fill_value must be a number, got {type(value).__name__}")


def full(shape, fill_value: float, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """A tensor of ``shape`` holding ``fill_value``; its dtype follows the value (7 -> int64, True -> bool)."""
    _device(device)
    shape = _new_shape(tuple(shape) if isinstance(shape, (tuple, list)) else (shape,))
    return _factory(np.full(shape, fill_value, dtype=dtype or _fill_dtype(fill_value)), requires_grad)


def zeros_like(t: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    return _factory(np.zeros(np.shape(_as_array(t)), dtype=dtype or _as_array(t).dtype), requires_grad)


def ones_like(t: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    return _factory(np.ones(np.shape(_as_array(t)), dtype=dtype or _as_array(t).dtype), requires_grad)


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
    return _factory(np.arange(start, end, step, dtype=dt), requires_grad)
