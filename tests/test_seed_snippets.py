"""The course's two seed snippets, written against PyTorch, run unchanged on tinyattn.

They are executed from the source text below, exactly as a learner would paste them, with
``import tinyattn as torch`` and ``import tinyattn.nn.functional as F``, and must give the same
numbers (and gradients) as tinyattn.nn.Attention with the same weights.
"""
import numpy as np
import pytest

import tinyattn
from tinyattn.masks import causal_mask, padding_mask

SNIPPETS = '''
import math
import tinyattn as torch
import tinyattn.nn.functional as F

def attention(query, key, value, mask=None, dropout=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float('-inf'))
    p_attn = F.softmax(scores, dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn

class MultiHeadAttention(torch.nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        assert d_model % n_heads == 0
        self.d_k = d_model // n_heads
        self.h = n_heads
        self.W_q = torch.nn.Linear(d_model, d_model)
        self.W_k = torch.nn.Linear(d_model, d_model)
        self.W_v = torch.nn.Linear(d_model, d_model)
        self.W_o = torch.nn.Linear(d_model, d_model)
    def forward(self, x, mask=None):
        B, T, _ = x.size()
        q = self.W_q(x).view(B, T, self.h, self.d_k).transpose(1, 2)
        k = self.W_k(x).view(B, T, self.h, self.d_k).transpose(1, 2)
        v = self.W_v(x).view(B, T, self.h, self.d_k).transpose(1, 2)
        out, self.attn = attention(q, k, v, mask=mask)
        out = out.transpose(1, 2).contiguous().view(B, T, self.h * self.d_k)
        return self.W_o(out)
'''


@pytest.fixture
def seed():
    ns = {}
    exec(compile(SNIPPETS, "<seed snippets>", "exec"), ns)
    return ns


def _pair(seed_ns, d_model=16, n_heads=4):
    ours = tinyattn.nn.Attention(d_model, n_heads)
    theirs = seed_ns["MultiHeadAttention"](d_model, n_heads)
    theirs.load_state_dict(ours.state_dict())  # same parameter names: W_q.weight, W_q.bias, ...
    return ours, theirs


def test_seed_attention_equals_F_attention(seed, float64):
    rng = np.random.default_rng(0)
    q, k, v = (tinyattn.tensor(rng.standard_normal((2, 3, 5, 4))) for _ in range(3))
    mask = tinyattn.tensor(np.tril(np.ones((5, 5))))  # 0/1, as the textbook builds it
    out, p = seed["attention"](q, k, v, mask=mask)
    ref_out, ref_p = tinyattn.nn.functional.attention(q, k, v, mask=mask)
    np.testing.assert_allclose(out.numpy(), ref_out.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(p.numpy(), ref_p.numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("mask_kind", [None, "causal", "padding"])
def test_seed_multihead_gives_the_same_numbers(seed, mask_kind):
    rng = np.random.default_rng(1)
    ours, theirs = _pair(seed)
    x = tinyattn.tensor(rng.standard_normal((2, 6, 16)).astype(np.float32))
    mask = {None: None, "causal": causal_mask(6)[None, None], "padding": padding_mask([6, 4], 6)}[mask_kind]
    seed_mask = None if mask is None else tinyattn.tensor(mask.astype(np.float32))  # 1 = keep, 0 = masked
    want, w = ours(x, mask=mask, return_weights=True)
    got = theirs(x, mask=seed_mask)
    assert got.shape == (2, 6, 16) and got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(theirs.attn.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


def test_seed_multihead_training_step(seed, float64):
    rng = np.random.default_rng(2)
    ours, theirs = _pair(seed, d_model=8, n_heads=2)
    x = tinyattn.tensor(rng.standard_normal((3, 5, 8)))
    target = tinyattn.tensor(rng.standard_normal((3, 5, 8)))
    mask = tinyattn.tensor(np.tril(np.ones((5, 5))))

    def loss_of(model, m):
        return ((model(x, mask=m) - target) ** 2).mean()

    # the same gradients as our layer, parameter by parameter
    loss_t, loss_o = loss_of(theirs, mask), loss_of(ours, causal_mask(5))
    loss_t.backward()
    loss_o.backward()
    np.testing.assert_allclose(loss_t.item(), loss_o.item(), rtol=1e-12)
    for (name, p), (_, r) in zip(theirs.named_parameters(), ours.named_parameters()):
        assert p.grad is not None and p.grad.numpy().shape == p.shape, name
        np.testing.assert_allclose(p.grad.numpy(), r.grad.numpy(), rtol=0, atol=1e-12, err_msg=name)
    # and a few plain SGD steps on the snippet lower its loss
    before = loss_t.item()
    for _ in range(5):
        for p in theirs.parameters():
            p.data -= 0.1 * p.grad
        theirs.zero_grad()
        loss = loss_of(theirs, mask)
        loss.backward()
    assert loss.item() < before - 1e-3
