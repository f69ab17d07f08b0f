"""RMSprop and Adagrad, in PyTorch's formulation (its documented algorithms, option for option)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .optimizer import Optimizer, check_number, implementation_options

__all__ = ["Adagrad", "RMSprop"]


def _decayed(w: np.ndarray, g: np.ndarray, group: dict[str, Any]) -> np.ndarray:
    """The gradient as both use it: its sign flipped for maximize=True, then the L2 term wd w added."""
    g = -g if group.get("maximize") else g
    return g + group["weight_decay"] * w if group["weight_decay"] else g


class RMSprop(Optimizer):
    """s = alpha s + (1 - alpha) g^2;  w -= lr g / (sqrt(s) + eps) (Hinton's RMSprop, as PyTorch writes it).

    centered=True divides by sqrt(s - a^2) + eps, a = alpha a + (1 - alpha) g (the running mean of g), instead;
    momentum > 0 keeps buf = momentum buf + g / (...) and steps w -= lr buf.
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False, capturable: bool = False,
                 foreach=None, maximize: bool = False, differentiable: bool = False) -> None:
        how = implementation_options("RMSprop", foreach, capturable, differentiable, None)
        del how["fused"]  # (PyTorch's RMSprop has no fused)
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, maximize=maximize, **how))

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        for key in ("alpha", "eps", "weight_decay", "momentum"):
            group[key] = check_number(group[key], key, "RMSprop")

    def _update(self, w: np.ndarray, g: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        alpha, eps, momentum = group["alpha"], group["eps"], group["momentum"]
        g = _decayed(w, g, group)
        if not state:
            state["step"] = 0
            state["square_avg"] = np.zeros_like(w)
            if momentum > 0:
                state["momentum_buffer"] = np.zeros_like(w)
            if group["centered"]:
                state["grad_avg"] = np.zeros_like(w)
        state["step"] += 1
        s = state["square_avg"] = alpha * state["square_avg"] + (1 - alpha) * (g * g)
        if group["centered"]:
            a = state["grad_avg"] = alpha * state["grad_avg"] + (1 - alpha) * g
            avg = np.sqrt(s - a * a) + eps
        else:
            avg = np.sqrt(s) + eps
        if momentum > 0:
            buf = state["momentum_buffer"] = momentum * state["momentum_buffer"] + g / avg
            w -= group["lr"] * buf
        else:
            w -= group["lr"] * g / avg  # in place: the Parameter keeps its array


class Adagrad(Optimizer):
    """s += g^2;  w -= lr / (1 + (t - 1) lr_decay) g / (sqrt(s) + eps), s starting at initial_accumulator_value
    (Duchi et al., 2011, as PyTorch writes it)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0, weight_decay: float = 0.0,
                 initial_accumulator_value: float = 0.0, eps: float = 1e-10, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, fused=None) -> None:
        how = implementation_options("Adagrad", foreach, False, differentiable, fused)
        del how["capturable"]  # (PyTorch's Adagrad has no capturable)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
                                      initial_accumulator_value=initial_accumulator_value, maximize=maximize, **how))

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        for key in ("lr_decay", "weight_decay", "initial_accumulator_value", "eps"):
            group[key] = check_number(group[key], key, "Adagrad")

    def _update(self, w: np.ndarray, g: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        g = _decayed(w, g, group)
        if not state:
            state["step"] = 0
            state["sum"] = np.full_like(w, group["initial_accumulator_value"])
        state["step"] += 1
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        s = state["sum"] = state["sum"] + g * g
        w -= clr * g / (np.sqrt(s) + group["eps"])  # in place: the Parameter keeps its array
