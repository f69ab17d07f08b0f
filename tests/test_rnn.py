"""RNN, GRU and LSTM: PyTorch's equations (checked against a plain NumPy loop), its layouts, layers and
directions, parameter names, BPTT gradients, and errors."""
import numpy as np
import pytest

import tinyattn
from tinyattn.gradcheck import gradcheck
from tinyattn.nn import GRU, LSTM, RNN


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


def numpy_lstm(x, h, c, W_ih, W_hh, b_ih, b_hh):
    """Reference LSTM with each gate's weights pulled out by name (order i, f, g, o)."""
    H = h.shape[1]
    Wi, Wf, Wg, Wo = (W_ih[k * H:(k + 1) * H] for k in range(4))
    Ui, Uf, Ug, Uo = (W_hh[k * H:(k + 1) * H] for k in range(4))
    bi, bf, bg, bo = (b_ih[k * H:(k + 1) * H] + b_hh[k * H:(k + 1) * H] for k in range(4))
    outs = []
    for t in range(x.shape[1]):
        xt = x[:, t]
        i = _sigmoid(xt @ Wi.T + h @ Ui.T + bi)
        f = _sigmoid(xt @ Wf.T + h @ Uf.T + bf)
        g = np.tanh(xt @ Wg.T + h @ Ug.T + bg)
        o = _sigmoid(xt @ Wo.T + h @ Uo.T + bo)
        c = f * c + i * g
        h = o * np.tanh(c)
        outs.append(h)
    return np.stack(outs, axis=1), h, c


def _params(m, suffix="_l0"):
    return tuple(getattr(m, name + suffix).numpy() for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))


def test_parameter_names_shapes_and_init():
    tinyattn.manual_seed(0)
    rnn, gru = RNN(3, 5), GRU(3, 5)
    # PyTorch's names, so a torch state_dict loads key for key
    assert {n: tuple(p.shape) for n, p in rnn.named_parameters()} == {
        "weight_ih_l0": (5, 3), "weight_hh_l0": (5, 5), "bias_ih_l0": (5,), "bias_hh_l0": (5,)}
    assert {n: tuple(p.shape) for n, p in gru.named_parameters()} == {
        "weight_ih_l0": (15, 3), "weight_hh_l0": (15, 5), "bias_ih_l0": (15,), "bias_hh_l0": (15,)}
    deep = LSTM(3, 5, num_layers=2, bidirectional=True, bias=False)
    assert {n: tuple(p.shape) for n, p in deep.named_parameters()} == {
        "weight_ih_l0": (20, 3), "weight_hh_l0": (20, 5), "weight_ih_l0_reverse": (20, 3),
        "weight_hh_l0_reverse": (20, 5), "weight_ih_l1": (20, 10), "weight_hh_l1": (20, 5),
        "weight_ih_l1_reverse": (20, 10), "weight_hh_l1_reverse": (20, 5)}  # layer 1 reads both directions
    assert list(deep.state_dict())[:2] == ["weight_ih_l0", "weight_hh_l0"]
    for m in (RNN(6, 16), GRU(6, 16), LSTM(6, 16)):
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
    rnn = RNN(3, 4, nonlinearity=nonlinearity, batch_first=True)
    rng = np.random.default_rng(0)
    x, h0 = rng.standard_normal((2, 5, 3)), rng.standard_normal((1, 2, 4))  # (B, T, in), (layers, B, H)
    out, hT = rnn(tinyattn.tensor(x), tinyattn.tensor(h0))
    ref_out, ref_h = numpy_rnn(x, h0[0], *_params(rnn), act)
    assert out.shape == (2, 5, 4) and hT.shape == (1, 2, 4)
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hT.numpy()[0], ref_h, rtol=1e-12, atol=1e-12)


def test_gru_matches_numpy_loop(float64):
    tinyattn.manual_seed(2)
    gru = GRU(3, 4, batch_first=True)
    rng = np.random.default_rng(1)
    x, h0 = rng.standard_normal((2, 6, 3)), rng.standard_normal((1, 2, 4))
    out, hT = gru(tinyattn.tensor(x), tinyattn.tensor(h0))
    ref_out, ref_h = numpy_gru(x, h0[0], *_params(gru))
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hT.numpy()[0], ref_h, rtol=1e-12, atol=1e-12)
    # h0=None means zeros, as in PyTorch
    out0, _ = gru(tinyattn.tensor(x))
    np.testing.assert_allclose(out0.numpy(), numpy_gru(x, np.zeros((2, 4)), *_params(gru))[0], rtol=1e-12, atol=1e-12)


