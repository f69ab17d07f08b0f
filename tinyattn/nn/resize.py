"""Resizing: F.interpolate and nn.Upsample (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area;
antialias=True for bilinear, bicubic and lanczos on 4-D input).

Every mode but 'area' is separable: each output position along one spatial dim reads a few input
positions ("taps": 1 for nearest, 2 for linear, 4 for cubic) with weights, and a 2-D or 3-D resize is
that 1-D resize applied along W, then H (then D). ``_taps`` computes, per dim, the (O, T) input index
and weight of every tap with PyTorch's own rules (aten/src/ATen/native/UpSample.h), in its precision:

  * the scale (input step per output step): ``(S - 1) / (O - 1)`` with align_corners, else ``1 / scale_factor``
    when a scale factor reaches the kernel (``recompute_scale_factor`` not True), else ``S / O``;
  * nearest: ``min(floor(o * scale), S - 1)`` in float32 whatever the dtype; for a 4-D input PyTorch's
    kernel keeps two shortcuts for old results, O == S copies and O == 2 S reads ``o // 2`` (measured on
    PyTorch 2.13: its 3-D and 5-D kernels do not, which matters only with a scale_factor);
    nearest-exact: ``floor((o + 0.5) * scale)``;
  * linear and cubic: the source coordinate ``scale * o`` (align_corners) or ``scale * (o + 0.5) - 0.5``
    (clamped at 0 for linear), computed in float32 for a float32 input and float64 for float64;
    linear reads floor(src) and the next position (the last one twice) with weights (1 - l, l);
    cubic reads floor(src) - 1 .. + 2, clamped to the edge, with Keys' cubic weights (A = -0.75);
  * antialias=True (``_aa_taps``): Pillow's resampling, the filter stretched by the shrink factor.

Shapes: x (N, C, *S) -> (N, C, *O); one dim at a time (..., S_i, ...) -> (..., O_i, ...).
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..tensor import Function, Tensor
from .functional_conv import _adaptive_avg_pool
from .module import Module

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d", "interpolate", "upsample"]

_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"  # as PyTorch lists them
_DIMS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5, "lanczos": 4}  # the input ndim each interpolating mode needs
_A = -0.75  # the cubic convolution's free parameter, as PyTorch (and OpenCV)


class Resample(Function):
    """out[..., o] = sum_t w[o, t] x[..., idx[o, t]] along ``axis``;  dx[..., s] = sum of g[..., o] w[o, t]
    over every (o, t) with idx[o, t] == s: g times the (O, S) matrix the taps make (its exact adjoint)"""
    @staticmethod
    def forward(ctx, x, axis, idx, w):
        xm = np.moveaxis(x, axis, -1)  # (..., S)
        out = xm[..., idx[:, 0]] * w[:, 0] if w is not None else xm[..., idx[:, 0]]  # (..., O)
        for t in range(1, idx.shape[1]):  # tap by tap, in PyTorch's order: w0 x0 + w1 x1 + ...
            out = out + xm[..., idx[:, t]] * w[:, t]
        ctx.geom = (axis, idx, w, x.shape[axis])
        return np.moveaxis(out, -1, axis)

    @staticmethod
    def backward(ctx, g):
        axis, idx, w, S = ctx.geom
        A = np.zeros((idx.shape[0], S), dtype=g.dtype)  # (O, S): row o holds output o's weights
        np.add.at(A, (np.arange(idx.shape[0])[:, None], idx), 1.0 if w is None else w)
        return np.moveaxis(np.moveaxis(g, axis, -1) @ A, -1, axis)  # (..., O) @ (O, S) -> (..., S)


def _cubic_weights(t: np.ndarray) -> np.ndarray:
    """(O,) fractional offsets -> (O, 4) weights of the taps at -1, 0, 1, 2."""
    def near(x):  # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A
    one = t.dtype.type(1)
    return np.stack([far(t + one), near(t), near(one - t), far(one + one - t)], axis=1)


def _taps(mode: str, S: int, O: int, scale, align_corners: bool, dtype, nd: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(O, T) indices into a dim of size S and their (O, T) weights (None: one tap of weight 1)."""
    o = np.arange(O)
    if mode in ("nearest", "nearest-exact"):
        f32 = np.float32
        s = f32(1.0 / scale) if scale is not None and scale > 0 else f32(S) / f32(O)
        if mode == "nearest-exact":  # (o + 0.5) in double times the float scale, then floorf
            src = np.floor(((o + 0.5) * np.float64(s)).astype(f32))
        elif nd == 2 and (O == S or O == 2 * S):  # shortcuts PyTorch keeps for old results (its 4-D kernel only)
            src = o if O == S else o // 2
        else:
            src = np.floor(o.astype(f32) * s)
        return np.minimum(src.astype(np.int64), S - 1)[:, None], None
    op = np.float64 if dtype == np.float64 else np.float32  # PyTorch's accumulation type for the dtype
    if align_corners:
        s = op(S - 1) / op(O - 1) if O > 1 else op(0)
        src = s * o.astype(op)
    else:
        s = op(1.0 / scale) if scale is not None and scale > 0 else op(S) / op(O)
        src = s * (o.astype(op) + op(0.5)) - op(0.5)
    if mode == "bicubic":
        i0 = np.floor(src.astype(np.float32)).astype(np.int64)  # floorf, as PyTorch
        idx = np.clip(i0[:, None] + np.arange(-1, 3), 0, S - 1)  # (O, 4), clamped to the edge
        return idx, _cubic_weights((src - i0).astype(op)).astype(dtype)
    if O == S:  # same size: a copy, as PyTorch's linear kernels
        return o[:, None], None
    src = np.maximum(src, op(0))
    i0 = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), S - 1)
    lam = np.clip(src - i0, op(0), op(1))
    idx = np.stack([i0, i0 + (i0 < S - 1)], axis=1)  # (O, 2): the last position reads itself twice
    return idx, np.stack([op(1) - lam, lam], axis=1).astype(dtype)


