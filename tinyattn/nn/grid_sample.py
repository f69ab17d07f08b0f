"""F.affine_grid and F.grid_sample for 2-D images (the spatial transformer's two halves), as PyTorch's.

affine_grid(theta (N, 2, 3), (N, C, H, W)) -> grid (N, H, W, 2): each output pixel's (x, y) in [-1, 1] (the
pixel centres with align_corners=False, the corner pixels' centres at +-1 with True) mapped by theta, a matmul
with a constant base grid, so theta's gradient is matmul's.

grid_sample(input (N, C, H, W), grid (N, Ho, Wo, 2)) reads input at each grid point: -1 and +1 are the edges
(align_corners=False) or the corner pixels' centres (True). ``mode``: bilinear (the four neighbours weighted)
or nearest (rounded half to even, as PyTorch); ``padding_mode``: zeros (outside reads 0), border (the point
clamped into the image) or reflection (mirrored at the edges, then clamped). One Function: the forward gathers
the corners, the backward scatters g into input's gradient and gives the grid the slope of the bilinear weights
times the coordinate map's (0 where clamping held the point, negated where a reflection flipped it), as
PyTorch's kernel. Volumetric (5-D) input and mode='bicubic' are refused with a message (docs/pytorch.md)."""
from __future__ import annotations

import warnings

import numpy as np

from ..tensor import Function, Tensor

__all__ = ["affine_grid", "grid_sample"]
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


def _align(align_corners) -> bool:
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=3)
        return False
    return bool(align_corners)


def _base(n: int, align: bool) -> np.ndarray:
    """The n pixel positions along one axis in [-1, 1]."""
    if align:
        return np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(1)
    return (np.arange(n) * 2.0 + 1.0) / n - 1.0


def affine_grid(theta: Tensor, size, align_corners=None) -> Tensor:
    align = _align(align_corners)
    if not isinstance(theta, Tensor) or theta._data.dtype.kind != "f":
        got = theta.dtype if isinstance(theta, Tensor) else type(theta).__name__
        raise ValueError(f"Expected theta to have floating point type, but got {_torch_dtype(got)}")
    size = tuple(int(s) for s in size)
    if len(size) == 5:
        raise NotImplementedError("affine_grid: tinyattn samples 2-D images only (size (N, C, H, W)); a 3-D "
                                  "(volumetric) transform is not implemented")
    if len(size) != 4:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if theta.ndim != 3 or theta.shape[1:] != (2, 3):
        raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                         f"Got torch.Size({list(theta.shape)}).")
    n, _, h, w = size
    if theta.shape[0] != n:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{n}, 3] but got: "
                           f"[{theta.shape[0]}, 3].")
    xs, ys = _base(w, align), _base(h, align)
    base = np.stack([np.broadcast_to(xs, (h, w)), np.broadcast_to(ys[:, None], (h, w)), np.ones((h, w))], -1)
    base = Tensor(base.reshape(1, h * w, 3).astype(theta._data.dtype))  # (1, H W, 3): (x, y, 1) of each pixel
    return base.matmul(theta.transpose(1, 2)).reshape(n, h, w, 2)  # (N, H W, 3) @ (N, 3, 2)


def _torch_dtype(dt) -> str:
    from .. import promotion
    try:
        return "torch." + {"Long": "int64", "Int": "int32", "Bool": "bool", "Byte": "uint8", "Short": "int16",
                           "Char": "int8"}[promotion.torch_name(np.dtype(dt))]
    except (KeyError, TypeError):
        return str(dt)


def _coordinates(c: np.ndarray, size: int, align: bool, padding: str) -> tuple[np.ndarray, np.ndarray]:
    """Grid coordinate -> pixel coordinate, and its derivative, for one axis."""
    if align:
        pix, slope = (c + 1) / 2 * (size - 1), np.full(c.shape, (size - 1) / 2)
    else:
        pix, slope = ((c + 1) * size - 1) / 2, np.full(c.shape, size / 2)
    if padding == "reflection":
        low, high = (0.0, 2.0 * (size - 1)) if align else (-1.0, 2.0 * size - 1)
        if low == high:
            pix, slope = np.zeros_like(pix), np.zeros_like(slope)
        else:
            lo, span = low / 2, (high - low) / 2
            t = pix - lo
            sign = np.where(t < 0, -1.0, 1.0)
            t = np.abs(t)
            extra = np.fmod(t, span)
            flips = np.floor(t / span)
            even = np.fmod(flips, 2) == 0
            pix = np.where(even, extra + lo, span - extra + lo)
            slope = slope * np.where(even, sign, -sign)
    if padding in ("border", "reflection"):
        inside = (pix > 0) & (pix < size - 1)
        slope = np.where(inside, slope, 0.0)
        pix = np.where(np.isnan(pix), 0.0, np.clip(pix, 0, size - 1))  # (a NaN point reads pixel 0, as PyTorch's)
    return pix, slope