def test_lstm_matches_numpy_loop(float64):
    tinyattn.manual_seed(3)
    lstm = LSTM(3, 4, batch_first=True)
    rng = np.random.default_rng(2)
    x, h0, c0 = rng.standard_normal((2, 6, 3)), rng.standard_normal((1, 2, 4)), rng.standard_normal((1, 2, 4))
    out, (hT, cT) = lstm(tinyattn.tensor(x), (tinyattn.tensor(h0), tinyattn.tensor(c0)))
    ref_out, ref_h, ref_c = numpy_lstm(x, h0[0], c0[0], *_params(lstm))
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hT.numpy()[0], ref_h, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(cT.numpy()[0], ref_c, rtol=1e-12, atol=1e-12)
    assert lstm(tinyattn.tensor(x))[1][1].shape == (1, 2, 4)  # no state given: zeros for both


def test_pytorchs_default_layout_is_time_first_and_unbatched_input_works(float64):
    tinyattn.manual_seed(4)
    gru = GRU(3, 4)  # batch_first=False, as in PyTorch: input (T, B, in)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 2, 3))  # (T, B, in)
    out, h_n = gru(tinyattn.tensor(x))
    ref_out, ref_h = numpy_gru(x.transpose(1, 0, 2), np.zeros((2, 4)), *_params(gru))
    assert out.shape == (6, 2, 4) and h_n.shape == (1, 2, 4)
    np.testing.assert_allclose(out.numpy(), ref_out.transpose(1, 0, 2), rtol=1e-12, atol=1e-12)
    one, h_one = gru(tinyattn.tensor(x[:, 0]))  # unbatched (T, in): no batch dim in or out
    assert one.shape == (6, 4) and h_one.shape == (1, 4)
    np.testing.assert_allclose(one.numpy(), ref_out[0], rtol=1e-12, atol=1e-12)
    # the seq2seq tutorial's one step at a time: input (1, 1, H), hidden (1, 1, H)
    step_out, step_h = gru(tinyattn.tensor(x[:1, :1]), tinyattn.zeros(1, 1, 4, dtype=np.float64))
    np.testing.assert_allclose(step_h.numpy()[0], ref_out[:1, 0], rtol=1e-12, atol=1e-12)


