"""PyTorch's dtype names as the NumPy dtypes they mean here, and the typed-tensor constructors.

``dtype=torch.long`` or ``x.type(torch.uint8)`` run unchanged: each name IS a NumPy scalar type.
NumPy has no bfloat16, so ``bfloat16`` is a stand-in that can be named (code that picks a dtype
from a table still imports) but raises a clear TypeError the moment anything is made with it.
"""
from __future__ import annotations

import builtins

import numpy as np

from .tensor import Tensor, _TYPE_OF_NAME, _as_array, _new_shape, float32, float64

__all__ = [
    "bfloat16", "bool", "double", "float", "float16", "float32", "float64", "half", "int", "int8", "int16", "int32",
    "int64", "long", "short", "uint8", "cdouble", "cfloat", "complex64", "complex128",
    "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor", "HalfTensor", "IntTensor", "LongTensor",
    "ShortTensor", "finfo", "iinfo", "dtype", "set_default_tensor_type",
]

uint8 = np.uint8
int8 = np.int8
int16 = short = np.int16
int32 = int = np.int32  # noqa: A001  (torch.int is int32)
int64 = long = np.int64
float16 = half = np.float16
double = float64
float = float32  # noqa: A001  (torch.float is float32)
bool = np.bool_  # noqa: A001
complex64 = cfloat = np.complex64  # (compat/complex.py: view_as_complex, polar, Llama's rotary embedding)
complex128 = cdouble = np.complex128


class _NoDtypeError(TypeError, RecursionError):
    """A TypeError that NumPy passes on from an object's ``.dtype``: before NumPy 2.4, np.dtype(x) replaces
    any error raised there by its own "Cannot interpret ... as a data type", except a RecursionError."""


class _NoBfloat16:
    """torch.bfloat16's stand-in: NumPy has no bfloat16, so any use of it as a dtype raises."""

    @property
    def dtype(self):  # np.dtype(x), np.zeros(..., dtype=x) and astype(x) all read this attribute
        raise _NoDtypeError("bfloat16 is not supported: NumPy has no bfloat16. Use tinyattn.float32 "
                            "(or float16 to halve the memory)")

    def __repr__(self) -> str:
        return "tinyattn.bfloat16"

    is_floating_point = True  # what torch.bfloat16.is_floating_point says
    itemsize = 2


bfloat16 = _NoBfloat16()


def _typed(name: str):
    dt = _TYPE_OF_NAME[name]

    def make(*data) -> Tensor:
        # torch.LongTensor([[1, 2]]) holds the data; torch.LongTensor(2, 3) is a tensor of that shape
        # (left uninitialised by PyTorch, zeros here, so nothing depends on leftover memory).
        if len(data) == 1 and not isinstance(data[0], (builtins.int, np.integer)) or not data:  # (this module's int is int32)
            return Tensor(np.array(_as_array(data[0]) if data else [], dtype=dt))
        return Tensor(np.zeros(_new_shape(data), dtype=dt))

    make.__name__ = make.__qualname__ = name
    make.__doc__ = (f"``{name}(data)``: a {np.dtype(dt).name} tensor holding data; ``{name}(*sizes)``: "
                    "zeros of that shape. Also a type for ``x.type(...)``.")
    make.dtype = dt  # so np.dtype(LongTensor), x.type(LongTensor) and x.to(LongTensor) mean int64
    return make


FloatTensor, DoubleTensor, HalfTensor = _typed("FloatTensor"), _typed("DoubleTensor"), _typed("HalfTensor")
LongTensor, IntTensor, ShortTensor = _typed("LongTensor"), _typed("IntTensor"), _typed("ShortTensor")
CharTensor, ByteTensor, BoolTensor = _typed("CharTensor"), _typed("ByteTensor"), _typed("BoolTensor")


def finfo(type=None) -> np.finfo:  # noqa: A002  (torch.finfo)
    """The limits of a float dtype (default: the default dtype): ``.min``, ``.max``, ``.eps``, ``.tiny``,
    ``.bits``, as torch.finfo. ``torch.finfo(x.dtype).min`` is the usual "minus infinity" for a mask."""
    from .tensor import get_default_dtype
    dt = np.dtype(get_default_dtype() if type is None else type)
    if dt.kind not in "fc":  # (a complex dtype: the limits of its parts, as PyTorch)
        raise TypeError(f"finfo: {dt} is not a floating-point dtype (use iinfo for integers)")
    return np.finfo(dt)


def iinfo(type) -> np.iinfo:  # noqa: A002  (torch.iinfo)
    """The limits of an integer dtype: ``.min``, ``.max``, ``.bits``, as torch.iinfo."""
    dt = np.dtype(type)
    if dt.kind not in "iu":
        raise TypeError(f"iinfo: {dt} is not an integer dtype (use finfo for floats)")
    return np.iinfo(dt)


class _DtypeMeta(type):
    def __instancecheck__(cls, obj) -> builtins.bool:
        return isinstance(obj, np.dtype) or obj is bfloat16 or (isinstance(obj, type) and issubclass(obj, np.generic))


class dtype(metaclass=_DtypeMeta):  # noqa: N801  (torch.dtype)
    """The type of ``torch.float32`` & co., for annotations (``dtype: torch.dtype``) and ``isinstance(d,
    torch.dtype)``: here a dtype is a NumPy scalar type (or np.dtype, or the bfloat16 stand-in)."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.dtype' instances")


def set_default_tensor_type(t) -> None:
    """Deprecated in PyTorch (which warns): ``'torch.DoubleTensor'`` or ``torch.DoubleTensor`` sets the default
    dtype to float64. GPU types raise PyTorch's CPU-build error; non-float types its TypeError."""
    import warnings
    from .tensor import set_default_dtype
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning, stacklevel=2)
    name = t if isinstance(t, str) else getattr(t, "__name__", repr(t))
    if name.startswith("torch.cuda.") or not isinstance(t, str) and getattr(t, "__module__", "") == "tinyattn.cuda":
        raise TypeError(f"type torch.cuda.{name.rsplit('.', 1)[-1]} not available. Torch not compiled with CUDA enabled.")
    dt = _TYPE_OF_NAME.get(name.rsplit(".", 1)[-1])
    if dt is None:
        raise AttributeError(f"module 'torch' has no attribute {name.rsplit('.', 1)[-1]!r}")
    if np.dtype(dt).kind != "f":
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(dt)
