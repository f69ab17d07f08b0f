"""RMSprop and Adagrad (tinyattn/optim/rmsprop_adagrad.py): steps computed by hand from PyTorch's documented
algorithms (tests/oracle/test_fuzz6_rules_torch.py runs the same configurations against PyTorch)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinyattn as torch


def steps(opt_cls, grads, w0=1.0, **kw):
    p = torch.nn.Parameter(torch.tensor([w0], dtype=torch.float64))
    opt = opt_cls([p], **kw)
    out = []
    for g in grads:
        opt.zero_grad()
        (p * g).sum().backward()  # the gradient is g
        opt.step()
        out.append(p.item())
    return out, opt


def test_rmsprop_plain():
    out, opt = steps(torch.optim.RMSprop, [2.0, -1.0], lr=0.1, alpha=0.5, eps=0.0)
    s1 = 0.5 * 4.0
    w1 = 1.0 - 0.1 * 2.0 / math.sqrt(s1)
    s2 = 0.5 * s1 + 0.5 * 1.0
    w2 = w1 + 0.1 * 1.0 / math.sqrt(s2)
    assert out == pytest.approx([w1, w2], rel=1e-15)
    assert opt.state[opt.param_groups[0]["params"][0]]["step"] == 2


def test_rmsprop_centered_momentum_weight_decay_maximize():
    out, _ = steps(torch.optim.RMSprop, [2.0, -1.0], lr=0.1, alpha=0.5, eps=1e-3, momentum=0.9, centered=True,
                   weight_decay=0.2, maximize=True)
    w, s, a, buf = 1.0, 0.0, 0.0, 0.0
    expected = []
    for g in (2.0, -1.0):
        g = -g + 0.2 * w
        s = 0.5 * s + 0.5 * g * g
        a = 0.5 * a + 0.5 * g
        buf = 0.9 * buf + g / (math.sqrt(s - a * a) + 1e-3)
        w -= 0.1 * buf
        expected.append(w)
    assert out == pytest.approx(expected, rel=1e-14)


def test_adagrad_with_lr_decay_and_initial_accumulator():
    out, _ = steps(torch.optim.Adagrad, [2.0, -1.0, 3.0], lr=0.1, lr_decay=0.5, initial_accumulator_value=0.25,
                   eps=0.0, weight_decay=0.1)
    w, s, expected = 1.0, 0.25, []
    for t, g in enumerate((2.0, -1.0, 3.0), start=1):
        g = g + 0.1 * w
        s += g * g
        w -= 0.1 / (1 + (t - 1) * 0.5) * g / math.sqrt(s)
        expected.append(w)
    assert out == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize("cls, bad", [(torch.optim.RMSprop, {"alpha": -0.1}), (torch.optim.RMSprop, {"eps": math.nan}),
                                      (torch.optim.Adagrad, {"lr_decay": -1.0}), (torch.optim.Adagrad, {"lr": -1})])
def test_bad_options_raise(cls, bad):
    with pytest.raises(ValueError):
        cls([torch.nn.Parameter(torch.zeros(2))], **bad)


def test_state_dict_round_trip_continues_the_same_steps():
    p = torch.nn.Parameter(torch.tensor([1.0, -2.0], dtype=torch.float64))
    opt = torch.optim.RMSprop([p], lr=0.01, momentum=0.5, centered=True)
    for _ in range(2):
        opt.zero_grad()
        (p ** 2).sum().backward()
        opt.step()
    q = torch.nn.Parameter(p.detach().clone())
    opt2 = torch.optim.RMSprop([q], lr=0.01, momentum=0.5, centered=True)
    opt2.load_state_dict(opt.state_dict())
    for o, x in ((opt, p), (opt2, q)):
        o.zero_grad()
        (x ** 2).sum().backward()
        o.step()
    np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
