"""F.poisson_nll_loss, F.multi_margin_loss, F.multilabel_margin_loss, F.triplet_margin_with_distance_loss and
F.pdist, with their modules (nn.PoissonNLLLoss, nn.MultiMarginLoss, nn.MultiLabelMarginLoss,
nn.TripletMarginWithDistanceLoss), each PyTorch's formula built from differentiable ops (so each gradient is
those ops'). The integer targets are read as constants; a target outside [0, C) is PyTorch's error."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..tensor import Tensor
from . import functional as F
from .more_losses import _Loss, _reduction, pairwise_distance

__all__ = ["MultiLabelMarginLoss", "MultiMarginLoss", "PoissonNLLLoss", "TripletMarginWithDistanceLoss",
           "multi_margin_loss", "multilabel_margin_loss", "pdist", "poisson_nll_loss",
           "triplet_margin_with_distance_loss"]


def poisson_nll_loss(input: Tensor, target: Any, log_input: bool = True, full: bool = False,
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """exp(x) - y x (log_input), or x - y log(x + eps); ``full`` adds Stirling's y log y - y + log(2 pi y)/2
    where y > 1."""
    reduction = _reduction(size_average, reduce, reduction)
    x = F._as_tensor(input, "poisson_nll_loss")
    y = target if isinstance(target, Tensor) else Tensor(target)
    loss = x.exp() - y * x if log_input else x - y * (x + eps).log()
    if full:  # (differentiable in y, as PyTorch's: a float target that requires grad gets log y + 1/(2y))
        small = Tensor(~(y._data > 1))  # where the term is 0: computed at y = 2 there (no log 0, no 0 * -inf)
        ys = y.masked_fill(small, 2.0)
        stirling = ys * ys.log() - ys + 0.5 * (2 * math.pi * ys).log()
        loss = loss + stirling.masked_fill(small, 0)
    return F._reduced(loss, reduction)


def _class_targets(target: Any, n: int, c: int, fn: str) -> np.ndarray:
    t = target._data if isinstance(target, Tensor) else np.asarray(target)
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"{fn}: target must hold class indices (an integer tensor), got {t.dtype}")
    return t.reshape(n, -1) if t.ndim else t.reshape(1, 1)


def multi_margin_loss(input: Tensor, target: Any, p: int = 1, margin: float = 1.0, weight: Any = None,
                      size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """sum over i != y of max(0, margin - x[y] + x[i])^p (times weight[y]), divided by C; input (N, C) or (C,)."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = F._as_tensor(input, "multi_margin_loss")
    if x.ndim not in (1, 2) or x.shape[-1] == 0:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(x.shape)}")
    x2 = x.reshape(1, -1) if x.ndim == 1 else x  # (N, C)
    n, c = x2.shape
    y = _class_targets(target, n, c, "multi_margin_loss").reshape(-1)
    if y.size != n:
        raise RuntimeError(f"inconsistent target size, expected {n} but got {list(np.shape(target))}")
    if ((y < 0) | (y >= c)).any():
        raise RuntimeError("target out of range")
    rows = np.arange(n)
    xy = x2[rows, y].unsqueeze(1)  # (N, 1)
    h = (margin - xy + x2).clamp(min=0)  # (N, C)
    h = h if p == 1 else h * h
    if weight is not None:
        w = weight._data if isinstance(weight, Tensor) else np.asarray(weight)
        h = h * Tensor(w[y].reshape(n, 1).astype(h._data.dtype))
    off = np.ones((n, c), dtype=bool)
    off[rows, y] = False  # (the i = y term is dropped)
    loss = (h * Tensor(off.astype(h._data.dtype))).sum(1) / c  # (N,)
    loss = loss.reshape(()) if x.ndim == 1 else loss
    return F._reduced(loss, reduction)


def multilabel_margin_loss(input: Tensor, target: Any, size_average: Any = None, reduce: Any = None,
                           reduction: str = "mean") -> Tensor:
    """sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i])), divided by C; the
    target row lists class indices and ends at the first -1."""
    reduction = _reduction(size_average, reduce, reduction)
    x = F._as_tensor(input, "multilabel_margin_loss")
    if x.ndim not in (1, 2) or x.shape[-1] == 0:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(x.shape)}")
    t = target._data if isinstance(target, Tensor) else np.asarray(target)
    if t.shape != x.shape:
        raise RuntimeError(f"inconsistent target size: {list(t.shape)} for input of size: {list(x.shape)}")
    x2 = x.reshape(1, -1) if x.ndim == 1 else x
    t2 = t.reshape(x2.shape)
    n, c = x2.shape
    is_target = np.zeros((n, c), dtype=bool)
    pick = np.zeros((n, c), dtype=np.float64)  # how often class j is listed before the first -1
    for r in range(n):
        for j in t2[r]:
            if j < 0:
                break
            if j >= c:
                raise RuntimeError("target out of range")
            is_target[r, j] = True
            pick[r, j] += 1
    dt = x2._data.dtype
    h = (1 - x2.unsqueeze(2) + x2.unsqueeze(1)).clamp(min=0)  # (N, C_j, C_i): 1 - (x[j] - x[i])
    mask = pick[:, :, None] * (~is_target)[:, None, :]  # j listed, i not a target
    loss = (h * Tensor(mask.astype(dt))).sum((1, 2)) / c  # (N,)
    loss = loss.reshape(()) if x.ndim == 1 else loss
    return F._reduced(loss, reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Callable | None = None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) with any distance d (pairwise_distance by default)."""
    from ..functions import minimum
    reduction = _reduction(None, None, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    d = distance_function if distance_function is not None else pairwise_distance
    d_pos, d_neg = d(anchor, positive), d(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, d(positive, negative))
    return F._reduced((margin + d_pos - d_neg).clamp(min=0), reduction)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distance of every pair of rows i < j of input (N, M), in row-major order: (N (N - 1) / 2,)."""
    x = F._as_tensor(input, "pdist")
    if x.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {x.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    i, j = np.triu_indices(x.shape[0], 1)
    diff = x[i] - x[j]  # (P, M)
    a = diff.abs()
    if p == 0:
        return a.sign().sum(1)  # the count of differing entries (gradient 0, as PyTorch's)
    if p == math.inf:
        return a.amax(1) if diff.shape[1] else a.sum(1)
    s = a.pow(p).sum(1)  # sum |d|^p
    zero = Tensor((s._data == 0).astype(x._data.dtype))
    return (s + zero).pow(1.0 / p) - zero  # (a zero distance has gradient 0, as PyTorch's, not NaN)


class PoissonNLLLoss(_Loss):
    def __init__(self, log_input: bool = True, full: bool = False, size_average: Any = None, eps: float = 1e-8,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Any) -> Tensor:
        return poisson_nll_loss(log_input, target, self.log_input, self.full, eps=self.eps, reduction=self.reduction)


class MultiMarginLoss(_Loss):
    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None, size_average: Any = None,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        self.p, self.margin = p, margin
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return multi_margin_loss(input, target, self.p, self.margin, self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    def __init__(self, *, distance_function: Callable | None = None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             "instead")
        from .more_losses import PairwiseDistance
        # (PyTorch's: the default distance is a PairwiseDistance submodule, shown in the repr)
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                 margin=self.margin, swap=self.swap, reduction=self.reduction)
