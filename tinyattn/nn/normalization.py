"""GroupNorm, RMSNorm and InstanceNorm1d/2d/3d (F.group_norm, F.rms_norm, F.instance_norm), as PyTorch's.

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
from ..tensor import Tensor, get_default_dtype, no_grad
from . import functional as F
from .module import Module, Parameter

__all__ = ["GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm", "group_norm", "instance_norm",
           "rms_norm"]


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


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """(N, C, *) -> same shape: each (example, channel) normalized over its positions (biased variance), then
    * weight[c] + bias[c]. With running statistics given: use_input_stats updates them with the batch's
    average instance mean and (unbiased) variance; use_input_stats=False normalizes with them instead."""
    x = F._as_tensor(input, "instance_norm")
    if x.ndim < 3:
        raise ValueError(f"instance_norm: expected an input of at least 3 dims (N, C, *), got shape {tuple(x.shape)}")
    dims = tuple(range(2, x.ndim))
    per_channel = (x.shape[1],) + (1,) * (x.ndim - 2)  # (C, 1, ...): broadcast over positions
    if use_input_stats:
        mean = x.mean(dims, keepdim=True)  # (N, C, 1, ...)
        centred = x - mean
        var = (centred * centred).mean(dims, keepdim=True)  # biased, as PyTorch's normalization
        if running_mean is not None or running_var is not None:
            n = int(np.prod(x.shape[2:]))
            with no_grad():
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(mean.detach().mean(0).reshape(-1) * momentum)
                if running_var is not None:
                    unbiased = var.detach().mean(0).reshape(-1) * (n / max(n - 1, 1))
                    running_var.mul_(1 - momentum).add_(unbiased * momentum)
        y = centred / (var + eps).sqrt()
    else:
        y = (x - running_mean.reshape(per_channel)) / (running_var.reshape(per_channel) + eps).sqrt()
    if weight is not None:
        y = y * weight.reshape(per_channel)
    if bias is not None:
        y = y + bias.reshape(per_channel)
    return y


class _InstanceNorm(Module):
    _nd = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        checks.device(device)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight, self.bias = _param((num_features,), 1.0, dtype), _param((num_features,), 0.0, dtype)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            dt = np.dtype(dtype or get_default_dtype())
            self.register_buffer("running_mean", Tensor(np.zeros(num_features, dtype=dt)))
            self.register_buffer("running_var", Tensor(np.ones(num_features, dtype=dt)))
            self.register_buffer("num_batches_tracked", Tensor(np.array(0, dtype=np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        nd = self._nd
        if input.ndim not in (nd + 1, nd + 2):
            raise ValueError(f"expected {nd + 1}D or {nd + 2}D input (got {input.ndim}D input)")
        unbatched = input.ndim == nd + 1
        x = input.unsqueeze(0) if unbatched else input
        if x.shape[1] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={1 - unbatched} to match num_features "
                                 f"({self.num_features}), but got: {x.shape[1]}.")
            import warnings
            warnings.warn(f"input's size at dim={1 - unbatched} does not match num_features. You can silence this "
                          "warning by not passing in num_features, which is not used because affine=False",
                          UserWarning, stacklevel=2)
        use_input_stats = self.training or not self.track_running_stats
        y = instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats,
                          self.momentum if self.momentum is not None else 0.1, self.eps)
        return y.squeeze(0) if unbatched else y

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """F.instance_norm as a module over (N, C, L) or (C, L)."""
    _nd = 1


class InstanceNorm2d(_InstanceNorm):
    """F.instance_norm as a module over (N, C, H, W) or (C, H, W): per-image, per-channel (style transfer)."""
    _nd = 2


class InstanceNorm3d(_InstanceNorm):
    """F.instance_norm as a module over (N, C, D, H, W) or (C, D, H, W)."""
    _nd = 3
