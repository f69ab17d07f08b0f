"""tinyattn.nn.init: fill a weight IN PLACE, PyTorch's ``nn.init`` names (``nn.init.normal_(w, std=0.02)``).

Every function writes into ``t.data`` (same array, dtype and shape, so a Module and its optimizer
keep pointing at the same storage), draws from the generator seeded by ``tinyattn.manual_seed``,
and returns ``t``. Fans follow PyTorch: a weight (out, in, *kernel) has
fan_in = in * prod(kernel) and fan_out = out * prod(kernel).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..tensor import Tensor, no_grad, random_fill, rng_of

__all__ = ["calculate_gain", "zeros_", "ones_", "constant_", "normal_", "uniform_", "xavier_uniform_",
           "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "eye_", "dirac_", "orthogonal_", "trunc_normal_",
           "sparse_"]


def _target(t: Tensor, fn: str, floating: bool = False) -> Tensor:
    """Check that ``t`` is a Tensor (a float one when ``floating``: random draws are real numbers)."""
    if not isinstance(t, Tensor):
        raise TypeError(f"init.{fn} expects a Tensor or Parameter (e.g. module.weight), got {type(t).__name__}")
    if floating and t.dtype.kind != "f":
        raise TypeError(f"init.{fn} draws real numbers and needs a floating-point tensor, got dtype {t.dtype}")
    return t


def _fill(t: Tensor, values, fn: str) -> Tensor:
    """t.data[...] = values (cast to t's dtype; same array, no graph involved), counted as an in-place change; returns t."""
    _target(t, fn)._data[...] = values
    return t._bump_version()


def _fans(t: Tensor, fn: str) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight (out, in, *kernel): (in * prod(kernel), out * prod(kernel))."""
    if t.ndim < 2:
        raise ValueError(f"init.{fn} needs a weight with at least 2 dims (out, in, ...) to know its fans, "
                         f"got shape {t.shape}")
    receptive = math.prod(t.shape[2:])
    return t.shape[1] * receptive, t.shape[0] * receptive


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """PyTorch's recommended gain: 1 (linear, conv, sigmoid), 5/3 (tanh), sqrt(2) (relu), sqrt(2 / (1 + a^2)) (leaky_relu), 3/4 (selu)."""
    if nonlinearity in ("linear", "identity", "sigmoid") or nonlinearity.startswith("conv"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4  # PyTorch's value, chosen for self-normalising networks (not sqrt(2))
    raise ValueError(f"calculate_gain: unknown nonlinearity {nonlinearity!r}; expected 'linear', 'sigmoid', "
                     "'tanh', 'relu', 'leaky_relu' or 'selu'")


def zeros_(tensor: Tensor) -> Tensor:
    """tensor <- 0."""
    return _fill(tensor, 0, "zeros_")


def ones_(tensor: Tensor) -> Tensor:
    """tensor <- 1."""
    return _fill(tensor, 1, "ones_")


def constant_(tensor: Tensor, val: float) -> Tensor:
    """tensor <- val everywhere."""
    return _fill(tensor, val, "constant_")


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """tensor <- samples of N(mean, std^2)."""
    with no_grad():  # an initialisation, not a step of the graph (so a Parameter may be filled)
        return random_fill(_target(tensor, "normal_"), "normal", mean, std, generator, "init.normal_")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """tensor <- samples of U(a, b)."""
    with no_grad():
        return random_fill(_target(tensor, "uniform_"), "uniform", a, b, generator, "init.uniform_")


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """tensor <- U(-a, a), a = gain sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _fans(_target(tensor, "xavier_uniform_", floating=True), "xavier_uniform_")
    bound = gain * math.sqrt(6.0 / max(fan_in + fan_out, 1))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """tensor <- N(0, std^2), std = gain sqrt(2 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _fans(_target(tensor, "xavier_normal_", floating=True), "xavier_normal_")
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / max(fan_in + fan_out, 1)))


def _kaiming_std(t: Tensor, a: float, mode: str, nonlinearity: str, fn: str) -> float:
    """gain / sqrt(fan), fan = fan_in (mode='fan_in') or fan_out (He et al., 2015)."""
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"init.{fn}: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _fans(_target(t, fn, floating=True), fn)
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(max(fan, 1))


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    """tensor <- U(-b, b), b = sqrt(3) gain / sqrt(fan) (He et al., 2015)."""
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_uniform_")
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    """tensor <- N(0, std^2), std = gain / sqrt(fan) (He et al., 2015)."""
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_normal_"))


def eye_(tensor: Tensor) -> Tensor:
    """A 2-D tensor <- the identity (ones on the main diagonal of a rectangle too): Linear(d, d) passes x through."""
    if _target(tensor, "eye_").ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape), "eye_")


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """A convolution weight (out, in, *kernel) <- the identity kernel: channel i of each group copies input
    channel i at the kernel's centre (a conv that keeps its input, for as many channels as the group has)."""
    if not 3 <= _target(tensor, "dirac_").ndim <= 5:
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_per_group = tensor.shape[0] // groups
    if tensor.shape[0] % groups:
        raise ValueError("dim 0 must be divisible by groups")
    w = np.zeros(tensor.shape)
    centre = tuple(k // 2 for k in tensor.shape[2:])
    for g in range(groups):
        for i in range(min(out_per_group, tensor.shape[1])):
            w[(g * out_per_group + i, i) + centre] = 1
    return _fill(tensor, w, "dirac_")


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """tensor (rows, *rest) <- gain * a random matrix with orthonormal rows or columns (Saxe et al., 2013): the
    QR factor of a Gaussian draw, its signs fixed by R's diagonal so the result is uniform over such matrices."""
    if _target(tensor, "orthogonal_", floating=True).ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    rows, cols = tensor.shape[0], tensor.numel() // tensor.shape[0]
    a = rng_of(generator).standard_normal((rows, cols))
    if rows < cols:
        a = a.T  # (cols, rows): QR of a tall matrix
    q, r = np.linalg.qr(a)
    q *= np.sign(np.diag(r))  # (each column's sign from R's diagonal)
    if rows < cols:
        q = q.T  # (rows, cols)
    return _fill(tensor, gain * q.reshape(tensor.shape), "orthogonal_")


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator=None) -> Tensor:
    """tensor <- N(mean, std^2) draws kept inside [a, b] (a and b are values, not numbers of std): each draw
    outside is drawn again until it lands inside (the truncated normal, exactly)."""
    _target(tensor, "trunc_normal_", floating=True)
    if not a < b:
        raise ValueError(f"init.trunc_normal_: needs a < b, got a={a}, b={b}")
    rng = rng_of(generator)
    w = rng.normal(mean, std, tensor.shape)
    for _ in range(1000):  # each round keeps at least the fraction of draws inside [a, b]
        out = (w < a) | (w > b)
        if not out.any():
            break
        w[out] = rng.normal(mean, std, int(out.sum()))
    else:
        raise ValueError(f"init.trunc_normal_: [a, b] = [{a}, {b}] lies too far out in the tails of "
                         f"N({mean}, {std}^2) to draw from")
    return _fill(tensor, w, "trunc_normal_")


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """A 2-D tensor (rows, cols) <- N(0, std^2) with ceil(sparsity * rows) entries of each column set to zero
    (Martens, 2010), the rows chosen at random per column."""
    if _target(tensor, "sparse_", floating=True).ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rng = rng_of(generator)
    rows, cols = tensor.shape
    w = rng.normal(0.0, std, (rows, cols))
    n_zero = math.ceil(sparsity * rows)
    for j in range(cols):
        w[rng.permutation(rows)[:n_zero], j] = 0
    return _fill(tensor, w, "sparse_")


# PyTorch's old names, without the underscore: still there in PyTorch 2.13, each warning that it is deprecated.
def _deprecated(new):
    old = new.__name__[:-1]

    def call(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.", FutureWarning,
                      stacklevel=2)
        return new(*args, **kwargs)
    call.__name__ = call.__qualname__ = old
    call.__doc__ = f"Deprecated (as in PyTorch): use ``{new.__name__}``, which this calls after a FutureWarning."
    return call


uniform, normal, constant = _deprecated(uniform_), _deprecated(normal_), _deprecated(constant_)
eye, dirac, orthogonal, sparse = _deprecated(eye_), _deprecated(dirac_), _deprecated(orthogonal_), _deprecated(sparse_)
xavier_uniform, xavier_normal = _deprecated(xavier_uniform_), _deprecated(xavier_normal_)
kaiming_uniform, kaiming_normal = _deprecated(kaiming_uniform_), _deprecated(kaiming_normal_)
