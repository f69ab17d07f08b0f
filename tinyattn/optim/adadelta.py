"""Adadelta (Zeiler, 2012) in PyTorch's formulation, the optimizer of the MNIST examples (mnist, mnist_rnn)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .optimizer import Optimizer, check_number, implementation_options

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """v = rho v + (1 - rho) g^2;  delta = sqrt(u + eps) / sqrt(v + eps) g;  u = rho u + (1 - rho) delta^2;
    w -= lr delta.

    v is the running mean of squared gradients, u that of squared updates: their ratio gives each weight
    a step in the units of the weight, so lr=1.0 (the default) is the usual choice. weight_decay adds
    wd w to the gradient first; maximize=True flips the gradient's sign.
    """

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach=None, *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        how = implementation_options("Adadelta", foreach, capturable, differentiable, None)
        del how["fused"]  # (PyTorch's Adadelta has no fused)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, **how))

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        group["eps"] = check_number(group["eps"], "eps", "Adadelta")
        group["weight_decay"] = check_number(group["weight_decay"], "weight_decay", "Adadelta")
        rho = group["rho"]
        if isinstance(rho, bool) or not isinstance(rho, (int, float, np.integer, np.floating)) or not 0 <= rho <= 1:
            raise ValueError(f"Invalid rho value: {rho!r} (Adadelta: rho must be in [0, 1])")
        group["rho"] = float(rho)

    def _update(self, w: np.ndarray, g: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        lr, rho, eps, wd = group["lr"], group["rho"], group["eps"], group["weight_decay"]
        if group.get("maximize"):
            g = -g
        if wd:
            g = g + wd * w
        if not state:
            state["step"] = 0
            state["square_avg"] = np.zeros_like(w)  # v
            state["acc_delta"] = np.zeros_like(w)  # u
        state["step"] += 1
        v = state["square_avg"] = rho * state["square_avg"] + (1 - rho) * (g * g)
        delta = np.sqrt(state["acc_delta"] + eps) / np.sqrt(v + eps) * g
        state["acc_delta"] = rho * state["acc_delta"] + (1 - rho) * (delta * delta)
        w -= lr * delta  # in place: the Parameter keeps its array
