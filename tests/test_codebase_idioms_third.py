"""Idioms met while running a third round of public codebases on tinyattn (torch-free; expected values from NumPy).

- A contrastive image-text model pools a ResNet's feature map with attention: it keeps three separate
  ``nn.Linear`` projections and calls ``F.multi_head_attention_forward`` itself, sequence first, with
  ``use_separate_proj_weight=True``, the q/k/v weights passed one by one and their biases concatenated.
- The same model's half-precision converter walks every ``nn.MultiheadAttention`` and reads the attributes
  ``in_proj_weight``, ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight``, ``in_proj_bias``, ``bias_k``,
  ``bias_v`` by name: the ones not in use are declared and None, as in PyTorch.
"""
import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck


def _softmax(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _numpy_attention(x, wq, wk, wv, b, wo, bo, H, add=None):
    """Sequence-first x (T, B, E) attending to itself -> (out (T, B, E), weights (B, H, T, T))."""
    T, B, E = x.shape
    xb = x.transpose(1, 0, 2)  # (B, T, E)
    heads = lambda y: y.reshape(B, T, H, E // H).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = (heads(xb @ w.T + b[i * E:(i + 1) * E]) for i, w in enumerate((wq, wk, wv)))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(E // H)
    if add is not None:
        s = s + add
    w = _softmax(s)
    out = (w @ v).transpose(0, 2, 1, 3).reshape(B, T, E) @ wo.T + bo
    return out.transpose(1, 0, 2), w


class _Pool(nn.Module):
    """An attention pool over a feature map (B, C, H, W): the mean of the positions is the query's token."""

    def __init__(self, side, dim, heads, out_dim):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(side * side + 1, dim, dtype=torch.float64) / dim ** 0.5)
        self.q, self.k, self.v = (nn.Linear(dim, dim).double() for _ in range(3))
        self.c = nn.Linear(dim, out_dim).double()
        self.heads = heads

    def forward(self, x):
        x = x.flatten(start_dim=2).permute(2, 0, 1)  # (B, C, H, W) -> (HW, B, C)
        x = torch.cat([x.mean(dim=0, keepdim=True), x], dim=0) + self.pos[:, None, :]
        out, _ = F.multi_head_attention_forward(
            query=x[:1], key=x, value=x, embed_dim_to_check=x.shape[-1], num_heads=self.heads,
            q_proj_weight=self.q.weight, k_proj_weight=self.k.weight, v_proj_weight=self.v.weight,
            in_proj_weight=None, in_proj_bias=torch.cat([self.q.bias, self.k.bias, self.v.bias]),
            bias_k=None, bias_v=None, add_zero_attn=False, dropout_p=0, out_proj_weight=self.c.weight,
            out_proj_bias=self.c.bias, use_separate_proj_weight=True, training=self.training, need_weights=False)
        return out.squeeze(0)


def test_attention_pool_with_separate_projections_matches_numpy_and_finite_differences():
    torch.manual_seed(0)
    pool = _Pool(side=2, dim=8, heads=2, out_dim=3)
    fmap = np.random.default_rng(0).standard_normal((2, 8, 2, 2))
    got = pool(torch.tensor(fmap))
    assert got.shape == (2, 3)
    x = fmap.reshape(2, 8, 4).transpose(2, 0, 1)
    x = np.concatenate([x.mean(0, keepdims=True), x], 0) + pool.pos.detach().numpy()[:, None, :]
    n = lambda lin: (lin.weight.detach().numpy(), lin.bias.detach().numpy())  # noqa: E731
    (wq, bq), (wk, bk), (wv, bv), (wo, bo) = n(pool.q), n(pool.k), n(pool.v), n(pool.c)
    E, H = 8, 2
    xb = x.transpose(1, 0, 2)  # (B, S, E)
    heads = lambda y: y.reshape(2, -1, H, E // H).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = heads(xb[:, :1] @ wq.T + bq), heads(xb @ wk.T + bk), heads(xb @ wv.T + bv)
    w = _softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(E // H))
    want = ((w @ v).transpose(0, 2, 1, 3).reshape(2, 1, E) @ wo.T + bo)[:, 0]
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12)
    inp = torch.tensor(fmap, requires_grad=True)
    assert gradcheck(lambda t: pool(t), [inp])
    assert gradcheck(lambda *_: pool(torch.tensor(fmap)), list(pool.parameters()))  # reads the weights itself


@pytest.mark.parametrize("mask", [None, "bool", "float", "padding"])
def test_functional_packed_weights_is_what_the_module_runs(mask):
    rng = np.random.default_rng(1)
    m = nn.MultiheadAttention(6, 3).double()
    x = rng.standard_normal((4, 2, 6))  # (T, B, E)
    add, kw = None, {}
    if mask == "bool":
        blocked = np.triu(np.ones((4, 4), bool), 1)
        kw["attn_mask"], add = torch.tensor(blocked), np.where(blocked, -np.inf, 0.0)
    elif mask == "float":
        f = rng.standard_normal((4, 4))
        kw["attn_mask"], add = torch.tensor(f), f
    elif mask == "padding":
        pad = np.array([[False, False, True, True], [False, False, False, True]])
        kw["key_padding_mask"], add = torch.tensor(pad), np.where(pad, -np.inf, 0.0)[:, None, None, :]
    W, b = m.in_proj_weight.detach(), m.in_proj_bias.detach()
    out, w = F.multi_head_attention_forward(
        torch.tensor(x), torch.tensor(x), torch.tensor(x), 6, 3, m.in_proj_weight, m.in_proj_bias, None, None,
        False, 0.0, m.out_proj.weight, m.out_proj.bias, average_attn_weights=False, **kw)
    Wn = W.numpy()
    want, want_w = _numpy_attention(x, Wn[:6], Wn[6:12], Wn[12:], b.numpy(), m.out_proj.weight.detach().numpy(),
                                    m.out_proj.bias.detach().numpy(), 3, add)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(w.detach().numpy(), want_w, rtol=1e-12, atol=1e-14)
    mod_out, mod_w = m(torch.tensor(x), torch.tensor(x), torch.tensor(x), **kw)
    np.testing.assert_array_equal(mod_out.detach().numpy(), out.detach().numpy())
    np.testing.assert_allclose(mod_w.detach().numpy(), want_w.mean(1), rtol=1e-12, atol=1e-14)


def test_unused_projection_attributes_are_declared_none():
    packed = nn.MultiheadAttention(8, 2)
    for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight", "bias_k", "bias_v"):
        assert getattr(packed, name) is None, name
    assert packed.add_zero_attn is False
    assert [n for n, _ in packed.named_parameters()] == ["in_proj_weight", "in_proj_bias", "out_proj.weight",
                                                         "out_proj.bias"]
    separate = nn.MultiheadAttention(8, 2, kdim=5, vdim=3, bias=False)
    assert separate.in_proj_weight is None and separate.in_proj_bias is None
    assert [n for n, _ in separate.named_parameters()] == ["q_proj_weight", "k_proj_weight", "v_proj_weight",
                                                           "out_proj.weight"]
    assert separate.k_proj_weight.shape == (8, 5) and separate.v_proj_weight.shape == (8, 3)

    # the half-precision converter's walk: every attribute it names is there, the ones in use are cast
    def to_half(layer):
        if isinstance(layer, nn.MultiheadAttention):
            for attr in ["in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                         "bias_k", "bias_v"]:
                t = getattr(layer, attr)
                if t is not None:
                    t.data = t.data.half()
    model = nn.Sequential(packed, separate)
    model.apply(to_half)
    assert packed.in_proj_weight.dtype == torch.float16 and separate.q_proj_weight.dtype == torch.float16
    # a separate-projection layer still runs (kdim and vdim differ from the embedding)
    m = nn.MultiheadAttention(4, 2, kdim=3, vdim=5, batch_first=True)
    out, w = m(torch.randn(2, 6, 4), torch.randn(2, 7, 3), torch.randn(2, 7, 5))
    assert out.shape == (2, 6, 4) and w.shape == (2, 6, 7)


def test_functional_refuses_missing_weights_and_a_wrong_width():
    x = torch.randn(3, 2, 4)
    w, ow = torch.randn(12, 4), torch.randn(4, 4)
    with pytest.raises(ValueError, match="use_separate_proj_weight is True but q_proj_weight"):
        F.multi_head_attention_forward(x, x, x, 4, 2, None, None, None, None, False, 0.0, ow, None,
                                       use_separate_proj_weight=True, k_proj_weight=ow, v_proj_weight=ow)
    with pytest.raises(ValueError, match="use_separate_proj_weight is False but in_proj_weight is None"):
        F.multi_head_attention_forward(x, x, x, 4, 2, None, None, None, None, False, 0.0, ow, None)
    with pytest.raises(ValueError, match="was expecting embedding dimension of 6, but got 4"):
        F.multi_head_attention_forward(x, x, x, 6, 2, w, None, None, None, False, 0.0, ow, None)
    with pytest.raises(NotImplementedError, match="bias_k/bias_v"):
        F.multi_head_attention_forward(x, x, x, 4, 2, w, None, torch.zeros(1, 1, 4), torch.zeros(1, 1, 4), False,
                                       0.0, ow, None)
