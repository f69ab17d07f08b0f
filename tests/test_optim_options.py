"""PyTorch's optimizer keywords that teaching code passes: amsgrad, maximize, decoupled_weight_decay, and
fused/foreach/capturable (build-nanogpt's ``AdamW(..., fused=use_fused)``). Expected values from NumPy."""
import inspect

import numpy as np
import pytest

import tinyattn as torch

GRADS = [np.array([1.0, -2.0, 0.5]), np.array([0.1, -0.1, 3.0]), np.array([0.01, 0.2, -0.05])]  # v shrinks


def _run(opt_cls, grads=GRADS, **kw):
    w = torch.nn.Parameter(torch.tensor([0.3, -0.7, 1.1], dtype=torch.float64))
    opt = opt_cls([w], **kw)
    for g in grads:
        w.grad = torch.tensor(g)
        opt.step()
    return w.detach().numpy(), opt


def _adam_numpy(amsgrad=False, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8, wd=0.0, decoupled=False, sign=1.0):
    w = np.array([0.3, -0.7, 1.1])
    m, v, vmax = np.zeros(3), np.zeros(3), np.zeros(3)
    for t, g in enumerate(GRADS, 1):
        g = sign * g
        if decoupled:
            w = w * (1 - lr * wd)
        else:
            g = g + wd * w
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        denom = np.sqrt((vmax if amsgrad else v) / (1 - b2 ** t)) + eps
        w = w - lr * (m / (1 - b1 ** t)) / denom
    return w


@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("maximize", [False, True])
def test_adam_amsgrad_and_maximize_follow_the_update_rule(amsgrad, maximize):
    got, opt = _run(torch.optim.Adam, lr=1e-2, weight_decay=0.1, amsgrad=amsgrad, maximize=maximize)
    np.testing.assert_allclose(got, _adam_numpy(amsgrad, wd=0.1, sign=-1.0 if maximize else 1.0), rtol=0, atol=1e-15)
    assert ("max_exp_avg_sq" in opt.state[opt.param_groups[0]["params"][0]]) == amsgrad


def test_amsgrad_changes_the_step_when_v_shrinks():
    plain, _ = _run(torch.optim.Adam, lr=1e-2, betas=(0.9, 0.5), amsgrad=False)
    ams, _ = _run(torch.optim.Adam, lr=1e-2, betas=(0.9, 0.5), amsgrad=True)
    assert np.abs(plain - ams).max() > 1e-4  # with beta2 = 0.5 the small third gradient shrinks v below its max
    np.testing.assert_allclose(ams, _adam_numpy(True, b2=0.5), rtol=0, atol=1e-15)


def test_adamw_and_adam_with_decoupled_weight_decay_are_one_rule():
    a, _ = _run(torch.optim.AdamW, lr=1e-2, weight_decay=0.1, amsgrad=True)
    b, _ = _run(torch.optim.Adam, lr=1e-2, weight_decay=0.1, amsgrad=True, decoupled_weight_decay=True)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, _adam_numpy(True, wd=0.1, decoupled=True), rtol=0, atol=1e-15)


def test_sgd_maximize_with_momentum_and_weight_decay():
    got, _ = _run(torch.optim.SGD, lr=0.1, momentum=0.9, weight_decay=0.01, maximize=True)
    w, buf = np.array([0.3, -0.7, 1.1]), None
    for g in GRADS:
        g = -g + 0.01 * w
        buf = g.copy() if buf is None else 0.9 * buf + g
        w = w - 0.1 * buf
    np.testing.assert_allclose(got, w, rtol=0, atol=1e-15)


@pytest.mark.parametrize("cls", [torch.optim.Adam, torch.optim.AdamW, torch.optim.SGD])
def test_how_keywords_are_accepted_and_change_nothing(cls):
    base, _ = _run(cls, lr=1e-2)
    extra = dict(fused=True, foreach=False) if cls is torch.optim.SGD else dict(fused=True, foreach=False, capturable=True)
    same, opt = _run(cls, lr=1e-2, **extra)
    np.testing.assert_array_equal(base, same)
    assert opt.param_groups[0]["fused"] is True and opt.defaults["foreach"] is False
    assert "fused" in inspect.signature(cls).parameters  # nanoGPT's test before passing fused=
    with pytest.raises(NotImplementedError, match=r"differentiable=True\) is not supported"):
        cls([torch.nn.Parameter(torch.ones(2))], differentiable=True)
