"""Binary cross-entropy, the robust regression losses and the two pairwise measures, as PyTorch's:
F.binary_cross_entropy / nn.BCELoss (probabilities in [0, 1]), F.binary_cross_entropy_with_logits /
nn.BCEWithLogitsLoss (raw scores, with pos_weight), F.smooth_l1_loss / nn.SmoothL1Loss,
F.huber_loss / nn.HuberLoss, nn.L1Loss, F.cosine_similarity / nn.CosineSimilarity and
F.pairwise_distance / nn.PairwiseDistance.

The two BCE losses are Functions with PyTorch's own derivatives (the log of a probability clamped at
-100, the logits form written so that exp never overflows); the rest are compositions of
differentiable ops, so their gradients come from those ops.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..tensor import Function, Tensor
from . import functional as F
from .module import Module

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CosineSimilarity", "GaussianNLLLoss", "HingeEmbeddingLoss",
           "HuberLoss", "L1Loss", "MarginRankingLoss", "MultiLabelSoftMarginLoss", "PairwiseDistance", "SoftMarginLoss",
           "TripletMarginLoss", "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss",
           "multilabel_soft_margin_loss", "soft_margin_loss", "triplet_margin_loss",
           "SmoothL1Loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_similarity",
           "gaussian_nll_loss", "huber_loss", "pairwise_distance", "smooth_l1_loss"]


def _reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    """PyTorch's legacy size_average/reduce spellings folded into reduction, then reduction checked."""
    if size_average is not None or reduce is not None:
        reduction = "none" if reduce is False else "sum" if size_average is False else "mean"
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _fixed(t: Any, name: str, fn: str, shape: tuple) -> np.ndarray | None:
    """weight / pos_weight: a constant broadcast to shape; PyTorch has no gradient for it and refuses one."""
    if t is None:
        return None
    if isinstance(t, Tensor) and t.requires_grad:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{name}'. "
                           "This input cannot have requires_grad True.")
    arr = t._data if isinstance(t, Tensor) else np.asarray(t)
    try:
        return np.broadcast_to(arr, shape)
    except ValueError:
        raise RuntimeError(f"{fn}: {name} of shape {tuple(arr.shape)} does not broadcast to the input's shape "
                           f"{shape}") from None


def _pair(input: Any, target: Any, fn: str, size_rule: str) -> tuple[Tensor, Tensor]:
    x = F._as_tensor(input, fn)
    y = target if isinstance(target, Tensor) else Tensor(target)  # a 0/1 int target: PyTorch's RuntimeError below
    if x.shape != y.shape:
        raise ValueError(size_rule.format(t=f"torch.Size({list(y.shape)})", i=f"torch.Size({list(x.shape)})"))
    if x.dtype != y.dtype or x.dtype.kind != "f":
        raise RuntimeError(f"{fn}: input and target must be one floating dtype, got {x.dtype} and {y.dtype} "
                           "(a 0/1 label tensor needs .float())")
    return x, y


_EPS = float(np.float32(1e-12))  # PyTorch's floor of p (1 - p) in the gradient: 1e-12 rounded to float32


class _BCE(Function):
    """l = -w (y max(log p, -100) + (1 - y) max(log(1 - p), -100));
    dp = w (p - y) / max(p (1 - p), 1e-12),  dy = w (log(1 - p) - log p)  (PyTorch's own derivatives)"""
    @staticmethod
    def forward(ctx, p, y, w):
        with np.errstate(divide="ignore", invalid="ignore"):
            logp, log1mp = np.log(p), np.log1p(-p)
        ctx.save_for_backward(p, y, logp, log1mp)
        ctx.w = w
        loss = -(y * np.maximum(logp, -100) + (1 - y) * np.maximum(log1mp, -100))
        return loss if w is None else loss * w

    @staticmethod
    def backward(ctx, g):
        p, y, logp, log1mp = ctx.saved_tensors
        gw = g if ctx.w is None else g * ctx.w
        dp = gw * (p - y) / np.maximum(p * (1 - p), _EPS) if ctx.needs_input_grad[0] else None
        dy = gw * (log1mp - logp) if ctx.needs_input_grad[1] else None
        return dp, dy


