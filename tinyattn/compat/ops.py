"""PyTorch's rarer ops: each forward right above its backward, as in ``tinyattn/ops.py``.

The course's own ops are in ``tinyattn/ops.py``; these serve the rest of PyTorch's surface
(``x.sin()``, ``x // y``, ``torch.einsum``, ``x.cumsum(0)``, ``x.clamp(...)``, ``x.repeat(...)``, ...).
"""
from __future__ import annotations

import warnings

import numpy as np

from tinyattn.autograd import Function

class Pow(Function):
    """a ** b;  da = g b a^(b-1), db = g a^b log(a)"""
    @staticmethod
    def forward(ctx, a, b):
        out = a ** b
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved_tensors
        # b * a^(b-1), with 0 where b == 0 (x^0 is constant; 0 * 0^-1 would be NaN)
        ga = g * np.where(b == 0, 0, b * a ** np.where(b == 0, 1, b - 1)) if ctx.needs_input_grad[0] else None
        gb = None
        if ctx.needs_input_grad[1]:  # a^b log(a), with 0 where a == 0 and b >= 0 (PyTorch's choice: 0^b is
            with np.errstate(divide="ignore", invalid="ignore"):  # 0 for b > 0, so 0 * log 0 would be NaN)
                gb = g * np.where((a == 0) & (b >= 0), 0, out * np.log(a))
        return ga, gb


class StdFromVar(Function):
    """sqrt(v) for a variance v;  dv = g / (2 sqrt(v)), and 0 where v = 0 (PyTorch's choice: no NaN)"""
    @staticmethod
    def forward(ctx, v):
        y = np.sqrt(v)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(y == 0, 0, g / (2 * y)).astype(g.dtype, copy=False)


