"""The ops the course records, each forward right above its backward (micrograd's rule).

Every op is a ``Function`` (``tinyattn/autograd.py``): ``forward(ctx, *arrays)`` computes on NumPy
arrays and keeps in ``ctx`` only what ``backward`` needs, as PyTorch's derivative formulas do (Div
keeps the divisor, and the dividend only when the divisor needs a gradient; Add keeps nothing; a
reshape keeps a shape); ``backward(ctx, g)`` turns the gradient of the output into one per input.
The first line of each docstring is the derivative. PyTorch's rarer ops are in ``tinyattn/compat/ops.py``.
"""
from __future__ import annotations

import math

import numpy as np

from tinyattn.autograd import Function, unbroadcast
from tinyattn.compat.args import _alpha, no_extreme
from tinyattn.compat.indexing import pytorch_index_layout
from tinyattn.fastnp import add_at, dot_last, max_keepdims, sum_along

class Add(Function):
    """a + alpha b (alpha a number, PyTorch's torch.add(a, b, alpha=2));  da = g, db = alpha g"""
    @staticmethod
    def forward(ctx, a, b, alpha=1):
        ctx.alpha = 1 if alpha == 1 and alpha is not True else _alpha(alpha, a.dtype)  # a number: nothing to free
        return a + b if alpha == 1 else a + ctx.alpha * b

    @staticmethod
    def backward(ctx, g):
        return g, (g if ctx.alpha == 1 else ctx.alpha * g)


class Sub(Function):
    """a - alpha b;  da = g, db = -alpha g"""
    @staticmethod
    def forward(ctx, a, b, alpha=1):
        ctx.alpha = 1 if alpha == 1 and alpha is not True else _alpha(alpha, a.dtype)  # (True: checked there)
        return a - b if alpha == 1 else a - ctx.alpha * b

    @staticmethod
    def backward(ctx, g):
        return g, ((-g if ctx.alpha == 1 else -ctx.alpha * g) if ctx.needs_input_grad[1] else None)


class Mul(Function):
    """a * b;  da = g * b, db = g * a"""
    @staticmethod
    def forward(ctx, a, b):
        # da needs b, db needs a: keep only those (x * 2.5 keeps the constant 2.5, as PyTorch)
        ctx.save_for_backward(b if ctx.needs_input_grad[0] else None, a if ctx.needs_input_grad[1] else None)
        return a * b

    @staticmethod
    def backward(ctx, g):
        b, a = ctx.saved_tensors
        return (g * b if ctx.needs_input_grad[0] else None,
                g * a if ctx.needs_input_grad[1] else None)


class Div(Function):
    """a / b;  da = g / b, db = -g a / b^2 = -(g / b) (a / b)"""
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(b, a if ctx.needs_input_grad[1] else None)  # the dividend only for db, as PyTorch
        return a / b

    @staticmethod
    def backward(ctx, g):
        b, a = ctx.saved_tensors
        g_over_b = g / b  # da, and half of db
        # db as (g / b) * (a / b), never g * a / (b * b): b * b leaves the float range long before the
        # answer does (float32, b = 1e-23: b * b = 0 and db = -inf; b = 1e20: b * b = inf and db = -0).
        gb = -g_over_b * (a / b) if ctx.needs_input_grad[1] else None
        return (g_over_b if ctx.needs_input_grad[0] else None), gb


class Neg(Function):
    """-a;  da = -g"""
    @staticmethod
    def forward(ctx, a):
        return -a

    @staticmethod
    def backward(ctx, g):
        return -g


