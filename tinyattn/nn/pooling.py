"""Pooling layers: nn.MaxPool1d/2d, nn.AvgPool1d/2d, nn.AdaptiveAvgPool1d/2d (the work is in nn/functional_conv.py)."""
from __future__ import annotations

from ..tensor import Tensor
from . import functional_conv as FC
from .module import Module

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AvgPool1d", "AvgPool2d", "MaxPool1d", "MaxPool2d"]


class _MaxPoolNd(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, (kernel_size if stride is None else stride)
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """The largest value in each window: (N, C, L) -> (N, C, L_out); stride defaults to kernel_size."""
    def forward(self, input: Tensor):  # noqa: A002
        return FC.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                             self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """The largest value in each window: (N, C, H, W) -> (N, C, H_out, W_out)."""
    def forward(self, input: Tensor):  # noqa: A002
        return FC.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                             self.return_indices)


class AvgPool1d(Module):
    """The mean of each window: (N, C, L) -> (N, C, L_out)."""
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size, self.stride = FC._tuple(kernel_size, 1, "kernel_size", "AvgPool1d"), stride
        self.stride = self.kernel_size if stride is None else FC._tuple(stride, 1, "stride", "AvgPool1d")
        self.padding = FC._tuple(padding, 1, "padding", "AvgPool1d")
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return FC.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                             self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    """The mean of each window: (N, C, H, W) -> (N, C, H_out, W_out); stride defaults to kernel_size."""
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, (kernel_size if stride is None else stride)
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return FC.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                             self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(Module):
    """The mean over output_size nearly equal bins: (N, C, L) -> (N, C, output_size)."""
    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return FC.adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(AdaptiveAvgPool1d):
    """(N, C, H, W) -> (N, C, *output_size); AdaptiveAvgPool2d(1) (or (1, 1)) is global average pooling."""
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return FC.adaptive_avg_pool2d(input, self.output_size)
