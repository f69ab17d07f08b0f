"""Learning-rate schedules: the rates PyTorch's step semantics give, derived by hand.

The constructor counts as step 0 (the lr of the first optimizer step); each scheduler.step(),
called after optimizer.step(), moves on by one and writes every group's lr.
"""
import math
import warnings

import numpy as np
import pytest

import tinyattn.nn as nn
from tinyattn import optim
from tinyattn.optim import lr_scheduler as sched


def make_opt(lr=1.0, cls=optim.SGD, **kw):
    return cls([nn.Parameter(np.zeros(2))], lr=lr, **kw)


def rates(opt, scheduler, n):
    """The lr used by each of n optimizer steps, stepping the scheduler after each, as a training loop does."""
    out = []
    for _ in range(n):
        out.append(opt.param_groups[0]["lr"])
        assert scheduler.get_last_lr() == [g["lr"] for g in opt.param_groups]
        opt.step()
        scheduler.step()
    return out


def test_lambda_lr_multiplies_the_initial_lr_and_counts_from_zero():
    opt = make_opt(lr=0.5)
    s = sched.LambdaLR(opt, lambda t: 1.0 / (t + 1))
    assert s.last_epoch == 0 and opt.param_groups[0]["initial_lr"] == 0.5 and s.base_lrs == [0.5]
    assert rates(opt, s, 4) == [0.5, 0.25, 0.5 / 3, 0.125]
    assert s.last_epoch == 4


def test_lambda_lr_one_function_per_group():
    a, b = nn.Parameter(np.zeros(1)), nn.Parameter(np.zeros(1))
    opt = optim.Adam([{"params": [a], "lr": 1.0}, {"params": [b], "lr": 2.0}])
    s = sched.LambdaLR(opt, [lambda t: t + 1, lambda t: 0.5 ** t])
    opt.step()
    s.step()
    assert s.get_last_lr() == [2.0, 1.0]
    with pytest.raises(ValueError, match="expected 2 values for lr_lambda"):
        sched.LambdaLR(opt, [lambda t: 1.0])


def test_step_lr():
    opt = make_opt()
    assert rates(opt, sched.StepLR(opt, step_size=2, gamma=0.5), 6) == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    # PyTorch's transformer tutorial passes a whole float, StepLR(optimizer, 1.0, gamma=0.95)
    opt2 = make_opt()
    assert rates(opt2, sched.StepLR(opt2, 1.0, gamma=0.5), 3) == [1.0, 0.5, 0.25]
    assert sched._LRScheduler is sched.LRScheduler  # the older name custom schedules subclass


def test_linear_lr_warms_up_then_holds():
    opt = make_opt(lr=2.0)
    got = rates(opt, sched.LinearLR(opt, start_factor=0.25, end_factor=1.0, total_iters=3), 5)
    np.testing.assert_allclose(got, [0.5, 1.0, 1.5, 2.0, 2.0], rtol=1e-15)


def test_cosine_annealing_goes_to_eta_min_at_t_max_and_comes_back():
    opt = make_opt()
    got = rates(opt, sched.CosineAnnealingLR(opt, T_max=4, eta_min=0.1), 9)
    # 0.1 + 0.9 (1 + cos(pi t / 4)) / 2: cos = 1, 1/sqrt2, 0, -1/sqrt2, -1, then back up
    h = 1 / math.sqrt(2)
    want = [0.1 + 0.45 * (1 + c) for c in (1, h, 0, -h, -1, -h, 0, h, 1)]
    np.testing.assert_allclose(got, want, rtol=1e-14)


def test_one_cycle_lr_and_its_momentum_with_sgd():
    opt = make_opt(momentum=0.9)
    s = sched.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=0.3, anneal_strategy="linear")
    moms = []
    lrs = []
    for _ in range(10):
        lrs.append(opt.param_groups[0]["lr"])
        moms.append(opt.param_groups[0]["momentum"])
        opt.step()
        s.step()
    # warm-up 0.04 -> 1 over steps 0..2 (pct_start * 10 - 1 = 2), then 1 -> 0.04 / 1e4 over steps 2..9
    lo, top, end = 1 / 25, 1.0, 1 / 25 / 1e4
    want = [lo, (lo + top) / 2, top] + [top + (end - top) * k / 7 for k in range(1, 8)]
    np.testing.assert_allclose(lrs, want, rtol=1e-13)
    want_m = [0.95, 0.9, 0.85] + [0.85 + 0.1 * k / 7 for k in range(1, 8)]  # the opposite way, 0.95 <-> 0.85
    np.testing.assert_allclose(moms, want_m, rtol=1e-13)
    with pytest.raises(ValueError, match="tried to step 11 times, but total_steps=10"):
        s.step()


