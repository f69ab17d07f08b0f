"""RNN and GRU: PyTorch's equations (checked against a plain NumPy loop), BPTT gradients, errors."""
import numpy as np
import pytest

import tinyattn
from tinyattn.gradcheck import gradcheck
from tinyattn.nn import GRU, RNN


def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def numpy_rnn(x, h, W_ih, W_hh, b_ih, b_hh, act):
    """Reference: one step at a time, written straight from the equation."""
    outs = []
    for t in range(x.shape[1]):
        h = act(x[:, t] @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        outs.append(h)
    return np.stack(outs, axis=1), h


def numpy_gru(x, h, W_ih, W_hh, b_ih, b_hh):
    """Reference GRU with each gate's weights pulled out by name (order r, z, n)."""
    H = h.shape[1]
    W_ir, W_iz, W_in = W_ih[:H], W_ih[H:2 * H], W_ih[2 * H:]
    W_hr, W_hz, W_hn = W_hh[:H], W_hh[H:2 * H], W_hh[2 * H:]
    b_ir, b_iz, b_in = b_ih[:H], b_ih[H:2 * H], b_ih[2 * H:]
    b_hr, b_hz, b_hn = b_hh[:H], b_hh[H:2 * H], b_hh[2 * H:]
    outs = []
    for t in range(x.shape[1]):
        xt = x[:, t]
        r = _sigmoid(xt @ W_ir.T + b_ir + h @ W_hr.T + b_hr)
        z = _sigmoid(xt @ W_iz.T + b_iz + h @ W_hz.T + b_hz)
        n = np.tanh(xt @ W_in.T + b_in + r * (h @ W_hn.T + b_hn))
        h = (1 - z) * n + z * h
        outs.append(h)
    return np.stack(outs, axis=1), h


def _params(m):
    return m.weight_ih.numpy(), m.weight_hh.numpy(), m.bias_ih.numpy(), m.bias_hh.numpy()


def test_parameter_names_shapes_and_init():
    tinyattn.manual_seed(0)
    rnn, gru = RNN(3, 5), GRU(3, 5)
    assert {n: tuple(p.shape) for n, p in rnn.named_parameters()} == {
        "weight_ih": (5, 3), "weight_hh": (5, 5), "bias_ih": (5,), "bias_hh": (5,)}
    assert {n: tuple(p.shape) for n, p in gru.named_parameters()} == {
        "weight_ih": (15, 3), "weight_hh": (15, 5), "bias_ih": (15,), "bias_hh": (15,)}
    for m in (RNN(6, 16), GRU(6, 16)):
        bound = 1 / np.sqrt(16)
        values = np.concatenate([p.numpy().ravel() for p in m.parameters()])  # hundreds of draws from U(-b, b)
        assert np.all(np.abs(values) <= bound)
        assert 0.5 < values.std() / bound < 0.65  # U(-b, b) has std b / sqrt(3) = 0.577 b
    tinyattn.manual_seed(0)
    again = RNN(3, 5)
    for a, b in zip(rnn.parameters(), again.parameters()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("nonlinearity,act", [("tanh", np.tanh), ("relu", lambda a: np.maximum(a, 0))])
def test_rnn_matches_numpy_loop(float64, nonlinearity, act):
    tinyattn.manual_seed(1)
    rnn = RNN(3, 4, nonlinearity=nonlinearity)
    rng = np.random.default_rng(0)
    x, h0 = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 4))
    out, hT = rnn(tinyattn.tensor(x), tinyattn.tensor(h0))
    ref_out, ref_h = numpy_rnn(x, h0, *_params(rnn), act)
    assert out.shape == (2, 5, 4) and hT.shape == (2, 4)
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hT.numpy(), ref_h, rtol=1e-12, atol=1e-12)


def test_gru_matches_numpy_loop(float64):
    tinyattn.manual_seed(2)
    gru = GRU(3, 4)
    rng = np.random.default_rng(1)
    x, h0 = rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 4))
    out, hT = gru(tinyattn.tensor(x), tinyattn.tensor(h0))
    ref_out, ref_h = numpy_gru(x, h0, *_params(gru))
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hT.numpy(), ref_h, rtol=1e-12, atol=1e-12)
    # h0=None means zeros, as in PyTorch
    out0, _ = gru(tinyattn.tensor(x))
    np.testing.assert_allclose(out0.numpy(), numpy_gru(x, np.zeros((2, 4)), *_params(gru))[0], rtol=1e-12, atol=1e-12)


def test_float32_default_runs_in_float32():
    tinyattn.manual_seed(0)
    gru = GRU(3, 4)
    out, hT = gru(tinyattn.randn(2, 3, 3))
    assert out.dtype == np.float32 and hT.dtype == np.float32


@pytest.mark.parametrize("cls", [RNN, GRU])
def test_bptt_gradcheck_inputs_and_h0(float64, cls):
    tinyattn.manual_seed(3)
    m = cls(2, 3)
    rng = np.random.default_rng(2)
    x = tinyattn.tensor(rng.standard_normal((2, 4, 2)), requires_grad=True)
    h0 = tinyattn.tensor(rng.standard_normal((2, 3)), requires_grad=True)

    def fn(x, h0):
        out, hT = m(x, h0)
        return out + 2.0 * hT.unsqueeze(1)  # (B, T, H): both outputs feed the check

    assert gradcheck(fn, [x, h0])


@pytest.mark.parametrize("cls", [RNN, GRU])
def test_bptt_gradcheck_parameters(float64, cls):
    tinyattn.manual_seed(4)
    m = cls(2, 3)
    x = tinyattn.tensor(np.random.default_rng(3).standard_normal((2, 4, 2)))
    params = list(m.parameters())
    assert len(params) == 4
    assert gradcheck(lambda *ps: m(x)[0], params)


def test_gradient_reaches_the_first_step(float64):
    """BPTT really runs through time: the last output depends on the first input."""
    tinyattn.manual_seed(5)
    gru = GRU(2, 3)
    x = tinyattn.tensor(np.random.default_rng(4).standard_normal((1, 6, 2)), requires_grad=True)
    out, _ = gru(x)
    out[:, -1].sum().backward()
    assert np.abs(x.grad.numpy()[0, 0]).sum() > 0


@pytest.mark.parametrize("cls", [RNN, GRU])
def test_clear_errors(cls):
    m = cls(3, 4)
    with pytest.raises(ValueError, match=r"last dim is 5, expected 3"):
        m(tinyattn.randn(2, 6, 5))
    with pytest.raises(ValueError, match=r"\(B, T, 3\).*\(6, 3\)"):
        m(tinyattn.randn(6, 3))
    with pytest.raises(ValueError, match=r"h0 has shape \(1, 2, 4\), expected \(B, H\) = \(2, 4\)"):
        m(tinyattn.randn(2, 6, 3), tinyattn.zeros(1, 2, 4))
    with pytest.raises(ValueError, match=r"h0 has shape \(2, 5\)"):
        m(tinyattn.randn(2, 6, 3), tinyattn.zeros(2, 5))
    with pytest.raises(TypeError, match=r"float input.*got dtype int64"):
        m(np.ones((2, 6, 3), dtype=np.int64))


def test_bad_nonlinearity():
    with pytest.raises(ValueError, match="tanh.*relu.*'sigmoid'"):
        RNN(2, 3, nonlinearity="sigmoid")
