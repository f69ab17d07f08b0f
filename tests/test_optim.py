"""tinyattn.optim against PyTorch's documented update rules, written out by hand in NumPy."""
import math

import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn import optim

STEPS = 4


def make_params():
    """Two float64 parameters and, for each step, a fixed gradient for each."""
    rng = np.random.default_rng(42)
    init = [rng.standard_normal((3, 2)), rng.standard_normal(4)]
    grads = [[rng.standard_normal(a.shape) for a in init] for _ in range(STEPS)]
    return [nn.Parameter(a) for a in init], init, grads


def run(opt, params, grads):
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = tinyattn.tensor(g.copy())
        opt.step()
    return [p.numpy() for p in params]


@pytest.mark.parametrize("momentum,wd,nesterov", [(0.0, 0.0, False), (0.9, 0.0, False), (0.9, 0.1, False),
                                                  (0.0, 0.1, False), (0.8, 0.05, True)])
def test_sgd_matches_pytorch_algorithm(momentum, wd, nesterov):
    params, init, grads = make_params()
    lr = 0.1
    got = run(optim.SGD(params, lr=lr, momentum=momentum, weight_decay=wd, nesterov=nesterov), params, grads)
    for i, theta in enumerate(init):  # torch.optim.SGD docs, dampening = 0
        theta, b = theta.copy(), None
        for t in range(STEPS):
            g = grads[t][i] + wd * theta
            if momentum:
                b = g if b is None else momentum * b + g
                g = g + momentum * b if nesterov else b
            theta = theta - lr * g
        np.testing.assert_allclose(got[i], theta, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("cls,wd", [(optim.Adam, 0.0), (optim.Adam, 0.1), (optim.AdamW, 0.1), (optim.AdamW, 0.0)])
def test_adam_and_adamw_match_pytorch_algorithm(cls, wd):
    params, init, grads = make_params()
    lr, b1, b2, eps = 0.05, 0.8, 0.95, 1e-6
    got = run(cls(params, lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd), params, grads)
    for i, theta in enumerate(init):  # torch.optim.Adam / AdamW docs (amsgrad=False)
        theta, m, v = theta.copy(), 0.0, 0.0
        for t in range(1, STEPS + 1):
            g = grads[t - 1][i]
            if cls is optim.AdamW:
                theta = theta - lr * wd * theta  # decoupled: decay the weights
            else:
                g = g + wd * theta  # Adam: L2 penalty joins the gradient
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            m_hat = m / (1 - b1 ** t)
            v_hat = v / (1 - b2 ** t)
            theta = theta - lr * m_hat / (np.sqrt(v_hat) + eps)
        np.testing.assert_allclose(got[i], theta, rtol=1e-12, atol=1e-14)


def test_adam_and_adamw_differ_only_through_weight_decay():
    p1, _, grads = make_params()
    p2, _, _ = make_params()
    a = run(optim.Adam(p1, lr=0.01, weight_decay=0.5), p1, grads)
    b = run(optim.AdamW(p2, lr=0.01, weight_decay=0.5), p2, grads)
    assert not np.allclose(a[0], b[0])
    assert optim.AdamW(p2).param_groups[0]["weight_decay"] == 1e-2  # PyTorch's defaults
    assert optim.Adam(p2).param_groups[0]["weight_decay"] == 0.0


def test_first_adam_step_has_size_lr():
    p = nn.Parameter(np.zeros(5))
    p.grad = tinyattn.tensor(np.array([1e-3, -2.0, 50.0, -1e4, 3.0]))
    optim.Adam([p], lr=0.01).step()
    np.testing.assert_allclose(p.numpy(), -0.01 * np.sign(p.grad.numpy()), rtol=1e-4)  # m_hat / sqrt(v_hat) = sign(g)


def test_params_without_grad_are_skipped_and_keep_their_step_count():
    params, init, grads = make_params()
    opt = optim.Adam(params, lr=0.1)
    params[0].grad = tinyattn.tensor(grads[0][0].copy())
    params[1].grad = None
    opt.step()
    np.testing.assert_array_equal(params[1].numpy(), init[1])  # untouched
    params[1].grad = tinyattn.tensor(grads[1][1].copy())
    opt.step()
    # its first real step is a bias-corrected first step: size lr per element
    np.testing.assert_allclose(params[1].numpy(), init[1] - 0.1 * np.sign(grads[1][1]), rtol=1e-6)


def test_zero_grad_and_accepts_generators_and_dedupes_tied_params():
    net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    net[1].weight = net[0].weight
    opt = optim.SGD(net.parameters(), lr=0.1)  # a generator
    assert len(opt.param_groups[0]["params"]) == 3
    net(tinyattn.randn(3, 2)).sum().backward()
    opt.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    opt = optim.SGD([net[0].weight, net[0].weight], lr=0.1)
    assert len(opt.param_groups[0]["params"]) == 1  # a tied weight is updated once per step


def test_optimizer_errors():
    p = nn.Parameter(np.zeros(2))
    with pytest.raises(ValueError, match="lr must be a finite number >= 0, got lr=-0.1"):
        optim.SGD([p], lr=-0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam([])
    with pytest.raises(ValueError, match=r"betas\[1\] must be in \[0, 1\), got 1.0"):
        optim.Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="weight_decay"):
        optim.AdamW([p], weight_decay=-1)
    with pytest.raises(ValueError, match="momentum"):
        optim.SGD([p], lr=0.1, momentum=-0.5)
    with pytest.raises(TypeError, match=r"params\[1\] is a ndarray"):
        optim.SGD([p, np.zeros(2)], lr=0.1)


def test_optimizer_state_dict_round_trip():
    params, init, grads = make_params()
    opt = optim.Adam(params, lr=0.05, weight_decay=0.01)
    run(opt, params, grads[:2])
    saved_params = [p.numpy().copy() for p in params]
    saved = opt.state_dict()
    run(opt, params, grads[2:])
    expected = [p.numpy().copy() for p in params]

    clones = [nn.Parameter(a) for a in saved_params]
    opt2 = optim.Adam(clones, lr=1.0)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == 0.05
    run(opt2, clones, grads[2:])
    for a, b in zip(clones, expected):
        np.testing.assert_array_equal(a.numpy(), b)


def test_clip_grad_norm_scales_jointly_and_returns_preclip_norm():
    a, b, c = nn.Parameter(np.zeros(2)), nn.Parameter(np.zeros(3)), nn.Parameter(np.zeros(1))
    a.grad = tinyattn.tensor(np.array([3.0, 0.0]))
    b.grad = tinyattn.tensor(np.array([0.0, 4.0, 12.0]))  # joint norm sqrt(9 + 16 + 144) = 13
    total = optim.clip_grad_norm([a, b, c], max_norm=1.3)  # c has no grad: skipped
    assert isinstance(total, float) and total == pytest.approx(13.0)
    np.testing.assert_allclose(a.grad.numpy(), [0.3, 0.0], rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), [0.0, 0.4, 1.2], rtol=1e-6)
    assert c.grad is None
    new_norm = math.sqrt(np.sum(a.grad.numpy() ** 2) + np.sum(b.grad.numpy() ** 2))
    assert new_norm == pytest.approx(1.3, rel=1e-5)