def _small_power(a: np.ndarray, p: float) -> np.ndarray:
    """a ** p for p in _SMALL_POWERS, by multiplications (and one sqrt for half-integers).

    np.power with a general exponent computes exp(p log a) element by element, far slower than a few
    multiplications (the figures: benchmarks/RESULTS.md). Squaring and multiplying give the same values up to float rounding (an ulp or two), and the same inf/NaN (0 ** -1 = inf,
    sqrt of a negative = NaN).
    """
    n = int(abs(p))
    out = None
    if abs(p) != n:  # the half of a half-integer; beyond +-0.5 PyTorch's is C's pow: (-inf) ** 1.5 = inf, ** -1.5 = +0
        a = a if n == 0 else np.where(a == -np.inf, np.inf, a + 0.0)  # and (-0.0) ** -1.5 = +inf: +0.0 (-0.0 + 0.0)
        out = np.sqrt(a)  # ** +-0.5 is PyTorch's sqrt/rsqrt: NaN at -inf, and rsqrt(-0.0) = -inf, as here
    base = a
    while n:  # binary powering: a^5 = a^4 * a
        if n & 1:
            out = base if out is None else out * base
        n >>= 1
        if n:
            base = base * base
    if out is None:  # p == 0
        return np.ones_like(a)
    if out is a:  # p == 1: a new array, never the input itself
        out = a.copy()
    if p < 0:
        with np.errstate(divide="ignore"):  # 0 ** -1 = inf, as np.power gives it
            own = isinstance(out, np.ndarray) and out is not a  # (a 0-d product is a NumPy scalar)
            out = np.reciprocal(out, out=out if own else None)
    return np.asarray(out, dtype=a.dtype)


# Exponents that _small_power computes: the integers and half-integers from -4 to 4.
_SMALL_POWERS = frozenset(k / 2 for k in range(-8, 9))


class PowConst(Function):
    """a ** p for a constant number p;  da = g p a^(p-1)"""
    @staticmethod
    def forward(ctx, a, p):
        ctx.save_for_backward(a)
        ctx.p = p
        return _small_power(a, p) if p in _SMALL_POWERS else np.power(a, np.asarray(p, dtype=a.dtype))

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        p = ctx.p
        if p == 0:
            return np.zeros_like(g)
        q = p - 1
        d = _small_power(a, q) if q in _SMALL_POWERS else np.power(a, np.asarray(q, dtype=a.dtype))
        d *= g.dtype.type(p) if g.dtype.kind == "f" else p
        d *= g
        return d


class MatMul(Function):
    """a @ b (batched, broadcasting);  da = g @ b^T, db = a^T @ g"""
    @staticmethod
    def forward(ctx, a, b):
        # da needs only b and db only a: keep what a gradient needs (as PyTorch), so a frozen side's
        # partner is not held, and an in-place change of it after forward is no error.
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[0] else None)
        ctx.a_shape, ctx.b_shape = a.shape, b.shape
        return a @ b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        a_shape, b_shape = ctx.a_shape, ctx.b_shape
        # Treat vectors as matrices: a (n,) -> (1, n), b (n,) -> (n, 1), and g to match.
        a2_shape = (1, *a_shape) if len(a_shape) == 1 else a_shape
        if len(a_shape) == 1 and len(b_shape) == 1:
            g2 = np.reshape(g, (1, 1))
        elif len(a_shape) == 1:
            g2 = np.expand_dims(g, -2)
        elif len(b_shape) == 1:
            g2 = np.expand_dims(g, -1)
        else:
            g2 = g
        ga = gb = None
        if ctx.needs_input_grad[0]:
            b2 = b[:, None] if b.ndim == 1 else b
            ga = g2 @ np.swapaxes(b2, -1, -2)                      # (..., n, k) = (..., n, m) @ (..., m, k)
            ga = unbroadcast(ga, a2_shape).reshape(a_shape)
        if ctx.needs_input_grad[1]:
            a2 = a[None, :] if a.ndim == 1 else a
            b2_shape = (*b_shape, 1) if len(b_shape) == 1 else b_shape
            if len(b2_shape) == 2:
                # x (B, T, k) @ W (k, m): fold the batch into rows -> one (k, m) GEMM, no (B, k, m) temporary
                N = math.prod(a2.shape[:-1])  # (written out: reshape(-1, 0) can not infer N when k = 0)
                a_rows, g_rows = a2.reshape(N, a2.shape[-1]), g2.reshape(N, g2.shape[-1])  # (N, k), (N, m)
                gb = a_rows.T @ g_rows  # (k, N) @ (N, m) -> (k, m)
            else:
                gb = unbroadcast(np.swapaxes(a2, -1, -2) @ g2, b2_shape)  # (..., k, m)
            gb = gb.reshape(b_shape)
        return ga, gb


