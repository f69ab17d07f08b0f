"""F.channel_shuffle / nn.ChannelShuffle (ShuffleNet), F.local_response_norm / nn.LocalResponseNorm (AlexNet) and
F.alpha_dropout / F.feature_alpha_dropout with their modules (self-normalising networks, SELU), as PyTorch 2.13's
(tests/oracle/test_names_channels_and_local_torch.py). Each is built from ops with their own gradients, as
PyTorch builds them, so the gradients are PyTorch's. Alpha dropout's mask is drawn from tinyattn.manual_seed's
generator (NumPy's stream, not PyTorch's), as F.dropout's."""
from __future__ import annotations

import math

import numpy as np

from .. import checks, functions
from ..tensor import Tensor, get_rng
from . import functional as F
from .module import Module
from .stochastic import _check_p

__all__ = ["AlphaDropout", "ChannelShuffle", "FeatureAlphaDropout", "LocalResponseNorm", "alpha_dropout",
           "channel_shuffle", "feature_alpha_dropout", "local_response_norm"]

SELU_ALPHA = 1.7580993408473766  # -SELU's lowest value, scale * alpha: where a dropped unit is put


def _tensor(x, who: str) -> Tensor:
    """x, any dtype (an integer input shuffles, normalises to floats, or passes an eval-mode dropout, as PyTorch's)."""
    return x if isinstance(x, Tensor) else F._as_tensor(x, who)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, C, *) -> (N, C, *) with the channels read as (groups, C / groups) and transposed: channel
    g * (C / groups) + i moves to i * groups + g, so the next grouped convolution mixes every group."""
    x = _tensor(input, "channel_shuffle")
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)):
        raise TypeError(f"channel_shuffle(): argument 'groups' (position 2) must be int, not {type(groups).__name__}")
    if x.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(x.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c = x.shape[:2]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    rest = x.shape[2:]
    return x.reshape(n, groups, c // groups, *rest).transpose(1, 2).reshape(n, c, *rest)


class ChannelShuffle(Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """x_c / (k + alpha / size * sum of x_j^2 over the channels j = c - size // 2 .. c + (size - 1) // 2)^beta,
    channels beyond the edges counting as 0 (the sum is always divided by size, as PyTorch's average pooling)."""
    x = _tensor(input, "local_response_norm")
    if x.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {x.ndim} dimensions)")
    if size <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {size} kH: 1 kW: 1")
    if x.numel() == 0:
        return x
    sq = x * x
    c = x.shape[1]
    before, after = size // 2, (size - 1) // 2
    zeros = lambda m: Tensor(np.zeros((x.shape[0], m) + x.shape[2:], dtype=sq.dtype))  # noqa: E731
    padded = functions.cat([zeros(before), sq, zeros(after)], 1)  # (N, C + size - 1, *)
    window = padded.narrow(1, 0, c)
    for s in range(1, size):
        window = window + padded.narrow(1, s, c)
    mean = window // size if sq.dtype.kind in "iu" else window / size  # (integers: PyTorch's avg_pool floors)
    div = (mean * alpha + k) ** beta
    return x / div


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


def _alpha_dropout(x: Tensor, p: float, training: bool, inplace: bool, feature: bool, who: str) -> Tensor:
    """Dropped units are set to SELU's floor -alpha' and everything is then scaled and shifted (a, b) so that
    a zero-mean, unit-variance input keeps its mean and variance: y = a (keep x + (1 - keep)(-alpha')) + b."""
    p = _check_p(p)
    x = _tensor(x, who)
    if not training or p == 0.0:
        return x
    if feature and x.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if x.dtype.kind != "f":
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{'Long' if x.dtype == np.int64 else x.dtype}")
    if p == 1.0:
        out = x * Tensor(np.zeros((), dtype=x.dtype))
    else:
        shape = (x.shape[:2] + (1,) * (x.ndim - 2)) if feature else x.shape
        keep = (get_rng().random(shape, dtype=np.float32) >= p).astype(x.dtype)
        a = 1.0 / math.sqrt((SELU_ALPHA * SELU_ALPHA * p + 1) * (1 - p))
        b = (keep - 1) * (SELU_ALPHA * a) + SELU_ALPHA * a * p
        out = x * Tensor(keep * a) + Tensor(b.astype(x.dtype))
    return x.copy_(out) if inplace else out


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: keeps the input's mean and variance (training defaults to False, as PyTorch's)."""
    return _alpha_dropout(input, p, training, inplace, False, "alpha_dropout")


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """alpha_dropout with one draw per (sample, channel), shared by that channel's positions."""
    return _alpha_dropout(input, p, training, inplace, True, "feature_alpha_dropout")


class AlphaDropout(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        self.p, self.inplace = _check_p(checks.number("p", p, type(self).__name__)), inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return alpha_dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class FeatureAlphaDropout(AlphaDropout):
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return feature_alpha_dropout(input, self.p, self.training, self.inplace)
