"""Channel-wise dropout (F.dropout1d/2d/3d, nn.Dropout1d/2d/3d) and F.gumbel_softmax, as PyTorch's.

Channel dropout zeroes whole channels: the keep/drop mask has shape (N, C, 1, ...) and is broadcast
over the positions, so a convolution's neighbouring (correlated) positions are dropped together. The
mask is drawn from ``tinyattn.manual_seed``'s generator, as F.dropout's: same seed, same mask (NumPy's
stream, not PyTorch's). The dims rules, warnings and errors are PyTorch 2.13's.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import checks
from ..tensor import Tensor, get_rng
from . import functional as F
from .module import Module

__all__ = ["Dropout1d", "Dropout2d", "Dropout3d", "dropout1d", "dropout2d", "dropout3d", "gumbel_softmax"]


def _channel_dropout(x: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    """PyTorch's feature_dropout: one draw per (n, c), the rest of the dims share it."""
    if not training or p == 0.0:
        return x
    mask_shape = x.shape[:2] + (1,) * (x.ndim - 2)  # (N, C, 1, ...): broadcast over positions
    keep = get_rng().random(mask_shape, dtype=np.float32) >= p  # True = keep the channel
    mask = keep.astype(x.dtype) * (0.0 if p == 1.0 else 1.0 / (1.0 - p))
    if inplace:
        return x.mul_(Tensor(mask))
    return F._Dropout.apply(x, mask=np.broadcast_to(mask, x.shape))


def _check_p(p: float) -> float:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return float(p)


def _deprecated_dims(fn: str, nd: int, got: int) -> None:
    warnings.warn(f"{fn}: Received a {got}-D input to {fn}, which is deprecated and will result in an error in a "
                  "future release. To retain the behavior and silence this warning, please use dropout instead. "
                  f"Note that {fn} exists to provide channel-wise dropout on inputs with {nd} spatial dimensions, "
                  f"a channel dimension, and an optional batch dimension (i.e. {nd + 1}D or {nd + 2}D inputs).",
                  UserWarning, stacklevel=3)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) with probability p, scaling the rest by 1 / (1 - p)."""
    p = _check_p(p)
    x = F._as_tensor(input, "dropout1d")
    if x.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {x.ndim}D input. Note that dropout1d "
                           "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel "
                           "dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if x.ndim == 3:
        return _channel_dropout(x, p, training, inplace)
    return _channel_dropout(x.unsqueeze(0), p, training, False).squeeze(0) if not inplace else \
        _unbatched_inplace(x, p, training)


def _unbatched_inplace(x: Tensor, p: float, training: bool) -> Tensor:
    """(C, *) written in place: the mask (C, 1, ...) of one example."""
    if training and p > 0:
        keep = get_rng().random((x.shape[0],) + (1,) * (x.ndim - 1), dtype=np.float32) >= p  # (C, 1, ...)
        x.mul_(Tensor(keep.astype(x.dtype) * (0.0 if p == 1.0 else 1.0 / (1.0 - p))))
    return x


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, H, W) with probability p. As PyTorch, a 3-D input is read as (N, C, L)
    (with a warning), and other dims warn and drop per (dim 0, dim 1) entry."""
    p = _check_p(p)
    x = F._as_tensor(input, "dropout2d")
    if x.ndim not in (3, 4):
        _deprecated_dims("dropout2d", 2, x.ndim)
    if x.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                      "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                      "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                      "dropout1d instead.", UserWarning, stacklevel=2)
    return _channel_dropout(x, p, training, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability p."""
    p = _check_p(p)
    x = F._as_tensor(input, "dropout3d")
    if x.ndim not in (4, 5):
        _deprecated_dims("dropout3d", 3, x.ndim)
    if x.ndim == 5:
        return _channel_dropout(x, p, training, inplace)
    if inplace:
        return _unbatched_inplace(x, p, training)
    return _channel_dropout(x.unsqueeze(0), p, training, False).squeeze(0)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1) drawn per element (from manual_seed's generator):
    a differentiable sample of a categorical. hard=True returns the one-hot of its argmax in value, with
    the soft sample's gradient (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", UserWarning, stacklevel=2)
    x = F._as_tensor(logits, "gumbel_softmax")
    gumbels = -np.log(get_rng().exponential(size=x.shape)).astype(x.dtype)  # ~ Gumbel(0, 1), x's shape
    y_soft = F.softmax((x + Tensor(gumbels)) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft._data.argmax(dim)  # the largest of each slice along dim
    y_hard = np.zeros(x.shape, dtype=x.dtype)
    np.put_along_axis(y_hard, np.expand_dims(index, dim), 1.0, dim)
    return Tensor(y_hard) - y_soft.detach() + y_soft  # one-hot in value, y_soft's gradient


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        self.p, self.inplace = _check_p(checks.number("p", p, type(self).__name__)), inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """F.dropout1d as a module: zero whole channels of (N, C, L) in training; identity in eval()."""
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """F.dropout2d as a module: zero whole channels of (N, C, H, W) in training; identity in eval()."""
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """F.dropout3d as a module: zero whole channels of (N, C, D, H, W) in training; identity in eval()."""
    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return dropout3d(input, self.p, self.training, self.inplace)
