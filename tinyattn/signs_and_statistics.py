"""torch.* functions for the bit shifts and sign arithmetic of compat/bits_and_signs.py (``bitwise_left_shift``,
``bitwise_right_shift``, ``copysign``, ``logaddexp``, ``logaddexp2``, ``nextafter``, ``heaviside``) and three
statistics built from ops that have their own gradients, as PyTorch builds them (so the gradients, weights'
included, are PyTorch's): ``cov``, ``corrcoef`` and ``cumulative_trapezoid``."""
from __future__ import annotations

import warnings

import numpy as np

from . import checks, promotion
from .compat.bits_and_signs import shift
from .tensor import Tensor, _norm_dim

__all__ = ["bitwise_left_shift", "bitwise_right_shift", "copysign", "corrcoef", "cov", "cumulative_trapezoid",
           "heaviside", "logaddexp", "logaddexp2", "nextafter"]


def _first(input, other) -> Tensor:
    """``input`` of a shift, which may be a Python number when ``other`` is a tensor (torch.bitwise_left_shift(2, x))."""
    if isinstance(input, Tensor):
        return input
    checks.tensor_arg(other, "bitwise_shift", "other", 2)
    return Tensor(promotion.number_as(input, promotion.result_type(input, other)))


def bitwise_left_shift(input, other) -> Tensor:
    return shift(_first(input, other), other, True)


def bitwise_right_shift(input, other) -> Tensor:
    return shift(_first(input, other), other, False)


def copysign(input, other) -> Tensor:
    return checks.tensor_arg(input, "copysign", "input", 1).copysign(other)


def logaddexp(input, other) -> Tensor:
    return checks.tensor_arg(input, "logaddexp", "input", 1).logaddexp(other)


def logaddexp2(input, other) -> Tensor:
    return checks.tensor_arg(input, "logaddexp2", "input", 1).logaddexp2(other)


def nextafter(input, other) -> Tensor:
    return checks.tensor_arg(input, "nextafter", "input", 1).nextafter(other)


def heaviside(input, values) -> Tensor:
    return checks.tensor_arg(input, "heaviside", "input", 1).heaviside(values)


def _weights(w, name: str, n: int, integral: bool) -> Tensor:
    w = checks.tensor_arg(w, "cov", name)
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} with "
                           f"{w.ndim} dimensions")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {n}")
    if integral and w.dtype.kind not in "iu":
        raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with "
                           f"{promotion.torch_name(w._data)} dtype")
    if not integral and w.dtype.kind != "f":
        raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with "
                           f"{promotion.torch_name(w._data)} dtype")
    if (w._data < 0).any():
        raise RuntimeError(f"cov(): {name} cannot be negative")
    return w


def cov(input, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """The covariance matrix of the variables in input's rows (a 1-D input: one variable; a scalar back),
    observations along the columns, each weighted by fweights (integer repeat counts) and aweights
    (importance weights); ``correction=1`` divides by (sum of weights) - 1, Bessel's correction."""
    input = checks.tensor_arg(input, "cov", "input", 1)
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    if input.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None if fweights is None else _weights(fweights, "fweights", n, True)
    if aweights is not None:
        aw = _weights(aweights, "aweights", n, False)
        w = aw if w is None else w * aw
    w_sum = Tensor(np.asarray(n, dtype=np.int64)) if w is None else w.sum()
    mean = (x if w is None else x * w).sum(1) / w_sum
    if w is not None and correction != 0:
        norm = w_sum - correction * ((w * aweights).sum() / w_sum if aweights is not None else 1)
    else:
        norm = w_sum - correction
    if float(norm._data) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", UserWarning, stacklevel=2)
        norm = norm * 0
    centred = x - mean.unsqueeze(1)
    return ((centred @ (centred if w is None else centred * w).t()) / norm).squeeze()


def corrcoef(input) -> Tensor:
    """Pearson's correlation coefficients of input's rows: cov / (std_i std_j), clipped to [-1, 1]."""
    input = checks.tensor_arg(input, "corrcoef", "input", 1)
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    return (c / std.reshape(-1, 1) / std.reshape(1, -1)).clamp(-1, 1)


def cumulative_trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running trapezoid-rule area along ``dim``: entry i is the area from the first sample to sample i + 1
    (one fewer entry than y has along dim), at the x positions (1-D, or y's shape) or the spacing dx (default 1)."""
    y = checks.tensor_arg(y, "cumulative_trapezoid", "y", 1)
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid() received an invalid combination of arguments: give x or dx, not both")
    if y.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _norm_dim(dim, y.ndim, "cumulative_trapezoid")
    n = y.shape[d]
    pairs = y.narrow(d, 1, max(n - 1, 0)) + y.narrow(d, 0, max(n - 1, 0))
    if x is None:
        return (pairs * ((1 if dx is None else dx) / 2.0)).cumsum(d)
    x = checks.tensor_arg(x, "cumulative_trapezoid", "x", 2)
    if (x.shape[0] if x.ndim == 1 else x.shape[d] if x.ndim == y.ndim else -1) != n:
        raise RuntimeError("cumulative_trapezoid: There must be one `x` value for each sample point")
    if x.ndim == 1:
        steps = (x[1:] - x[:-1]).reshape(*[n - 1 if i == d else 1 for i in range(y.ndim)])
    else:
        steps = x.narrow(d, 1, n - 1) - x.narrow(d, 0, n - 1)
    return (steps * pairs / 2.0).cumsum(d)
