"""Arguments at the public surface: a learner's mistake gets a clear error, and PyTorch's names work.

Each test states one behaviour a learner (or code written for PyTorch) relies on: a clear error that
names what was expected and what came, instead of a NumPy message from deep inside, or a PyTorch
name that should simply work.
"""
import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
from tinyattn.models import SequenceModel
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
    with pytest.raises(TypeError, match=r"temperature must be a number >= 0, got temperature='0.5' \(str\)"):
        lm.generate(tinyattn.tensor([[1, 2]]), 2, temperature="0.5")


def test_seq2seq_generate_rejects_a_non_int_bos_id():
    tinyattn.manual_seed(0)
    m = nn.Seq2SeqTransformer(src_vocab=5, tgt_vocab=6, d_model=8, n_heads=2, n_layers=1, max_len=6)
    with pytest.raises(TypeError, match=r"bos_id must be an int >= 0, got bos_id=None \(NoneType\)"):
        m.generate(tinyattn.tensor([[1, 2]]), None, 2)
    with pytest.raises(ValueError, match=r"bos_id=6 is outside the target vocabulary \[0, 5\]"):
        m.generate(tinyattn.tensor([[1, 2]]), 6, 2)


@pytest.mark.parametrize("cls", [nn.PositionalEncoding, LearnedPositionalEmbedding])
def test_positional_sizes_must_be_positive_ints(cls):
    with pytest.raises(TypeError, match=r"must be a positive int, got \w+=8\.0 \(float\)"):
        cls(8.0, 10)
    with pytest.raises(TypeError, match=r"must be a positive int, got \w+='8' \(str\)"):
        cls("8", 10)
    with pytest.raises(ValueError, match=r"must be a positive int, got \w+=0$"):
        cls(0, 10)


def test_positional_encoding_refuses_integer_input_instead_of_rounding_the_table():
    pe = nn.PositionalEncoding(8, 10)
    with pytest.raises(TypeError, match=r"expects float embeddings \(B, T, 8\), got dtype int64"):
        pe(tinyattn.tensor(np.ones((1, 3, 8), dtype=np.int64)))
    with pytest.raises(TypeError, match=r"PositionalEncoding: offset must be an int >= 0, got offset=1.0 \(float\)"):
        pe(tinyattn.zeros(1, 3, 8), offset=1.0)


@pytest.mark.parametrize("cls", [nn.RNN, nn.GRU])
def test_rnn_sizes_must_be_positive_ints(cls):
    with pytest.raises(TypeError, match=r"input_size must be a positive int, got input_size=4\.0 \(float\)"):
        cls(4.0, 6)
    with pytest.raises(TypeError, match=r"hidden_size must be a positive int, got hidden_size=None"):
        cls(4, None)
    with pytest.raises(ValueError, match=r"hidden_size must be a positive int, got hidden_size=0"):
        cls(4, 0)


# ---------------------------------------------------------------------------- attention surface
def test_sdpa_and_attention_reject_non_number_scale_and_dropout_p():
    q = tinyattn.randn(1, 3, 4)
    with pytest.raises(TypeError, match=r"dropout_p must be a probability in \[0, 1\), got dropout_p='0.1' \(str\)"):
        tinyattn.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p="0.1")
    with pytest.raises(TypeError, match=r"scale must be a number, got scale='0.5' \(str\)"):
        tinyattn.nn.functional.attention(q, q, q, scale="0.5")


def test_multihead_attention_names_itself_for_bad_dropout_input_and_cache():
    tinyattn.manual_seed(0)
    with pytest.raises(TypeError, match=r"Attention: dropout must be a probability in \[0, 1\), got dropout='0.1' \(str\)"):
        nn.Attention(8, 2, dropout="0.1")
    mha = nn.Attention(8, 2)
    with pytest.raises(TypeError, match=r"x must be a float Tensor \(B, T, 8\), got None"):
        mha(None)
    with pytest.raises(TypeError, match=r"x has dtype int64 but Attention expects floats \(B, T, 8\)"):
        mha(tinyattn.tensor(np.ones((1, 2, 8), dtype=np.int64)))
    lm = nn.TransformerLM(vocab_size=5, d_model=8, n_heads=2, n_layers=2, max_len=4)
    with pytest.raises(TypeError, match=r"kv_cache must be one KVCache \(this layer's\), got list"):
        mha(tinyattn.randn(1, 1, 8), is_causal=True, kv_cache=lm.new_cache())


def test_layer_norm_rejects_a_normalized_shape_that_is_not_ints():
    x = tinyattn.randn(2, 3)
    for bad in (None, "3", 3.0):
        with pytest.raises(TypeError, match=r"normalized_shape must be an int or a tuple of ints"):
            tinyattn.nn.functional.layer_norm(x, bad)
    assert tinyattn.nn.functional.layer_norm(x, x.shape[-1:]).shape == (2, 3)


# ---------------------------------------------------------------------------- Module
def test_module_to_cpu_is_a_no_op_and_other_devices_are_refused():
    tinyattn.manual_seed(0)
    lin = nn.Linear(2, 3)
    w = lin.weight.numpy().copy()
    assert lin.to("cpu") is lin and np.array_equal(lin.weight.numpy(), w) and lin.weight.dtype == np.float32
    with pytest.raises(AssertionError, match=r"Torch not compiled with CUDA enabled \(Module.to='cuda': tinyattn runs"):
        lin.to("cuda")
    with pytest.raises(RuntimeError, match=r"Expected one of cpu, .* device type at start of device string: banana"):
        lin.to("banana")  # PyTorch's error for a string that names no device