class Exp(Function):
    """exp(a);  da = g exp(a)"""
    @staticmethod
    def forward(ctx, a):
        y = np.exp(a)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class Log(Function):
    """log(a);  da = g / a"""
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with np.errstate(divide="ignore"):  # log 0 = -inf, silently, as in PyTorch (log(tril(ones)) masks)
            return np.log(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g / a


class Sqrt(Function):
    """sqrt(a);  da = g / (2 sqrt(a))"""
    @staticmethod
    def forward(ctx, a):
        y = np.sqrt(a)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g / (2 * y)


class Tanh(Function):
    """tanh(a);  da = g (1 - tanh(a)^2)"""
    @staticmethod
    def forward(ctx, a):
        y = np.tanh(a)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (1 - y * y)


class Sigmoid(Function):
    """sigmoid(a) = 1 / (1 + exp(-a));  da = g s (1 - s) = g e / (1 + e)^2 with e = exp(-|a|)"""
    @staticmethod
    def forward(ctx, a):
        # Both branches through e = exp(-|a|), which lies in (0, 1] and so never overflows:
        # sigmoid(a) = 1 / (1 + e) for a >= 0 and e / (1 + e) for a < 0. The second keeps its relative
        # accuracy far into the tail (sigmoid(-40) = 4.2e-18, where 1 - (1 - tiny) would give 0), so
        # log(sigmoid(a)) stays about a instead of -inf. The numerator, 1 or e, is max(e, a >= 0):
        # one vectorised maximum instead of a masked copy (which is slower: benchmarks/RESULTS.md).
        e = np.exp(-np.abs(a))
        y = np.maximum(e, a >= 0) / (1 + e)
        ctx.save_for_backward(e, y)  # y too, as PyTorch saves its result: changing y in place is an error
        return y

    @staticmethod
    def backward(ctx, g):
        e, _ = ctx.saved_tensors
        d = 1 + e
        # s (1 - s) from e, not from s: once s rounds to 1 (a > 37 in float64) s (1 - s) is 0, e / d^2 is not.
        return g * e / (d * d)


class ReLU(Function):
    """max(a, 0);  da = g [a > 0]"""
    @staticmethod
    def forward(ctx, a):
        y = np.maximum(a, 0)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        d = g * (~(y <= 0)).astype(g.dtype)  # (float mask; a NaN input passes g, as PyTorch's threshold_backward)
        # where g is inf or NaN and y = 0 the product is NaN; PyTorch's gradient there is 0
        return d if np.isfinite(d).all() else np.where(y <= 0, 0, g)


class Sum(Function):
    """sum(a, dim) * scale (scale 1/n: the mean);  da = g scale broadcast back over the summed dims"""
    @staticmethod
    def forward(ctx, a, dim, keepdim, scale=None):
        ctx.shape, ctx.dim, ctx.keepdim, ctx.scale = a.shape, dim, keepdim, scale
        out = sum_along(a, dim, keepdim)  # a GEMV against ones when dim is the last axis (fastnp)
        return out if scale is None else out * out.dtype.type(scale)  # (saves nothing: mean runs twice)

    @staticmethod
    def backward(ctx, g):
        if ctx.dim is not None and not ctx.keepdim:  # put the summed axes back as size 1
            g = np.expand_dims(g, ctx.dim)
        return np.broadcast_to(g if ctx.scale is None else g * g.dtype.type(ctx.scale), ctx.shape)


class Amax(Function):
    """max(a, dim) (sign=1) or min (sign=-1);  da = g split evenly among the tied extremes (with nan_ties, as
    torch.max() without dim, a NaN result counts every NaN as tied; amax's gradient is NaN there, as PyTorch's)"""
    @staticmethod
    def forward(ctx, a, dim, keepdim, sign, nan_ties=False):
        try:
            m = np.asarray(a.max(axis=dim, keepdims=True) if sign > 0 else a.min(axis=dim, keepdims=True))
        except ValueError:  # (an empty dim is reduced; (1, 0).amax(dim=0) is fine: shape (0,))
            raise no_extreme("amax" if sign > 0 else "amin", dim) from None
        ctx.dim, ctx.keepdim, ctx.nan_ties = dim, keepdim, nan_ties
        out = m if keepdim else (m.squeeze(axis=dim) if dim is not None else m.reshape(()))
        ctx.save_for_backward(a, out)  # the input and the result, as PyTorch
        return out

    @staticmethod
    def backward(ctx, g):
        a, m = ctx.saved_tensors
        if not ctx.keepdim:  # put the reduced dims back as size 1
            g, m = (np.expand_dims(x, ctx.dim) if ctx.dim is not None else x.reshape((1,) * a.ndim) for x in (g, m))
        hit = (a == m) | (np.isnan(a) & np.isnan(m)) if ctx.nan_ties else a == m
        return (g * (hit / hit.sum(axis=ctx.dim, keepdims=True))).astype(g.dtype, copy=False)


def _check_all_masked(m: np.ndarray, dim: int, op: str, first_row: int = 0) -> None:
    """A row of only -inf has no softmax (0/0); a row with NaN or +inf has none either.
    Say which rows instead of returning NaN. (``m`` is the row max: one cheap check covers both.)

    The one NaN rule of every softmax in tinyattn: F.softmax, log_softmax, F.attention, sdpa, flash
    attention and so every Attention backend raise here, naming the rows (at most five).
    ``first_row``: where ``m``'s rows start along the last row axis (flash attention checks one tile of
    queries at a time), so the rows named are those of the whole input."""
    if np.isfinite(m).all():
        return
    row_max = np.squeeze(m, axis=dim)

    def named(bad: np.ndarray) -> list[tuple[int, ...]]:
        found = np.argwhere(bad)[:5]
        if found.shape[1]:  # (a 1-D input has one row, with no index)
            found[:, -1] += first_row
        return [tuple(int(i) for i in r) for r in found]

    if np.isneginf(row_max).any():
        rows = named(np.isneginf(row_max))
        raise ValueError(f"{op}: every entry is -inf in row(s) {rows} (along dim {dim}); "
                         "a fully masked row has no softmax. Keep at least one key per query.")
    rows = named(~np.isfinite(row_max))
    raise ValueError(f"{op}: row(s) {rows} (along dim {dim}) contain NaN or +inf, so their softmax is NaN; "
                     "look for an overflow or a division by zero upstream")


class Softmax(Function):
    """y = exp(a - max) / sum exp(a - max);  da = y (g - sum(g y))"""
    @staticmethod
    def forward(ctx, a, dim):
        # Subtracting the row max changes nothing mathematically (it cancels) but keeps exp() <= 1,
        # so logits of 1e4 do not overflow to inf.
        m = max_keepdims(a, dim)
        _check_all_masked(m, dim, "softmax")
        e = np.asarray(np.subtract(a, m, order="C"))  # C-ordered whatever a's layout, as PyTorch's; asarray: a
        #                                            0-d input gives a NumPy scalar, which exp(out=) cannot write
        e /= sum_along(np.exp(e, out=e), dim)  # exp in place; the sum a GEMV against ones on the last axis (fastnp)
        ctx.save_for_backward(e)
        ctx.dim = dim
        return e

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors  # y (g - sum(g y)): the sum by einsum on the last axis (no g * y array)
        gy = g - (dot_last(g, y) if ctx.dim == y.ndim - 1 else sum_along(g * y, ctx.dim))
        gy *= y  # 3 passes, not 4: (8, 4, 128, 128) float32 0.75 -> 0.39 ms, (64, 128, 65) 0.59 -> 0.36
        return gy


class LogSoftmax(Function):
    """y = a - max - log sum exp(a - max);  da = g - softmax(a) sum(g)"""
    @staticmethod
    def forward(ctx, a, dim):
        m = max_keepdims(a, dim)
        _check_all_masked(m, dim, "log_softmax")
        y = np.subtract(a, m, order="C")  # (C-ordered whatever a's layout, as PyTorch's)
        y -= np.log(sum_along(np.exp(y), dim))  # in place: y is ours
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g - np.exp(y) * sum_along(g, ctx.dim)


class Reshape(Function):
    """a.reshape(shape);  da = g.reshape(a.shape)"""
    view = True  # a view whenever NumPy can reshape without a copy
    @staticmethod
    def forward(ctx, a, shape):
        ctx.in_shape = a.shape
        return a.reshape(shape)

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.in_shape)


