"""Learning-rate schedules with PyTorch's step semantics.

A scheduler owns nothing but a counter. ``last_epoch`` counts its ``step()`` calls: the
constructor makes the first one (last_epoch = 0, the lr of the first optimizer step), and each
later ``scheduler.step()``, called AFTER ``optimizer.step()``, moves on by one and writes the new
rate into every ``optimizer.param_groups[i]["lr"]``. Every group remembers where it started as
``group["initial_lr"]`` (these are the scheduler's ``base_lrs``).

Each schedule here is a closed formula of ``last_epoch`` and ``base_lrs``, lr(t) = base_lr * f(t),
so it can be read off directly. (PyTorch computes most of them recursively, new lr = old lr * a
ratio; the numbers are the same, to rounding.)
"""
from __future__ import annotations

import math
import warnings
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from .. import checks
from .optimizer import Optimizer, check_number

__all__ = ["LRScheduler", "_LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "LinearLR", "CosineAnnealingLR", "OneCycleLR", "SequentialLR",
           "ReduceLROnPlateau"]


def _per_group(value: Any, name: str, optimizer: Optimizer, who: str) -> list[Any]:
    """One value for every param group: a list/tuple of the right length, or one value for all."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{who}: expected {len(optimizer.param_groups)} values for {name} "
                             f"(one per param group), got {len(value)}")
        return list(value)
    return [value] * len(optimizer.param_groups)


class LRScheduler:
    """Base class: subclasses write ``get_lr()``, the rates at step ``self.last_epoch``."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(self).__name__} expects a tinyattn.optim Optimizer, got {type(optimizer).__name__}")
        self.optimizer = optimizer
        if last_epoch == -1:  # a fresh run: remember each group's starting rate
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:  # resuming: the groups must already carry initial_lr (from the optimizer's state_dict)
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming a "
                                   f"scheduler with last_epoch={last_epoch}: load the optimizer's state_dict first")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        """The constructor's step: sets the rates for the first optimizer step (last_epoch becomes 0)."""
        self._step_count = 0
        # (getattr: a subclass that never ran Optimizer.__init__, e.g. a dummy for evaluation, has no count)
        self._opt_steps_at_start = getattr(self.optimizer, "_step_count", None)
        self.step()

    def get_lr(self) -> list[float]:  # pragma: no cover
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The rates the last step() wrote, one per param group."""
        return list(self._last_lr)

    def step(self) -> None:
        """Move to the next step of the schedule and write its rates into the optimizer (after optimizer.step())."""
        if self._step_count == 1 and self._opt_steps_at_start is not None \
                and getattr(self.optimizer, "_step_count", None) == self._opt_steps_at_start:
            warnings.warn("lr_scheduler.step() was called before optimizer.step(): call optimizer.step() first, "
                          "or the first value of the schedule is skipped", UserWarning, stacklevel=2)
        self._step_count += 1
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer (save that one with its own state_dict)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


_LRScheduler = LRScheduler  # PyTorch's older name, still subclassed by custom schedules


class LambdaLR(LRScheduler):
    """lr(t) = base_lr * lr_lambda(t): any schedule, written as a function of the step t (one per group, or one)."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        self.lr_lambdas = _per_group(lr_lambda, "lr_lambda", optimizer, "LambdaLR")
        for f in self.lr_lambdas:
            if not callable(f):
                raise TypeError(f"LambdaLR: lr_lambda must be a function of the step, got {type(f).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * f(self.last_epoch) for base, f in zip(self.base_lrs, self.lr_lambdas)]

    def state_dict(self) -> dict[str, Any]:
        """As the base class, but without the functions (code is not state); load them by constructing again."""
        return {k: v for k, v in super().state_dict().items() if k != "lr_lambdas"}


class StepLR(LRScheduler):
    """lr(t) = base_lr * gamma ** (t // step_size): multiply by gamma every step_size steps."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        if isinstance(step_size, float) and step_size.is_integer():  # StepLR(opt, 1.0, ...) runs in PyTorch too
            step_size = int(step_size)
        self.step_size = checks.positive_int("step_size", step_size, "StepLR")
        self.gamma = check_number(gamma, "gamma", "StepLR")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr(t) = base_lr * gamma ** (number of milestones <= t): multiply by gamma at each milestone step (a
    milestone listed twice multiplies twice, as PyTorch's Counter of milestones)."""

    def __init__(self, optimizer: Optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.milestones = sorted(checks.nonneg_int("every milestone", m, "MultiStepLR") for m in milestones)
        self.gamma = check_number(gamma, "gamma", "MultiStepLR")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * self.gamma ** bisect_right(self.milestones, self.last_epoch) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """lr(t) = base_lr * factor(t), factor going linearly from start_factor to end_factor over total_iters steps.

    After total_iters it stays at end_factor. The usual warm-up: LinearLR(opt, start_factor=0.01, total_iters=W).
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1) -> None:
        if isinstance(start_factor, bool) or not isinstance(start_factor, (int, float)) or not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor!r}")
        if isinstance(end_factor, bool) or not isinstance(end_factor, (int, float)) or not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor!r}")
        self.start_factor, self.end_factor = float(start_factor), float(end_factor)
        self.total_iters = checks.positive_int("total_iters", total_iters, "LinearLR")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        frac = min(self.last_epoch, self.total_iters) / self.total_iters  # 0 -> 1, then held at 1
        factor = self.start_factor + (self.end_factor - self.start_factor) * frac
        return [base * factor for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr(t) = eta_min + (base_lr - eta_min) (1 + cos(pi t / T_max)) / 2: half a cosine from base_lr to eta_min.

    Past T_max the cosine carries on (back up to base_lr by 2 T_max), as in PyTorch.
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max = checks.positive_int("T_max", T_max, "CosineAnnealingLR")
        self.eta_min = check_number(eta_min, "eta_min", "CosineAnnealingLR")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        cos = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2  # 1 at t = 0, 0 at t = T_max
        return [self.eta_min + (base - self.eta_min) * cos for base in self.base_lrs]


class OneCycleLR(LRScheduler):
    """Smith's one-cycle policy, stepped once per BATCH: warm up from max_lr/div_factor to max_lr over the first
    pct_start of total_steps, then anneal down to max_lr/(div_factor*final_div_factor).

    With cycle_momentum=True the momentum (SGD) or beta1 (Adam) moves the opposite way, between max_momentum
    and base_momentum. three_phase=True comes back down to the start before the final anneal.
    Stepping past total_steps raises, as in PyTorch.
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | Sequence[float], total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True, base_momentum: float = 0.85,
                 max_momentum: float = 0.95, div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1) -> None:
        if total_steps is not None:
            self.total_steps = checks.positive_int("total_steps", total_steps, "OneCycleLR")
        elif epochs is not None and steps_per_epoch is not None:
            self.total_steps = (checks.positive_int("epochs", epochs, "OneCycleLR")
                                * checks.positive_int("steps_per_epoch", steps_per_epoch, "OneCycleLR"))
        else:
            raise ValueError("OneCycleLR: give total_steps, or both epochs and steps_per_epoch")
        if isinstance(pct_start, bool) or not isinstance(pct_start, (int, float)) or not 0 <= pct_start <= 1:
            raise ValueError(f"OneCycleLR: pct_start must be a number in [0, 1], got {pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self.anneal_strategy = anneal_strategy
        div_factor = check_number(div_factor, "div_factor", "OneCycleLR")
        final_div_factor = check_number(final_div_factor, "final_div_factor", "OneCycleLR")
        warm = float(pct_start * self.total_steps) - 1  # the step at which the warm-up reaches max_lr
        # (end step, lr from, lr to, momentum from, momentum to): names of per-group values set below
        if three_phase:
            self.phases = [(warm, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                           (2 * warm, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                           (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self.phases = [(warm, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                           (self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        max_lrs = _per_group(max_lr, "max_lr", optimizer, "OneCycleLR")
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs):
                top = check_number(top, "max_lr", "OneCycleLR")
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = bool(cycle_momentum)
        if self.cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("OneCycleLR: cycle_momentum=True needs an optimizer with momentum or betas")
            self.use_beta1 = "betas" in optimizer.defaults
            if last_epoch == -1:
                tops = _per_group(max_momentum, "max_momentum", optimizer, "OneCycleLR")
                bases = _per_group(base_momentum, "base_momentum", optimizer, "OneCycleLR")
                for group, top, base in zip(optimizer.param_groups, tops, bases):
                    self._set_momentum(group, top)
                    group["max_momentum"], group["base_momentum"] = top, base
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict[str, Any], value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        """From start (pct 0) to end (pct 1): along half a cosine, or a straight line."""
        if self.anneal_strategy == "cos":
            return end + (start - end) * (1 + math.cos(math.pi * pct)) / 2
        return start + (end - start) * pct

    def get_lr(self) -> list[float]:
        t = self.last_epoch
        if t > self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {t} times, but total_steps={self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr_from, lr_to, mom_from, mom_to) in enumerate(self.phases):
                if t <= end or i == len(self.phases) - 1:  # the phase that holds step t
                    pct = (t - start) / (end - start)
                    lrs.append(self._anneal(group[lr_from], group[lr_to], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[mom_from], group[mom_to], pct))
                    break
                start = end
        return lrs


class SequentialLR(LRScheduler):
    """Run schedulers one after another: schedulers[i] takes over at step milestones[i - 1], counting from 0.

    E.g. warm-up then cosine: SequentialLR(opt, [LinearLR(opt, 0.1, total_iters=W), CosineAnnealingLR(opt, T)],
    milestones=[W]). Each scheduler restarts its own count when it takes over.
    """

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler], milestones: Sequence[int],
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"SequentialLR expects a tinyattn.optim Optimizer, got {type(optimizer).__name__}")
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError("SequentialLR needs at least one scheduler")
        for i, s in enumerate(schedulers):
            if not isinstance(s, LRScheduler):
                raise TypeError(f"SequentialLR: schedulers[{i}] is a {type(s).__name__}, expected a scheduler")
            if s.optimizer is not optimizer:
                raise ValueError(f"SequentialLR: schedulers[{i}] drives a different optimizer than the one given")
        milestones = list(milestones)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR: {len(schedulers)} schedulers need {len(schedulers) - 1} milestones, "
                             f"got {len(milestones)}")
        if milestones != sorted(milestones):
            raise ValueError(f"SequentialLR: milestones must be increasing, got {milestones}")
        self.optimizer = optimizer
        self._schedulers, self._milestones = schedulers, milestones
        self.last_epoch = last_epoch + 1
        # Building each scheduler already stepped it once; undo that, and start again from the first one.
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for s in schedulers:
            s.last_epoch -= 1
        schedulers[0]._initial_step()
        self.base_lrs = schedulers[0].base_lrs
        self._last_lr = schedulers[0].get_last_lr()

    def step(self) -> None:
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)  # which scheduler holds this step
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler.last_epoch = -1  # it takes over now: its own count restarts at 0
        with warnings.catch_warnings():  # the order warning is for the learner's own scheduler.step() calls
            warnings.simplefilter("ignore")
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        for s, sd in zip(self._schedulers, state.pop("_schedulers")):
            s.load_state_dict(sd)
        self.__dict__.update(state)


class ReduceLROnPlateau(LRScheduler):
    """Cut the rate when a watched number stops improving: ``scheduler.step(val_loss)`` once per epoch.

    An epoch improves on the best so far when its metric beats it by more than ``threshold`` (mode 'min':
    lower; 'max': higher), measured relative to the best (threshold_mode 'rel': best * (1 -/+ threshold))
    or in the metric's own units ('abs': best -/+ threshold). After more than ``patience`` epochs in a row
    without improvement, every group's rate becomes max(lr * factor, min_lr), unless that changes it by
    eps or less; then ``cooldown`` epochs pass in which bad epochs are not counted.
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0,
                 min_lr: float | Sequence[float] = 0, eps: float = 1e-8) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown! (expected 'min' or 'max')")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown! (expected 'rel' or 'abs')")
        self.optimizer, self.mode, self.factor, self.patience = optimizer, mode, factor, patience
        self.threshold, self.threshold_mode, self.cooldown, self.eps = threshold, threshold_mode, cooldown, eps
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr, self.min_lrs = None, list(min_lr)
        else:
            self.default_min_lr, self.min_lrs = min_lr, [min_lr] * len(optimizer.param_groups)
        self.last_epoch = 0
        self.mode_worse = math.inf if mode == "min" else -math.inf  # a best that any first metric beats
        self._last_lr = [group["lr"] for group in optimizer.param_groups]
        self._reset()

    def _reset(self) -> None:
        self.best, self.num_bad_epochs, self.cooldown_counter = self.mode_worse, 0, 0

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def is_better(self, a: float, best: float) -> bool:
        """Does metric ``a`` improve on ``best`` by more than the threshold?"""
        if self.threshold_mode == "rel":
            scale = 1.0 - self.threshold if self.mode == "min" else 1.0 + self.threshold
            return a < best * scale if self.mode == "min" else a > best * scale
        return a < best - self.threshold if self.mode == "min" else a > best + self.threshold

    def step(self, metrics: Any, epoch: int | None = None) -> None:  # type: ignore[override]
        """One epoch's metric (a number or a 0-d tensor); cuts the rates when it has stopped improving."""
        current = float(metrics)
        if epoch is not None:
            warnings.warn("The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
                          "where possible. Please use `scheduler.step()` to step the scheduler.", UserWarning,
                          stacklevel=2)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:  # just after a cut: bad epochs do not count yet
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):  # a group was added since (optimizer.add_param_group)
            if self.default_min_lr is None:
                raise RuntimeError(f"ReduceLROnPlateau: the optimizer has {len(groups)} param groups but min_lr "
                                   f"gave {len(self.min_lrs)}: set scheduler.min_lrs to one value per group")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:  # a change smaller than eps is not worth making
                group["lr"] = new
