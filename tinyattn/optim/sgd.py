"""SGD with momentum, dampening, weight decay and Nesterov, in PyTorch's formulation."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .optimizer import Optimizer, check_number, implementation_options

__all__ = ["SGD"]


class SGD(Optimizer):
    """g = grad + wd w;  buf = momentum buf + (1 - dampening) g (buf = g on the first step);  w -= lr buf.

    Without momentum the step is w -= lr g. With nesterov=True it uses g + momentum buf instead of buf.
    maximize=True flips the gradient's sign first.
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False, foreach=None,
                 differentiable: bool = False, fused=None) -> None:
        how = implementation_options("SGD", foreach, False, differentiable, fused)
        del how["capturable"]  # (PyTorch's SGD has no capturable)
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, **how))

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        for key in ("momentum", "dampening", "weight_decay"):
            group[key] = check_number(group[key], key, "SGD")
        if group["nesterov"] and (group["momentum"] == 0 or group["dampening"] != 0):
            raise ValueError("SGD: nesterov=True needs momentum > 0 and dampening = 0")

    def _update(self, w: np.ndarray, g: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        lr, momentum, wd = group["lr"], group["momentum"], group["weight_decay"]
        if group.get("maximize"):
            g = -g
        if wd:
            g = g + wd * w  # the L2 penalty wd/2 |w|^2 has gradient wd w
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = g.copy()  # a copy: g may be the gradient array itself
            else:
                buf = momentum * buf + (1 - group["dampening"]) * g
            state["momentum_buffer"] = buf
            g = g + momentum * buf if group["nesterov"] else buf
        w -= lr * g  # in place: the Parameter keeps its array, so the model sees the update
