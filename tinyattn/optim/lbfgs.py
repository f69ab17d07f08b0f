"""L-BFGS in PyTorch's formulation: ``optimizer.step(closure)`` runs up to ``max_iter`` quasi-Newton steps.

The time-series example (pytorch/examples time_sequence_prediction) fits two LSTM cells to sine waves
with ``optim.LBFGS(model.parameters(), lr=0.8)`` and a closure that zeroes the gradients, computes the
loss, calls backward and returns the loss. All parameters are treated as one flat vector (one group
only, as in PyTorch). The direction comes from the two-loop recursion over the last ``history_size``
pairs (s = the step taken, y = the change of gradient); the first step of all is scaled to
min(1, 1 / |g|_1) lr. The history lives in ``state`` across calls, as PyTorch's does. Without a line
search each step has the fixed size lr; ``line_search_fn="strong_wolfe"`` is refused.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..autograd import enable_grad
from .optimizer import Optimizer, check_number

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    _flat_state = ("d", "prev_flat_grad")  # vectors over all parameters

    def __init__(self, params: Iterable[Any], lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if line_search_fn is not None:
            raise NotImplementedError(f"LBFGS(line_search_fn={line_search_fn!r}) is not supported here: only steps "
                                      "of the fixed size lr (line_search_fn=None)")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    def _check_group(self, group: dict[str, Any]) -> None:
        super()._check_group(group)
        for key in ("tolerance_grad", "tolerance_change"):
            group[key] = check_number(group[key], key, "LBFGS")
        for key in ("max_iter", "max_eval", "history_size"):
            v = group[key]
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"LBFGS: {key} must be a positive int, got {v!r}")

    def _flat_grad(self) -> np.ndarray:
        return np.concatenate([np.zeros(p.numel(), p.dtype) if p._grad is None else p._grad._data.ravel()
                               for p in self._params])

    def _move(self, t, d: np.ndarray) -> None:
        """w += t d, d cut into the parameters' shapes."""
        at = 0
        for p in self._params:
            n = p.numel()
            p._data += (t * d[at:at + n]).reshape(p.shape).astype(p._data.dtype, copy=False)
            p._bump_version()
            at += n

    def step(self, closure):  # noqa: C901  (PyTorch's loop, its stopping tests in its order)
        """Run up to max_iter L-BFGS iterations; ``closure`` is required. Returns the first loss computed."""
        g = self.param_groups[0]
        lr, max_iter, max_eval = g["lr"], g["max_iter"], g["max_eval"]
        tol_grad, tol_change, history = g["tolerance_grad"], g["tolerance_change"], g["history_size"]
        state = self.state[self._params[0]]  # the whole history lives with the first parameter
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            first = closure()
        loss = float(first)
        evals = 1
        state["func_evals"] += 1
        flat = self._flat_grad()
        if np.abs(flat).max() <= tol_grad:  # already at a stationary point
            return first
        d, t = state.get("d"), state.get("t")
        old_y, old_s, ro, h = state.get("old_dirs"), state.get("old_stps"), state.get("ro"), state.get("H_diag")
        prev_flat, prev_loss, al = state.get("prev_flat_grad"), state.get("prev_loss"), state.get("al")
        n = 0
        while n < max_iter:
            n += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_y, old_s, ro, h = -flat, [], [], [], 1
            else:
                y, s = flat - prev_flat, d * t  # the change of gradient over the last step, and that step
                ys = y @ s
                if ys > 1e-10:  # keep the pair only where the curvature along s is positive
                    if len(old_y) == history:
                        old_y.pop(0), old_s.pop(0), ro.pop(0)
                    old_y.append(y), old_s.append(s), ro.append(1.0 / ys)
                    h = ys / (y @ y)  # the initial inverse Hessian: a scaled identity
                q, al = -flat, [None] * history  # (kept in state as PyTorch keeps it)
                for i in range(len(old_y) - 1, -1, -1):  # two-loop recursion: newest pair first ...
                    al[i] = (old_s[i] @ q) * ro[i]
                    q = q - al[i] * old_y[i]
                d = q * h
                for i in range(len(old_y)):  # ... then oldest first
                    be = (old_y[i] @ d) * ro[i]
                    d = d + (al[i] - be) * old_s[i]
            prev_flat, prev_loss = flat.copy(), loss
            t = min(1.0, 1.0 / np.abs(flat).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat @ d  # the slope along d: not downhill enough means nothing left to gain
            if gtd > -tol_change:
                break
            step_evals = 0
            self._move(t, d)
            if n != max_iter:
                with enable_grad():
                    loss = float(closure())
                flat = self._flat_grad()
                step_evals = 1
            evals += step_evals
            state["func_evals"] += step_evals
            if n == max_iter or evals >= max_eval:
                break
            if np.abs(flat).max() <= tol_grad:
                break
            if np.abs(d * t).max() <= tol_change or abs(loss - prev_loss) < tol_change:
                break
        state.update(d=d, t=t, old_dirs=old_y, old_stps=old_s, ro=ro, H_diag=h, prev_flat_grad=prev_flat,
                     prev_loss=prev_loss, al=al)
        self._step_count += 1
        return first