def test_one_cycle_lr_cos_moves_adams_beta1_and_keeps_beta2():
    opt = make_opt(cls=optim.Adam, betas=(0.9, 0.99))
    sched.OneCycleLR(opt, max_lr=0.1, epochs=2, steps_per_epoch=5)
    assert opt.param_groups[0]["betas"] == (0.95, 0.99)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1 / 25, rel=1e-15)
    s = sched.OneCycleLR(make_opt(cls=optim.Adam), max_lr=0.1, total_steps=4, pct_start=0.5)
    s.optimizer.step()
    s.step()  # cos halfway from 0.004 to 0.1 on step 1 of the warm-up (end step 0.5 * 4 - 1 = 1): reached
    assert s.get_last_lr() == [pytest.approx(0.1, rel=1e-15)]
    with pytest.raises(ValueError, match="total_steps, or both epochs and steps_per_epoch"):
        sched.OneCycleLR(make_opt(), max_lr=0.1)
    with pytest.raises(ValueError, match="needs an optimizer with momentum or betas"):
        sched.OneCycleLR(optim.Optimizer([nn.Parameter(np.zeros(1))], {"lr": 0.1}), max_lr=0.1, total_steps=3)


def test_sequential_lr_hands_over_at_the_milestone_and_restarts_the_count():
    opt = make_opt()
    warm = sched.LinearLR(opt, start_factor=0.5, total_iters=2)
    decay = sched.StepLR(opt, step_size=2, gamma=0.1)
    s = sched.SequentialLR(opt, [warm, decay], milestones=[3])
    got = rates(opt, s, 8)
    # steps 0-2: 0.5, 0.75, 1 (warm-up); step 3: StepLR starts at its own 0, so 1, 1, 0.1, 0.1, 0.01
    np.testing.assert_allclose(got, [0.5, 0.75, 1.0, 1.0, 1.0, 0.1, 0.1, 0.01], rtol=1e-14)
    assert s.last_epoch == 8 and decay.last_epoch == 5


def test_sequential_lr_checks_its_arguments():
    opt = make_opt()
    a, b = sched.StepLR(opt, 1), sched.StepLR(opt, 1)
    with pytest.raises(ValueError, match="2 schedulers need 1 milestones, got 2"):
        sched.SequentialLR(opt, [a, b], milestones=[1, 2])
    with pytest.raises(ValueError, match="different optimizer"):
        sched.SequentialLR(opt, [a, sched.StepLR(make_opt(), 1)], milestones=[1])


def test_stepping_the_scheduler_before_the_optimizer_warns():
    opt = make_opt()
    s = sched.StepLR(opt, 1)
    with pytest.warns(UserWarning, match="before optimizer.step"):
        s.step()
    opt2 = make_opt()
    s2 = sched.StepLR(opt2, 1)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s2.step()


def test_scheduler_state_dict_round_trip_and_resume():
    opt = make_opt()
    s = sched.CosineAnnealingLR(opt, T_max=10)
    rates(opt, s, 3)
    saved_opt, saved = opt.state_dict(), s.state_dict()
    assert "optimizer" not in saved and saved["last_epoch"] == 3
    opt2 = make_opt(lr=5.0)
    opt2.load_state_dict(saved_opt)  # brings the groups' lr and initial_lr
    s2 = sched.CosineAnnealingLR(opt2, T_max=10, last_epoch=2)  # resuming needs initial_lr in every group
    s2.load_state_dict(saved)
    s2.step()
    s.step()
    assert s2.get_last_lr() == s.get_last_lr() and s2.last_epoch == 4
    with pytest.raises(KeyError, match="initial_lr"):
        sched.StepLR(make_opt(), 1, last_epoch=3)
    assert "lr_lambdas" not in sched.LambdaLR(make_opt(), lambda t: 1.0).state_dict()  # code is not state


@pytest.mark.parametrize("make,match", [
    (lambda o: sched.StepLR(o, step_size=0), "StepLR: step_size must be a positive int, got step_size=0"),
    (lambda o: sched.StepLR(o, step_size=2, gamma=float("nan")), "gamma must be a finite number >= 0"),
    (lambda o: sched.LinearLR(o, start_factor=0.0), r"start_factor must be in \(0, 1\]"),
    (lambda o: sched.CosineAnnealingLR(o, T_max=0), "CosineAnnealingLR: T_max must be a positive int, got T_max=0"),
    (lambda o: sched.OneCycleLR(o, max_lr=float("inf"), total_steps=5), "max_lr must be a finite number"),
    (lambda o: sched.OneCycleLR(o, max_lr=1.0, total_steps=5, pct_start=1.5), r"pct_start must be a number in"),
    (lambda o: sched.OneCycleLR(o, max_lr=1.0, total_steps=5, anneal_strategy="exp"), "'cos' or 'linear'"),
    (lambda o: sched.LambdaLR(o, 0.5), "lr_lambda must be a function"),
])
def test_scheduler_arguments_are_checked(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make(make_opt(momentum=0.9))
    with pytest.raises(TypeError, match="expects a tinyattn.optim Optimizer"):
        sched.StepLR("not an optimizer", 1)


def test_a_dummy_optimizer_subclass_with_only_param_groups_can_be_scheduled():
    class Dummy(optim.Optimizer):
        def __init__(self):  # never calls Optimizer.__init__: just the groups a scheduler writes
            self.param_groups = [{"lr": 0.5}]

        def step(self):
            pass

    opt = Dummy()
    s = sched.StepLR(opt, step_size=1, gamma=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.step()
    assert opt.param_groups[0]["lr"] == 0.25 and opt.param_groups[0]["initial_lr"] == 0.5
