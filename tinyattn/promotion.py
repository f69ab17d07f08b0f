"""Which dtype an op computes in: PyTorch's type promotion, in one place every op reads.

``promote_types(a, b)`` joins two dtypes; ``result_type(*operands)`` is the dtype of an op on tensors and
Python numbers, with PyTorch's categories (bool < int < float) deciding when a 0-d tensor or a number counts.
"""
from __future__ import annotations

import numpy as np

from tinyattn import autograd, tensor  # tensor is read at call time (it imports this module first)


def promote_types(a, b) -> np.dtype:
    """PyTorch's promotion of two dtypes: NumPy's, except that an int or bool with a float gives that
    float (NumPy widens int64 with float32 to float64; PyTorch keeps float32)."""
    a, b = np.dtype(a), np.dtype(b)
    if (a.kind == "f") != (b.kind == "f"):
        return a if a.kind == "f" else b
    return np.promote_types(a, b)


def _combine(higher, lower):
    """Join two promotion groups (PyTorch's rule): ``lower`` counts only if it is of a higher category
    (bool < int < float) than ``higher``."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    if higher.kind == "f":
        return higher
    if higher.kind == "b" or lower.kind == "f":
        return promote_types(higher, lower)
    return higher


def result_type(*operands) -> np.dtype:
    """The dtype PyTorch gives an op on these tensors and Python numbers.

    Tensors with dims decide among themselves. A 0-d tensor, then a Python number, counts only when it
    is of a higher category (bool < int < float) than all of those: float32 + a 0-d float64 tensor is
    float32, int32 + 1 is int32, but int32 + 0.5 is the default float dtype and a bool tensor + 1 is int64.
    """
    dims = zero = wrapped = None
    for x in operands:
        if isinstance(x, autograd.Tensor):
            dt = x._data.dtype
            if x._data.ndim:
                dims = dt if dims is None else promote_types(dims, dt)
            else:
                zero = dt if zero is None else promote_types(zero, dt)
        else:
            if isinstance(x, bool):
                dt = np.dtype(bool)
            elif isinstance(x, int):
                dt = np.dtype(np.int64)
            elif isinstance(x, float):
                dt = np.dtype(tensor._default_dtype)
            else:  # an array, a NumPy scalar, a list: it becomes a tensor and counts as one
                arr = tensor._as_array(x)
                if arr.ndim:
                    dims = arr.dtype if dims is None else promote_types(dims, arr.dtype)
                else:
                    zero = arr.dtype if zero is None else promote_types(zero, arr.dtype)
                continue
            wrapped = dt if wrapped is None else promote_types(wrapped, dt)
    return _combine(dims, _combine(zero, wrapped))
