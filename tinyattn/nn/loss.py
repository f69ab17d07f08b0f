"""Loss modules: CrossEntropyLoss, NLLLoss, MSELoss, KLDivLoss, holding PyTorch's arguments and calling nn.functional.

``criterion = nn.CrossEntropyLoss(label_smoothing=0.1); loss = criterion(logits, targets)`` is the same
as ``F.cross_entropy(logits, targets, label_smoothing=0.1)``; the module only remembers the options.
"""
from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["CrossEntropyLoss", "NLLLoss", "MSELoss", "KLDivLoss"]


class CrossEntropyLoss(Module):
    """F.cross_entropy as a module: logits (N, C), (B, T, C) classes last, or (N, C, d1, ...) as in PyTorch.

    weight (C,) is registered as a buffer (it goes into state_dict, as in PyTorch).
    """

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__()
        self.register_buffer("weight", weight)
        self.ignore_index, self.reduction, self.label_smoothing = ignore_index, reduction, label_smoothing

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.cross_entropy(input, target, ignore_index=self.ignore_index, reduction=self.reduction,
                               weight=self.weight, label_smoothing=self.label_smoothing)

    def extra_repr(self) -> str:
        return f"ignore_index={self.ignore_index}, reduction={self.reduction!r}, label_smoothing={self.label_smoothing}"


class NLLLoss(Module):
    """F.nll_loss as a module: log-probabilities (N, C), (B, T, C) classes last, or (N, C, d1, ...) as in PyTorch.
    ``nn.LogSoftmax(dim=-1)`` then ``nn.NLLLoss()`` is ``nn.CrossEntropyLoss()`` in two steps."""

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100, reduction: str = "mean") -> None:
        super().__init__()
        self.register_buffer("weight", weight)
        self.ignore_index, self.reduction = ignore_index, reduction

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)

    def extra_repr(self) -> str:
        return f"ignore_index={self.ignore_index}, reduction={self.reduction!r}"


class MSELoss(Module):
    """F.mse_loss as a module: input and target of one shape; reduction 'mean', 'sum' or 'none'."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"


class KLDivLoss(Module):
    """F.kl_div as a module: input = LOG-probabilities, target = probabilities (or log ones, log_target=True)."""

    def __init__(self, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__()
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}, log_target={self.log_target}"
