"""``Tensor.to`` with PyTorch's three signatures, and PyTorch's memory-format names.

PyTorch's ``to`` is three overloads in one name:

    x.to(dtype, non_blocking=False, copy=False, *, memory_format=torch.preserve_format)
    x.to(device=None, dtype=None, non_blocking=False, copy=False, *, memory_format=torch.preserve_format)
    x.to(other, non_blocking=False, copy=False)        # other's dtype (and device)

The result is ``x`` itself when nothing changes and ``copy`` is False; otherwise a new tensor, whose
gradient flows back to ``x`` when both are floating point (PyTorch's ToCopyBackward). Every device
but the CPU raises a CPU-only PyTorch's error (``tinyattn.checks.device``); ``non_blocking`` changes
nothing, since there is no second device to copy to. Arguments that fit none of the three raise a
``TypeError`` listing them, as PyTorch's does.
"""
from __future__ import annotations

import numpy as np

from tinyattn import autograd, checks
from tinyattn.compat.ops import Cast

__all__ = ["channels_last", "check_device", "parse", "channels_last_3d", "contiguous_format", "memory_format", "preserve_format", "tensor_to"]


class memory_format:  # noqa: N801  (PyTorch's spelling)
    """How a tensor's elements are laid out in memory. NumPy arrays made here are in C order, so the
    layout changes only speed in PyTorch, never a value; the names exist for code that passes them."""

    def __init__(self, name: str, rank: int | None = None) -> None:
        self._name, self._rank = name, rank

    def __repr__(self) -> str:
        return f"torch.{self._name}"


preserve_format = memory_format("preserve_format")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last", 4)  # (N, C, H, W) laid out as (N, H, W, C) in PyTorch
channels_last_3d = memory_format("channels_last_3d", 5)

_SIGNATURES = ("(device=None, dtype=None, non_blocking=False, copy=False, *, memory_format=None)",
               "(dtype, non_blocking=False, copy=False, *, memory_format=None)",
               "(other: Tensor, non_blocking=False, copy=False, *, memory_format=None)")


def _is_dtype(x) -> bool:
    """torch.float32 (here NumPy's float32), np.dtype('float64') and Python's float/int/bool are dtypes;
    a string is a device name ('cpu', 'cuda:0'), as in PyTorch."""
    if isinstance(x, autograd.Tensor):
        return False
    if isinstance(x, type):
        return issubclass(x, np.generic) or x in (float, int, bool)
    # np.dtype itself, or an object that names one in a .dtype attribute, as NumPy reads it: the
    # constructors (x.type(torch.LongTensor)) and tinyattn.bfloat16 (reading it explains that NumPy has none)
    # (an array has a .dtype too, but is no dtype: x.to(array) is the bad call PyTorch reports)
    return isinstance(x, np.dtype) or not isinstance(x, np.ndarray) and (
        hasattr(type(x), "dtype") or "dtype" in getattr(x, "__dict__", ()))


def _bad_call(args: tuple, kwargs: dict) -> TypeError:
    got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
    return TypeError(f"to() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     + "\n".join(" * " + s for s in _SIGNATURES))


def _parse(self, args: tuple, kwargs: dict):  # noqa: ARG001  (self: the bound method's tensor)
    """(device, dtype, non_blocking, copy, memory_format) from any of the three signatures."""
    if len(args) > 4:
        raise TypeError(f"to() takes from 0 to 4 positional arguments but {len(args)} were given")
    if args and isinstance(args[0], autograd.Tensor):  # to(other, non_blocking, copy)
        names, lead, rest = ("non_blocking", "copy"), {"device": "cpu", "dtype": args[0].dtype}, args[1:]
    elif args and _is_dtype(args[0]):  # to(dtype, non_blocking, copy)
        names, lead, rest = ("non_blocking", "copy"), {"dtype": args[0]}, args[1:]
    else:  # to(device, dtype, non_blocking, copy), every one optional
        names, lead, rest = ("device", "dtype", "non_blocking", "copy"), {}, args
    given = dict(zip(names, rest))
    if len(rest) > len(names) or set(given) & set(kwargs) or set(kwargs) - set(names) - {"memory_format"}:
        raise _bad_call(args, kwargs)
    opts = {"device": None, "dtype": None, "non_blocking": False, "copy": False, "memory_format": preserve_format,
            **lead, **given, **kwargs}
    if not isinstance(opts["non_blocking"], bool) or not isinstance(opts["copy"], bool) \
            or not isinstance(opts["memory_format"], memory_format) \
            or not (opts["dtype"] is None or _is_dtype(opts["dtype"])):
        raise _bad_call(args, kwargs)
    copy_given = "copy" in given or "copy" in kwargs  # Module.to refuses copy even when False, as PyTorch
    return opts["device"], opts["dtype"], opts["copy"], opts["memory_format"], copy_given


def check_device(device, args: tuple, kwargs: dict, who: str) -> None:
    """The CPU (or no device) passes; a GPU, or an int (a CUDA index), raises a CPU-only PyTorch's error."""
    if device is None:
        return
    if isinstance(device, (int, np.integer)) and not isinstance(device, bool):
        raise RuntimeError(f"Cannot access accelerator device when none is available. ({who}({device}): "
                           "an integer is a CUDA device index; tinyattn runs on the CPU with NumPy)")
    if not isinstance(device, str):
        raise _bad_call(args, kwargs)
    checks.device(device, who)  # raises for anything but the CPU


def tensor_to(self, *args, **kwargs):
    """``x.to('cpu', dtype=torch.float64)``, ``x.to(torch.float64, copy=True)``, ``x.to(other)``, ...:
    the tensor in that dtype on that device (``self`` itself when nothing changes and copy=False)."""
    device, dtype, copy, layout, _ = _parse(self, args, kwargs)
    check_device(device, args, kwargs, "Tensor.to")
    if layout._rank is not None and self.ndim != layout._rank:
        raise RuntimeError(f"required rank {layout._rank} tensor to use {layout._name} format (Tensor.to: got "
                           f"shape {tuple(self.shape)})")
    dt = self.dtype if dtype is None else np.dtype(dtype)
    if dt == self.dtype and not copy:
        return self
    if dt.kind in "fc" and self.dtype.kind in "fc":  # a copy the gradient flows through, cast back on the way
        return Cast.apply(self, dtype=dt.type)
    with np.errstate(invalid="ignore", over="ignore"):  # NaN and inf to an integer, 70000 to float16: silently, as PyTorch
        return autograd.Tensor._make(self._data.astype(dt))  # an integer/bool copy leaves the graph, like .long()


def parse(args: tuple, kwargs: dict):
    """(device, dtype, copy, memory_format, copy_given) from any of ``to``'s three signatures (Module.to's too)."""
    return _parse(None, args, kwargs)
