"""Positional encodings: the sinusoidal formula, the buffer/parameter split, offsets and errors."""
import math

import numpy as np
import pytest

import tinyattn
from tinyattn.gradcheck import gradcheck
from tinyattn.nn import LearnedPositionalEmbedding, PositionalEncoding


def test_sinusoidal_values_match_the_formula(float64):
    d, L = 6, 10
    pe = PositionalEncoding(d, max_len=L)
    for pos in range(L):
        for i in range(d // 2):
            angle = pos / 10000 ** (2 * i / d)
            assert pe.pe[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-12)
            assert pe.pe[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-12)


def test_odd_d_model_has_one_more_sin_column(float64):
    pe = PositionalEncoding(5, max_len=4).pe
    assert pe.shape == (4, 5)
    assert pe[3, 4] == pytest.approx(math.sin(3 / 10000 ** (4 / 5)))


def test_forward_adds_the_first_T_rows_and_is_not_a_parameter():
    pe = PositionalEncoding(4, max_len=8)
    assert list(pe.parameters()) == []
    x = tinyattn.randn(2, 3, 4)
    out = pe(x)
    assert out.shape == (2, 3, 4) and out.dtype == x.dtype
    np.testing.assert_allclose(out.numpy() - x.numpy(), np.broadcast_to(pe.pe[:3], (2, 3, 4)), atol=1e-6)


def test_offset_gives_the_same_rows_as_the_full_sequence():
    pe = PositionalEncoding(4, max_len=8)
    x = tinyattn.zeros(1, 6, 4)
    full = pe(x).numpy()
    for t in range(6):
        np.testing.assert_array_equal(pe(x[:, t:t + 1], offset=t).numpy(), full[:, t:t + 1])


@pytest.mark.parametrize("cls", ["sin", "learned"])
def test_too_long_input_names_T_and_max_len(cls):
    m = PositionalEncoding(4, max_len=5) if cls == "sin" else LearnedPositionalEmbedding(5, 4)
    m(tinyattn.zeros(1, 5, 4))  # exactly max_len is fine
    with pytest.raises(ValueError, match=r"T=6.*max_len=5"):
        m(tinyattn.zeros(1, 6, 4))
    with pytest.raises(ValueError, match=r"T=1, offset=5.*max_len=5"):
        m(tinyattn.zeros(1, 1, 4), offset=5)
    with pytest.raises(ValueError, match=r"\(B, T, 4\).*\(1, 3, 3\)"):
        m(tinyattn.zeros(1, 3, 3))


def test_learned_embedding_is_trained_and_gradient_hits_only_used_rows():
    tinyattn.manual_seed(0)
    m = LearnedPositionalEmbedding(6, 3)
    (p,) = list(m.parameters())
    assert p.shape == (6, 3)
    x = tinyattn.randn(2, 2, 3)
    out = m(x, offset=3)
    np.testing.assert_allclose(out.numpy(), x.numpy() + p.numpy()[3:5], atol=1e-6)
    out.sum().backward()
    np.testing.assert_array_equal(p.grad.numpy()[3:5], np.full((2, 3), 2.0))  # summed over the batch of 2
    np.testing.assert_array_equal(p.grad.numpy()[[0, 1, 2, 5]], 0.0)


def test_learned_embedding_gradcheck(float64):
    tinyattn.manual_seed(1)
    m = LearnedPositionalEmbedding(5, 3)
    x = tinyattn.tensor(np.random.default_rng(0).standard_normal((2, 4, 3)), requires_grad=True)
    assert gradcheck(lambda x, w: m(x, offset=1) * m(x, offset=1), [x, m.weight])


def test_buffer_is_in_state_dict_and_follows_dtype():
    pe = PositionalEncoding(4, max_len=6)
    assert "pe" in pe.state_dict() and pe.pe.dtype == tinyattn.get_default_dtype()
    x = tinyattn.tensor(np.zeros((1, 2, 4)))  # float64 input on a float32 table: output keeps x's dtype
    assert pe(x).dtype == np.float64