def binary_cross_entropy(input: Tensor, target: Any, weight: Any = None, size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """-(y log p + (1 - y) log(1 - p)) per element, p = input in [0, 1] (after a sigmoid), each log clamped
    at -100 so p = 0 or 1 gives 100, not inf; weight rescales each element (broadcast to input's shape)."""
    reduction = _reduction(size_average, reduce, reduction)
    p, y = _pair(input, target, "binary_cross_entropy", "Using a target size ({t}) that is different to the "
                 "input size ({i}) is deprecated. Please ensure they have the same size.")
    for name, a in (("input", p._data), ("target", y._data)):
        if ((a < 0) | (a > 1)).any():
            raise RuntimeError(f"all elements of {name} should be between 0 and 1")
    w = _fixed(weight, "weight", "binary_cross_entropy", p.shape)
    return F._reduced(_BCE.apply(p, y, w=None if w is None else w.astype(p.dtype)), reduction)


class _BCEWithLogits(Function):
    """l = w ((1 - y) x + (1 + (pw - 1) y) softplus(-x)), softplus(-x) = log1p(exp(-|x|)) + max(-x, 0);
    dx = w ((1 + (pw - 1) y) sigmoid(x) - pw y),  dy = w (-x + (pw - 1) softplus(-x))  (PyTorch's forms)"""
    @staticmethod
    def forward(ctx, x, y, w, pw):
        sp = np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0)  # softplus(-x), no overflow for large |x|
        c = 1 if pw is None else 1 + (pw - 1) * y  # how much a positive counts
        ctx.save_for_backward(x, y, sp, c)
        ctx.w, ctx.pw = w, pw
        loss = (1 - y) * x + c * sp
        return loss if w is None else loss * w

    @staticmethod
    def backward(ctx, g):
        x, y, sp, c = ctx.saved_tensors
        gw = g if ctx.w is None else g * ctx.w
        dx = dy = None
        if ctx.needs_input_grad[0]:
            sig = np.exp(-np.logaddexp(0, -x))  # sigmoid(x) = 1 / (1 + e^-x), stable both ways
            dx = gw * (c * sig - (y if ctx.pw is None else ctx.pw * y))
        if ctx.needs_input_grad[1]:
            dy = gw * (-x if ctx.pw is None else -x + (ctx.pw - 1) * sp)
        return dx, dy


def binary_cross_entropy_with_logits(input: Tensor, target: Any, weight: Any = None, size_average: Any = None,
                                     reduce: Any = None, reduction: str = "mean", pos_weight: Any = None) -> Tensor:
    """binary_cross_entropy(sigmoid(input), target) in one stable step; pos_weight (broadcast along the last
    dim, one per class) multiplies the loss of the positive term: pos_weight = negatives / positives balances them."""
    reduction = _reduction(size_average, reduce, reduction)
    x, y = _pair(input, target, "binary_cross_entropy_with_logits", "Target size ({t}) must be the same as "
                 "input size ({i})")
    w = _fixed(weight, "weight", "binary_cross_entropy_with_logits", x.shape)
    pw = _fixed(pos_weight, "pos_weight", "binary_cross_entropy_with_logits", x.shape)
    cast = (lambda a: None if a is None else a.astype(x.dtype))
    return F._reduced(_BCEWithLogits.apply(x, y, w=cast(w), pw=cast(pw)), reduction)


def smooth_l1_loss(input: Tensor, target: Any, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target); beta = 0 is l1_loss.
    Shapes must match, as mse_loss and l1_loss here (PyTorch warns and broadcasts)."""
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = F._difference(input, target, reduction, "smooth_l1_loss")
    if beta == 0:
        return F._reduced(d.abs(), reduction)
    return F._reduced(_quadratic_then_linear(d, beta) / beta, reduction)


def _quadratic_then_linear(d: Tensor, beta: float) -> Tensor:
    """0.5 d^2 where |d| < beta, else beta (|d| - 0.5 beta) (huber_loss; smooth_l1_loss is this / beta), written
    as 0.5 q^2 + beta |d - q| with q = clamp(d, -beta, beta): no branch squares an infinite d, so the
    gradient at d = +-inf is PyTorch's beta sign(d), not 0 * inf = NaN (a where() over both branches would pass
    NaN back from the unselected d * d); inside, d - q is 0 and passes exactly 0, so the gradient is d itself."""
    q = d.clamp(-beta, beta)
    return q * q * 0.5 + (d - q).abs() * beta


def huber_loss(input: Tensor, target: Any, reduction: str = "mean", delta: float = 1.0, weight: Any = None) -> Tensor:
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta): smooth_l1_loss times delta (beta = delta);
    weight rescales each element before the reduction."""
    reduction = _reduction(None, None, reduction)
    if not delta > 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = F._difference(input, target, reduction, "huber_loss")
    err = _quadratic_then_linear(d, delta)
    if weight is not None and tuple(getattr(weight, "shape", ())) != tuple(err.shape):
        raise ValueError("Weights and input must have the same size.")
    return F._reduced(err if weight is None else err * weight, reduction)


