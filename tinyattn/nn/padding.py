"""F.pad: add (or, with negative widths, remove) entries at both ends of the last dims.

``pad`` lists (before, after) pairs starting from the LAST dim, as in PyTorch: ``F.pad(x, (1, 2))``
puts one entry before and two after along dim -1; ``(0, 0, 3, 0)`` puts three rows in front along
dim -2. Shapes: x (..., n) -> (..., n + before + after) along each padded dim.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Function, Tensor

_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}  # PyTorch's names -> np.pad's


class _PadConstant(Function):
    """out = value everywhere, with a's kept part copied into its place;  da = g at that place (0 where cropped)"""
    @staticmethod
    def forward(ctx, a, src, dst, out_shape, value):
        ctx.src, ctx.dst, ctx.shape = src, dst, a.shape
        out = np.full(out_shape, value, dtype=a.dtype)
        out[dst] = a[src]
        return out

    @staticmethod
    def backward(ctx, g):
        kept = g[ctx.dst]
        if kept.shape == ctx.shape:  # nothing cropped: the slice of g is the whole gradient
            return kept
        ga = np.zeros(ctx.shape, dtype=g.dtype)
        ga[ctx.src] = kept
        return ga


class _PadIndexed(Function):
    """out = a[idx] (each padded dim read through its own index map);  da = g added back at idx (np.add.at)"""
    @staticmethod
    def forward(ctx, a, idx):
        ctx.idx, ctx.shape = idx, a.shape
        return a[idx]

    @staticmethod
    def backward(ctx, g):
        ga = np.zeros(ctx.shape, dtype=g.dtype)
        np.add.at(ga, ctx.idx, g)  # an edge entry copied three times gets three gradients
        return ga


def pad(input: Tensor, pad: Any, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last len(pad) // 2 dims: pad = (before_last, after_last, before_2nd_last, after_2nd_last, ...).

    mode 'constant' fills with ``value`` (0 by default; negative widths crop); 'reflect' mirrors
    without repeating the edge, 'replicate' repeats the edge, 'circular' wraps around.
    """
    x = input if isinstance(input, Tensor) else Tensor(input)
    if isinstance(pad, (int, np.integer)) or not isinstance(pad, (tuple, list)) or len(pad) % 2 or \
            any(isinstance(p, bool) or not isinstance(p, (int, np.integer)) for p in pad):
        raise TypeError(f"pad: pad must be a tuple of ints of even length, (before, after) per dim from the last, "
                        f"got {pad!r}")
    k = len(pad) // 2
    if k > x.ndim:
        raise ValueError(f"pad: {len(pad)} widths pad {k} dims, but the input has shape {x.shape} ({x.ndim} dims)")
    widths = [(int(pad[2 * i]), int(pad[2 * i + 1])) for i in range(k)][::-1]  # first padded dim first
    lead = x.ndim - k
    if mode == "constant":
        src, dst, out_shape = [slice(None)] * lead, [slice(None)] * lead, list(x.shape[:lead])
        for n, (b, e) in zip(x.shape[lead:], widths):
            size = n + b + e
            if size < 0:
                raise ValueError(f"pad: widths ({b}, {e}) remove more than the {n} entries of a dim (shape {x.shape})")
            keep = max(0, n - max(0, -b) - max(0, -e))
            src.append(slice(max(0, -b), max(0, -b) + keep))
            dst.append(slice(max(0, b), max(0, b) + keep))
            out_shape.append(size)
        v = 0 if value is None else (value.item() if isinstance(value, Tensor) else value)
        if x.dtype.kind in "iub" and not float(v).is_integer():
            raise TypeError(f"pad: a {x.dtype} tensor can not be padded with {v}")
        return _PadConstant.apply(x, src=tuple(src), dst=tuple(dst), out_shape=tuple(out_shape), value=v)
    if mode not in _MODES:
        raise ValueError(f"pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got {mode!r}")
    if value not in (None, 0):
        raise ValueError(f"pad: value={value} only means something with mode='constant', got mode={mode!r}")
    maps = []
    for n, (b, e) in zip(x.shape[lead:], widths):
        if b < 0 or e < 0:
            raise ValueError(f"pad: mode={mode!r} needs widths >= 0, got ({b}, {e})")
        if mode == "reflect" and max(b, e) >= n:
            raise ValueError(f"pad: mode='reflect' needs widths < the dim's size, got ({b}, {e}) for size {n}")
        if n == 0 and (b or e):
            raise ValueError(f"pad: mode={mode!r} can not pad a dim of size 0 (shape {x.shape})")
        maps.append(np.pad(np.arange(n), (b, e), mode=_MODES[mode]))  # where each output entry reads from
    idx = (Ellipsis,) + tuple(np.ix_(*maps))
    return _PadIndexed.apply(x, idx=idx)