class Permute(Function):
    """a.transpose(axes);  da = g.transpose(inverse axes)"""
    view = True
    @staticmethod
    def forward(ctx, a, axes):
        ctx.axes = axes
        return a.transpose(axes)

    @staticmethod
    def backward(ctx, g):
        return g.transpose(np.argsort(ctx.axes))


class GetItem(Function):
    """a[idx];  da = zeros with g scattered back (repeated indices accumulate)"""
    view = True  # basic indexing (ints, slices, None) is a view of a, as in PyTorch

    @staticmethod
    def forward(ctx, a, idx):
        ctx.shape, ctx.idx = a.shape, idx
        items = idx if isinstance(idx, tuple) else (idx,)
        arrays = [i for i in items if isinstance(i, np.ndarray)]
        ctx.save_for_backward(*arrays)  # the index arrays, as PyTorch's IndexBackward
        out = a[idx]  # x[0, 1] with every dim selected: a 0-d view (NumPy would copy a scalar out)
        if arrays:  # a copy, laid out as PyTorch's (NumPy may lay x[:, idx] out transposed): .view() works as there
            return pytorch_index_layout(a, idx, out)
        return out if isinstance(out, np.ndarray) else a[items + (...,)]

    @staticmethod
    def backward(ctx, g):
        out = np.zeros(ctx.shape, dtype=g.dtype)
        if ctx.saved_tensors:  # (raises after a backward freed the indices, as PyTorch's IndexBackward)
            add_at(out, ctx.idx, g)  # x[[0, 0]] sends two gradients to x[0]: add, don't overwrite
        else:
            out[ctx.idx] = g
        return out


