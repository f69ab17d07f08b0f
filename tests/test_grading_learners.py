"""Answers real learners write, graded in-process: right-but-different ones pass, wrong ones say why.

Each case comes from a fresh-eyes review of the grader (a false failure or a vague verdict it used
to give). Checks run in this process on a plain namespace of functions, so every test is fast.
"""
from __future__ import annotations

import math
import types

import numpy as np
import pytest

import tinyattn
from tinyattn import nn
from tinyattn.grading import checks as checks_pkg
from tinyattn.grading.checkkit import CheckFailed, Session, expect_close, expect_raises

SEEDS = range(1, 6)          # several private seeds: a flaky verdict shows up in one of them


def grade(ex_id: str, seed: int, **functions) -> list:
    """The check results of exercise ex_id for a 'submission' made of `functions`."""
    s = Session(module=types.SimpleNamespace(**functions), path=f"/learner/{ex_id}.py",
                rng=np.random.default_rng([seed, int(ex_id[2:])]))
    checks_pkg.load(ex_id).run(s)
    return s.finish()


def failures(results) -> list[tuple[str, str, str | None]]:
    return [(r.name, r.message, r.mistake) for r in results if not r.passed]


def mistakes(results) -> set[str]:
    return {r.mistake for r in results if r.mistake}


def stable_softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


# ---- float32 inputs: judged at float32 accuracy, whatever dtype comes back ---------------------------

def scores_np_sqrt(Q, K):
    # the most common answer: np.sqrt(d) is a float64 scalar, so float32 scores come back as float64
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])


def attention_np_sqrt(Q, K, V, mask=None):
    s = scores_np_sqrt(Q, K)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = stable_softmax(s)
    return w @ V, w


@pytest.mark.parametrize("seed", SEEDS)
def test_float32_inputs_upcast_by_np_sqrt_pass(seed):
    assert failures(grade("ex01", seed, attention_scores=scores_np_sqrt)) == []
    assert failures(grade("ex04", seed, attention=attention_np_sqrt)) == []


def test_float32_slack_only_when_an_input_is_float32():
    want = np.linspace(-1.0, 1.0, 6)
    got = want * (1 + 1e-5)                                # float32 accuracy, in a float64 array
    expect_close(got, want, "out", inputs=(want.astype(np.float32),))
    with pytest.raises(CheckFailed, match="wrong in"):
        expect_close(got, want, "out", inputs=(want,))


def test_numbers_that_differ_never_print_the_same():
    want = np.array([-0.04835704])
    with pytest.raises(CheckFailed) as e:
        expect_close(want + 8e-8, want, "out")             # both are -0.048357 to 6 digits
    got, expected = e.value.message.split("got ")[1].split(", expected ")
    assert got != expected, e.value.message


def test_float32_positional_table_built_like_pytorch_passes():
    def sinusoidal_encoding(T, d_model):
        pos = np.arange(T, dtype=np.float32)[:, None]
        div = np.exp(np.arange(0, d_model, 2, dtype=np.float32) * np.float32(-math.log(10000.0) / d_model))
        pe = np.zeros((T, d_model), dtype=np.float32)
        pe[:, 0::2], pe[:, 1::2] = np.sin(pos * div), np.cos(pos * div)
        return pe

    assert failures(grade("ex09", 1, sinusoidal_encoding=sinusoidal_encoding)) == []


# ---- flash attention: O(T) memory is enough; a wrong scale is named --------------------------------------

def flash_key_tiles_only(Q, K, V, block_size, scale=True):
    """Every query row at once, key blocks one by one: temporaries are (T, block_size), never (T, S)."""
    c = 1.0 / math.sqrt(Q.shape[1]) if scale else 1.0
    m, l, acc = np.full((Q.shape[0], 1), -np.inf), np.zeros((Q.shape[0], 1)), np.zeros((Q.shape[0], V.shape[1]))
    for j in range(0, K.shape[0], block_size):
        s = Q @ K[j:j + block_size].T * c                                  # (T, d) @ (d, Bk) -> (T, Bk)
        m_new = np.maximum(m, s.max(1, keepdims=True))
        p, alpha = np.exp(s - m_new), np.exp(m - m_new)
        l, acc, m = alpha * l + p.sum(1, keepdims=True), alpha * acc + p @ V[j:j + block_size], m_new
    return acc / l


def test_flash_tiling_only_the_keys_passes_the_memory_check():
    assert failures(grade("ex12", 1, flash_attention_forward=flash_key_tiles_only)) == []


def test_flash_without_the_scale_is_named():
    res = grade("ex12", 1, flash_attention_forward=lambda *a: flash_key_tiles_only(*a, scale=False))
    assert mistakes(res) == {"missing_scale"}


# ---- stability is checked wherever a softmax is taken ------------------------------------------------------