def test_stacked_and_bidirectional_layers(float64):
    tinyattn.manual_seed(5)
    rnn = RNN(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 5, 3))
    out, h_n = rnn(tinyattn.tensor(x))
    assert out.shape == (2, 5, 8) and h_n.shape == (4, 2, 4)  # (B, T, 2H), (layers * 2, B, H)
    zeros = np.zeros((2, 4))
    fwd, hf = numpy_rnn(x, zeros, *_params(rnn, "_l0"), np.tanh)
    bwd, hb = numpy_rnn(x[:, ::-1], zeros, *_params(rnn, "_l0_reverse"), np.tanh)
    layer0 = np.concatenate([fwd, bwd[:, ::-1]], axis=-1)  # the reverse direction, back in time order
    fwd1, hf1 = numpy_rnn(layer0, zeros, *_params(rnn, "_l1"), np.tanh)
    bwd1, hb1 = numpy_rnn(layer0[:, ::-1], zeros, *_params(rnn, "_l1_reverse"), np.tanh)
    np.testing.assert_allclose(out.numpy(), np.concatenate([fwd1, bwd1[:, ::-1]], axis=-1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h_n.numpy(), np.stack([hf, hb, hf1, hb1]), rtol=1e-12, atol=1e-12)


def test_dropout_acts_between_layers_in_training_only(float64):
    tinyattn.manual_seed(6)
    lstm = LSTM(3, 4, num_layers=2, dropout=0.5)
    x = tinyattn.randn(5, 2, 3, dtype=np.float64)
    lstm.eval()
    a, b = lstm(x)[0].numpy(), lstm(x)[0].numpy()
    np.testing.assert_array_equal(a, b)  # eval: no dropout, the same output twice
    lstm.train()
    c = lstm(x)[0].numpy()
    assert not np.allclose(a, c)  # training: layer 0's output was dropped out before layer 1
    single = GRU(3, 4, dropout=0.5)  # one layer: nothing comes after it, so dropout changes nothing
    single.train()
    np.testing.assert_array_equal(single(x)[0].numpy(), single.eval()(x)[0].numpy())


def test_float32_default_runs_in_float32():
    tinyattn.manual_seed(0)
    gru = GRU(3, 4)
    out, hT = gru(tinyattn.randn(2, 3, 3))
    assert out.dtype == np.float32 and hT.dtype == np.float32
    assert repr(GRU(3, 4, num_layers=2, batch_first=True)) == "GRU(3, 4, num_layers=2, batch_first=True)"
    assert repr(RNN(3, 4, nonlinearity="relu")) == "RNN(3, 4, nonlinearity='relu')"


@pytest.mark.parametrize("cls", [RNN, GRU])
def test_bptt_gradcheck_inputs_and_h0(float64, cls):
    tinyattn.manual_seed(3)
    m = cls(2, 3, num_layers=2, bidirectional=True)
    rng = np.random.default_rng(2)
    x = tinyattn.tensor(rng.standard_normal((4, 2, 2)), requires_grad=True)  # (T, B, in)
    h0 = tinyattn.tensor(rng.standard_normal((4, 2, 3)), requires_grad=True)  # (layers * 2, B, H)

    def fn(x, h0):
        out, h_n = m(x, h0)
        return out[:, :, :3] + 2.0 * h_n.sum(0)  # (T, B, H): both outputs feed the check

    assert gradcheck(fn, [x, h0])


def test_lstm_gradcheck_inputs_and_both_states(float64):
    tinyattn.manual_seed(7)
    m = LSTM(2, 3, num_layers=2, batch_first=True)
    rng = np.random.default_rng(5)
    x = tinyattn.tensor(rng.standard_normal((2, 4, 2)), requires_grad=True)
    h0, c0 = (tinyattn.tensor(rng.standard_normal((2, 2, 3)), requires_grad=True) for _ in range(2))

    def fn(x, h0, c0):
        out, (h_n, c_n) = m(x, (h0, c0))
        return out + (h_n - 3.0 * c_n).sum(0).unsqueeze(1)  # (B, T, H)

    assert gradcheck(fn, [x, h0, c0])


@pytest.mark.parametrize("cls", [RNN, GRU, LSTM])
def test_bptt_gradcheck_parameters(float64, cls):
    tinyattn.manual_seed(4)
    m = cls(2, 3, num_layers=2)
    x = tinyattn.tensor(np.random.default_rng(3).standard_normal((4, 2, 2)))
    params = list(m.parameters())
    assert len(params) == 8
    assert gradcheck(lambda *ps: m(x)[0], params)
    no_bias = cls(2, 3, bias=False)
    assert len(list(no_bias.parameters())) == 2 and gradcheck(lambda *ps: no_bias(x)[0], list(no_bias.parameters()))


def test_gradient_reaches_the_first_step(float64):
    """BPTT really runs through time: the last output depends on the first input."""
    tinyattn.manual_seed(5)
    gru = GRU(2, 3, batch_first=True)
    x = tinyattn.tensor(np.random.default_rng(4).standard_normal((1, 6, 2)), requires_grad=True)
    out, _ = gru(x)
    out[:, -1].sum().backward()
    assert np.abs(x.grad.numpy()[0, 0]).sum() > 0


@pytest.mark.parametrize("cls", [RNN, GRU])
def test_clear_errors(cls):
    m = cls(3, 4, batch_first=True)
    with pytest.raises(ValueError, match=r"last dim is 5, expected 3"):
        m(tinyattn.randn(2, 6, 5))
    with pytest.raises(ValueError, match=r"expects input of shape \(B, T, in\) \(batch_first=True\) or \(T, in\) "
                                         r"unbatched, with in = 3; got shape \(1, 2, 6, 3\)"):
        m(tinyattn.randn(1, 2, 6, 3))
    with pytest.raises(ValueError, match=r"h0 has shape \(2, 4\), expected \(num_layers \* num_directions, B, H\) "
                                         r"= \(1, 2, 4\)"):
        m(tinyattn.randn(2, 6, 3), tinyattn.zeros(2, 4))  # the pre-PyTorch-layout (B, H) state
    with pytest.raises(ValueError, match=r"h0 has shape \(1, 2, 5\)"):
        m(tinyattn.randn(2, 6, 3), tinyattn.zeros(1, 2, 5))
    with pytest.raises(ValueError, match=r"expected \(num_layers \* num_directions, H\) = \(1, 4\) for unbatched"):
        m(tinyattn.randn(6, 3), tinyattn.zeros(1, 1, 4))
    with pytest.raises(TypeError, match=r"float input.*got dtype int64"):
        m(np.ones((2, 6, 3), dtype=np.int64))
    with pytest.raises(TypeError, match=r"batch_first must be a bool, got 'yes'"):
        cls(3, 4, batch_first="yes")
    with pytest.raises(ValueError, match=r"dropout must be"):
        cls(3, 4, dropout=1.5)
    with pytest.raises(TypeError, match=r"LSTM: the initial state is a pair \(h0, c0\)"):
        LSTM(3, 4)(tinyattn.randn(6, 2, 3), tinyattn.zeros(1, 2, 4))


def test_bad_nonlinearity():
    with pytest.raises(ValueError, match="tanh.*relu.*'sigmoid'"):
        RNN(2, 3, nonlinearity="sigmoid")


def test_pytorchs_positional_order_and_a_torch_state_dict_load():
    m = RNN(4, 6, 2, nonlinearity="relu", dropout=0.2)  # word_language_model: RNN(ninp, nhid, nlayers, ...)
    assert (m.num_layers, m.nonlinearity, m.dropout, m.batch_first) == (2, "relu", 0.2, False)
    # a state_dict written under PyTorch's names loads key for key
    src = LSTM(3, 5, num_layers=2)
    dst = LSTM(3, 5, num_layers=2)
    dst.load_state_dict({k: v.numpy() for k, v in src.state_dict().items()})
    x = tinyattn.randn(4, 2, 3)
    np.testing.assert_array_equal(dst(x)[0].numpy(), src(x)[0].numpy())


def test_flatten_parameters_is_accepted_and_changes_nothing():
    m = LSTM(2, 3)
    before = {k: v.numpy().copy() for k, v in m.state_dict().items()}
    assert m.flatten_parameters() is None  # word_language_model calls it after loading (cuDNN's packing)
    assert all(np.array_equal(before[k], v.numpy()) for k, v in m.state_dict().items())


# ---- RNNCell, GRUCell, LSTMCell: one step, PyTorch's names, equations and layouts ----------------
from tinyattn.nn import GRUCell, LSTMCell, RNNCell  # noqa: E402


def _cell_params(m):
    return tuple(getattr(m, n).numpy() for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))