_AA_FILTERS = {  # (support in input steps at scale 1, the filter): PyTorch's anti-aliasing kernels, as Pillow's
    "bilinear": (1.0, lambda x: np.maximum(1 - np.abs(x), 0)),
    "bicubic": (2.0, lambda x: np.where(np.abs(x) < 1, ((-0.5 + 2) * np.abs(x) - (-0.5 + 3)) * x * x + 1,
                                        np.where(np.abs(x) < 2, ((-0.5 * np.abs(x) + 2.5) * np.abs(x) - 4) * np.abs(x)
                                                 + 2, 0))),  # Keys' cubic with A = -0.5
    "lanczos": (3.0, lambda x: np.where(np.abs(x) < 3, np.sinc(x) * np.sinc(x / 3), 0)),
}


def _aa_taps(mode: str, S: int, O: int, scale, align_corners: bool, dtype, nd: int):
    """antialias=True: when shrinking by s > 1 the filter is stretched s times (so every input position
    counts), each output's weights are the filter at the input centres, normalised to sum to 1."""
    if O == S:  # PyTorch's anti-aliasing kernel resizes only the dims whose size changes
        return np.arange(O)[:, None], None
    op = np.float64 if dtype == np.float64 else np.float32
    if align_corners:
        s = op(S - 1) / op(O - 1) if O > 1 else op(0)
    else:
        s = op(1.0 / scale) if scale is not None and scale > 0 else op(S) / op(O)
    half, fn = _AA_FILTERS[mode]
    support = half * s if s >= 1 else op(half)
    width = int(np.ceil(support)) * 2 + 1  # the most taps any output reads
    centre = s * (np.arange(O) + op(0.5))
    lo = np.maximum((centre - support + op(0.5)).astype(np.int64), 0)  # (O,) first input position read
    count = np.clip(np.minimum((centre + support + op(0.5)).astype(np.int64), S) - lo, 0, width)
    j = np.arange(width)
    w = fn((j + lo[:, None] - centre[:, None] + op(0.5)) * (op(1) / s if s >= 1 else op(1))).astype(op)
    w = np.where(j < count[:, None], w, 0)  # (O, width)
    total = w.sum(1, keepdims=True)
    w = np.where(total != 0, w / np.where(total != 0, total, 1), w)
    return np.minimum(lo[:, None] + j, S - 1), w.astype(dtype)


