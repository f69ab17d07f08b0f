"""nn.Conv1d/2d/3d: PyTorch's convolution layers (the work is F.conv1d/2d/3d, nn/functional_conv.py).

weight (out_channels, in_channels / groups, *kernel_size), bias (out_channels,), both drawn as
PyTorch draws them: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = in_channels / groups * prod(kernel_size)
(PyTorch's kaiming_uniform_(a=sqrt(5)) works out to that bound).
"""
from __future__ import annotations

import math

import numpy as np

from .. import checks
from ..tensor import Tensor
from . import functional_conv as FC
from . import padding as P
from .layers import _uniform_init
from .module import Module, Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "LazyConv1d", "LazyConv2d", "LazyConv3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    _nd = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        super().__init__()
        who, nd = type(self).__name__, self._nd
        checks.device(device, who)
        self.in_channels = checks.positive_int("in_channels", in_channels, who)
        self.out_channels = checks.positive_int("out_channels", out_channels, who)
        self.groups = checks.positive_int("groups", groups, who)
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        self.kernel_size = FC._tuple(kernel_size, nd, "kernel_size", who)
        self.stride = FC._tuple(stride, nd, "stride", who)
        self.dilation = FC._tuple(dilation, nd, "dilation", who)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}")
            if padding == "same" and max(self.stride) > 1:
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = FC._tuple(padding, nd, "padding", who)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {list(_PADDING_MODES)}, but got padding_mode='{padding_mode}'")
        self.padding_mode = padding_mode
        self.output_padding, self.transposed = (0,) * nd, False
        fan_in = in_channels // groups * math.prod(self.kernel_size)
        self.weight = Parameter(_uniform_init((out_channels, in_channels // groups, *self.kernel_size), fan_in))
        if dtype is not None:
            self.weight = Parameter(self.weight.detach().to(dtype))
        if bias:
            self.bias = Parameter(_uniform_init((out_channels,), fan_in).astype(self.weight.dtype))
        else:
            self.register_parameter("bias", None)
        if type(self).reset_parameters is not _ConvNd.reset_parameters:  # a subclass's own init (nn/reset.py)
            self.reset_parameters()

    def _conv_forward(self, x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        conv = FC.CONV[self._nd]
        if self.padding_mode == "zeros":
            return conv(x, weight, bias, self.stride, self.padding, self.dilation, self.groups)
        # another mode: pad first with F.pad (its pairs list the last dim first), then convolve unpadded
        if self.padding == "same":
            totals = [d * (k - 1) for k, d in zip(self.kernel_size, self.dilation)]
            pairs = [(t // 2, t - t // 2) for t in totals]
        else:
            pairs = [(0, 0) if self.padding == "valid" else (p, p) for p in (self.padding if self.padding != "valid"
                                                                              else (0,) * self._nd)]
        widths = tuple(w for pair in reversed(pairs) for w in pair)
        return conv(P.pad(x, widths, mode=self.padding_mode), weight, bias, self.stride, 0, self.dilation,
                    self.groups)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return self._conv_forward(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._nd:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """Conv1d(in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
    padding_mode='zeros'): (N, C_in, L) -> (N, C_out, L_out), L_out = (L + 2p - d (k - 1) - 1) // s + 1."""
    _nd = 1


class Conv2d(_ConvNd):
    """Conv2d(in_channels, out_channels, kernel_size, ...): (N, C_in, H, W) -> (N, C_out, H_out, W_out)."""
    _nd = 2


class Conv3d(_ConvNd):
    """Conv3d(in_channels, out_channels, kernel_size, ...): (N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out)."""
    _nd = 3


class _LazyConvMixin:
    """in_channels read from the first input, as LazyLinear reads in_features: until then the weight has
    shape (out_channels, 0, *kernel_size); the first forward draws it (Conv's init, from the generator
    at that moment) into the same Parameter objects and turns the module into a plain Conv."""

    _base: type = _ConvNd

    def __init__(self, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups: int = 1,
                 bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None) -> None:
        self._base.__init__(self, groups, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                            padding_mode, device, dtype)
        self.in_channels = 0
        self.weight.data = np.zeros((out_channels, 0, *self.kernel_size), dtype=self.weight.dtype)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if not isinstance(input, Tensor) or input.ndim not in (self._nd + 1, self._nd + 2):
            raise RuntimeError(f"{type(self).__name__}: expected an input (N, C, ...) or (C, ...) with "
                               f"{self._nd + 2} or {self._nd + 1} dims, got {getattr(input, 'shape', input)!r}")
        channels = input.shape[1] if input.ndim == self._nd + 2 else input.shape[0]
        if channels % self.groups:
            raise ValueError("in_channels must be divisible by groups")
        self.in_channels = channels
        fan_in = channels // self.groups * math.prod(self.kernel_size)
        dt = self.weight.dtype
        self.weight.data = _uniform_init((self.out_channels, channels // self.groups, *self.kernel_size),
                                         fan_in).astype(dt)
        if self.bias is not None:
            self.bias.data = _uniform_init((self.out_channels,), fan_in).astype(dt)
        self.__class__ = self._base  # initialised: from now on exactly a Conv, as PyTorch's lazy modules
        return self.forward(input)


class LazyConv1d(_LazyConvMixin, Conv1d):
    """LazyConv1d(out_channels, kernel_size, ...): a Conv1d whose in_channels comes from the first input."""
    _base = Conv1d


class LazyConv2d(_LazyConvMixin, Conv2d):
    """LazyConv2d(out_channels, kernel_size, ...): a Conv2d whose in_channels comes from the first input."""
    _base = Conv2d


class LazyConv3d(_LazyConvMixin, Conv3d):
    """LazyConv3d(out_channels, kernel_size, ...): a Conv3d whose in_channels comes from the first input."""
    _base = Conv3d