def test_gqa_and_kv_cache_with_a_naive_softmax_fail_as_unstable():
    def naive(s):
        with np.errstate(all="ignore"):
            e = np.exp(s)
            return e / e.sum(-1, keepdims=True)

    def gqa_attention(q, k, v):
        n = q.shape[1] // k.shape[1]
        k, v = np.repeat(k, n, axis=1), np.repeat(v, n, axis=1)
        return naive(q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])) @ v

    def decode_step(q_t, k_t, v_t, cache):
        K, V = (k_t, v_t) if cache is None else (np.concatenate([cache[0], k_t], 2), np.concatenate([cache[1], v_t], 2))
        return naive(q_t @ np.swapaxes(K, -1, -2) / math.sqrt(q_t.shape[-1])) @ V, (K, V)

    res = grade("ex11", 1, repeat_kv=lambda k, n: np.repeat(k, n, axis=1), gqa_attention=gqa_attention)
    assert [f[0] for f in failures(res)] == ["large logits (scores in the thousands, mixed signs, spread inside rows) stay finite"]
    assert mistakes(res) == {"unstable_softmax"}
    res = grade("ex14", 1, decode_step=decode_step)
    assert [f[0] for f in failures(res)] == ["large logits (scores in the thousands, mixed signs, spread inside rows) stay finite"]
    assert mistakes(res) == {"unstable_softmax"}


# ---- masks: T = 1 can not tell two mistakes apart, so it names neither -------------------------------------

def test_true_means_blocked_mask_is_not_also_called_missing_diagonal():
    res = grade("ex03", 1, causal_mask=lambda T: ~np.tril(np.ones((T, T), dtype=bool)),
                apply_mask=lambda s, m: np.where(m, s, -np.inf))
    assert mistakes(res) == {"mask_inverted_future_leak"}
    assert "causal_mask(1) lets the only token see itself" in [f[0] for f in failures(res)]


# ---- matmul_backward that never unbroadcasts: said plainly, not blamed on unbroadcast -------------------------

def test_matmul_backward_left_at_the_broadcast_shape_is_explained():
    def unbroadcast(grad, shape):
        while grad.ndim > len(shape):
            grad = grad.sum(0)
        for i, n in enumerate(shape):
            if n == 1 and grad.shape[i] != 1:
                grad = grad.sum(i, keepdims=True)
        return grad

    def matmul_backward(A, B, dC):
        return dC @ np.swapaxes(B, -1, -2), np.swapaxes(A, -1, -2) @ dC      # forgot to unbroadcast

    fails = failures(grade("ex06", 1, unbroadcast=unbroadcast, matmul_backward=matmul_backward))
    # the two broadcast cases, the exact check and the cost check (broadcast inputs); 2-D and batched pass
    assert len(fails) == 4 and all(m is None and "the broadcast shape of the product" in msg for _, msg, m in fails)


# ---- a ValueError must say which values were wrong, as the docstrings ask -----------------------------------

def _raiser(message: str):
    def f(*args):
        raise ValueError(message)
    return f


@pytest.mark.parametrize("message, ok", [
    ("C=31 is not divisible by n_heads=5", True),
    ("n_heads 5 does not divide 31.", True),
    ("C must be divisible by n_heads", False),
    ("cannot reshape array of size 186 into shape (3,6,5,6)", False),     # NumPy's own, from a missing check
    ("C=310 is not divisible by n_heads=5", False),
])
def test_expect_raises_wants_the_values_named(message, ok):
    s = Session(module=types.SimpleNamespace(split_heads=_raiser(message)), path="/x.py",
                rng=np.random.default_rng(0))
    if ok:
        expect_raises(s, ValueError, "split_heads", np.zeros(1), 5, naming={"C": 31, "n_heads": 5})
    else:
        with pytest.raises(CheckFailed, match=r"should name the values involved \(C=31 and n_heads=5\)"):
            expect_raises(s, ValueError, "split_heads", np.zeros(1), 5, naming={"C": 31, "n_heads": 5})


def test_split_heads_relying_on_numpys_reshape_error_fails():
    def split_heads(x, n_heads):
        B, T, C = x.shape
        return x.reshape(B, T, n_heads, C // n_heads).transpose(0, 2, 1, 3)

    def merge_heads(x):
        B, H, T, d = x.shape
        return x.transpose(0, 2, 1, 3).reshape(B, T, H * d)

    fails = failures(grade("ex07", 1, split_heads=split_heads, merge_heads=merge_heads))
    assert [f[0] for f in fails] == ["split_heads raises ValueError when C is not divisible by n_heads"]


def test_multihead_written_differently_passes():
    """permute/reshape instead of view/transpose, mask == False and -1e9 instead of ~mask and -inf."""
    class MultiHeadAttention(nn.Module):
        def __init__(self, d_model, n_heads):
            super().__init__()
            if d_model % n_heads:
                raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
            self.n_heads, self.d_k = n_heads, d_model // n_heads
            self.W_q, self.W_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
            self.W_v, self.W_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

        def forward(self, x, mask=None):
            B, T, C = x.shape
            q, k, v = (w(x).reshape(B, T, self.n_heads, self.d_k).permute(0, 2, 1, 3)
                       for w in (self.W_q, self.W_k, self.W_v))
            s = (q @ k.transpose(2, 3)) * (1.0 / math.sqrt(self.d_k))
            if mask is not None:
                s = s.masked_fill(np.asarray(mask) == False, -1e9)  # noqa: E712 - the learner's spelling
            return self.W_o((s.softmax(-1) @ v).permute(0, 2, 1, 3).reshape(B, T, C))

    tinyattn.manual_seed(1)
    assert failures(grade("ex08", 1, MultiHeadAttention=MultiHeadAttention)) == []
