"""ReduceLROnPlateau, step by step, with each expectation counted by hand from PyTorch's rule:
an epoch is bad unless it beats the best by the threshold; more than `patience` bad epochs in a row cut
every rate to max(lr * factor, min_lr); then `cooldown` epochs do not count."""
import pytest

import tinyattn as torch
import tinyattn.nn as nn
from tinyattn.optim.lr_scheduler import LRScheduler, ReduceLROnPlateau


def sgd(lr=1.0, groups=1):
    ps = [nn.Parameter(torch.zeros(1)) for _ in range(groups)]
    return torch.optim.SGD([{"params": [p]} for p in ps], lr=lr)


def run(sched, metrics):
    lrs = []
    for m in metrics:
        sched.step(m)
        lrs.append(sched.get_last_lr()[0])
    return lrs


def test_patience_counts_bad_epochs_before_a_cut():
    s = ReduceLROnPlateau(sgd(), patience=2, factor=0.5)
    # best 1.0; then three bad epochs: the third is more than patience=2 in a row -> lr 0.5, count restarts
    assert run(s, [1.0, 1.0, 1.0, 1.0]) == [1.0, 1.0, 1.0, 0.5]
    assert s.num_bad_epochs == 0 and s.best == 1.0
    assert run(s, [0.5, 0.6, 0.6, 0.6]) == [0.5, 0.5, 0.5, 0.25]  # 0.5 improves; then 3 bad -> cut


def test_the_relative_threshold():
    s = ReduceLROnPlateau(sgd(), patience=0, threshold=0.1)  # must beat best * 0.9
    # 1.0 best; 0.95 is not below 0.9 -> bad, and patience 0 cuts at once (lr 0.1); 0.85 < 0.9 -> improves
    assert run(s, [1.0, 0.95, 0.85]) == [1.0, 0.1, 0.1]
    assert s.best == 0.85


def test_the_absolute_threshold_in_max_mode():
    s = ReduceLROnPlateau(sgd(), mode="max", patience=0, threshold=0.1, threshold_mode="abs")  # beat best + 0.1
    # 0.5 best; 0.55 is not above 0.6 -> cut to 0.1; 0.7 > 0.6 -> better, no cut
    assert run(s, [0.5, 0.55, 0.7]) == [1.0, 0.1, 0.1]
    assert s.best == 0.7


def test_cooldown_ignores_the_epochs_right_after_a_cut():
    s = ReduceLROnPlateau(sgd(), patience=0, cooldown=2, factor=0.5)
    # epoch 2 is bad -> cut (0.5), cooldown 2; epochs 3, 4 are bad but in cooldown; epoch 5 bad -> cut (0.25)
    assert run(s, [1.0, 1.0, 1.0, 1.0, 1.0]) == [1.0, 0.5, 0.5, 0.5, 0.25]


def test_min_lr_per_group_and_eps():
    opt = sgd(lr=1.0, groups=2)
    s = ReduceLROnPlateau(opt, patience=0, factor=0.1, min_lr=[0.05, 0.0])
    for m in [1.0, 2.0, 2.0, 2.0]:
        s.step(m)
    # group 0: 1 -> 0.1 -> max(0.01, 0.05) = 0.05 -> stays 0.05; group 1: 1 -> 0.1 -> 0.01 -> 0.001
    assert s.get_last_lr()[0] == 0.05
    assert s.get_last_lr()[1] == pytest.approx(0.001, rel=1e-12)
    tiny = ReduceLROnPlateau(sgd(lr=1e-8), patience=0, factor=0.5)  # a cut of 5e-9 is below eps = 1e-8: skipped
    assert run(tiny, [1.0, 1.0]) == [1e-8, 1e-8]


def test_a_0d_tensor_metric_and_the_state_dict():
    s = ReduceLROnPlateau(sgd(), patience=1)
    s.step(torch.tensor(0.5))
    assert s.best == 0.5 and s.last_epoch == 1
    sd = s.state_dict()
    assert "optimizer" not in sd and sd["best"] == 0.5
    fresh = ReduceLROnPlateau(sgd(), patience=1)
    fresh.load_state_dict(sd)
    assert fresh.best == 0.5 and fresh.last_epoch == 1
    assert isinstance(s, LRScheduler)  # as PyTorch's: code that checks for a scheduler finds one


@pytest.mark.parametrize("kwargs,message", [({"factor": 1.0}, "Factor should be < 1.0."),
                                            ({"mode": "avg"}, "mode avg is unknown!"),
                                            ({"threshold_mode": "x"}, "threshold mode x is unknown!"),
                                            ({"min_lr": [0, 0]}, "expected 1 min_lrs, got 2")])
def test_bad_arguments_are_refused_with_pytorchs_words(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ReduceLROnPlateau(sgd(), **kwargs)
