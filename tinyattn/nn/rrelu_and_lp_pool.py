"""F.rrelu / nn.RReLU (the randomized leaky ReLU) and F.lp_pool1d / lp_pool2d / nn.LPPool1d / nn.LPPool2d (the
power-average pooling), as PyTorch's.

rrelu multiplies each x <= 0 by a slope: in training drawn uniformly from [lower, upper] per element (from
tinyattn's generator, NumPy's stream), in eval the mean (lower + upper) / 2; the gradient is that slope (at 0
too) and 1 for x > 0. lp_pool is PyTorch's own composition, (k * avg_pool(x^p))^(1/p) with the sign kept, so
values and gradients are the ops'."""
from __future__ import annotations

import numpy as np

from .. import defaults, promotion
from ..tensor import Tensor
from .module import Module

__all__ = ["LPPool1d", "LPPool2d", "RReLU", "lp_pool1d", "lp_pool2d", "rrelu"]


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"rrelu(): argument 'input' must be Tensor, not {type(input).__name__}")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    dt = input._data.dtype
    if dt.kind != "f" or (training and dt != np.float32 and dt != np.float64):
        kernel = "rrelu_with_noise_out_cpu" if training else "leaky_relu_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{promotion.torch_name(dt)}\'')
    low = input._data <= 0
    if training:
        slope = defaults.rng_of(None).uniform(lower, upper, size=input.shape)
    else:
        slope = (lower + upper) / 2
    noise = np.where(low, slope, 1.0).astype(dt)
    out = input * Tensor(noise)
    return input.copy_(out) if inplace else out


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    return rrelu(input, lower, upper, training, inplace=True)


def _lp_pool(dims: int, input, norm_type, kernel_size, stride, ceil_mode):
    from . import functional as F
    pool = F.avg_pool1d if dims == 1 else F.avg_pool2d
    if norm_type == float("inf"):
        return (F.max_pool1d if dims == 1 else F.max_pool2d)(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -(F.max_pool1d if dims == 1 else F.max_pool2d)(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    k = kernel_size if dims == 1 else (kernel_size if isinstance(kernel_size, (tuple, list)) else (kernel_size,) * 2)
    n = k if dims == 1 else k[0] * k[1]
    out = pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * F.relu(out.abs())).mul(n).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type, kernel_size: int, stride=None, ceil_mode: bool = False) -> Tensor:
    """(sum over each window of x^p)^(1/p) of (N, C, L) (p = inf: the max of |x|)."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """(sum over each window of x^p)^(1/p) of (N, C, H, W)."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


class RReLU(Module):
    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class _LPPool(Module):
    _dims = 1

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return _lp_pool(self._dims, input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPool):
    _dims = 1


class LPPool2d(_LPPool):
    _dims = 2