class MaskedFill(Function):
    """where(mask, value, a);  da = g where mask is False, 0 where it was filled"""
    @staticmethod
    def forward(ctx, a, mask, value):
        ctx.save_for_backward(mask)
        return np.where(mask, np.asarray(value, dtype=a.dtype), a)

    @staticmethod
    def backward(ctx, g):
        (mask,) = ctx.saved_tensors
        return np.where(mask, 0, g).astype(g.dtype, copy=False)


class Where(Function):
    """where(cond, a, b);  da = g [cond], db = g [not cond]"""
    @staticmethod
    def forward(ctx, a, b, cond):
        ctx.save_for_backward(cond)
        return np.where(cond, a, b)

    @staticmethod
    def backward(ctx, g):
        (c,) = ctx.saved_tensors
        return (np.where(c, g, 0).astype(g.dtype, copy=False) if ctx.needs_input_grad[0] else None,
                np.where(c, 0, g).astype(g.dtype, copy=False) if ctx.needs_input_grad[1] else None)


class Cat(Function):
    """concatenate(tensors, dim);  each input gets its slice of g"""
    @staticmethod
    def forward(ctx, *arrays, dim):
        ctx.dim = dim
        ctx.splits = np.cumsum([x.shape[dim] for x in arrays])[:-1]
        return np.concatenate(arrays, axis=dim)

    @staticmethod
    def backward(ctx, g):
        return tuple(np.split(g, ctx.splits, axis=ctx.dim))


class Stack(Function):
    """stack(tensors, dim);  input i gets g.take(i, dim)"""
    @staticmethod
    def forward(ctx, *arrays, dim):
        ctx.dim = dim
        return np.stack(arrays, axis=dim)

    @staticmethod
    def backward(ctx, g):
        return tuple(np.moveaxis(g, ctx.dim, 0))


class Contiguous(Function):
    """a copied into C order (order="K": in a's own dim order, as clone());  da = g"""
    @staticmethod
    def forward(ctx, a, order="C"):
        return np.array(a, order=order, copy=True)

    @staticmethod
    def backward(ctx, g):
        return g
