"""Rotary position embeddings: the rotation itself, its gradient, and RoPE inside attention and the models."""
import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
from tinyattn.gradcheck import gradcheck
from tinyattn.nn import KVCache, Attention, RotaryEmbedding, TransformerLM

BACKENDS = ["reference", "sdpa", "flash"]


def _x(rng, *shape, requires_grad=False):
    return tinyattn.tensor(rng.standard_normal(shape), requires_grad=requires_grad)  # float64


def test_rotation_matches_the_complex_number_formula():
    """Pair i = (x[i], x[i + d/2]) read as the complex number x[i] + 1j x[i + d/2] is multiplied by
    exp(1j * m * theta_i) at position m, theta_i = base^(-2i/d): an independent way to write RoPE."""
    rng = np.random.default_rng(0)
    d, T, offset, base = 8, 6, 5, 100.0
    x = rng.standard_normal((2, 3, T, d))
    got = RotaryEmbedding(d, base=base)(tinyattn.tensor(x), offset=offset).numpy()
    theta = base ** (-np.arange(d // 2) * 2.0 / d)  # (d/2,)
    m = np.arange(offset, offset + T)[:, None]  # (T, 1)
    z = (x[..., : d // 2] + 1j * x[..., d // 2:]) * np.exp(1j * m * theta)  # (2, 3, T, d/2)
    np.testing.assert_allclose(got, np.concatenate([z.real, z.imag], axis=-1), rtol=0, atol=1e-12)


def test_scores_depend_only_on_the_distance_and_norms_are_kept():
    rng = np.random.default_rng(1)
    rope = RotaryEmbedding(16)
    q, k = _x(rng, 1, 16), _x(rng, 1, 16)  # one query and one key vector, (T=1, d_k)

    def score(i, j):
        return float((rope(q, offset=i) * rope(k, offset=j)).sum().item())

    for i, j in [(0, 0), (3, 1), (7, 12), (40, 2)]:
        for shift in (1, 5, 100):
            assert score(i, j) == pytest.approx(score(i + shift, j + shift), rel=1e-12, abs=1e-12)
    assert score(3, 1) != pytest.approx(score(1, 3))  # the direction of the distance matters
    x = _x(rng, 4, 9, 16)
    np.testing.assert_allclose(np.linalg.norm(rope(x).numpy(), axis=-1), np.linalg.norm(x.numpy(), axis=-1), rtol=1e-12)
    np.testing.assert_array_equal(rope(x, offset=0).numpy()[:, 0], x.numpy()[:, 0])  # position 0: angle 0, unchanged


def test_offset_continues_the_positions():
    rng = np.random.default_rng(2)
    rope = RotaryEmbedding(6)
    x = _x(rng, 2, 10, 6)
    np.testing.assert_allclose(rope(x[:, 4:], offset=4).numpy(), rope(x).numpy()[:, 4:], rtol=0, atol=1e-12)


def test_rope_gradcheck(float64):
    rng = np.random.default_rng(3)
    rope = RotaryEmbedding(8)
    x = _x(rng, 2, 5, 8, requires_grad=True)
    assert gradcheck(lambda t: rope(t, offset=3), [x])


def test_rope_keeps_float32():
    x = tinyattn.randn(2, 4, 8)
    assert RotaryEmbedding(8)(x).dtype == np.float32


def test_rope_errors():
    with pytest.raises(ValueError, match=r"d_k must be even .* got d_k=5"):
        RotaryEmbedding(5)
    with pytest.raises(ValueError, match=r"base must be a number > 1"):
        RotaryEmbedding(4, base=1)
    rope = RotaryEmbedding(4)
    with pytest.raises(ValueError, match=r"expects queries or keys of shape \(\.\.\., T, 4\), got \(2, 3, 6\)"):
        rope(tinyattn.randn(2, 3, 6))
    with pytest.raises(ValueError, match=r"offset must be an int >= 0"):
        rope(tinyattn.randn(3, 4), offset=-1)
    with pytest.raises(TypeError, match=r"expects float queries or keys, got dtype int64"):
        rope(tinyattn.tensor(np.ones((3, 4), dtype=np.int64)))
    with pytest.raises(ValueError, match=r"rope=True .* d_k = d_model / n_heads must be even; got d_k = 6 / 2 = 3"):
        Attention(6, 2, rope=True)
    with pytest.raises(ValueError, match=r"d_k = 6 / 2 = 3"):
        TransformerLM(5, 6, 2, n_layers=1, max_len=4, positional="rope")
    m = Attention(8, 2, rope=True)
    with pytest.raises(ValueError, match=r"rope=True, .* cross-attention \(context given\) needs rope=False"):
        m(tinyattn.randn(1, 3, 8), context=tinyattn.randn(1, 4, 8))


def test_mha_rope_is_the_rotation_of_q_and_k(float64):
    """rope=True equals rotating q and k by hand and running the plain layer's attention on them."""
    rng = np.random.default_rng(4)
    m = Attention(16, 4, rope=True)
    x = _x(rng, 2, 7, 16)
    B, T, H, d_k = 2, 7, 4, 4
    q = m.W_q(x).view(B, T, H, d_k).transpose(1, 2)
    k = m.W_k(x).view(B, T, H, d_k).transpose(1, 2)
    v = m.W_v(x).view(B, T, H, d_k).transpose(1, 2)
    out = nn.functional.scaled_dot_product_attention(m.rope(q), m.rope(k), v, is_causal=True)
    want = m.W_o(out.transpose(1, 2).reshape(B, T, 16)).numpy()
    np.testing.assert_allclose(m(x, is_causal=True).numpy(), want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("opts", [dict(), dict(n_kv_heads=2), dict(window=3)])
def test_mha_rope_kv_cache_decoding_equals_full_forward(float64, backend, opts):
    rng = np.random.default_rng(5)
    m = Attention(16, 4, backend=backend, rope=True, **opts)
    x = _x(rng, 2, 9, 16)
    full = m(x, is_causal=True).numpy()
    cache, outs, t = KVCache(), [], 0
    with tinyattn.no_grad():
        for n in [4, 1, 2, 1, 1]:  # a prompt, then short chunks: each continues at cache.seq_len
            outs.append(m(x[:, t:t + n], kv_cache=cache, is_causal=True).numpy())
            t += n
    np.testing.assert_allclose(np.concatenate(outs, axis=1), full, rtol=0, atol=1e-12)


def test_mha_rope_gradcheck(float64):
    rng = np.random.default_rng(6)
    m = Attention(8, 2, n_kv_heads=1, rope=True)
    x = _x(rng, 2, 5, 8, requires_grad=True)
    assert gradcheck(lambda t: m(t, is_causal=True), [x])
    assert gradcheck(lambda wq, wk: m(x, is_causal=True), [m.W_q.weight, m.W_k.weight])


def test_lm_with_rope_has_no_position_table_and_decodes_exactly(float64):
    lm = TransformerLM(11, 16, 2, n_layers=2, max_len=12, positional="rope")
    assert isinstance(lm.pos, nn.Identity)
    assert not [k for k in lm.state_dict() if "pos" in k]  # nothing learned or stored for positions
    assert all(b.attn.rope is not None for b in lm.blocks)
    idx = np.random.default_rng(7).integers(0, 11, (2, 8))
    full = lm(idx).numpy()
    cache = lm.new_cache()
    chunks = [lm(idx[:, :3], kv_cache=cache).numpy()] + [lm(idx[:, t:t + 1], kv_cache=cache).numpy() for t in range(3, 8)]
    np.testing.assert_allclose(np.concatenate(chunks, axis=1), full, rtol=1e-10, atol=1e-12)
    a = lm.generate(idx[:, :4], 6, temperature=0)
    b = lm.generate(idx[:, :4], 6, temperature=0, use_cache=False)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_rope_sees_order_where_no_positions_would_not():
    """Without any position information a bidirectional encoder is permutation-equivariant; with RoPE
    swapping two tokens changes the other tokens' outputs."""
    tinyattn.manual_seed(0)
    clf = nn.TransformerClassifier(9, 16, 2, n_layers=1, max_len=8, n_classes=3, positional="rope", pool="mean")
    ids = np.array([[1, 2, 3, 4, 5, 6]])
    swapped = np.array([[2, 1, 3, 4, 5, 6]])
    assert not np.allclose(clf(ids).numpy(), clf(swapped).numpy())
    s2s = nn.Seq2SeqTransformer(9, 9, 16, 2, n_layers=1, max_len=8, positional="rope")
    assert s2s.decoder[0].attn.rope is not None and s2s.decoder[0].cross.rope is None  # cross-attention: no rope
    assert s2s(ids % 9, ids[:, :4] % 9).shape == (1, 4, 9)


def test_identity_returns_its_input():
    x = tinyattn.randn(2, 3)
    ident = nn.Identity(54, unused="ignored")  # PyTorch's Identity accepts and ignores arguments too
    assert ident(x) is x and ident(x, offset=3) is x
    assert repr(ident) == "Identity()"
