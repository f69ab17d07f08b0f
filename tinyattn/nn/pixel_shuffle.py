"""Pixel shuffle (F.pixel_shuffle / nn.PixelShuffle and the unshuffle), as PyTorch's: channels traded for
resolution. pixel_shuffle moves r*r channels into an r-times larger image, (*, C r^2, H, W) -> (*, C, H r, W r)
(sub-pixel convolution upsampling); pixel_unshuffle is its inverse (space-to-depth, a ViT-style patching
of an image). Each is a reshape, a permute and a reshape, so the gradient is theirs."""
from __future__ import annotations

from .. import checks
from ..tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle", "pixel_shuffle", "pixel_unshuffle"]


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    x = F._as_tensor(input, "pixel_shuffle") if not isinstance(input, Tensor) else input
    r = checks.positive_int("upscale_factor", upscale_factor, "pixel_shuffle")
    if x.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with {x.ndim} "
                           "dimension(s)")
    *lead, C, H, W = x.shape
    if C % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={C} is not divisible by {r * r}")
    n = len(lead)
    y = x.reshape(*lead, C // (r * r), r, r, H, W)  # (*, C', r, r, H, W)
    y = y.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)  # (*, C', H, r, W, r)
    return y.reshape(*lead, C // (r * r), H * r, W * r)  # (*, C', H r, W r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    x = F._as_tensor(input, "pixel_unshuffle") if not isinstance(input, Tensor) else input
    r = checks.positive_int("downscale_factor", downscale_factor, "pixel_unshuffle")
    if x.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with {x.ndim} "
                           "dimension(s)")
    *lead, C, H, W = x.shape
    for name, size, dim in (("height", H, -2), ("width", W, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({dim})={size} is not divisible by {r}")
    n = len(lead)
    y = x.reshape(*lead, C, H // r, r, W // r, r)  # (*, C, H', r, W', r)
    y = y.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)  # (*, C, r, r, H', W')
    return y.reshape(*lead, C * r * r, H // r, W // r)  # (*, C r^2, H', W')


class PixelShuffle(Module):
    """F.pixel_shuffle as a module: (N, C r^2, H, W) -> (N, C, H r, W r)."""
    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """F.pixel_unshuffle as a module: (N, C, H r, W r) -> (N, C r^2, H, W)."""
    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
