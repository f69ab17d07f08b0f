"""GroupNorm and RMSNorm (F.group_norm, F.rms_norm), as PyTorch's.

GroupNorm splits the C channels of (N, C, *) into num_groups groups and normalizes each group of each
example to mean 0, variance 1 (biased), then scales and shifts per channel: batch-size-independent,
used by diffusion U-Nets and some vision transformers. RMSNorm (Llama, T5, Gemma) divides the last
dims by their root mean square, with no centring and no bias. Both are compositions of differentiable
ops, so their gradients come from those ops.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import checks
from ..tensor import Tensor, get_default_dtype
from . import functional as F
from .module import Module, Parameter

__all__ = ["GroupNorm", "RMSNorm", "group_norm", "rms_norm"]


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """(N, C, *) -> same shape: each of num_groups groups of C / num_groups channels normalized over its
    channels and positions, then * weight[c] + bias[c]."""
    x = F._as_tensor(input, "group_norm")
    if x.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {x.ndim}")
    N, C = x.shape[0], x.shape[1]
    if C % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(x.shape)} and num_groups={num_groups}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != (C,):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(p.shape)} and input of shape {list(x.shape)}")
    g = x.reshape(N, num_groups, -1)  # (N, G, C/G * prod(*)): one row per group of one example
    mean = g.mean(-1, keepdim=True)  # (N, G, 1)
    centred = g - mean
    var = (centred * centred).mean(-1, keepdim=True)  # (N, G, 1), biased as PyTorch's
    y = (centred / (var + eps).sqrt()).reshape(x.shape)  # (N, C, *)
    per_channel = (C,) + (1,) * (x.ndim - 2)  # (C, 1, ...): broadcast over positions
    if weight is not None:
        y = y * weight.reshape(per_channel)
    if bias is not None:
        y = y + bias.reshape(per_channel)
    return y


def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2 over the last len(normalized_shape) dims) + eps) * weight; eps=None means the
    dtype's machine epsilon (torch.finfo(x.dtype).eps), as PyTorch."""
    x = F._as_tensor(input, "rms_norm")
    if isinstance(normalized_shape, (int, np.integer)) or not isinstance(normalized_shape, Sequence):
        raise TypeError("rms_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{type(normalized_shape).__name__}")
    shape = tuple(int(n) for n in normalized_shape)
    if x.shape[x.ndim - len(shape):] != shape or len(shape) > x.ndim:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*{', '.join(map(str, shape))}], "
                           f"but got input of size{list(x.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(shape)}")
    eps = float(np.finfo(x.dtype).eps) if eps is None else eps
    dims = tuple(range(x.ndim - len(shape), x.ndim))
    y = x * ((x * x).mean(dims, keepdim=True) + eps).rsqrt()  # (..., 1, ...) broadcast over the normalized dims
    return y if weight is None else y * weight


def _param(shape: tuple, fill: float, dtype) -> Parameter:
    return Parameter(np.full(shape, fill, dtype=np.dtype(dtype or get_default_dtype())))


class GroupNorm(Module):
    """F.group_norm as a module: weight (ones) and bias (zeros) of shape (num_channels,) when affine."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        checks.device(device)
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.weight = _param((num_channels,), 1.0, dtype) if affine else None
        self.bias = _param((num_channels,), 0.0, dtype) if affine and bias else None
        if self.weight is None:
            self.register_parameter("weight", None)
        if self.bias is None:
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """F.rms_norm as a module: weight (ones) of normalized_shape when elementwise_affine; no bias."""

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        checks.device(device)
        shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = tuple(int(n) for n in shape), eps, elementwise_affine
        if elementwise_affine:
            self.weight = _param(self.normalized_shape, 1.0, dtype)
        else:
            self.register_parameter("weight", None)

    def forward(self, x: Tensor) -> Tensor:
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"

