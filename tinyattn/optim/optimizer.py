"""The Optimizer base class: parameter groups, per-parameter state, zero_grad, state_dict.

As in PyTorch, an optimizer holds ``param_groups``, a list of dicts. Each group has its own
``"params"`` (a list of Parameters) and its own copy of every option (``"lr"``,
``"weight_decay"``, ...), filled from the constructor's defaults where the group did not
say. A learning-rate schedule is nothing more than code that writes ``group["lr"]``
between steps. ``state[p]`` holds what the update rule remembers about parameter ``p``
(a momentum buffer, Adam's running averages), as NumPy arrays.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from .. import checks
from ..autograd import enable_grad
from ..nn.utils import param_list
from ..tensor import Tensor

__all__ = ["Optimizer"]


def check_number(value: Any, name: str, who: str) -> float:
    """A finite real number >= 0 (lr, eps, weight_decay, momentum), as a float; anything else raises."""
    return checks.number(name, value, who, at_least=0, finite=True)


def check_betas(betas: Any, who: str) -> tuple[float, float]:
    """A pair (beta1, beta2), each in [0, 1): the decay rates of Adam's two running averages."""
    try:
        b1, b2 = betas
    except (TypeError, ValueError):
        raise ValueError(f"{who}: betas must be a pair (beta1, beta2), got {betas!r}") from None
    for i, b in enumerate((b1, b2)):
        if isinstance(b, bool) or not isinstance(b, (int, float, np.integer, np.floating)) or not 0 <= b < 1:
            raise ValueError(f"{who}: betas[{i}] must be in [0, 1), got {b!r}")
    return float(b1), float(b2)


def _as_list(params: Any, who: str) -> list[Any]:
    """model.parameters() (a generator), a list, or a single Tensor, as a list."""
    if isinstance(params, Tensor):
        return [params]
    if isinstance(params, (str, dict)) or not isinstance(params, Iterable):
        raise TypeError(f"{who} expects an iterable of Parameters (e.g. model.parameters()) or of "
                        f"param-group dicts, got {type(params).__name__}")
    return list(params)


def implementation_options(name: str, foreach=None, capturable: bool = False, differentiable: bool = False,
                           fused=None) -> dict[str, Any]:
    """PyTorch's keywords that pick HOW a step runs (one loop, a fused kernel, CUDA graphs): the update is the
    same whichever is asked for, so they are kept in the group as given. differentiable=True would need
    autograd through the step itself, which this in-place NumPy update does not record, so it is refused."""
    if differentiable:
        raise NotImplementedError(f"{name}(differentiable=True) is not supported: tinyattn's optimizers update "
                                  "the arrays in place, outside autograd")
    return dict(foreach=foreach, capturable=bool(capturable), differentiable=False, fused=fused)


