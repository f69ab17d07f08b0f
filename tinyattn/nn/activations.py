"""PyTorch's other pointwise activations: F.hardtanh, relu6, hardsigmoid, hardswish, leaky_relu, elu, selu,
celu, mish, softsign, tanhshrink, softshrink, hardshrink, threshold, glu, softmin, prelu, and their modules.

Each pointwise one is ``y = f(x)`` with its slope ``f'(x)`` computed in the same NumPy pass, and the
backward is ``g * f'(x)``. At the kinks the slope is PyTorch's, which is not always the limit from one
side: hardtanh/relu6, hardsigmoid and the shrinks pass no gradient exactly at their bounds, and
hardsigmoid's slope is PyTorch's single-precision 1/6 in every dtype. (Measured on torch 2.13; tests/oracle/test_activations_torch.py.)
``inplace=True`` is accepted for PyTorch's signatures; the result is a new tensor either way.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tensor import Function, Tensor
from .module import Module, Parameter

__all__ = ["hardtanh", "relu6", "hardsigmoid", "hardswish", "leaky_relu", "elu", "selu", "celu", "mish",
           "softsign", "tanhshrink", "softshrink", "hardshrink", "threshold", "glu", "softmin", "prelu",
           "Hardtanh", "ReLU6", "Hardsigmoid", "Hardswish", "LeakyReLU", "ELU", "SELU", "CELU", "Mish", "Softsign",
           "Tanhshrink", "Softshrink", "Hardshrink", "Threshold", "GLU", "Softmin", "PReLU", "Softplus", "LogSigmoid"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_ONE_SIXTH_F32 = float(np.float32(1.0) / np.float32(6.0))  # hardsigmoid's slope as PyTorch's kernel holds it


class _Pointwise(Function):
    """y = f(x); dx = g f'(x), where ``rule(x) -> (y, f'(x))`` (NumPy arrays of x's dtype)."""
    @staticmethod
    @np.errstate(all="ignore")  # softsign(inf), mish(-inf) reach inf / inf: NaN silently, as PyTorch's
    def forward(ctx, x, rule: Callable):
        y, slope = rule(x)
        ctx.save_for_backward(slope)
        return y.astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        slope, = ctx.saved_tensors
        return g * slope.astype(g.dtype, copy=False)


def _apply(x: Any, fn: str, rule: Callable) -> Tensor:
    t = x if isinstance(x, Tensor) else Tensor(x)
    if t._data.dtype.kind != "f":
        raise TypeError(f"{fn} expects a floating-point input, got dtype {t.dtype}")
    return _Pointwise.apply(t, rule=rule)


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """clamp(x, min_val, max_val); the gradient is 1 strictly inside (min_val, max_val), else 0."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _apply(input, "hardtanh", lambda x: (np.clip(x, min_val, max_val), ((x > min_val) & (x < max_val)) * 1.0))


def relu6(input, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6): hardtanh(x, 0, 6)."""
    return hardtanh(input, 0.0, 6.0)


def hardsigmoid(input, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6: 0 below -3, 1 above 3, x/6 + 1/2 between (slope 1/6 strictly inside)."""
    return _apply(input, "hardsigmoid",
                  lambda x: (np.clip(x + 3.0, 0.0, 6.0) / 6.0, ((x > -3.0) & (x < 3.0)) * _ONE_SIXTH_F32))


def hardswish(input, inplace: bool = False) -> Tensor:
    """x relu6(x + 3) / 6 (MobileNetV3); slope 0 up to -3, x/3 + 1/2 strictly between -3 and 3, 1 from 3."""
    return _apply(input, "hardswish", lambda x: (x * np.clip(x + 3.0, 0.0, 6.0) / 6.0,
                                                 np.where(x <= -3.0, 0.0, np.where(x < 3.0, x / 3.0 + 0.5, 1.0))))


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x."""
    return _apply(input, "leaky_relu", lambda x: (np.where(x > 0, x, x * negative_slope),
                                                  np.where(x > 0, 1.0, negative_slope)))


def _elu_rule(alpha: float, scale: float = 1.0, input_scale: float = 1.0) -> Callable:
    """scale * (x if x > 0 else alpha (exp(input_scale x) - 1)): ELU, SELU and CELU are this one curve."""
    def rule(x):
        e = np.exp(np.minimum(x, 0) * input_scale)  # (the positive side never takes exp: no overflow)
        return (scale * np.where(x > 0, x, alpha * (e - 1.0)),
                scale * np.where(x > 0, 1.0, alpha * input_scale * e))
    return rule


def elu(input, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha (exp(x) - 1)."""
    return _apply(input, "elu", _elu_rule(alpha))


def selu(input, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the self-normalising constants alpha = 1.6733, scale = 1.0507."""
    return _apply(input, "selu", _elu_rule(_SELU_ALPHA, _SELU_SCALE))


def celu(input, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _apply(input, "celu", _elu_rule(alpha, 1.0, 1.0 / alpha))


def mish(input, inplace: bool = False) -> Tensor:
    """x tanh(softplus(x)); slope tanh(sp) + x sigmoid(x) (1 - tanh(sp)^2)."""
    def rule(x):
        sp = np.logaddexp(0.0, x)  # log(1 + exp(x)) without overflow
        th = np.tanh(sp)
        sig = np.exp(-np.logaddexp(0.0, -x))  # sigmoid(x) without overflow
        return x * th, th + x * sig * (1.0 - th * th)
    return _apply(input, "mish", rule)


def softsign(input) -> Tensor:
    """x / (1 + |x|)."""
    return _apply(input, "softsign", lambda x: (x / (1.0 + np.abs(x)), 1.0 / (1.0 + np.abs(x)) ** 2))


def tanhshrink(input) -> Tensor:
    """x - tanh(x)."""
    return _apply(input, "tanhshrink", lambda x: (x - np.tanh(x), np.tanh(x) ** 2))


def softshrink(input, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, 0 on [-lambd, lambd] (gradient 0 there too)."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return _apply(input, "softshrink", lambda x: (np.where(np.abs(x) <= lambd, 0.0, x - lambd * np.sign(x)),  # (NaN stays)
                                                  (np.abs(x) > lambd) * 1.0))


def hardshrink(input, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0."""
    return _apply(input, "hardshrink", lambda x: (np.where(np.abs(x) <= lambd, 0.0, x), (np.abs(x) > lambd) * 1.0))  # (NaN stays)


def threshold(input, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else value (gradient 0 there)."""
    # the test is x <= threshold for the value and for the gradient: a NaN stays, and its gradient passes, as PyTorch's
    return _apply(input, "threshold", lambda x: (np.where(x <= threshold, value, x), ~(x <= threshold) * 1.0))


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), where a, b are the two halves of input along dim (gated linear unit)."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is size {n}")
    a, b = input.narrow(dim, 0, n // 2), input.narrow(dim, n // 2, n // 2)  # (chunk gives no halves of size 0)
    return a * b.sigmoid()


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-x) along dim."""
    if dim is None:
        raise TypeError("softmin: pass dim (PyTorch's implicit choice of dim is deprecated)")
    return (-input).softmax(dim, dtype=dtype)  # (negated first, then cast: -bool is refused, as PyTorch's)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, else weight * x; weight has 1 entry or one per channel (dim 1 of input)."""
    from ..functions import where
    w = weight
    if weight.numel() > 1:
        if input.dim() < 2 or input.shape[1] != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {input.shape[1] if input.dim() > 1 else 1}.")
        w = weight.reshape(1, -1, *([1] * (input.dim() - 2)))  # (C,) -> (1, C, 1, ...)
    return where(Tensor._make(input._data > 0), input, input * w)


class _Act(Module):
    """A module that calls one of the functions above with the options it was built with."""
    _fn: Callable = None
    _args: tuple = ()

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()
        names = self._args
        vals = dict(zip(names, args), **kwargs)
        for k in vals:
            if k not in names and k != "inplace":
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument '{k}'")
        for k, default in self._defaults.items():
            setattr(self, k, vals.get(k, default))

    def forward(self, x: Tensor) -> Tensor:
        return type(self)._fn(x, **{k: getattr(self, k) for k in self._defaults})

    def extra_repr(self) -> str:
        shown = [f"{k}={getattr(self, k)}" for k in self._args if k != "inplace"]
        return ", ".join(shown + (["inplace=True"] if getattr(self, "inplace", False) else []))


def _act(name: str, fn: Callable, **defaults) -> type:
    cls = type(name, (_Act,), {"_fn": staticmethod(fn), "_args": tuple(defaults), "_defaults": defaults,
                               "__doc__": f"nn.{name}: ``F.{fn.__name__}`` as a module."})
    cls.__module__ = __name__
    return cls


Hardtanh = _act("Hardtanh", hardtanh, min_val=-1.0, max_val=1.0, inplace=False)
Hardsigmoid = _act("Hardsigmoid", hardsigmoid, inplace=False)
Hardswish = _act("Hardswish", hardswish, inplace=False)
LeakyReLU = _act("LeakyReLU", leaky_relu, negative_slope=0.01, inplace=False)
ELU = _act("ELU", elu, alpha=1.0, inplace=False)
SELU = _act("SELU", selu, inplace=False)
CELU = _act("CELU", celu, alpha=1.0, inplace=False)
Mish = _act("Mish", mish, inplace=False)
Softsign = _act("Softsign", softsign)
Tanhshrink = _act("Tanhshrink", tanhshrink)
Threshold = _act("Threshold", threshold, threshold=None, value=None, inplace=False)
GLU = _act("GLU", glu, dim=-1)
Softmin = _act("Softmin", softmin, dim=None)


class ReLU6(Hardtanh):
    """relu6 as a module: Hardtanh(0, 6), as PyTorch's."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace=inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class _Shrink(_Act):
    def extra_repr(self) -> str:
        return str(self.lambd)


Softshrink = type("Softshrink", (_Shrink,), {"_fn": staticmethod(softshrink), "_args": ("lambd",),
                                             "_defaults": {"lambd": 0.5}, "__module__": __name__})
Hardshrink = type("Hardshrink", (_Shrink,), {"_fn": staticmethod(hardshrink), "_args": ("lambd",),
                                             "_defaults": {"lambd": 0.5}, "__module__": __name__})


class Softplus(Module):
    """F.softplus as a module: log(1 + exp(beta x)) / beta, x itself where beta x > threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Tensor) -> Tensor:
        from .functional import softplus
        return softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSigmoid(Module):
    """F.logsigmoid as a module."""

    def forward(self, x: Tensor) -> Tensor:
        from .functional import logsigmoid
        return logsigmoid(x)


class PReLU(Module):
    """x where x > 0, else a x, with a learned: one slope (num_parameters=1) or one per channel."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None) -> None:
        super().__init__()
        from ..factories import full
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(full((num_parameters,), init, dtype=dtype))

    def forward(self, x: Tensor) -> Tensor:
        return prelu(x, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"