class Sin(Function):
    """sin(a);  da = g cos(a)"""
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.sin(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * np.cos(a)


class Cos(Function):
    """cos(a);  da = -g sin(a)"""
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.cos(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return -g * np.sin(a)


class Abs(Function):
    """|a|;  da = g sign(a) (0 at a NaN: PyTorch's sgn(NaN) is 0)"""
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.abs(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * np.nan_to_num(np.sign(a))


class Log1p(Function):
    """log(1 + a), exact for tiny a;  da = g / (1 + a)"""
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.log1p(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g / (1 + a)


class Expm1(Function):
    """exp(a) - 1, exact for tiny a;  da = g exp(a) = g (y + 1)"""
    @staticmethod
    def forward(ctx, a):
        y = np.expm1(a)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (y + 1)


class Rounding(Function):
    """floor, ceil, round, trunc or sign of a (``fn``);  da = 0: a step is flat wherever it is defined"""
    @staticmethod
    def forward(ctx, a, fn):
        return fn(a)

    @staticmethod
    def backward(ctx, g):
        return np.zeros_like(g)


def _check_divisor(a: np.ndarray, b: np.ndarray, op: str) -> None:
    """Integer division by zero has no answer (NumPy would return 0 with a warning); an empty a divides nothing."""
    if b.dtype.kind in "biu" and a.size and not b.all():
        raise ZeroDivisionError(f"{op}: integer division by zero (the divisor holds a 0); "
                                "use float tensors to get inf/nan instead")


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a / b rounded toward zero; for integers, exactly (a float quotient loses int64 digits)."""
    if a.dtype.kind in "biu":
        q = np.floor_divide(a, b)
        return q + ((q < 0) & (q * b != a))  # floor went one below zero's side: step back up
    return np.trunc(a / b)


class RoundedDiv(Function):
    """a / b rounded down (mode 'floor', a // b) or toward 0 ('trunc');  da = db = 0: a step in a and b"""
    @staticmethod
    def forward(ctx, a, b, mode):
        _check_divisor(a, b, f"{mode} division")
        with np.errstate(divide="ignore", invalid="ignore"):  # float x // 0 is inf or nan, as in PyTorch
            return np.floor_divide(a, b) if mode == "floor" else _trunc_div(a, b)

    @staticmethod
    def backward(ctx, g):
        return (np.zeros_like(g) if ctx.needs_input_grad[0] else None,
                np.zeros_like(g) if ctx.needs_input_grad[1] else None)


class Remainder(Function):
    """a - b q with q = a // b (mode 'floor', a % b) or q = trunc(a / b) ('trunc', fmod);  da = g, db = -g q"""
    @staticmethod
    def forward(ctx, a, b, mode):
        _check_divisor(a, b, "remainder" if mode == "floor" else "fmod")
        ctx.mode = mode
        ctx.save_for_backward(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.remainder(a, b) if mode == "floor" else np.fmod(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.floor_divide(a, b) if ctx.mode == "floor" else _trunc_div(a, b)
        return g, (-g * q if ctx.needs_input_grad[1] else None)


class Maximum(Function):
    """max(a, b) (or min, larger=False) elementwise;  g goes to the winner, half to each on a tie, and whole to
    both where a NaN makes neither win (as PyTorch: each side is zeroed only where it loses)"""
    @staticmethod
    def forward(ctx, a, b, larger):
        ctx.larger = larger
        ctx.save_for_backward(a, b)
        return np.maximum(a, b) if larger else np.minimum(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        a_loses, b_loses = ((a < b), (a > b)) if ctx.larger else ((a > b), (a < b))
        whole = np.where(a == b, 0.5, 1.0).astype(g.dtype)  # 0.5 each on a tie; 1 where it wins or a NaN is met
        return g * np.where(a_loses, 0, whole), g * np.where(b_loses, 0, whole)


class Flip(Function):
    """a reversed along dims;  da = g reversed back along the same dims"""
    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = dims
        return np.flip(a, dims).copy()  # a copy, as in PyTorch: the result shares no memory with a

    @staticmethod
    def backward(ctx, g):
        return np.flip(g, ctx.dims)


class Roll(Function):
    """a shifted along dims with wrap-around;  da = g shifted back by -shifts"""
    @staticmethod
    def forward(ctx, a, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        return np.roll(a, shifts, axis=dims)

    @staticmethod
    def backward(ctx, g):
        return np.roll(g, np.negative(ctx.shifts), axis=ctx.dims)


class Einsum(Function):
    """einsum(spec, *arrays), spec explicit ('bij,bjk->bik');  d(operand) = einsum of g with the other
    operands, back to that operand's letters; a letter summed in that operand alone is broadcast back"""
    @staticmethod
    def forward(ctx, *arrays, spec):
        ctx.spec, ctx.shapes = spec, [a.shape for a in arrays]
        # an operand is kept only if another one needs a gradient (as PyTorch's bmm/permute/sum do): one
        # operand (a permute, a sum, a diagonal) keeps nothing, so a write into it or a second backward is fine
        if len(arrays) > 1:
            ctx.save_for_backward(*(a if any(ctx.needs_input_grad[:j] + ctx.needs_input_grad[j + 1:]) else None
                                    for j, a in enumerate(arrays)))
        return np.einsum(spec, *arrays, optimize=len(arrays) > 2)

    @staticmethod
    def backward(ctx, g):
        arrays = ctx.saved_tensors
        inputs, out = ctx.spec.split("->")
        letters = inputs.split(",")
        grads = []
        for i, (mine, shape) in enumerate(zip(letters, ctx.shapes)):
            if not ctx.needs_input_grad[i]:
                grads.append(None)
                continue
            others = [j for j in range(len(arrays)) if j != i]
            elsewhere = set(out).union(*(letters[j] for j in others))
            kept = "".join(c for c in mine if c in elsewhere)  # e.g. 'ij,jk->ik' gives dA over 'ij'
            spec = ",".join([out] + [letters[j] for j in others]) + "->" + kept
            gi = np.einsum(spec, g, *(arrays[j] for j in others), optimize=len(arrays) > 1)
            # a letter only this operand has (as i in 'ij->j') was summed: each entry gets the same g
            sizes = [n if c in elsewhere else 1 for c, n in zip(mine, shape)]
            grads.append(np.broadcast_to(gi.reshape(sizes), shape))
        return tuple(grads)


class CumSum(Function):
    """y_i = sum_{j <= i} a_j along dim;  da_j = sum_{i >= j} g_i (a cumsum of g run backwards)"""
    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        return np.cumsum(a, axis=dim)

    @staticmethod
    def backward(ctx, g):
        d = ctx.dim
        return np.flip(np.cumsum(np.flip(g, axis=d), axis=d), axis=d)


class Clamp(Function):
    """clip(a, lo, hi);  da = g [lo <= a <= hi]"""
    @staticmethod
    def forward(ctx, a, lo, hi):
        ctx.save_for_backward(a)  # the input, as PyTorch (the mask is rebuilt in backward)
        ctx.lo, ctx.hi = lo, hi
        y = np.clip(a, lo, hi)
        return y.astype(a.dtype, copy=False) if a.dtype.kind == "f" else y

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        inside = np.ones(a.shape, dtype=bool)
        if ctx.lo is not None:
            inside &= a >= ctx.lo
        if ctx.hi is not None:
            inside &= a <= ctx.hi
        return g * inside


class RepeatInterleave(Function):
    """np.repeat(a, n, dim);  da = g summed over each group of n copies"""
    @staticmethod
    def forward(ctx, a, repeats, dim):
        ctx.repeats, ctx.dim = repeats, dim
        return np.repeat(a, repeats, axis=dim)

    @staticmethod
    def backward(ctx, g):
        n, d = ctx.repeats, ctx.dim
        # (..., size*n, ...) -> (..., size, n, ...): copies of one element sit next to each other
        return g.reshape(g.shape[:d] + (g.shape[d] // n, n) + g.shape[d + 1:]).sum(axis=d + 1)


class Repeat(Function):
    """np.tile(a, reps) (PyTorch's repeat);  da = g summed over the copies"""
    @staticmethod
    def forward(ctx, a, reps):
        ctx.in_shape = a.shape
        return np.tile(a, reps)

    @staticmethod
    def backward(ctx, g):
        if g.size == 0:  # a size-0 input or a repeat count of 0: nothing flows back
            return np.zeros(ctx.in_shape, dtype=g.dtype)
        shape = (1,) * (g.ndim - len(ctx.in_shape)) + ctx.in_shape  # the input, with the new leading dims
        # (r0 * s0, r1 * s1, ...) -> (r0, s0, r1, s1, ...): copy j of dim i is block j along axis 2i
        split = g.reshape([n for r_s in zip((gs // s for gs, s in zip(g.shape, shape)), shape) for n in r_s])
        return split.sum(axis=tuple(range(0, split.ndim, 2))).reshape(ctx.in_shape)


class Cast(Function):
    """a.astype(dtype);  da = g cast back"""
    @staticmethod
    def forward(ctx, a, dtype):
        ctx.in_dtype = a.dtype
        if a.dtype.kind == "c" and np.dtype(dtype).kind != "c":  # PyTorch's warning, not NumPy's ComplexWarning
            warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=4)
            a = a.real
        if dtype == np.float16:  # (1e5 becomes inf silently, as in PyTorch's cast: no NumPy overflow warning)
            with np.errstate(over="ignore"):
                return a.astype(dtype)
        return a.astype(dtype)

    @staticmethod
    def backward(ctx, g):
        return g.astype(ctx.in_dtype)


class Tri(Function):
    """tril/triu(a, k);  da = the same triangle of g"""
    @staticmethod
    def forward(ctx, a, k, upper):
        ctx.k, ctx.upper = k, upper
        return np.triu(a, k) if upper else np.tril(a, k)

    @staticmethod
    def backward(ctx, g):
        return np.triu(g, ctx.k) if ctx.upper else np.tril(g, ctx.k)


class Reciprocal(Function):
    """1 / a (c / a is c * (1 / a), as PyTorch computes it);  da = -g / a^2 = -g y^2"""
    @staticmethod
    def forward(ctx, a):
        with np.errstate(divide="ignore"):
            y = np.reciprocal(a)
        ctx.save_for_backward(y)  # the result, as PyTorch's ReciprocalBackward: a may change afterwards
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return -g * y * y


class Var(Function):
    """sum((a - mean)^2, dim) / (n - correction);  da = g 2 (a - mean) / (n - correction)"""
    @staticmethod
    def forward(ctx, a, dim, keepdim, n, correction):
        ctx.save_for_backward(a)  # the input, as PyTorch's VarBackward
        ctx.dim, ctx.keepdim, ctx.n, ctx.k = dim, keepdim, n, 1.0 / (n - correction)
        c = a - a.sum(axis=dim, keepdims=True) * a.dtype.type(1.0 / n)  # (centered: the mean's gradient cancels)
        return np.asarray((c * c).sum(axis=dim, keepdims=keepdim)) * a.dtype.type(ctx.k)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        c = a - a.sum(axis=ctx.dim, keepdims=True) * a.dtype.type(1.0 / ctx.n)
        if ctx.dim is not None and not ctx.keepdim:
            g = np.expand_dims(g, ctx.dim)
        return g * g.dtype.type(2 * ctx.k) * c