class Optimizer:
    """Base class: subclasses set their defaults, check a group's options, and write ``_update``.

    ``params`` is an iterable of Parameters (one group) or of dicts ``{"params": [...], "lr": ...}``
    (one group each; options a group leaves out come from ``defaults``).
    """

    _flat_state: tuple[str, ...] = ()  # state arrays over all parameters at once (LBFGS), not one parameter's shape

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self.param_groups: list[dict[str, Any]] = []
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)  # state[p], keyed by the Parameter
        self._step_count = 0  # read by the lr schedulers to warn when they step before the optimizer
        groups = _as_list(params, type(self).__name__)
        if not groups:
            raise ValueError(f"{type(self).__name__} got an empty parameter list "
                             "(did the model register any Parameters?)")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Append one group: its params plus every option, defaults filled in and all checked."""
        name = type(self).__name__
        if not isinstance(param_group, dict) or "params" not in param_group:
            raise TypeError(f"{name}: a param group must be a dict with a 'params' key, got {param_group!r:.80}")
        group = dict(param_group)
        group["params"] = param_list(group["params"], name, leaves=True)
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self._check_group(group)
        taken = {id(q) for g in self.param_groups for q in g["params"]}
        for p in group["params"]:
            if id(p) in taken:
                raise ValueError(f"{name}: a parameter of shape {p.shape} appears in more than one param group")
        self.param_groups.append(group)

    def _check_group(self, group: dict[str, Any]) -> None:
        """Raise a clear ValueError for an option out of range (subclasses check more).

        Run when a group is added or loaded; step() checks the lr again, the option schedules change.
        """
        group["lr"] = check_number(group["lr"], "lr", type(self).__name__)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the last backward's gradients (call it before the next one: gradients accumulate).

        set_to_none=False keeps each gradient's array and fills it with zeros instead.
        """
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p._grad = None
                elif p.grad is not None:
                    p.grad.zero_()

    def step(self, closure=None):
        """Update every parameter that has a gradient, with its group's current options.

        ``closure`` (optional): a function that zeroes the gradients, computes the loss, calls backward and
        returns the loss; it runs first, with gradients on, and step returns what it returned (else None)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr = group["lr"]  # a schedule or a learner may have edited it since the last step: check again
            if type(lr) is not float or not 0.0 <= lr < math.inf:  # (the cheap test first; NaN fails it too)
                group["lr"] = check_number(lr, "lr", type(self).__name__)
            for p in group["params"]:
                if p._grad is None:
                    continue  # it took no part in the loss
                g = p._grad._data  # (the arrays themselves, not Tensors: the update below is NumPy)
                w = p._data  # the parameter's own array: updates below write into it
                if g.shape != w.shape:
                    raise ValueError(f"{type(self).__name__}.step: a parameter of shape {w.shape} "
                                     f"has a gradient of shape {g.shape}")
                self._update(w, g, self.state[p], group)
                p._bump_version()  # a graph that saved p before this step can no longer backward through it
        self._step_count += 1
        return loss

    def _update(self, w: np.ndarray, g: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        raise NotImplementedError  # pragma: no cover

    # ---------------------------------------------------------------- saving and loading
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{options, "params": [index, ...]}]}``, PyTorch's layout.

        Parameters are numbered across all groups in order; arrays are copies.
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            ids = []
            for p in group["params"]:
                index[id(p)] = len(index)
                ids.append(index[id(p)])
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        state = {index[id(p)]: {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in s.items()}
                 for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Take options and state from ``state_dict()`` output; the groups must have the same sizes."""
        name = type(self).__name__
        if not isinstance(state_dict, dict) or set(state_dict) != {"state", "param_groups"}:
            raise ValueError(f"{name}.load_state_dict expects the dict that state_dict() returns, with keys "
                             f"'state' and 'param_groups'; got {type(state_dict).__name__}")
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError(f"{name}.load_state_dict: the saved state has {len(saved)} param groups, "
                             f"this optimizer has {len(self.param_groups)}")
        params = [p for group in self.param_groups for p in group["params"]]
        for i, (mine, theirs) in enumerate(zip(self.param_groups, saved)):
            if len(mine["params"]) != len(theirs["params"]):
                raise ValueError(f"{name}.load_state_dict: param group {i} has {len(theirs['params'])} "
                                 f"parameters in the saved state, {len(mine['params'])} here")
        state = {int(k): v for k, v in state_dict["state"].items()}
        for i, s in state.items():
            if not 0 <= i < len(params):
                raise ValueError(f"{name}.load_state_dict: state for parameter {i}, but there are {len(params)}")
            for k, v in s.items():
                if isinstance(v, np.ndarray) and v.shape != params[i].shape and k not in self._flat_state:
                    raise ValueError(f"{name}.load_state_dict: state '{k}' of parameter {i} has shape "
                                     f"{v.shape}, the parameter has shape {params[i].shape}")
        merged = [{**mine, **{k: v for k, v in theirs.items() if k != "params"}}
                  for mine, theirs in zip(self.param_groups, saved)]
        for group in merged:
            self._check_group(group)  # the saved options obey the same rules as the constructor's
        # every check passed: now write (the saved params lists are indices, ours stay the Parameters)
        for mine, group in zip(self.param_groups, merged):
            mine.update(group)
        self.state = defaultdict(dict)
        for i, s in state.items():
            self.state[params[i]] = {k: (np.array(v, dtype=params[i].dtype) if isinstance(v, np.ndarray) else v)
                                     for k, v in s.items()}

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines + [")"])
