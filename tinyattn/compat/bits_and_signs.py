"""Bit shifts and sign/exponent arithmetic, mixed into the Tensor through MethodsMixin, as PyTorch 2.13 does them
(measured in tests/oracle/test_names_bits_and_signs_torch.py):

  * ``x << n``, ``x >> n`` (and ``n << x``, ``<<=``, ``bitwise_left_shift``/``bitwise_right_shift`` with their
    in-place forms): integers only, in the pair's promoted dtype; a shift by a negative amount or by the width
    of the dtype or more gives 0 to the left, and the sign (0 or -1) to the right, as PyTorch's kernel;
  * ``copysign`` (|a| with b's sign; integers compute in the default float dtype), ``logaddexp`` /
    ``logaddexp2`` (log(e^a + e^b) without overflow), ``nextafter`` (the next float after a toward b) and
    ``heaviside`` (0 below 0, 1 above, ``values`` at 0; no derivative, as PyTorch's), each Function's
    derivative next to its forward.
"""
from __future__ import annotations

import numpy as np

from tinyattn import autograd, checks, promotion
from tinyattn.autograd import Function


def shift(a, b, left: bool, reverse: bool = False):
    """``a << b`` (left) or ``a >> b`` for a Tensor ``a`` and a Tensor or Python number ``b`` (reverse: ``b << a``)."""
    op = "lshift" if left else "rshift"
    if b is None or isinstance(b, str):
        return NotImplemented
    x, n = (b, a) if reverse else (a, b)
    dt = promotion.op_dtype(op, x, n)
    arrs = [promotion.number_as(v, dt) if isinstance(v, (bool, int, float)) else
            np.asarray(v._data if isinstance(v, autograd.Tensor) else v, dtype=dt) for v in (x, n)]
    x, n = np.broadcast_arrays(*arrs)
    bits = dt.itemsize * 8
    inside = (n >= 0) & (n < bits)
    safe = np.where(inside, n, 0).astype(dt)
    if left:
        out = np.where(inside, np.left_shift(x, safe), 0)
    else:
        out = np.where(inside, np.right_shift(x, safe), np.where(x < 0, -1, 0))
    return autograd.Tensor._make(np.asarray(out, dtype=dt))


class Copysign(Function):
    """|a| with b's sign;  da = g (out / a), 0 where a == 0; db = 0"""
    @staticmethod
    def forward(ctx, a, b):
        out = np.copysign(a, b)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved_tensors
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(a == 0, 0, g * (out / np.where(a == 0, 1, a))), np.zeros_like(g)


class Logaddexp(Function):
    """log(e^a + e^b) (base 2: log2(2^a + 2^b));  da = g / (1 + base^(b - a)), db = g / (1 + base^(a - b))"""
    @staticmethod
    def forward(ctx, a, b, base2):
        ctx.save_for_backward(a, b)
        ctx.base2 = base2
        return np.logaddexp2(a, b) if base2 else np.logaddexp(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        power = np.exp2 if ctx.base2 else np.exp
        with np.errstate(invalid="ignore", over="ignore"):
            return g / (1 + power(b - a)), g / (1 + power(a - b))


class Logaddexp2(Logaddexp):
    """log2(2^a + 2^b): Logaddexp with base2=True, under its own name (PyTorch's kernel name in dtype errors)"""


class Nextafter(Function):
    """the float next to a toward b;  da = g where a != b, else 0; db = 0 (PyTorch's, measured)"""
    @staticmethod
    def forward(ctx, a, b):
        ctx.moved = a != b
        return np.nextafter(a, b)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.moved, np.zeros_like(g)


class Heaviside(Function):
    """0 where x < 0 (or NaN), 1 where x > 0, values where x == 0; PyTorch defines no derivative"""
    @staticmethod
    def forward(ctx, x, values):
        return np.where(x == 0, values, x > 0).astype(x.dtype)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("derivative for aten::heaviside is not implemented")


class BitsAndSignsMixin:
    """The methods above, on the Tensor."""

    __slots__ = ()

    def __lshift__(self, other): return shift(self, other, True)
    def __rshift__(self, other): return shift(self, other, False)
    def __rlshift__(self, other): return shift(self, other, True, reverse=True)
    def __rrshift__(self, other): return shift(self, other, False, reverse=True)
    def bitwise_left_shift(self, other): return shift(self, other, True)
    def bitwise_right_shift(self, other): return shift(self, other, False)
    def bitwise_left_shift_(self, other): return self._inplace_from("bitwise_left_shift_", lambda x: x << other)
    def bitwise_right_shift_(self, other): return self._inplace_from("bitwise_right_shift_", lambda x: x >> other)
    def __ilshift__(self, other): return self.bitwise_left_shift_(other)
    def __irshift__(self, other): return self.bitwise_right_shift_(other)

    def copysign(self, other): return self._binary(Copysign, other)
    def copysign_(self, other): return self._inplace_from("copysign_", lambda x: x.copysign(other))

    def logaddexp(self, other):
        return self._binary(Logaddexp, checks.tensor_arg(other, "logaddexp", "other", 2), base2=False)

    def logaddexp2(self, other):
        return self._binary(Logaddexp2, checks.tensor_arg(other, "logaddexp2", "other", 2), base2=True)

    def nextafter(self, other): return self._binary(Nextafter, checks.tensor_arg(other, "nextafter", "other", 2))
    def nextafter_(self, other): return self._inplace_binary("nextafter_", other, lambda x: x.nextafter(other))

    def heaviside(self, values):
        values = checks.tensor_arg(values, "heaviside", "values", 2)
        if values.dtype != self.dtype:
            raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
        return Heaviside.apply(self, values)

    def heaviside_(self, values): return self._inplace_binary("heaviside_", values, lambda x: x.heaviside(values))