def test_cells_parameter_names_shapes_order_and_init():
    for cls, G in ((RNNCell, 1), (GRUCell, 3), (LSTMCell, 4)):
        tinyattn.manual_seed(0)
        m = cls(6, 16)
        assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == [
            ("weight_ih", (G * 16, 6)), ("weight_hh", (G * 16, 16)), ("bias_ih", (G * 16,)), ("bias_hh", (G * 16,))]
        bound = 1 / np.sqrt(16)  # every parameter from U(-1/sqrt(H), 1/sqrt(H)), the biases too
        for p in m.parameters():
            a = p.numpy()
            assert a.dtype == np.float32 and np.abs(a).max() <= bound and np.abs(a).max() > 0.8 * bound
        assert [n for n, _ in cls(6, 16, bias=False).named_parameters()] == ["weight_ih", "weight_hh"]
        assert cls(6, 16, bias=False).bias_ih is None
        assert cls(2, 3, dtype=np.float64).weight_ih.dtype == np.float64


def test_cells_match_the_equations_batched_and_unbatched():
    rng = np.random.default_rng(0)
    x, h, c = rng.standard_normal((4, 3)), rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    tinyattn.manual_seed(1)
    for cell, ref in ((RNNCell(3, 5), lambda P: numpy_rnn(x[:, None], h, *P, np.tanh)[1]),
                      (RNNCell(3, 5, nonlinearity="relu"), lambda P: numpy_rnn(x[:, None], h, *P,
                                                                               lambda a: np.maximum(a, 0))[1]),
                      (GRUCell(3, 5), lambda P: numpy_gru(x[:, None], h, *P)[1])):
        cell.double()
        want = ref(_cell_params(cell))
        got = cell(tinyattn.tensor(x), tinyattn.tensor(h)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        one = cell(tinyattn.tensor(x[1]), tinyattn.tensor(h[1]))  # unbatched: (in,), (H,) -> (H,)
        assert tuple(one.shape) == (5,)
        np.testing.assert_allclose(one.numpy(), want[1], rtol=1e-12, atol=1e-12)
        zero_h = cell(tinyattn.tensor(x)).numpy()  # no state: zeros
        np.testing.assert_allclose(zero_h, cell(tinyattn.tensor(x), tinyattn.tensor(np.zeros((4, 5)))).numpy())
    lstm = LSTMCell(3, 5).double()
    _, h_want, c_want = numpy_lstm(x[:, None], h, c, *_cell_params(lstm))
    h_got, c_got = lstm(tinyattn.tensor(x), (tinyattn.tensor(h), tinyattn.tensor(c)))
    np.testing.assert_allclose(h_got.numpy(), h_want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c_got.numpy(), c_want, rtol=1e-12, atol=1e-12)
    h1, c1 = lstm(tinyattn.tensor(x[2]), (tinyattn.tensor(h[2]), tinyattn.tensor(c[2])))
    assert tuple(h1.shape) == tuple(c1.shape) == (5,)
    np.testing.assert_allclose(c1.numpy(), c_want[2], rtol=1e-12, atol=1e-12)


def test_a_gru_cell_loop_is_the_gru_layer():
    tinyattn.manual_seed(2)
    layer, cell = GRU(3, 4, batch_first=True), GRUCell(3, 4)
    cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})  # weight_ih_l0 -> weight_ih
    x = tinyattn.randn(2, 5, 3)
    out, _ = layer(x)
    h = None
    for t in range(5):
        h = cell(x[:, t], h)
        np.testing.assert_allclose(h.numpy(), out[:, t].numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cls", [RNNCell, GRUCell])
def test_cell_gradcheck_input_state_and_every_parameter(float64, cls):
    tinyattn.manual_seed(4)
    m = cls(3, 4) if cls is GRUCell else cls(3, 4, nonlinearity="tanh")
    rng = np.random.default_rng(6)
    x = tinyattn.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    h = tinyattn.tensor(rng.standard_normal((2, 4)), requires_grad=True)

    def fn(x, h, *params):
        h1 = m(x, h)
        return m(x * 0.5, h1)  # two steps: the state's gradient flows through a step

    assert gradcheck(fn, [x, h, *m.parameters()])


def test_relu_cell_and_lstm_cell_gradcheck(float64):
    tinyattn.manual_seed(5)
    rng = np.random.default_rng(7)
    x = tinyattn.tensor(rng.standard_normal((3, 2)) + 0.3, requires_grad=True)
    h = tinyattn.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    c = tinyattn.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    relu = RNNCell(2, 4, nonlinearity="relu")
    with tinyattn.no_grad():  # keep every pre-activation away from relu's kink at 0 (finite differences)
        pre = x.numpy() @ relu.weight_ih.numpy().T + relu.bias_ih.numpy() + h.numpy() @ relu.weight_hh.numpy().T
    assert np.abs(pre + relu.bias_hh.numpy()).min() > 1e-3
    assert gradcheck(lambda x, h, *p: relu(x, h), [x, h, *relu.parameters()])
    lstm = LSTMCell(2, 4)

    def fn(x, h, c, *params):
        h1, c1 = lstm(x, (h, c))
        return h1 - 2.0 * c1

    assert gradcheck(fn, [x, h, c, *lstm.parameters()])


def test_cell_errors_name_what_was_expected():
    cell = GRUCell(3, 4)
    with pytest.raises(ValueError, match=r"input of shape \(B, 3\) or \(3,\)"):
        cell(tinyattn.randn(2, 2, 3))
    with pytest.raises(ValueError, match="last dim is 5, expected 3"):
        cell(tinyattn.randn(2, 5))
    with pytest.raises(ValueError, match=r"hx has shape \(3, 4\), expected \(2, 4\)"):
        cell(tinyattn.randn(2, 3), tinyattn.randn(3, 4))
    with pytest.raises(ValueError, match=r"hx has shape \(2, 4\), expected \(4,\)"):
        cell(tinyattn.randn(3), tinyattn.randn(2, 4))  # unbatched input, batched state
    with pytest.raises(TypeError, match="float input"):
        cell(tinyattn.tensor(np.ones((2, 3), dtype=np.int64)))
    with pytest.raises(TypeError, match=r"pair \(h, c\)"):
        LSTMCell(3, 4)(tinyattn.randn(2, 3), tinyattn.randn(2, 4))
    with pytest.raises(ValueError, match="nonlinearity must be 'tanh' or 'relu'"):
        RNNCell(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="hidden_size"):
        GRUCell(3, 0)
    assert repr(RNNCell(3, 4, bias=False, nonlinearity="relu")) == "RNNCell(3, 4, bias=False, nonlinearity='relu')"


def test_fused_gru_gates_compute_the_equations_bit_for_bit_and_their_gradients():
    """_GRUGates (one op per step) against the same equations written as Tensor ops (_gru_update_ops):
    the forward is the same numbers in float32 and float64, saturated gates included; the hand-written
    backward agrees with autograd's to rounding, and with finite differences (float64)."""
    from tinyattn.nn.rnn import _GRUGates, _gru_update_ops
    rng = np.random.default_rng(0)
    for dt in (np.float32, np.float64):
        arrs = [(rng.standard_normal(s) * 3).astype(dt) for s in ((5, 21), (5, 21), (5, 7))]
        arrs[0][0, :4] = [40, -40, 0, -0.0]  # sigmoid saturated both ways, and its midpoint
        fused = [tinyattn.tensor(a, requires_grad=True) for a in arrs]
        ops = [tinyattn.tensor(a, requires_grad=True) for a in arrs]
        y_f, y_o = _GRUGates.apply(*fused), _gru_update_ops(*ops)
        np.testing.assert_array_equal(y_f.numpy(), y_o.numpy())
        g = rng.standard_normal((5, 7)).astype(dt)
        y_f.backward(tinyattn.tensor(g))
        y_o.backward(tinyattn.tensor(g))
        for a, b in zip(fused, ops):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=0, atol=4 * np.finfo(dt).eps)
    x64 = [tinyattn.tensor(rng.standard_normal(s), requires_grad=True) for s in ((3, 12), (3, 12), (3, 4))]
    assert gradcheck(lambda gi, gh, h: _GRUGates.apply(gi, gh, h), x64)


