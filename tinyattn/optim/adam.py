"""Adam and AdamW, written as the update rule reads on paper (Kingma & Ba, 2015; Loshchilov & Hutter, 2019)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .optimizer import Optimizer, check_betas, check_number

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  w -= lr (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps).

    weight_decay here is an L2 penalty added to the gradient (g = grad + wd w), as in PyTorch's Adam;
    for decoupled decay use AdamW.
    """

    decoupled = False  # AdamW sets True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0) -> None:
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        name = type(self).__name__
        group["betas"] = check_betas(group["betas"], name)
        group["eps"] = check_number(group["eps"], "eps", name)
        group["weight_decay"] = check_number(group["weight_decay"], "weight_decay", name)

    def _update(self, w: np.ndarray, g: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        if wd and self.decoupled:
            w *= 1 - lr * wd  # AdamW: shrink the weights directly, the gradient is left alone
        elif wd:
            g = g + wd * w  # Adam: the decay joins the gradient (and is rescaled by the denominator below)
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(w)  # m: running mean of g
            state["exp_avg_sq"] = np.zeros_like(w)  # v: running mean of g^2
        state["step"] += 1
        t = state["step"]
        m = state["exp_avg"] = b1 * state["exp_avg"] + (1 - b1) * g
        v = state["exp_avg_sq"] = b2 * state["exp_avg_sq"] + (1 - b2) * (g * g)
        # m and v start at 0, so early averages are biased towards 0; dividing by (1 - b^t) undoes that
        m_hat = m / (1 - b1 ** t)
        v_hat = v / (1 - b2 ** t)
        w -= lr * m_hat / (np.sqrt(v_hat) + eps)  # in place: the Parameter keeps its array


class AdamW(Adam):
    """Adam with decoupled weight decay: w -= lr wd w first, then the Adam step on the raw gradient."""

    decoupled = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2) -> None:
        super().__init__(params, lr, betas, eps, weight_decay)
