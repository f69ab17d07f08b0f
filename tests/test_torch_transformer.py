"""PyTorch's own attention layers (nn.MultiheadAttention, the Transformer encoder/decoder family):
their layouts, their mask meaning (True = may NOT attend), packed weights, and gradients, each
against a NumPy computation written out from the weights."""
import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
from tinyattn.gradcheck import gradcheck

rng = np.random.default_rng(31)


def softmax(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def numpy_mha(m, q, k, v, add_mask=None):
    """Batch-first q (B, L, E), k and v (B, S, E) -> (out (B, L, E), weights (B, H, L, S)), from m's weights."""
    E, H = m.embed_dim, m.num_heads
    W, b = m.in_proj_weight.numpy(), m.in_proj_bias.numpy()
    heads = lambda x: x.reshape(x.shape[0], x.shape[1], H, E // H).transpose(0, 2, 1, 3)  # noqa: E731
    Q, K, V = (heads(x @ W[i * E:(i + 1) * E].T + b[i * E:(i + 1) * E]) for i, x in enumerate((q, k, v)))
    s = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(E // H)  # (B, H, L, S)
    if add_mask is not None:
        s = s + add_mask
    w = softmax(s)
    out = (w @ V).transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], E)
    return out @ m.out_proj.weight.numpy().T + m.out_proj.bias.numpy(), w


def test_multihead_attention_is_the_formula_with_pytorchs_layout_and_masks(float64):
    tinyattn.manual_seed(0)
    m = nn.MultiheadAttention(8, 2)  # sequence first: (L, B, E)
    m.in_proj_bias.data.copy_(tinyattn.tensor(rng.standard_normal(24)))  # nonzero, so the bias rows are tested
    q, k, v = rng.standard_normal((4, 3, 8)), rng.standard_normal((5, 3, 8)), rng.standard_normal((5, 3, 8))
    blocked = rng.random((4, 5)) < 0.3
    blocked[:, 0] = False  # every query keeps key 0
    padded = np.zeros((3, 5), dtype=bool)
    padded[1, 3:] = True  # the second sequence's last two keys are padding
    out, w = m(tinyattn.tensor(q), tinyattn.tensor(k), tinyattn.tensor(v), attn_mask=tinyattn.tensor(blocked),
               key_padding_mask=tinyattn.tensor(padded))
    add = np.where(blocked, -np.inf, 0.0)[None, None] + np.where(padded, -np.inf, 0.0)[:, None, None, :]
    ref_out, ref_w = numpy_mha(m, *(x.transpose(1, 0, 2) for x in (q, k, v)), add)
    assert out.shape == (4, 3, 8) and w.shape == (3, 4, 5)  # weights averaged over the heads, batch first
    np.testing.assert_allclose(out.numpy(), ref_out.transpose(1, 0, 2), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(w.numpy(), ref_w.mean(1), rtol=1e-12, atol=1e-12)
    assert np.all(w.numpy()[:, blocked] == 0) and np.all(w.numpy()[1, :, 3:] == 0)  # True = not attended
    np.testing.assert_allclose(w.numpy().sum(-1), 1.0)
    per_head = m(tinyattn.tensor(q), tinyattn.tensor(k), tinyattn.tensor(v), average_attn_weights=False)[1]
    assert per_head.shape == (3, 2, 4, 5)
    float_mask = rng.standard_normal((4, 5))  # a float mask is added to the scores
    out_f, _ = m(tinyattn.tensor(q), tinyattn.tensor(k), tinyattn.tensor(v), attn_mask=tinyattn.tensor(float_mask))
    np.testing.assert_allclose(out_f.numpy(), numpy_mha(m, *(x.transpose(1, 0, 2) for x in (q, k, v)),
                                                        float_mask)[0].transpose(1, 0, 2), rtol=1e-12, atol=1e-12)


def test_batch_first_unbatched_and_no_weights(float64):
    tinyattn.manual_seed(1)
    seq_first = nn.MultiheadAttention(6, 3)
    batch_first = nn.MultiheadAttention(6, 3, batch_first=True)
    batch_first.load_state_dict(seq_first.state_dict())
    x = rng.standard_normal((2, 4, 6))  # (B, T, E)
    a = batch_first(*(tinyattn.tensor(x),) * 3)[0].numpy()
    b = seq_first(*(tinyattn.tensor(x.transpose(1, 0, 2)),) * 3)[0].numpy()
    np.testing.assert_allclose(a, b.transpose(1, 0, 2), rtol=1e-12, atol=1e-12)
    one, w = seq_first(*(tinyattn.tensor(x[0]),) * 3)  # unbatched (T, E)
    assert one.shape == (4, 6) and w.shape == (4, 4)
    np.testing.assert_allclose(one.numpy(), a[0], rtol=1e-12, atol=1e-12)
    assert seq_first(*(tinyattn.tensor(x[0]),) * 3, need_weights=False)[1] is None
    assert [n for n, _ in seq_first.named_parameters()] == ["in_proj_weight", "in_proj_bias", "out_proj.weight",
                                                            "out_proj.bias"]
    other = nn.MultiheadAttention(6, 3, kdim=4, vdim=5)  # different key/value widths: three separate weights
    assert [n for n, _ in other.named_parameters()][:3] == ["q_proj_weight", "k_proj_weight", "v_proj_weight"]
    out = other(tinyattn.randn(4, 2, 6, dtype=np.float64), tinyattn.randn(3, 2, 4, dtype=np.float64),
                tinyattn.randn(3, 2, 5, dtype=np.float64))[0]
    assert out.shape == (4, 2, 6)


def test_multihead_attention_gradients(float64):
    tinyattn.manual_seed(2)
    m = nn.MultiheadAttention(4, 2)
    q, k, v = (tinyattn.tensor(rng.standard_normal(s), requires_grad=True) for s in ((3, 2, 4), (5, 2, 4), (5, 2, 4)))
    padded = tinyattn.tensor(np.array([[False] * 5, [False, False, False, True, True]]))
    assert gradcheck(lambda q, k, v: m(q, k, v, key_padding_mask=padded)[0], [q, k, v])
    assert gradcheck(lambda *ps: m(q, k, v)[1], list(m.parameters())[:2])  # the weights depend on W_q, W_k


def test_encoder_layer_is_attention_then_feed_forward_each_with_residual_and_norm(float64):
    tinyattn.manual_seed(3)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
    x = tinyattn.tensor(rng.standard_normal((5, 2, 8)))
    mask = nn.Transformer.generate_square_subsequent_mask(5).to(np.float64)
    assert mask.numpy()[0, 1] == -np.inf and mask.numpy()[1, 0] == 0 and mask.numpy()[2, 2] == 0
    y = layer(x, src_mask=mask, is_causal=True)
    # post-norm by hand: x = norm1(x + SA(x)); x = norm2(x + W2 relu(W1 x))
    h = layer.norm1(x + layer.self_attn(x, x, x, attn_mask=mask)[0])
    ref = layer.norm2(h + layer.linear2(layer.linear1(h).relu()))
    np.testing.assert_allclose(y.numpy(), ref.numpy(), rtol=1e-12, atol=1e-12)
    pre = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, norm_first=True, activation="gelu")
    h = x + pre.self_attn(*(pre.norm1(x),) * 3)[0]
    ref = h + pre.linear2(tinyattn.nn.functional.gelu(pre.linear1(pre.norm2(h))))
    np.testing.assert_allclose(pre(x).numpy(), ref.numpy(), rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x: layer(x, src_mask=mask), [tinyattn.tensor(x.numpy(), requires_grad=True)])
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        layer(x, is_causal=True)


def test_stacks_copy_their_layer_and_the_transformer_runs_end_to_end(float64):
    tinyattn.manual_seed(4)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    enc = nn.TransformerEncoder(layer, num_layers=3)
    w = [l.linear1.weight for l in enc.layers]
    assert w[0] is not w[1] and np.array_equal(w[0].numpy(), w[1].numpy())  # copies that start equal, as in PyTorch
    enc.eval()
    x = tinyattn.tensor(rng.standard_normal((5, 2, 8)))
    out = x
    for l in enc.layers:
        out = l(out)
    np.testing.assert_allclose(enc(x).numpy(), out.numpy(), rtol=1e-12, atol=1e-12)
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=16)
    model.eval()
    tgt = tinyattn.tensor(rng.standard_normal((4, 2, 8)))
    y = model(x, tgt, tgt_mask=nn.Transformer.generate_square_subsequent_mask(4).to(np.float64))
    assert y.shape == (4, 2, 8)
    keys = list(model.state_dict())
    assert "encoder.layers.1.self_attn.in_proj_weight" in keys and "decoder.layers.0.multihead_attn.out_proj.bias" in keys
    assert "encoder.norm.weight" in keys and "decoder.norm3.weight" not in keys and "decoder.layers.0.norm3.weight" in keys
    # the decoder's first position sees only itself: changing later target positions leaves it alone
    tgt2 = tgt.numpy().copy()
    tgt2[1:] += 1.0
    y2 = model(x, tinyattn.tensor(tgt2), tgt_mask=nn.Transformer.generate_square_subsequent_mask(4).to(np.float64))
    np.testing.assert_allclose(y2.numpy()[0], y.numpy()[0], rtol=1e-12, atol=1e-12)


