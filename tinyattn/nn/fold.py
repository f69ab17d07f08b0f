"""F.unfold / F.fold and nn.Unfold / nn.Fold: an image's sliding blocks as columns, and back.

``unfold(x, k)`` turns x (N, C, H, W) into (N, C * kh * kw, L): column l holds the block at the l-th
window position (row-major over the oh * ow positions), its rows ordered by channel, then kernel row,
then kernel column, as PyTorch's im2col. ``fold`` is its adjoint: it sums every column back onto its
block of an (N, C, H, W) image, so overlapping blocks add up. Each one's backward is the other.
The windows are NumPy's sliding-window view (nn/functional_conv.py's ``_windows`` and ``_fold``).
"""
from __future__ import annotations

import math

import numpy as np

from ..tensor import Function, Tensor
from .functional_conv import _crop, _fold, _tuple, _windows
from .module import Module

__all__ = ["unfold", "fold", "Unfold", "Fold"]


def _geometry(kernel_size, dilation, padding, stride, who: str) -> tuple:
    K, d, p, s = (_tuple(v, 2, name, who) for v, name in ((kernel_size, "kernel_size"), (dilation, "dilation"),
                                                          (padding, "padding"), (stride, "stride")))
    if min(K) <= 0 or min(d) <= 0 or min(s) <= 0 or min(p) < 0:
        raise RuntimeError(f"{who}: kernel_size, dilation and stride must be positive and padding non-negative, "
                           f"got kernel_size={K}, dilation={d}, padding={p}, stride={s}")
    return K, d, tuple((q, q) for q in p), s


class _Unfold(Function):
    """cols[n, (c, i, j), l] = xp[n, c, window_l + (i, j) * dilation];  dx = fold(g)"""
    @staticmethod
    def forward(ctx, x, K, dilation, pads, stride):
        xp = np.pad(x, ((0, 0), (0, 0)) + pads)  # (N, C, Hp, Wp)
        win = _windows(xp, K, stride, dilation)  # (N, C, oh, ow, kh, kw), a view
        N, C, oh, ow = win.shape[:4]
        ctx.geometry = (xp.shape, K, dilation, pads, stride, (N, C, oh, ow))
        return win.transpose(0, 1, 4, 5, 2, 3).reshape(N, C * math.prod(K), oh * ow)  # (N, C*kh*kw, L)

    @staticmethod
    def backward(ctx, g):
        xp_shape, K, dilation, pads, stride, (N, C, oh, ow) = ctx.geometry
        cols = g.reshape(N, C, *K, oh, ow).transpose(0, 1, 4, 5, 2, 3)  # (N, C, oh, ow, kh, kw)
        return _crop(_fold(cols, xp_shape, K, stride, dilation), pads)  # (N, C, H, W)


class _Fold(Function):
    """out = the sum of each column onto its block (the adjoint of unfold);  dx = unfold(g)"""
    @staticmethod
    def forward(ctx, cols, out_shape, K, dilation, pads, stride, O):
        N, C = out_shape[:2]
        padded = (N, C) + tuple(n + a + b for n, (a, b) in zip(out_shape[2:], pads))
        blocks = cols.reshape(N, C, *K, *O).transpose(0, 1, 4, 5, 2, 3)  # (N, C, oh, ow, kh, kw)
        ctx.geometry = (K, dilation, pads, stride, cols.shape)
        return _crop(_fold(blocks, padded, K, stride, dilation), pads)  # (N, C, H, W)

    @staticmethod
    def backward(ctx, g):
        K, dilation, pads, stride, shape = ctx.geometry
        gp = np.pad(g, ((0, 0), (0, 0)) + pads)
        win = _windows(gp, K, stride, dilation)  # (N, C, oh, ow, kh, kw)
        return win.transpose(0, 1, 4, 5, 2, 3).reshape(shape)  # (N, C*kh*kw, L)


def _batched(x: Tensor, dims: tuple, who: str) -> tuple[Tensor, bool]:
    """A (N, ...) input as it is, an unbatched one with a batch dim of 1 added (PyTorch accepts both)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{who}: input must be a Tensor, got {type(x).__name__}")
    if x.dim() not in dims:
        raise RuntimeError(f"Input Error: Only {dims[0]}D or {dims[1]}D input Tensors are supported (got {x.dim()}D)")
    return (x, False) if x.dim() == dims[1] else (x.unsqueeze(0), True)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """(N, C, H, W) -> (N, C * kh * kw, L): each sliding block as a column (im2col)."""
    K, d, p, s = _geometry(kernel_size, dilation, padding, stride, "unfold")
    x, added = _batched(input, (3, 4), "unfold")
    H, W = x.shape[2] + 2 * p[0][0], x.shape[3] + 2 * p[1][0]
    if any(n < dd * (k - 1) + 1 for n, k, dd in zip((H, W), K, d)):
        raise RuntimeError(f"unfold: the padded input ({H}, {W}) is smaller than the dilated kernel "
                           f"{tuple(dd * (k - 1) + 1 for k, dd in zip(K, d))}")
    out = _Unfold.apply(x, K=K, dilation=d, pads=p, stride=s)
    return out.squeeze(0) if added else out


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """(N, C * kh * kw, L) -> (N, C, H, W): columns summed back onto their blocks (col2im)."""
    K, d, p, s = _geometry(kernel_size, dilation, padding, stride, "fold")
    size = _tuple(output_size, 2, "output_size", "fold")
    x, added = _batched(input, (2, 3), "fold")
    N, CK, L = x.shape
    O = tuple((n + 2 * pp[0] - dd * (k - 1) - 1) // ss + 1 for n, pp, dd, k, ss in zip(size, p, d, K, s))
    if CK % math.prod(K):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={CK} and kernel_size={K}")
    if math.prod(O) != L or min(O) <= 0:
        raise RuntimeError(f"Given output_size={size}, kernel_size={K}, dilation={d}, padding={tuple(q[0] for q in p)}, "
                           f"stride={s}, expected size of input's dimension 2 to match the calculated number of "
                           f"sliding blocks {O[0]} * {O[1]} = {math.prod(O)}, but got input.size(2)={L}.")
    out = _Fold.apply(x, out_shape=(N, CK // math.prod(K), *size), K=K, dilation=d, pads=p, stride=s, O=O)
    return out.squeeze(0) if added else out


class Unfold(Module):
    """F.unfold as a module."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, x: Tensor) -> Tensor:
        return unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Module):
    """F.fold as a module."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, x: Tensor) -> Tensor:
        return fold(x, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