def test_clip_grad_norm_leaves_small_gradients_alone():
    p = nn.Parameter(np.zeros(2))
    p.grad = tinyattn.tensor(np.array([0.3, 0.4]))
    assert optim.clip_grad_norm([p], 1.0) == pytest.approx(0.5)
    np.testing.assert_array_equal(p.grad.numpy(), [0.3, 0.4])
    assert optim.clip_grad_norm(p, float("inf")) == pytest.approx(0.5)  # inf just measures


def test_clip_grad_norm_errors():
    p = nn.Parameter(np.zeros(2))
    p.grad = tinyattn.tensor(np.array([np.inf, 1.0]))
    with pytest.raises(ValueError, match="total gradient norm is inf"):
        optim.clip_grad_norm([p], 1.0)
    p.grad = tinyattn.tensor(np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match=r"clip_grad_norm_: max_norm must be a number >= 0, got max_norm=-1.0$"):
        optim.clip_grad_norm([p], -1.0)
    with pytest.raises(ValueError, match=r"max_norm must be a number >= 0, got max_norm=nan$"):
        optim.clip_grad_norm([p], float("nan"))
    with pytest.raises(TypeError, match=r"max_norm must be a number >= 0, got max_norm='1' \(str\)$"):
        optim.clip_grad_norm([p], "1")


def test_adamw_trains_a_tiny_classifier():
    tinyattn.manual_seed(0)
    rng = np.random.default_rng(0)
    x = tinyattn.tensor(rng.standard_normal((64, 4)).astype(np.float32))
    y = (x.numpy()[:, 0] + x.numpy()[:, 1] > 0).astype(np.int64)
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    opt = optim.AdamW(model.parameters(), lr=0.05)
    first = None
    for _ in range(60):
        loss = F.cross_entropy(model(x), y)
        first = first if first is not None else loss.item()
        opt.zero_grad()
        loss.backward()
        optim.clip_grad_norm(model.parameters(), 1.0)
        opt.step()
    acc = (model(x).numpy().argmax(-1) == y).mean()
    assert loss.item() < 0.3 * first and acc >= 0.95