class GridSample(Function):
    """out[n, :, i, j] = sum over the corners k of w_k input[n, :, y_k, x_k];  d input: g w_k scattered back,
    d grid: sum_c g v_k dw_k/d(x, y) times the coordinate map's slope"""
    @staticmethod
    def forward(ctx, inp, grid, mode, padding, align):
        n, c, h, w = inp.shape
        ix, sx = _coordinates(grid[..., 0].astype(np.float64), w, align, padding)
        iy, sy = _coordinates(grid[..., 1].astype(np.float64), h, align, padding)
        batch = np.arange(n)[:, None, None]
        img = inp.transpose(0, 2, 3, 1)  # (N, H, W, C)
        if mode == "nearest":
            corners = [(np.rint(ix), np.rint(iy), np.ones(ix.shape), None, None)]
        else:
            x0, y0 = np.floor(ix), np.floor(iy)
            tx, ty = ix - x0, iy - y0
            corners = [(x0, y0, (1 - tx) * (1 - ty), -(1 - ty), -(1 - tx)), (x0 + 1, y0, tx * (1 - ty), 1 - ty, -tx),
                       (x0, y0 + 1, (1 - tx) * ty, -ty, 1 - tx), (x0 + 1, y0 + 1, tx * ty, ty, tx)]
        out = np.zeros(ix.shape + (c,))
        saved = []
        for xk, yk, wk, dwx, dwy in corners:
            ok = (xk >= 0) & (xk <= w - 1) & (yk >= 0) & (yk <= h - 1) & np.isfinite(wk)
            xi = np.where(ok, xk, 0).astype(np.int64)
            yi = np.where(ok, yk, 0).astype(np.int64)
            v = np.where(ok[..., None], img[batch, yi, xi], 0.0)  # (N, Ho, Wo, C)
            out += np.where(ok[..., None], wk[..., None] * v, 0.0)
            saved.append((xi, yi, ok, np.where(ok, wk, 0.0), dwx, dwy, v))
        if mode == "bilinear" and padding == "zeros":  # a NaN point is NaN (PyTorch's; nearest reads 0 there)
            out[np.isnan(ix) | np.isnan(iy)] = np.nan
        ctx.saved, ctx.shape, ctx.slopes, ctx.mode = saved, inp.shape, (sx, sy), mode
        ctx.dtype = inp.dtype
        return out.transpose(0, 3, 1, 2).astype(inp.dtype)

    @staticmethod
    def backward(ctx, g):
        n, c, h, w = ctx.shape
        gt = g.transpose(0, 2, 3, 1).astype(np.float64)  # (N, Ho, Wo, C)
        gin = np.zeros((n, h, w, c))
        ggrid = np.zeros(gt.shape[:3] + (2,))
        batch = np.broadcast_to(np.arange(n)[:, None, None], gt.shape[:3])
        for xi, yi, ok, wk, dwx, dwy, v in ctx.saved:
            np.add.at(gin, (batch, yi, xi), wk[..., None] * gt)
            if dwx is not None:
                gv = np.where(ok, (gt * v).sum(-1), 0.0)
                ggrid[..., 0] += gv * dwx
                ggrid[..., 1] += gv * dwy
        ggrid[..., 0] *= ctx.slopes[0]
        ggrid[..., 1] *= ctx.slopes[1]
        return gin.transpose(0, 3, 1, 2).astype(ctx.dtype), ggrid.astype(ctx.dtype)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners=None) -> Tensor:
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    align = _align(align_corners)
    if mode == "bicubic":
        raise NotImplementedError("grid_sample: mode='bicubic' is not implemented in tinyattn; use 'bilinear' or "
                                  "'nearest'")
    for name, t in (("input", input), ("grid", grid)):
        if not isinstance(t, Tensor):
            raise TypeError(f"grid_sample(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if input.ndim == 5:
        raise NotImplementedError("grid_sample: tinyattn samples 2-D images (N, C, H, W) only; volumetric (5-D) "
                                  "input is not implemented")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    if input.ndim != 4 or grid.ndim != 4:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if input._data.dtype != grid._data.dtype:
        from .. import promotion
        raise RuntimeError(f"expected scalar type {promotion.torch_name(input._data)} but found "
                           f"{promotion.torch_name(grid._data)}")
    if input._data.dtype.kind != "f":
        from .. import promotion
        raise NotImplementedError(f"\"grid_sampler_2d_cpu\" not implemented for '{promotion.torch_name(input._data)}'")
    return GridSample.apply(input, grid, mode=mode, padding=padding_mode, align=align)
