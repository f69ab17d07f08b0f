"""3-D pooling and adaptive max pooling, as PyTorch's: F.max_pool3d / nn.MaxPool3d, F.avg_pool3d /
nn.AvgPool3d, F.adaptive_avg_pool3d / nn.AdaptiveAvgPool3d (the N-d code of nn/functional_conv.py), and
F.adaptive_max_pool1d/2d/3d / nn.AdaptiveMaxPool1d/2d/3d: the largest value in each of output_size
nearly equal bins (bin i of n positions into o covers floor(i n / o) .. ceil((i + 1) n / o) - 1)."""
from __future__ import annotations

import itertools

import numpy as np

from ..tensor import Function, Tensor
from . import functional_conv as FC
from .module import Module
from .pooling import AdaptiveAvgPool1d, AvgPool2d, _MaxPoolNd

__all__ = ["AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool3d", "MaxPool3d",
           "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "avg_pool3d",
           "max_pool3d"]


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """The largest value in each window of (N, C, D, H, W) -> (N, C, D_out, H_out, W_out)."""
    return FC._max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, "max_pool3d")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None) -> Tensor:
    """The mean of each window of (N, C, D, H, W) -> (N, C, D_out, H_out, W_out)."""
    return FC._avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                        "avg_pool3d")


def adaptive_avg_pool3d(input, output_size) -> Tensor:
    """(N, C, D, H, W) -> (N, C, *output_size): the mean over nearly equal bins."""
    return FC._adaptive_avg_pool(3, input, output_size, "adaptive_avg_pool3d")


def _bins(n: int, o: int) -> list[slice]:
    return [slice((i * n) // o, -((-(i + 1) * n) // o)) for i in range(o)]


class AdaptiveMaxPoolNd(Function):
    """out = the largest value of each bin (the first on ties);  dx = g added at that element (bins may overlap)"""
    @staticmethod
    def forward(ctx, x, idx):
        ctx.idx, ctx.shape = idx, x.shape
        flat = x.reshape(*x.shape[:2], -1)  # (N, C, prod S)
        return np.take_along_axis(flat, idx.reshape(*idx.shape[:2], -1), -1).reshape(idx.shape)  # (N, C, *O)

    @staticmethod
    def backward(ctx, g):
        N, C = ctx.shape[:2]
        dx = np.zeros((N, C, int(np.prod(ctx.shape[2:]))), dtype=g.dtype)  # (N, C, prod S)
        n, c = np.meshgrid(np.arange(N), np.arange(C), indexing="ij")  # (N, C) each
        flat_idx = ctx.idx.reshape(N, C, -1)  # (N, C, prod O)
        np.add.at(dx, (n[..., None], c[..., None], flat_idx), g.reshape(N, C, -1))
        return dx.reshape(ctx.shape)


def _adaptive_max_pool(nd: int, input, output_size, return_indices: bool, who: str):
    x, unbatched = FC._batched(input, nd, who)
    sizes = (output_size,) * nd if output_size is None or isinstance(output_size, (int, np.integer)) \
        else tuple(output_size)
    if len(sizes) != nd:
        raise ValueError(f"{who}: output_size must be an int or a tuple of {nd}, got {output_size!r}")
    S = x.shape[2:]
    O = tuple(n if o is None else int(o) for n, o in zip(S, sizes))  # None keeps that size
    if min(O) < 1:
        raise RuntimeError(f"{who}: output_size must be >= 1 in every dim, got {output_size!r}")
    data = x._data
    idx = np.zeros(x.shape[:2] + O, dtype=np.int64)  # (N, C, *O): flat index into *S of each bin's max
    for cell in itertools.product(*[list(enumerate(_bins(n, o))) for n, o in zip(S, O)]):
        where = tuple(b for _, b in cell)
        win = data[(slice(None), slice(None)) + where]  # (N, C, *bin)
        local = np.unravel_index(win.reshape(*win.shape[:2], -1).argmax(-1), win.shape[2:])  # per dim, (N, C)
        idx[(slice(None), slice(None)) + tuple(i for i, _ in cell)] = np.ravel_multi_index(
            tuple(loc + b.start for loc, b in zip(local, where)), S)
    out = AdaptiveMaxPoolNd.apply(x, idx=idx)
    if unbatched:
        out, idx = out.squeeze(0), idx[0]
    return (out, Tensor(idx)) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices: bool = False):
    """(N, C, L) -> (N, C, output_size): the largest value of each bin."""
    return _adaptive_max_pool(1, input, output_size, return_indices, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices: bool = False):
    """(N, C, H, W) -> (N, C, *output_size); ``output_size=1`` is global max pooling."""
    return _adaptive_max_pool(2, input, output_size, return_indices, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices: bool = False):
    """(N, C, D, H, W) -> (N, C, *output_size)."""
    return _adaptive_max_pool(3, input, output_size, return_indices, "adaptive_max_pool3d")


class MaxPool3d(_MaxPoolNd):
    """The largest value in each window: (N, C, D, H, W) -> (N, C, D_out, H_out, W_out)."""
    def forward(self, input: Tensor):  # noqa: A002
        return max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                          self.return_indices)


class AvgPool3d(AvgPool2d):
    """The mean of each window: (N, C, D, H, W) -> (N, C, D_out, H_out, W_out); AvgPool2d's options."""
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                          self.divisor_override)


class AdaptiveAvgPool3d(AdaptiveAvgPool1d):
    """(N, C, D, H, W) -> (N, C, *output_size)."""
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return adaptive_avg_pool3d(input, self.output_size)


class _AdaptiveMaxPoolNd(Module):
    _fn = staticmethod(adaptive_max_pool1d)

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor):  # noqa: A002
        return self._fn(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """The largest value of each of output_size bins: (N, C, L) -> (N, C, output_size)."""


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """(N, C, H, W) -> (N, C, *output_size); AdaptiveMaxPool2d(1) is global max pooling."""
    _fn = staticmethod(adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """(N, C, D, H, W) -> (N, C, *output_size)."""
    _fn = staticmethod(adaptive_max_pool3d)