def gaussian_nll_loss(input: Tensor, target: Any, var: Any, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """0.5 (log var + (input - target)^2 / var) (+ 0.5 log 2 pi if full): the negative log-likelihood of target
    under N(input, var). var has input's shape, or one fewer dim, or a 1 in one dim (shared variance), or is a
    float; it is clamped at eps in value only (PyTorch clamps it under no_grad, so its gradient passes)."""
    x = F._as_tensor(input, "gaussian_nll_loss")
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = Tensor(np.full(x.shape, var, dtype=x.dtype))
    elif (var._data < 0).any():
        raise ValueError("var has negative entry/entries")
    if var.shape != x.shape:
        if x.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (x.ndim == var.ndim and sum(b for a, b in zip(x.shape, var.shape) if a != b) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = _clamped_no_grad(var, eps)
    d = x - target
    loss = 0.5 * (var.log() + d * d / var)
    return F._reduced(loss + 0.5 * math.log(2 * math.pi) if full else loss, reduction)


def _clamped_no_grad(n: Tensor, eps: float) -> Tensor:
    """max(n, eps) in value, n in gradient: PyTorch clamps the norms of cosine_similarity under no_grad."""
    return n + (n.clamp(min=eps) - n).detach()


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 x2, dim) / (max(||x1||, eps) max(||x2||, eps)); x1 and x2 broadcast, dim is removed."""
    a, b = F._as_tensor(x1, "cosine_similarity", "x1"), F._as_tensor(x2, "cosine_similarity", "x2")
    try:  # broadcast BEFORE the norms: x1 (1, D) against x2 (N, D) along dim 0 is N copies of x1, a longer vector
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"cosine_similarity: x1 of shape {tuple(a.shape)} and x2 of shape {tuple(b.shape)} do not "
                         "broadcast") from None
    a, b = a.expand(*shape), b.expand(*shape)
    na = _clamped_no_grad(a.norm(2, dim, keepdim=True), eps)  # (..., 1, ...) along dim
    nb = _clamped_no_grad(b.norm(2, dim, keepdim=True), eps)
    return ((a / na) * (b / nb)).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p along the last dim (eps keeps the norm's gradient finite where x1 == x2)."""
    a, b = F._as_tensor(x1, "pairwise_distance", "x1"), F._as_tensor(x2, "pairwise_distance", "x2")
    return (a - b + eps).norm(p, -1, keepdim=keepdim)


class _Loss(Module):
    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = _reduction(size_average, reduce, reduction)  # PyTorch's repr shows no options


class L1Loss(_Loss):
    """F.l1_loss as a module: |input - target|, shapes must match."""
    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return F.l1_loss(input, target, reduction=self.reduction)


class BCELoss(_Loss):
    """F.binary_cross_entropy as a module: probabilities (after nn.Sigmoid) against 0/1 (or soft) targets."""
    def __init__(self, weight: Tensor | None = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """F.binary_cross_entropy_with_logits as a module; weight and pos_weight are buffers (in state_dict)."""
    def __init__(self, weight: Tensor | None = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean", pos_weight: Tensor | None = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return binary_cross_entropy_with_logits(input, target, self.weight, reduction=self.reduction,
                                                pos_weight=self.pos_weight)


class SmoothL1Loss(_Loss):
    """F.smooth_l1_loss as a module (beta = where the square turns into the line)."""
    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean", beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """F.huber_loss as a module."""
    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(None, None, reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class GaussianNLLLoss(_Loss):
    """F.gaussian_nll_loss as a module: loss(input, target, var)."""
    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Any, var: Any) -> Tensor:  # noqa: A002
        return gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class CosineSimilarity(Module):
    """F.cosine_similarity as a module."""
    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """F.pairwise_distance as a module."""
    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


# --- margin losses (metric learning, ranking, multi-label), each PyTorch's formula ----------------------------
def _targets(t: Any, fn: str) -> Tensor:
    return t if isinstance(t, Tensor) else Tensor(np.asarray(t))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Any, margin: float = 0.0, size_average: Any = None,
                        reduce: Any = None, reduction: str = "mean") -> Tensor:
    """max(0, -y (x1 - x2) + margin): x1 should rank above x2 where y = 1, below where y = -1."""
    reduction = _reduction(size_average, reduce, reduction)
    y = _targets(target, "margin_ranking_loss")
    return F._reduced((-y * (input1 - input2) + margin).clamp(min=0), reduction)


def hinge_embedding_loss(input: Tensor, target: Any, margin: float = 1.0, size_average: Any = None,
                         reduce: Any = None, reduction: str = "mean") -> Tensor:
    """x where y = 1, max(0, margin - x) where y = -1 (x a distance: small for similar pairs)."""
    from ..functions import where
    reduction = _reduction(size_average, reduce, reduction)
    y = _targets(target, "hinge_embedding_loss")
    zero = Tensor(np.zeros_like(input._data))  # (not input * 0: an infinite distance would make it NaN)
    out = where(Tensor(y._data != 1), (margin - input).clamp(min=0), zero) + where(Tensor(y._data != -1), input, zero)
    return F._reduced(out, reduction)


def soft_margin_loss(input: Tensor, target: Any, size_average: Any = None, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """log(1 + exp(-y x)) for labels y in {-1, 1}."""
    reduction = _reduction(size_average, reduce, reduction)
    return F._reduced((-input * _targets(target, "soft_margin_loss")).exp().log1p(), reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Any, margin: float = 0.0, size_average: Any = None,
                          reduce: Any = None, reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1 (cos over the last dim, with
    PyTorch's 1e-12 added to each squared norm)."""
    from ..functions import where
    reduction = _reduction(size_average, reduce, reduction)
    y = _targets(target, "cosine_embedding_loss")
    d = input1.ndim - 1
    denom = (((input1 * input1).sum(d) + 1e-12) * ((input2 * input2).sum(d) + 1e-12)).sqrt()
    cos = (input1 * input2).sum(d) / denom
    zero = cos * 0
    out = where(Tensor(y._data == 1), 1 - cos, zero) + where(Tensor(y._data == -1), (cos - margin).clamp(min=0), zero)
    return F._reduced(out, reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)), d = pairwise_distance; swap uses min(d(a, n), d(p, n))."""
    from ..functions import minimum
    reduction = _reduction(size_average, reduce, reduction)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return F._reduced((margin + d_pos - d_neg).clamp(min=0), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Any, weight: Any = None, size_average: Any = None,
                                reduce: Any = None, reduction: str = "mean") -> Tensor:
    """The binary cross-entropy of every label (from logits), averaged over the labels (the last dim)."""
    reduction = _reduction(size_average, reduce, reduction)
    y = _targets(target, "multilabel_soft_margin_loss")
    loss = -(y * F.logsigmoid(input) + (1 - y) * F.logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.ndim - 1) / input.shape[-1]
    return F._reduced(loss, reduction)


class MarginRankingLoss(_Loss):
    """F.margin_ranking_loss as a module: loss(x1, x2, y)."""
    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Any) -> Tensor:
        return margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """F.hinge_embedding_loss as a module."""
    def __init__(self, margin: float = 1.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """F.soft_margin_loss as a module."""
    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return soft_margin_loss(input, target, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """F.cosine_embedding_loss as a module: loss(x1, x2, y)."""
    def __init__(self, margin: float = 0.0, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Any) -> Tensor:
        return cosine_embedding_loss(input1, input2, target, self.margin, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """F.triplet_margin_loss as a module: loss(anchor, positive, negative)."""
    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps, self.swap,
                                   reduction=self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """F.multilabel_soft_margin_loss as a module; weight (C,) is a buffer."""
    def __init__(self, weight: Tensor | None = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Any) -> Tensor:  # noqa: A002
        return multilabel_soft_margin_loss(input, target, self.weight, reduction=self.reduction)
