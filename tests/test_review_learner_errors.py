"""Learner mistakes and PyTorch idioms found by a fresh-eyes review of the public surface.

Each test states one behaviour a learner (or code written for PyTorch) relies on: a clear error that
names what was expected and what came, instead of a NumPy message from deep inside, or a PyTorch
name that should simply work.
"""
import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
from tinyattn.nn.positional import LearnedPositionalEmbedding


# ---------------------------------------------------------------------------- gradcheck
def test_gradcheck_module_names_are_reachable_after_plain_import():
    # `tinyattn.gradcheck` is the function (DESIGN's top-level name), yet `tinyattn.gradcheck.gradcheck`
    # is how the module is used in the course: both spellings must reach the same code.
    x = tinyattn.tensor(np.linspace(-1, 1, 4), requires_grad=True)
    assert tinyattn.gradcheck.gradcheck(lambda a: a.tanh(), [x]) is True
    assert tinyattn.gradcheck(lambda a: a.tanh(), [x]) is True
    g = tinyattn.gradcheck.numerical_grad(lambda a: float(np.sum(a ** 3)), np.array([1.0, -2.0]))
    np.testing.assert_allclose(g, [3.0, 12.0], rtol=1e-6)
    assert issubclass(tinyattn.gradcheck.GradcheckError, AssertionError)


def test_gradcheck_rejects_a_non_callable_and_non_sequence_inputs():
    x = tinyattn.tensor(np.ones(2), requires_grad=True)
    with pytest.raises(TypeError, match=r"fn must be callable.*got int"):
        tinyattn.gradcheck(3, [x])
    with pytest.raises(TypeError, match=r"inputs must be a Tensor or a list/tuple.*got NoneType"):
        tinyattn.gradcheck(lambda a: a, None)


def test_numerical_grad_names_the_shape_when_f_returns_an_array():
    with pytest.raises(TypeError, match=r"f must return a scalar, got ndarray of shape \(2,\)"):
        tinyattn.numerical_grad(lambda a: a ** 2, np.array([1.0, 2.0]))


# ---------------------------------------------------------------------------- torch dtype names
def test_pytorch_dtype_names():
    import tinyattn as torch
    assert torch.tensor([1, 2], dtype=torch.long).dtype == np.int64
    assert torch.zeros(2, dtype=torch.int64).dtype == np.int64
    assert torch.ones(2, 2, dtype=torch.bool).dtype == np.bool_
    assert torch.tensor([1, 2], dtype=torch.float).dtype == np.float32  # torch.float is float32
    assert torch.ones(2).to(torch.double).dtype == np.float64
    assert torch.int32 is np.int32


def test_star_import_does_not_shadow_builtins():
    ns: dict = {}
    exec("from tinyattn import *", ns)
    assert "float" not in ns and "bool" not in ns
    assert {"tensor", "zeros", "nn", "optim", "masks", "gradcheck", "long"} <= set(ns)


# ---------------------------------------------------------------------------- models
def test_transformer_lm_rejects_an_empty_batch_and_non_ids_clearly():
    tinyattn.manual_seed(0)
    lm = nn.TransformerLM(vocab_size=7, d_model=8, n_heads=2, n_layers=1, max_len=8)
    with pytest.raises(ValueError, match=r"shape \(0, 3\).*B >= 1"):
        lm(np.zeros((0, 3), dtype=np.int64))
    with pytest.raises(TypeError, match=r"idx must be integer token ids of shape \(B, T\), got NoneType"):
        lm(None)


def test_generate_rejects_a_non_number_temperature():
    tinyattn.manual_seed(0)
    lm = nn.TransformerLM(vocab_size=7, d_model=8, n_heads=2, n_layers=1, max_len=8)
    with pytest.raises(TypeError, match=r"temperature must be a number >= 0.*got str"):
        lm.generate(tinyattn.tensor([[1, 2]]), 2, temperature="0.5")


def test_seq2seq_generate_rejects_a_non_int_bos_id():
    tinyattn.manual_seed(0)
    m = nn.Seq2SeqTransformer(src_vocab=5, tgt_vocab=6, d_model=8, n_heads=2, n_layers=1, max_len=6)
    with pytest.raises(TypeError, match=r"bos_id must be an int token id in \[0, 5\], got NoneType"):
        m.generate(tinyattn.tensor([[1, 2]]), None, 2)


@pytest.mark.parametrize("cls", [nn.PositionalEncoding, LearnedPositionalEmbedding])
def test_positional_sizes_must_be_positive_ints(cls):
    with pytest.raises(ValueError, match=r"must be a positive int, got \w+=8\.0"):
        cls(8.0, 10)
    with pytest.raises(ValueError, match=r"must be a positive int, got \w+='8'"):
        cls("8", 10)


def test_positional_encoding_refuses_integer_input_instead_of_rounding_the_table():
    pe = nn.PositionalEncoding(8, 10)
    with pytest.raises(TypeError, match=r"expects float embeddings \(B, T, 8\), got dtype int64"):
        pe(tinyattn.tensor(np.ones((1, 3, 8), dtype=np.int64)))
    with pytest.raises(TypeError, match=r"offset must be an int, got float"):
        pe(tinyattn.zeros(1, 3, 8), offset=1.0)


@pytest.mark.parametrize("cls", [nn.RNN, nn.GRU])
def test_rnn_sizes_must_be_positive_ints(cls):
    with pytest.raises(ValueError, match=r"input_size must be a positive int, got input_size=4\.0"):
        cls(4.0, 6)
    with pytest.raises(ValueError, match=r"hidden_size must be a positive int, got hidden_size=None"):
        cls(4, None)
    with pytest.raises(ValueError, match=r"hidden_size must be a positive int, got hidden_size=0"):
        cls(4, 0)