def test_fused_lstm_gates_compute_the_equations_bit_for_bit_and_their_gradients():
    """_LSTMGates (one op per step, h' and c' side by side) against the same equations as Tensor ops
    (_lstm_update): the same numbers in float32 and float64, saturated gates included; the hand-written
    backward agrees with autograd's to rounding when both h' and c' reach the loss, and with finite
    differences (float64)."""
    from tinyattn.nn.rnn import _LSTMGates, _lstm_update
    rng = np.random.default_rng(1)
    for dt in (np.float32, np.float64):
        gi, gh, h, c = [(rng.standard_normal(s) * 3).astype(dt) for s in ((5, 28), (5, 28), (5, 7), (5, 7))]
        gi[0, :4] = [40, -40, 0, -0.0]  # sigmoid saturated both ways, and its midpoint
        fused = [tinyattn.tensor(a, requires_grad=True) for a in (gi, gh, np.concatenate([h, c], -1))]
        ops = [tinyattn.tensor(a, requires_grad=True) for a in (gi, gh, c)]
        hc = _LSTMGates.apply(*fused)
        h_o, c_o = _lstm_update(ops[0] + ops[1], ops[2])
        np.testing.assert_array_equal(hc.numpy(), np.concatenate([h_o.numpy(), c_o.numpy()], -1))
        g = rng.standard_normal((5, 14)).astype(dt)
        hc.backward(tinyattn.tensor(g))
        ((h_o * tinyattn.tensor(g[:, :7])).sum() + (c_o * tinyattn.tensor(g[:, 7:])).sum()).backward()
        tol = dict(rtol=0, atol=8 * np.finfo(dt).eps)
        np.testing.assert_allclose(fused[0].grad.numpy(), ops[0].grad.numpy(), **tol)
        np.testing.assert_allclose(fused[1].grad.numpy(), ops[1].grad.numpy(), **tol)
        np.testing.assert_array_equal(fused[2].grad.numpy()[:, :7], 0)  # h enters through W_hh, not here
        np.testing.assert_allclose(fused[2].grad.numpy()[:, 7:], ops[2].grad.numpy(), **tol)
    x64 = [tinyattn.tensor(rng.standard_normal(s), requires_grad=True) for s in ((3, 16), (3, 16), (3, 8))]
    assert gradcheck(lambda gi, gh, hc: _LSTMGates.apply(gi, gh, hc), x64)


