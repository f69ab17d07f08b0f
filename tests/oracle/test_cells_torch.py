"""nn.RNNCell, nn.GRUCell and nn.LSTMCell against PyTorch's: names, shapes, values, every gradient, unbatched
inputs, missing states, and which calls raise. (Torch-free checks of the same: tests/test_rnn.py.)"""
import numpy as np
import pytest
import torch

import tinyattn

CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("RNNCell", {"bias": False}),
         ("GRUCell", {}), ("GRUCell", {"bias": False}), ("LSTMCell", {}), ("LSTMCell", {"bias": False})]


def _pair(name, kw, dtype=np.float64):
    ours = getattr(tinyattn.nn, name)(3, 5, **kw)
    theirs = getattr(torch.nn, name)(3, 5, **kw)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    theirs = theirs.to(torch.float64 if dtype == np.float64 else torch.float32)
    ours = ours.double() if dtype == np.float64 else ours
    theirs.load_state_dict({k: torch.from_numpy(np.array(v.numpy())) for k, v in ours.state_dict().items()})
    return ours, theirs


def _run(lib, cell, x, state, lstm):
    x = lib.tensor(x, requires_grad=True)
    if state is None:
        out = cell(x)
        leaves = [x]
    elif lstm:
        h, c = (lib.tensor(s, requires_grad=True) for s in state)
        out = cell(x, (h, c))
        leaves = [x, h, c]
    else:
        h = lib.tensor(state, requires_grad=True)
        out = cell(x, h)
        leaves = [x, h]
    outs = list(out) if lstm else [out]
    total = sum((o * (k + 1.5)).sum() for k, o in enumerate(outs))
    total.backward()
    grads = [np.asarray(t.grad.numpy()) for t in leaves] + [np.asarray(p.grad.numpy()) for p in cell.parameters()]
    return [np.asarray(o.detach().numpy()) for o in outs], grads


@pytest.mark.parametrize("name,kw", CELLS)
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("given_state", [True, False])
def test_values_and_every_gradient_match_torch(name, kw, batched, given_state):
    tinyattn.manual_seed(0)
    ours, theirs = _pair(name, kw)
    rng = np.random.default_rng(1)
    lead = (4,) if batched else ()
    x = rng.standard_normal(lead + (3,))
    lstm = name == "LSTMCell"
    state = None
    if given_state:
        state = tuple(rng.standard_normal(lead + (5,)) for _ in range(2)) if lstm else rng.standard_normal(lead + (5,))
    o_a, g_a = _run(tinyattn, ours, x, state, lstm)
    o_t, g_t = _run(torch, theirs, x, state, lstm)
    for a, t in zip(o_a + g_a, o_t + g_t):
        assert a.shape == t.shape
        np.testing.assert_allclose(a, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["RNNCell", "GRUCell", "LSTMCell"])
def test_float32_values_and_dtype_match_torch(name):
    tinyattn.manual_seed(3)
    ours, theirs = _pair(name, {}, np.float32)
    x = np.random.default_rng(2).standard_normal((2, 3)).astype(np.float32)
    a, t = ours(tinyattn.tensor(x)), theirs(torch.from_numpy(x))
    a, t = (a[0], t[0]) if name == "LSTMCell" else (a, t)
    assert a.dtype == np.float32 and t.dtype == torch.float32
    np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_init_bounds_match_torch():
    for name in ("RNNCell", "GRUCell", "LSTMCell"):
        torch.manual_seed(0)
        tinyattn.manual_seed(0)
        for ours, theirs in zip(getattr(tinyattn.nn, name)(7, 64).parameters(),
                                getattr(torch.nn, name)(7, 64).parameters()):
            a, t = ours.numpy(), theirs.detach().numpy()
            assert a.dtype == t.dtype
            # the same U(-1/8, 1/8): both fill most of the interval, neither leaves it
            assert abs(np.abs(a).max() - np.abs(t).max()) < 0.01 and np.abs(a).max() <= 1 / 8


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.GRUCell(3, 4)(lib.randn(2, 2, 3)),                 # 3-D input
    lambda lib: lib.nn.GRUCell(3, 4)(lib.randn(2, 5)),                    # wrong input size
    lambda lib: lib.nn.GRUCell(3, 4)(lib.randn(2, 3), lib.randn(3, 4)),   # batch of the state
    lambda lib: lib.nn.RNNCell(3, 4)(lib.randn(3), lib.randn(2, 4)),      # unbatched input, batched state
    # torch raises when called, tinyattn already when built (the earlier, clearer place)
    lambda lib: lib.nn.RNNCell(3, 4, nonlinearity="sigmoid")(lib.randn(2, 3)),
    lambda lib: lib.nn.LSTMCell(3, 4)(lib.randn(2, 3), (lib.randn(2, 4), lib.randn(2, 5))),
])
def test_the_same_calls_raise(call):
    with pytest.raises(Exception):
        call(torch)
    with pytest.raises((ValueError, TypeError)):
        call(tinyattn)


def test_the_same_calls_work():
    for lib in (torch, tinyattn):
        assert tuple(lib.nn.GRUCell(3, 4)(lib.randn(3)).shape) == (4,)
        h, c = lib.nn.LSTMCell(3, 4)(lib.randn(3))
        assert tuple(h.shape) == tuple(c.shape) == (4,)
        assert tuple(lib.nn.RNNCell(3, 4, False, "relu")(lib.randn(2, 3)).shape) == (2, 4)  # positional bias, act


@pytest.mark.parametrize("kw", [{}, {"num_layers": 2, "bidirectional": True, "batch_first": True}, {"bias": False}])
def test_gru_layer_values_and_every_gradient_match_torch(kw):
    """nn.GRU (one op per step's gates, the input projection before the loop) against torch's nn.GRU."""
    tinyattn.manual_seed(4)
    ours = tinyattn.nn.GRU(3, 5, **kw).double()
    theirs = torch.nn.GRU(3, 5, **kw).double()
    theirs.load_state_dict({k: torch.from_numpy(np.array(v.numpy())) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(5).standard_normal((2, 6, 3))
    D = 2 if kw.get("bidirectional") else 1
    h0 = np.random.default_rng(6).standard_normal((kw.get("num_layers", 1) * D, 2 if kw.get("batch_first") else 6, 5))
    res = []
    for lib, m in ((tinyattn, ours), (torch, theirs)):
        xt, ht = lib.tensor(x, requires_grad=True), lib.tensor(h0, requires_grad=True)
        out, h_n = m(xt, ht)
        ((out * 1.5).sum() + (h_n * h_n).sum()).backward()
        res.append([np.asarray(a.detach().numpy()) for a in (out, h_n, xt.grad, ht.grad)]
                   + [np.asarray(p.grad.numpy()) for p in m.parameters()])
    for a, t in zip(*res):
        np.testing.assert_allclose(a, t, rtol=1e-10, atol=1e-12)
