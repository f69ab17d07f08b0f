"""Optimizers: SGD (with momentum), Adam, AdamW, and gradient-norm clipping.

The update rules are PyTorch's documented algorithms, line for line, so a learner can
check one against the other. Every update works in place on ``p._data`` (the Parameter
object itself never changes, so a Module and its optimizer keep pointing at the same
thing) and skips parameters whose ``.grad`` is None (they took no part in the loss).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .nn.utils import _check_nonneg, _clip_grad_norm, _param_list
from .tensor import Tensor

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "clip_grad_norm", "clip_grad_norm_"]


def _check_betas(betas: Any, who: str) -> tuple[float, float]:
    try:
        b1, b2 = (float(b) for b in betas)
    except (TypeError, ValueError):
        raise ValueError(f"{who}: betas must be a pair (beta1, beta2), got {betas!r}") from None
    for i, b in enumerate((b1, b2)):
        if not 0.0 <= b < 1.0:
            raise ValueError(f"{who}: betas[{i}] must be in [0, 1), got {b}")
    return b1, b2


class Optimizer:
    """Holds the parameters and per-parameter state; subclasses write ``_update(p, g, state)``."""

    def __init__(self, params: Iterable[Tensor], lr: float) -> None:
        name = type(self).__name__
        self.params = _param_list(params, name)
        if not self.params:
            raise ValueError(f"{name} got an empty parameter list (did the model register any Parameters?)")
        self.lr = _check_nonneg(lr, "lr", name)
        self.state: list[dict[str, Any]] = [{} for _ in self.params]  # state[i] belongs to params[i]

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients of the last backward (call it before the next one: grads accumulate)."""
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def step(self) -> None:
        """Update every parameter that has a gradient."""
        for p, state in zip(self.params, self.state):
            if p.grad is None:
                continue
            g = p.grad._data
            if g.shape != p._data.shape:
                raise ValueError(f"{type(self).__name__}.step: a parameter of shape {p._data.shape} "
                                 f"has a gradient of shape {g.shape}")
            self._update(p, g, state)

    def _update(self, p: Tensor, g: np.ndarray, state: dict[str, Any]) -> None:  # pragma: no cover
        raise NotImplementedError

    def _hyper(self) -> dict[str, Any]:
        return {"lr": self.lr}

    def state_dict(self) -> dict[str, Any]:
        """Hyper-parameters and per-parameter state (copies), indexed by position in the param list."""
        return {"hyper": dict(self._hyper()),
                "state": [{k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in s.items()} for s in self.state]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = state_dict["state"]
        if len(state) != len(self.params):
            raise ValueError(f"{type(self).__name__}.load_state_dict: state is for {len(state)} parameters, "
                             f"this optimizer has {len(self.params)}")
        for i, (p, s) in enumerate(zip(self.params, state)):
            for k, v in s.items():
                if isinstance(v, np.ndarray) and v.shape != p.shape:
                    raise ValueError(f"{type(self).__name__}.load_state_dict: state '{k}' of parameter {i} "
                                     f"has shape {v.shape}, the parameter has shape {p.shape}")
        for k, v in state_dict["hyper"].items():
            setattr(self, k, tuple(v) if isinstance(v, list) else v)
        self.state = [{k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in s.items()} for s in state]

    def __repr__(self) -> str:
        hyper = ", ".join(f"{k}={v}" for k, v in self._hyper().items())
        return f"{type(self).__name__}({len(self.params)} params, {hyper})"


class SGD(Optimizer):
    """g = grad + wd p;  buf = momentum buf + g (buf = g on the first step);  p -= lr buf (or lr g without momentum).

    With nesterov=True the step uses g + momentum buf instead of buf (PyTorch's form).
    """

    def __init__(self, params: Iterable[Tensor], lr: float, momentum: float = 0.0, weight_decay: float = 0.0,
                 nesterov: bool = False) -> None:
        super().__init__(params, lr)
        self.momentum = _check_nonneg(momentum, "momentum", "SGD")
        self.weight_decay = _check_nonneg(weight_decay, "weight_decay", "SGD")
        if nesterov and self.momentum == 0:
            raise ValueError("SGD: nesterov=True needs momentum > 0")
        self.nesterov = bool(nesterov)

    def _hyper(self) -> dict[str, Any]:
        return {"lr": self.lr, "momentum": self.momentum, "weight_decay": self.weight_decay, "nesterov": self.nesterov}

    def _update(self, p: Tensor, g: np.ndarray, state: dict[str, Any]) -> None:
        if self.weight_decay:
            g = g + self.weight_decay * p._data  # L2 penalty wd/2 |p|^2 has gradient wd p
        if self.momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = np.array(g, dtype=p.dtype)  # a copy: g may be p.grad itself
            else:
                buf *= self.momentum
                buf += g
            g = g + self.momentum * buf if self.nesterov else buf
        p._data -= self.lr * g


class Adam(Optimizer):
    """m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  p -= lr (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps).

    weight_decay here is an L2 penalty added to the gradient (g = grad + wd p), as in PyTorch's Adam;
    for decoupled decay use AdamW.
    """

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0) -> None:
        super().__init__(params, lr)
        self.betas = _check_betas(betas, type(self).__name__)
        self.eps = _check_nonneg(eps, "eps", type(self).__name__)
        self.weight_decay = _check_nonneg(weight_decay, "weight_decay", type(self).__name__)

    def _hyper(self) -> dict[str, Any]:
        return {"lr": self.lr, "betas": self.betas, "eps": self.eps, "weight_decay": self.weight_decay}

    def _decay(self, p: Tensor, g: np.ndarray) -> np.ndarray:
        """Adam: weight decay joins the gradient (and so gets rescaled by the adaptive denominator)."""
        return g + self.weight_decay * p._data if self.weight_decay else g

    def _update(self, p: Tensor, g: np.ndarray, state: dict[str, Any]) -> None:
        g = self._decay(p, g)
        b1, b2 = self.betas
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(p._data)  # m: running mean of g
            state["exp_avg_sq"] = np.zeros_like(p._data)  # v: running mean of g^2
        state["step"] += 1
        t, m, v = state["step"], state["exp_avg"], state["exp_avg_sq"]
        m *= b1
        m += (1 - b1) * g
        v *= b2
        v += (1 - b2) * (g * g)
        # m and v start at 0, so early averages are biased towards 0; dividing by (1 - b^t) undoes that:
        # p -= lr * m_hat / (sqrt(v_hat) + eps),  m_hat = m / (1 - b1^t),  v_hat = v / (1 - b2^t).
        step = v / (1 - b2 ** t)  # v_hat, in the one new array this update needs
        np.sqrt(step, out=step)
        step += self.eps
        np.divide(m, step, out=step)  # m / (sqrt(v_hat) + eps)
        step *= self.lr / (1 - b1 ** t)  # m_hat's correction folded into the step size (a scalar)
        p._data -= step


class AdamW(Adam):
    """Adam with decoupled weight decay: p -= lr wd p first, then the Adam step on the raw gradient."""

    def __init__(self, params: Iterable[Tensor], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2) -> None:
        super().__init__(params, lr, betas, eps, weight_decay)

    def _decay(self, p: Tensor, g: np.ndarray) -> np.ndarray:
        """AdamW: shrink the weights directly; the gradient is left alone (Loshchilov & Hutter, 2019)."""
        if self.weight_decay:
            p._data *= 1 - self.lr * self.weight_decay
        return g


def clip_grad_norm(params: Any, max_norm: float, error_if_nonfinite: bool = True) -> float:
    """Scale all gradients together, in place, so their joint L2 norm is at most max_norm.

    Returns the total norm BEFORE clipping (useful to log). Clipping all gradients by one factor
    keeps the update's direction; only its length shrinks. max_norm=inf just measures.
    """
    return _clip_grad_norm(params, max_norm, 2.0, error_if_nonfinite, "clip_grad_norm")


clip_grad_norm_ = clip_grad_norm  # PyTorch's in-place name
