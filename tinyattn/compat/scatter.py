"""``scatter_add``: gather's adjoint, each forward right above its backward (as in ``tinyattn/ops.py``).

``x.scatter_add(dim, index, src)`` adds ``src[i][j]`` into ``x[index[i][j]][j]`` (dim=0): where an
index names one position twice, both values are added (np.add.at, unlike a plain fancy write).
"""
from __future__ import annotations

import numpy as np

from tinyattn.autograd import Function


class ScatterAdd(Function):
    """out = a, then out[where] += s[:index's shape];  da = g,  ds = g[where] (0 beyond index's shape)"""
    @staticmethod
    def forward(ctx, a, s, where, shape):
        out = a.copy()
        np.add.at(out, where, s[tuple(slice(0, n) for n in shape)])  # repeated positions add up
        ctx.where, ctx.shape, ctx.src_shape = where, shape, s.shape
        return out

    @staticmethod
    def backward(ctx, g):
        gs = None
        if ctx.needs_input_grad[1]:
            gs = np.zeros(ctx.src_shape, dtype=g.dtype)
            gs[tuple(slice(0, n) for n in ctx.shape)] = g[ctx.where]  # each src entry went to one place
        return (g if ctx.needs_input_grad[0] else None), gs
