"""Adam and AdamW, written as the update rule reads on paper (Kingma & Ba, 2015; Loshchilov & Hutter, 2019)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .optimizer import Optimizer, check_betas, check_number, implementation_options

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  w -= lr (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps).

    weight_decay here is an L2 penalty added to the gradient (g = grad + wd w), as in PyTorch's Adam;
    for decoupled decay use AdamW (or ``decoupled_weight_decay=True``). ``amsgrad=True`` divides by the
    largest v seen so far instead of v; ``maximize=True`` climbs (the gradient's sign is flipped first).
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, amsgrad: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False, fused=None,
                 decoupled_weight_decay: bool = False) -> None:
        how = implementation_options(type(self).__name__, foreach, capturable, differentiable, fused)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, **how, decoupled_weight_decay=decoupled_weight_decay))

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        name = type(self).__name__
        group["betas"] = check_betas(group["betas"], name)
        group["eps"] = check_number(group["eps"], "eps", name)
        group["weight_decay"] = check_number(group["weight_decay"], "weight_decay", name)

    def _update(self, w: np.ndarray, g: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        if group.get("maximize"):
            g = -g  # climb: step along +grad
        if wd and group.get("decoupled_weight_decay", False):
            w *= 1 - lr * wd  # AdamW: shrink the weights directly, the gradient is left alone
        elif wd:
            g = g + wd * w  # Adam: the decay joins the gradient (and is rescaled by the denominator below)
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(w)  # m: running mean of g
            state["exp_avg_sq"] = np.zeros_like(w)  # v: running mean of g^2
            if group.get("amsgrad"):
                state["max_exp_avg_sq"] = np.zeros_like(w)  # the largest v so far, elementwise
        state["step"] += 1
        t = state["step"]
        m = state["exp_avg"] = b1 * state["exp_avg"] + (1 - b1) * g
        v = state["exp_avg_sq"] = b2 * state["exp_avg_sq"] + (1 - b2) * (g * g)
        # m and v start at 0, so early averages are biased towards 0; dividing by (1 - b^t) undoes that
        m_hat = m / (1 - b1 ** t)
        if group.get("amsgrad"):  # never let the denominator shrink (Reddi et al., 2018)
            v = state["max_exp_avg_sq"] = np.maximum(state["max_exp_avg_sq"], v)
        v_hat = v / (1 - b2 ** t)
        w -= lr * m_hat / (np.sqrt(v_hat) + eps)  # in place: the Parameter keeps its array


class AdamW(Adam):
    """Adam with decoupled weight decay: w -= lr wd w first, then the Adam step on the raw gradient."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach=None, capturable: bool = False, differentiable: bool = False, fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