def _sizes(x: Tensor, nd: int, size, scale_factor, recompute_scale_factor, mode: str):
    """PyTorch's F.interpolate rules for size/scale_factor: the output size and the scales the kernel gets."""
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if size is not None:
        sizes = list(size) if isinstance(size, (list, tuple)) else [size] * nd
        if isinstance(size, (list, tuple)) and len(sizes) != nd:
            raise ValueError("Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(x.shape[2:])} and output size of {size}. Please provide "
                             "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
        if not all(isinstance(v, Integral) and not isinstance(v, bool) for v in sizes):
            raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, int], "
                            f"but got size with types {[type(v) for v in sizes]}")
        return [int(v) for v in sizes], [None] * nd
    scales = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * nd
    if isinstance(scale_factor, (list, tuple)) and len(scales) != nd:
        raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got input with "
                         f"spatial dimensions of {list(x.shape[2:])} and scale_factor of shape {scale_factor}. Please "
                         "provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                         "format.")
    if not all(isinstance(v, Real) and not isinstance(v, bool) for v in scales):
        raise TypeError(f"interpolate: scale_factor must be a number or a tuple of {nd} numbers, got {scale_factor!r}")
    sizes = [int(n * float(s)) for n, s in zip(x.shape[2:], scales)]  # truncated, as PyTorch's int()
    if recompute_scale_factor or mode == "area":  # the kernel then sees only the (integer) sizes
        return sizes, [None] * nd
    return sizes, [float(s) for s in scales]


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,  # noqa: A002
                recompute_scale_factor=None, antialias: bool = False) -> Tensor:
    """Resize (N, C, L), (N, C, H, W) or (N, C, D, H, W) to ``size`` or by ``scale_factor``.

    mode 'nearest' (any dim), 'nearest-exact', 'linear' (3-D input), 'bilinear'/'bicubic' (4-D),
    'trilinear' (5-D), 'area' (adaptive average pooling). align_corners=True maps the corner pixels'
    centres onto each other; False (the default for the interpolating modes) maps their outer edges.
    antialias=True (bilinear, bicubic, lanczos; 4-D) averages what a shrink skips, as Pillow resizes.
    ViT code resizes position embeddings with ``F.interpolate(pos, size=(h, w), mode='bicubic')``."""
    if not isinstance(input, Tensor):
        raise TypeError(f"interpolate: input must be a Tensor, got {type(input).__name__}")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    else:
        align_corners = bool(align_corners)
    if not 3 <= input.ndim <= 5 or mode not in _DIMS and mode not in ("nearest", "area", "nearest-exact"):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  f"the modes: {_MODES} (got {mode})")
    nd = input.ndim - 2
    sizes, scales = _sizes(input, nd, size, scale_factor, recompute_scale_factor, mode)
    if mode == "lanczos" and input.ndim == 4 and (align_corners or not antialias):
        raise ValueError("Lanczos mode does not support align_corners=True" if align_corners else
                         "Lanczos mode requires antialias=True")
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if mode in _DIMS and input.ndim != _DIMS[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_DIMS[mode]}D input")
    if min(sizes) <= 0:
        names = "DHW"[3 - nd:]
        raise RuntimeError("Input and output sizes should be greater than 0, but got input ("  # "and" in 1-D only
                           + ", ".join(f"{c}: {n}" for c, n in zip(names, input.shape[2:]))
                           + (") and output (" if nd == 1 else ") output (")
                           + ", ".join(f"{c}: {n}" for c, n in zip(names, sizes)) + ")")
    if mode == "area":
        return _adaptive_avg_pool(nd, input, tuple(sizes), "interpolate(mode='area')")
    if not np.issubdtype(input.dtype, np.floating):
        raise NotImplementedError(f"interpolate: mode {mode!r} is not implemented for dtype {input.dtype} "
                                  "(as PyTorch's CPU kernels); convert with .float() first")
    out = input
    for axis in reversed(range(2, input.ndim)):  # W first, then H, then D: PyTorch's nesting of the sums
        taps = _aa_taps if antialias else _taps
        idx, w = taps(mode, input.shape[axis], sizes[axis - 2], scales[axis - 2], align_corners, input.dtype.type,
                      nd)
        out = Resample.apply(out, axis=axis, idx=idx, w=w)
    return out


def upsample(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None):  # noqa: A002
    """F.upsample: PyTorch's older name of interpolate."""
    return interpolate(input, size, scale_factor, mode, align_corners)


class Upsample(Module):
    """Upsample(size=None, scale_factor=None, mode='nearest', align_corners=None, recompute_scale_factor=None):
    F.interpolate as a layer, e.g. ``nn.Upsample(scale_factor=2, mode='bilinear')`` in a decoder."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                 recompute_scale_factor=None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners, self.recompute_scale_factor = mode, align_corners, recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Upsample(size, scale_factor, mode='nearest') on (N, C, H, W)."""
    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample(size, scale_factor, mode='bilinear', align_corners=True) on (N, C, H, W)."""
    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)

