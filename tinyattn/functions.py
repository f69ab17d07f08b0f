"""PyTorch's top-level math functions (``torch.pow``, ``torch.sin``, ``torch.transpose``, ...).

Each is the Tensor method of the same name, so ``torch.sin(x)`` and ``x.sin()`` are one op: the
derivative lives with the method's op in tensor.py. Numbers and arrays are accepted where a tensor
is expected, as PyTorch accepts them for the first argument of most of these.
"""
from __future__ import annotations

from .tensor import Tensor

__all__ = [
    "abs", "amax", "amin", "argmin", "chunk", "clamp", "clip", "cos", "cumsum", "flatten", "gather", "masked_fill",
    "neg", "permute", "pow", "repeat_interleave", "reshape", "sin", "split", "square", "squeeze", "std", "transpose",
    "unbind", "unsqueeze", "var",
]


def _t(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


# (these names shadow Python's abs and pow inside this module only; nothing here uses the builtins)
def abs(input) -> Tensor: return _t(input).abs()  # noqa: A001
def sin(input) -> Tensor: return _t(input).sin()
def cos(input) -> Tensor: return _t(input).cos()
def neg(input) -> Tensor: return -_t(input)
def square(input) -> Tensor: return _t(input) ** 2


def pow(input, exponent) -> Tensor:  # noqa: A001
    """input ** exponent; either one may be a number (``torch.pow(2, x)`` is 2 ** x)."""
    if not isinstance(input, Tensor) and isinstance(exponent, Tensor):
        return exponent.__rpow__(input)
    return _t(input) ** exponent


def clamp(input, min=None, max=None) -> Tensor:  # noqa: A002
    """input clipped to [min, max] elementwise (either bound may be None)."""
    return _t(input).clamp(min, max)


clip = clamp  # PyTorch's alias


def cumsum(input, dim: int) -> Tensor: return _t(input).cumsum(dim)
def gather(input, dim: int, index) -> Tensor: return _t(input).gather(dim, index)
def masked_fill(input, mask, value) -> Tensor: return _t(input).masked_fill(mask, value)


def var(input, dim=None, keepdim: bool = False, correction: int = 1) -> Tensor:
    """sum((x - mean)^2) / (N - correction) over ``dim``."""
    return _t(input).var(dim, keepdim=keepdim, correction=correction)


def std(input, dim=None, keepdim: bool = False, correction: int = 1) -> Tensor:
    """sqrt(var(input, dim, correction))."""
    return _t(input).std(dim, keepdim=keepdim, correction=correction)


def amax(input, dim=None, keepdim: bool = False) -> Tensor: return _t(input).amax(dim, keepdim)
def amin(input, dim=None, keepdim: bool = False) -> Tensor: return _t(input).amin(dim, keepdim)
def argmin(input, dim=None, keepdim: bool = False) -> Tensor: return _t(input).argmin(dim, keepdim)


# --- shape functions --------------------------------------------------------------------------
def reshape(input, shape) -> Tensor: return _t(input).reshape(shape)
def flatten(input, start_dim: int = 0, end_dim: int = -1) -> Tensor: return _t(input).flatten(start_dim, end_dim)
def transpose(input, dim0: int, dim1: int) -> Tensor: return _t(input).transpose(dim0, dim1)
def permute(input, dims) -> Tensor: return _t(input).permute(dims)
def unsqueeze(input, dim: int) -> Tensor: return _t(input).unsqueeze(dim)
def squeeze(input, dim: int | None = None) -> Tensor: return _t(input).squeeze(dim)
def split(tensor, split_size_or_sections, dim: int = 0) -> tuple: return _t(tensor).split(split_size_or_sections, dim)
def chunk(input, chunks: int, dim: int = 0) -> tuple: return _t(input).chunk(chunks, dim)
def unbind(input, dim: int = 0) -> tuple: return _t(input).unbind(dim)


def repeat_interleave(input, repeats: int, dim: int | None = None) -> Tensor:
    """Each element ``repeats`` times along ``dim`` (flattened first when dim is None)."""
    return _t(input).repeat_interleave(repeats, dim)