def test_clear_errors():
    with pytest.raises(ValueError, match="embed_dim=6 must be divisible by num_heads=4"):
        nn.MultiheadAttention(6, 4)
    m = nn.MultiheadAttention(4, 2)
    x = tinyattn.randn(3, 2, 4)
    with pytest.raises(ValueError, match=r"attn_mask must have shape \(L, S\) = \(3, 3\) or \(B \* num_heads, L, S\)"):
        m(x, x, x, attn_mask=tinyattn.zeros(2, 3, 3))
    with pytest.raises(ValueError, match=r"key_padding_mask must have shape \(2, 3\)"):
        m(x, x, x, key_padding_mask=tinyattn.zeros(3, 2, dtype=tinyattn.bool))
    with pytest.raises(TypeError, match="attn_mask must be bool .True = may NOT attend. or float"):
        m(x, x, x, attn_mask=tinyattn.zeros(3, 3, dtype=tinyattn.long))
    with pytest.raises(ValueError, match="query has 5 features in its last dim, expected 4"):
        m(tinyattn.randn(3, 2, 5), x, x)
    with pytest.raises(ValueError, match="activation should be relu/gelu"):
        nn.TransformerEncoderLayer(4, 2, activation="tanh")
    with pytest.raises(ValueError, match="every entry is -inf"):  # a query with every key masked has no softmax
        m(x, x, x, key_padding_mask=tinyattn.ones(2, 3, dtype=tinyattn.bool))