def test_load_state_dict_checks_value_types_before_writing_anything():
    tinyattn.manual_seed(0)
    lin = nn.Linear(2, 3)
    before = {k: v.clone() for k, v in lin.state_dict().items()}  # a state_dict shares memory: clone to keep
    bad = {"weight": np.zeros((3, 2)), "bias": np.array(["a", "b", "c"])}  # right shape, not numbers
    with pytest.raises(TypeError, match=r"'bias' must be a numeric array of shape \(3,\), got ndarray with dtype <U1"):
        lin.load_state_dict(bad)
    for k, v in lin.state_dict().items():  # the weight, checked first and fine, was not written either
        np.testing.assert_array_equal(v, before[k])


# ---------------------------------------------------------------------------- a tutorial, unchanged
TUTORIAL = '''
import math
import tinyattn as torch
import tinyattn.nn as nn
import tinyattn.nn.functional as F

class Head(nn.Module):
    def __init__(self, n_embd, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.size()
        k, q = self.key(x), self.query(x)
        wei = q @ k.transpose(-2, -1) / math.sqrt(k.size(-1))
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        return wei @ self.value(x)

class Model(nn.Module):
    def __init__(self, vocab_size, n_embd, n_head, block_size):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, n_embd)
        self.heads = nn.ModuleList([Head(n_embd, n_embd // n_head, block_size) for _ in range(n_head)])
        self.lm_head = nn.Linear(n_embd, vocab_size)

    def forward(self, idx, targets=None):
        x = self.tok(idx)
        x = torch.cat([h(x) for h in self.heads], dim=-1)
        logits = self.lm_head(x)
        B, T, C = logits.shape
        loss = None if targets is None else F.cross_entropy(logits.view(B * T, C), targets.view(B * T))
        return logits, loss

def run(seed):
    torch.manual_seed(seed)
    model = Model(vocab_size=7, n_embd=8, n_head=2, block_size=5).to("cpu")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    data = torch.tensor([1, 2, 3, 4, 5, 6, 0, 1, 2, 3, 4], dtype=torch.long)
    xb = torch.stack([data[i:i + 5] for i in (0, 3)])
    yb = torch.stack([data[i + 1:i + 6] for i in (0, 3)])
    losses = []
    for _ in range(3):
        logits, loss = model(xb, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        logits, _ = model(xb)
        probs = F.softmax(logits[:, -1, :], dim=-1)
    return losses, probs.argmax(-1).numpy(), probs.max().item(), torch.randn(2).numpy()
'''


def test_a_pytorch_tutorial_runs_unchanged_and_is_reproducible():
    ns: dict = {}
    exec(compile(TUTORIAL, "<tutorial>", "exec"), ns)
    losses, picks, pmax, noise = ns["run"](1337)
    again = ns["run"](1337)
    assert losses == again[0] and np.array_equal(picks, again[1]) and pmax == again[2]
    assert np.array_equal(noise, again[3])  # the same seed gives the same bits, init to sampling
    assert losses[-1] < losses[0] and picks.shape == (2,) and 0 < pmax <= 1


def test_counts_of_factories_schedulers_and_loaders_share_the_int_rule():
    # a wrong type is a TypeError, a value out of range a ValueError, both in the same words
    with pytest.raises(ValueError, match=r"^linspace: steps must be an int >= 0, got steps=-1$"):
        tinyattn.linspace(0, 1, -1)
    with pytest.raises(TypeError, match=r"^linspace: steps must be an int >= 0, got steps=2.5 \(float\)$"):
        tinyattn.linspace(0, 1, 2.5)
    opt = tinyattn.optim.SGD([tinyattn.zeros(2, requires_grad=True)], lr=0.1)
    with pytest.raises(TypeError, match=r"^StepLR: step_size must be a positive int, got step_size=1.5 \(float\)$"):
        tinyattn.optim.lr_scheduler.StepLR(opt, step_size=1.5)
    with pytest.raises(TypeError, match=r"^DataLoader: batch_size must be a positive int, got batch_size=True \(bool\)$"):
        tinyattn.utils.data.DataLoader([1, 2], batch_size=True)
    assert len(tinyattn.linspace(0, 1, np.int64(3))) == 3  # a NumPy int is an int


@pytest.mark.parametrize("call, where", [
    (lambda ids: nn.Embedding(5, 2)(ids), "embedding: input"),
    (lambda ids: tinyattn.nn.functional.embedding(ids, tinyattn.ones(5, 2)), "embedding: input"),
    (lambda ids: tinyattn.nn.functional.cross_entropy(tinyattn.zeros(1, 3, 5), ids), "cross_entropy: target"),
    (lambda ids: tinyattn.nn.functional.one_hot(ids, 5), "one_hot: input"),
    (lambda ids: nn.TransformerLM(vocab_size=5, d_model=8, n_heads=2, n_layers=1, max_len=8)(ids), "idx"),
    (lambda ids: SequenceModel("gru", 5)(ids), "SequenceModel: idx"),
])
def test_every_surface_that_takes_ids_checks_them_with_one_rule(call, where):
    # ids (1, 3) with one id past the table: the first bad one is named with its position and the range
    with pytest.raises(ValueError, match=rf"^{where} holds id 7 at position \(0, 2\), outside \[0, 4\] "):
        call(tinyattn.tensor([[1, 4, 7]]))
    with pytest.raises(ValueError, match=rf"^{where} holds id -2 at position \(0, 0\)"):
        call(tinyattn.tensor([[-2, 0, 1]]))
    with pytest.raises(TypeError, match=rf"^{where} must be integer ids .*got dtype float32$"):
        call(tinyattn.tensor([[1.0, 2.0, 3.0]]))
