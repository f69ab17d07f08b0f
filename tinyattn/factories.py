"""Making tensors: ``tensor``, ``zeros``, ``ones``, ``full``, ``arange`` and the ``*_like`` forms (torch.* names).

Each builds a NumPy array and wraps it in a Tensor; ``device=`` is accepted (PyTorch code passes it
everywhere) and must name the CPU. Random tensors live in ``sampling.py``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

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


def full(shape, fill_value: float, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    _device(device)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return _factory(np.full(shape, fill_value, dtype=dtype or get_default_dtype()), requires_grad)


def zeros_like(t: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    return _factory(np.zeros(np.shape(_as_array(t)), dtype=dtype or _as_array(t).dtype), requires_grad)


def ones_like(t: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    return _factory(np.ones(np.shape(_as_array(t)), dtype=dtype or _as_array(t).dtype), requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """Like torch.arange: ints give int64, floats give the default dtype."""
    _device(device)
    if end is None:
        start, end = 0, start
    is_int = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    dt = dtype or (np.int64 if is_int else get_default_dtype())
    return _factory(np.arange(start, end, step, dtype=dt), requires_grad)