def test_lstm_layer_and_cell_are_the_step_by_step_equations(float64):
    """LSTM projects every step's input in one product and runs _LSTMGates; LSTMCell runs _LSTMGates too:
    the layer's outputs, (h_n, c_n) and gradients equal a loop of _lstm_step (the equations as Tensor ops)."""
    from tinyattn.nn.rnn import _lstm_step
    tinyattn.manual_seed(9)
    lstm = LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    x = tinyattn.randn(2, 5, 3, requires_grad=True)
    h0, c0 = tinyattn.randn(4, 2, 4, requires_grad=True), tinyattn.randn(4, 2, 4, requires_grad=True)
    out, (h_n, c_n) = lstm(x, (h0, c0))
    (out.sum() + (h_n * 2).sum() + (c_n * 3).sum()).backward()
    got = [t.grad.numpy().copy() for t in (x, h0, c0, *lstm.parameters())]
    for t in (x, h0, c0, *lstm.parameters()):
        t.grad = None
    layer_in, hs, cs = x, [], []
    for layer in range(2):
        outs = []
        for d, suffix in enumerate([f"_l{layer}", f"_l{layer}_reverse"]):
            w = [getattr(lstm, n + suffix) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            state, seq = (h0[2 * layer + d], c0[2 * layer + d]), []
            for t in (range(4, -1, -1) if d else range(5)):
                state = _lstm_step(layer_in[:, t], state, w[0].T, w[1].T, w[2], w[3])
                seq.append(state[0])
            outs.append(tinyattn.stack(seq[::-1] if d else seq, dim=1))
            hs.append(state[0])
            cs.append(state[1])
        layer_in = tinyattn.cat(outs, dim=-1)
    np.testing.assert_allclose(out.numpy(), layer_in.numpy(), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(h_n.numpy(), tinyattn.stack(hs).numpy(), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(c_n.numpy(), tinyattn.stack(cs).numpy(), rtol=1e-13, atol=1e-14)
    (layer_in.sum() + (tinyattn.stack(hs) * 2).sum() + (tinyattn.stack(cs) * 3).sum()).backward()
    for a, t in zip(got, (x, h0, c0, *lstm.parameters())):
        np.testing.assert_allclose(a, t.grad.numpy(), rtol=1e-12, atol=1e-13)
    cell = LSTMCell(3, 4)
    xc, hc0, cc0 = tinyattn.randn(2, 3), tinyattn.randn(2, 4), tinyattn.randn(2, 4)
    h1, c1 = cell(xc, (hc0, cc0))
    w = [getattr(cell, n) for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    h2, c2 = _lstm_step(xc, (hc0, cc0), w[0].T, w[1].T, w[2], w[3])
    np.testing.assert_allclose(h1.numpy(), h2.numpy(), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(c1.numpy(), c2.numpy(), rtol=1e-14, atol=1e-15)


def test_gru_layer_with_its_projection_before_the_loop_is_the_step_by_step_equations(float64):
    """GRU._run projects every step's input in one product: the same numbers as the cell step by step
    (every layer and direction), and the same gradients as a loop over GRUCell."""
    tinyattn.manual_seed(8)
    gru = GRU(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    x = tinyattn.randn(2, 5, 3)
    out, h_n = gru(x)
    sd = gru.state_dict()
    layer_in = x.numpy()
    for layer in range(2):
        outs = []
        for d, suffix in enumerate([f"_l{layer}", f"_l{layer}_reverse"]):
            P = tuple(sd[n + suffix].numpy() for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))
            seq = layer_in[:, ::-1] if d else layer_in
            o, h = numpy_gru(seq, np.zeros((2, 4)), *P)
            outs.append(o[:, ::-1] if d else o)
            np.testing.assert_allclose(h_n.numpy()[2 * layer + d], h, rtol=1e-12, atol=1e-12)
        layer_in = np.concatenate(outs, axis=-1)
    np.testing.assert_allclose(out.numpy(), layer_in, rtol=1e-12, atol=1e-12)
