"""Attention and KVCache: the definition, three backends, masks, GQA/MQA, caching, errors."""
import math

import numpy as np
import pytest

import tinyattn
from tinyattn.gradcheck import gradcheck
from tinyattn.masks import padding_mask
from tinyattn.nn import KVCache, Attention

BACKENDS = ["reference", "sdpa", "flash"]


def _x(rng, *shape):
    return tinyattn.tensor(rng.standard_normal(shape))  # float64


def _clone(src, **kw):
    """A new layer with src's weights (and other options from kw)."""
    dst = Attention(src.d_model, src.n_heads, **kw)
    dst.load_state_dict(src.state_dict())
    return dst


def _np_mha(m, x, ctx=None, keep=None):
    """The layer written head by head in NumPy, from its weights: the definition to test against."""
    ctx = x if ctx is None else ctx
    W = {n: p.numpy() for n, p in m.named_parameters()}
    proj = lambda a, name: a @ W[f"{name}.weight"].T + W[f"{name}.bias"]
    q, k, v = proj(x, "W_q"), proj(ctx, "W_k"), proj(ctx, "W_v")
    dk, group = m.d_k, m.n_heads // m.n_kv_heads
    heads = []
    for h in range(m.n_heads):
        g = h // group  # the key/value head this query head reads
        qh, kh, vh = q[..., h * dk:(h + 1) * dk], k[..., g * dk:(g + 1) * dk], v[..., g * dk:(g + 1) * dk]
        s = qh @ np.swapaxes(kh, -1, -2) / math.sqrt(dk)
        if keep is not None:
            s = np.where(np.broadcast_to(keep, (x.shape[0], m.n_heads, x.shape[1], ctx.shape[1]))[:, h], s, -np.inf)
        w = np.exp(s - s.max(-1, keepdims=True))
        heads.append((w / w.sum(-1, keepdims=True)) @ vh)
    return proj(np.concatenate(heads, -1), "W_o")


@pytest.mark.parametrize("n_kv", [None, 2, 1])
def test_matches_the_definition_head_by_head(float64, n_kv):
    rng = np.random.default_rng(0)
    m = Attention(16, 4, n_kv_heads=n_kv)
    x, c = _x(rng, 2, 5, 16), _x(rng, 2, 7, 16)
    np.testing.assert_allclose(m(x).numpy(), _np_mha(m, x.numpy()), rtol=0, atol=1e-12)
    keep = padding_mask([7, 4], 7)
    np.testing.assert_allclose(m(x, context=c, mask=keep).numpy(), _np_mha(m, x.numpy(), c.numpy(), keep), rtol=0, atol=1e-12)


def test_shapes_and_parameter_counts():
    x = tinyattn.randn(2, 5, 16)
    for n_kv, kv_out in [(None, 16), (2, 8), (1, 4)]:  # MHA, GQA, MQA
        m = Attention(16, 4, n_kv_heads=n_kv)
        assert m.W_q.weight.shape == (16, 16) and m.W_o.weight.shape == (16, 16)
        assert m.W_k.weight.shape == (kv_out, 16) and m.W_v.weight.shape == (kv_out, 16)
        assert m.num_parameters() == 2 * (16 * 16 + 16) + 2 * (16 * kv_out + kv_out)
        out, w = m(x, return_weights=True)
        assert out.shape == (2, 5, 16) and out.dtype == np.float32 and w.shape == (2, 4, 5, 5)
    assert Attention(16, 4, bias=False).num_parameters() == 4 * 16 * 16


CASES = {
    "self": dict(),
    "causal": dict(is_causal=True),
    "padding": dict(mask="pad"),
    "window_causal": dict(window=2, is_causal=True),
    "window_bidirectional": dict(window=2),
    "cross": dict(context=True, mask="pad"),
    "gqa_causal": dict(n_kv_heads=2, is_causal=True),
    "head_mask": dict(head_mask=np.array([1.0, 0.0, 1.0, 1.0])),
}


def _call(m, x, c, case, **extra):
    kw = {k: v for k, v in case.items() if k in ("is_causal", "head_mask")}
    S = c.shape[1] if case.get("context") else x.shape[1]
    if case.get("mask") == "pad":
        kw["mask"] = padding_mask([S, S - 2][:x.shape[0]], S)
    if case.get("context"):
        kw["context"] = c
    return m(x, **kw, **extra)


@pytest.mark.parametrize("name", list(CASES))
def test_backends_agree_on_values_and_gradients(float64, name):
    case = CASES[name]
    rng = np.random.default_rng(1)
    x, c = _x(rng, 2, 6, 8), _x(rng, 2, 7, 8)
    x.requires_grad_(True)
    c.requires_grad_(True)
    g = rng.standard_normal((2, 6, 8))
    opts = {k: case[k] for k in ("n_kv_heads", "window") if k in case}
    base = Attention(8, 4, **opts)
    results = []
    for backend in BACKENDS:
        m = _clone(base, backend=backend, **opts)
        x.grad = c.grad = None
        out = _call(m, x, c, case)
        out.backward(g)
        grads = [p.grad.numpy() for p in m.parameters()] + [x.grad.numpy()] + ([c.grad.numpy()] if case.get("context") else [])
        results.append([out.numpy(), *grads])
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", ["self", "cross", "gqa_causal", "window_causal", "head_mask"])
def test_gradcheck_multihead(float64, name):
    case = CASES[name]
    rng = np.random.default_rng(2)
    opts = {k: case[k] for k in ("n_kv_heads", "window") if k in case}
    m = Attention(4, 2, **opts)
    x, c = _x(rng, 1, 3, 4).requires_grad_(), _x(rng, 1, 4, 4).requires_grad_()
    inputs = [x, *m.parameters()] + ([c] if case.get("context") else [])
    if "head_mask" in case:  # a float head mask with a gradient: the head-importance score of Michel et al.
        hm = tinyattn.tensor(np.array([0.7, -1.3]), requires_grad=True)
        case = dict(case, head_mask=hm)
        inputs.append(hm)
    assert gradcheck(lambda *a: _call(m, x, c, case), inputs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_causal_future_tokens_do_not_change_the_past(backend):
    rng = np.random.default_rng(3)
    m = Attention(16, 4, backend=backend)
    x = rng.standard_normal((2, 9, 16)).astype(np.float32)
    y = x.copy()
    y[:, 5:] = rng.standard_normal((2, 4, 16))  # rewrite positions 5..8
    a, b = m(tinyattn.tensor(x), is_causal=True).numpy(), m(tinyattn.tensor(y), is_causal=True).numpy()
    assert np.abs(a[:, :5] - b[:, :5]).max() == 0.0
    assert np.abs(a[:, 5:] - b[:, 5:]).max() > 1e-3


@pytest.mark.parametrize("backend", BACKENDS)
def test_padding_tokens_do_not_change_real_tokens(backend):
    rng = np.random.default_rng(4)
    m = Attention(16, 4, backend=backend)
    lengths = [6, 3]
    x = rng.standard_normal((2, 6, 16)).astype(np.float32)
    y = x.copy()
    y[1, 3:] = 100 * rng.standard_normal((3, 16))  # garbage in sequence 1's padding
    mask = padding_mask(lengths, 6)
    a, b = m(tinyattn.tensor(x), mask=mask).numpy(), m(tinyattn.tensor(y), mask=mask).numpy()
    assert np.abs(a[0] - b[0]).max() == 0.0 and np.abs(a[1, :3] - b[1, :3]).max() == 0.0


def test_permutation_equivariance_without_positions(float64):
    rng = np.random.default_rng(5)
    m = Attention(12, 3)
    x = _x(rng, 2, 7, 12)
    perm = rng.permutation(7)
    np.testing.assert_allclose(m(x[:, perm]).numpy(), m(x).numpy()[:, perm], rtol=0, atol=1e-12)


def test_gqa_with_all_heads_is_mha_and_groups_share_heads(float64):
    rng = np.random.default_rng(6)
    x = _x(rng, 2, 5, 16)
    mha = Attention(16, 4)
    assert np.array_equal(_clone(mha, n_kv_heads=4)(x).numpy(), mha(x).numpy())
    # GQA with 2 kv heads == an MHA whose key/value heads come in identical pairs (0,0,1,1)
    gqa = Attention(16, 4, n_kv_heads=2)
    twin = Attention(16, 4)
    for name in ("W_q", "W_o"):
        getattr(twin, name).load_state_dict(getattr(gqa, name).state_dict())
    for name in ("W_k", "W_v"):  # kv head g (rows 4g..4g+3) becomes heads 2g and 2g+1
        src, dst = getattr(gqa, name), getattr(twin, name)
        dst.weight.data[...] = np.repeat(src.weight.numpy().reshape(2, 4, 16), 2, axis=0).reshape(16, 16)
        dst.bias.data[...] = np.repeat(src.bias.numpy().reshape(2, 4), 2, axis=0).reshape(16)
    np.testing.assert_allclose(gqa(x, is_causal=True).numpy(), twin(x, is_causal=True).numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("n_kv", [4, 2, 1])
def test_kv_cache_size_is_the_arithmetic(n_kv):
    m = Attention(32, 4, n_kv_heads=n_kv)  # d_k = 8, float32
    cache = KVCache()
    with tinyattn.no_grad():
        for _ in range(5):
            m(tinyattn.randn(1, 1, 32), kv_cache=cache, is_causal=True)
    assert cache.seq_len == 5
    assert cache.k.shape == (1, n_kv, 5, 8)  # the cache holds the kv heads, not the query heads
    assert cache.nbytes == 2 * n_kv * 8 * 5 * 4


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("opts", [dict(), dict(n_kv_heads=2), dict(window=3)])
@pytest.mark.parametrize("chunks", [[1] * 7, [3, 1, 2, 1]])
def test_kv_cache_decoding_equals_full_causal_forward(float64, backend, opts, chunks):
    rng = np.random.default_rng(7)
    m = Attention(16, 4, backend=backend, **opts)
    x = _x(rng, 2, 7, 16)
    full = m(x, is_causal=True).numpy()
    cache, outs, t = KVCache(), [], 0
    with tinyattn.no_grad():
        for n in chunks:  # a prompt in chunks, then token by token
            outs.append(m(x[:, t:t + n], kv_cache=cache, is_causal=True).numpy())
            t += n
    np.testing.assert_allclose(np.concatenate(outs, axis=1), full, rtol=0, atol=1e-12)
    assert cache.seq_len == 7


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("chunks", [[1] * 40, [5, 1, 7, 2, 1, 9, 3, 12]])
def test_windowed_kv_cache_stays_bounded_and_exact(float64, backend, chunks):
    """A causal window W never looks back further than W-1 positions, so the cache keeps only those:
    its memory stops growing, and decoding still equals the full causal forward."""
    rng = np.random.default_rng(11)
    W, T = 4, sum(chunks)
    m = Attention(16, 4, n_kv_heads=2, window=W, backend=backend)
    x = _x(rng, 2, T, 16)
    full = m(x, is_causal=True).numpy()
    cache, outs, t = KVCache(), [], 0
    with tinyattn.no_grad():
        for n in chunks:
            outs.append(m(x[:, t:t + n], kv_cache=cache, is_causal=True).numpy())
            t += n
            assert cache.seq_len == t  # positions seen: where the next token sits
            assert cache.held == min(t, W - 1) == cache.k.shape[2] == cache.v.shape[2]
            assert cache.nbytes == 2 * 2 * 2 * 4 * min(t, W - 1) * 8  # 2 (K, V) * B * n_kv * d_k * held * float64
    np.testing.assert_allclose(np.concatenate(outs, axis=1), full, rtol=0, atol=1e-12)


def test_kv_cache_keep_last_and_reset():
    cache = KVCache()
    k = tinyattn.randn(1, 2, 5, 3)
    cache.update(k, k)
    cache.keep_last(2)
    assert (cache.seq_len, cache.held) == (5, 2)
    np.testing.assert_array_equal(cache.k.numpy(), k.numpy()[:, :, 3:])
    cache.keep_last(10)  # more than held: nothing to drop
    assert cache.held == 2
    cache.keep_last(0)
    assert cache.held == 0 and cache.nbytes == 0 and cache.seq_len == 5
    cache.update(k[:, :, :1], k[:, :, :1])
    assert (cache.seq_len, cache.held) == (6, 1)
    with pytest.raises(ValueError, match="keep_last: n must be an int >= 0, got n=-1"):
        cache.keep_last(-1)
    for bad in (1.5, True, None):  # not ints (bool is not an int here)
        with pytest.raises(TypeError, match="keep_last: n must be an int >= 0, got n="):
            cache.keep_last(bad)
    cache.reset()
    assert (cache.seq_len, cache.held, cache.nbytes) == (0, 0, 0)
    m = Attention(8, 2, window=3)  # no causal masking: keys ahead count too, so nothing is dropped
    with tinyattn.no_grad():
        for _ in range(5):
            m(tinyattn.randn(1, 1, 8), kv_cache=cache)
    assert cache.held == 5


def test_head_mask_switches_heads_off(float64):
    rng = np.random.default_rng(8)
    m = Attention(8, 4)
    x = _x(rng, 2, 5, 8)
    off = _clone(m)
    off.W_o.weight.data[:, 2:4] = 0.0  # head 1's d_k=2 output features never reach the output
    want = off(x).numpy()
    np.testing.assert_allclose(m(x, head_mask=np.array([1, 0, 1, 1])).numpy(), want, rtol=0, atol=1e-12)
    np.testing.assert_allclose(m(x, head_mask=np.array([True, False, True, True])).numpy(), want, rtol=0, atol=1e-12)
    assert np.array_equal(m(x, head_mask=np.ones(4)).numpy(), m(x).numpy())


def test_return_weights(float64):
    rng = np.random.default_rng(9)
    for backend in BACKENDS:
        m = Attention(8, 2, backend=backend)
        x = _x(rng, 2, 4, 8)
        out, w = m(x, is_causal=True, return_weights=True)
        assert w.shape == (2, 2, 4, 4)
        np.testing.assert_allclose(w.numpy().sum(-1), 1.0, atol=1e-12)
        assert np.all(w.numpy()[..., np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] == 0.0)
        np.testing.assert_allclose(out.numpy(), m(x, is_causal=True).numpy(), rtol=0, atol=1e-12)


def test_dropout_only_in_training():
    rng = np.random.default_rng(10)
    x = tinyattn.tensor(rng.standard_normal((2, 6, 16)).astype(np.float32))
    for backend in BACKENDS:
        m = Attention(16, 4, dropout=0.5, backend=backend)
        plain = _clone(m, backend=backend)  # dropout=0.0
        a, b = m(x).numpy(), m(x).numpy()
        assert np.abs(a - b).max() > 1e-3  # a fresh dropout mask each call
        m.eval()
        np.testing.assert_array_equal(m(x).numpy(), plain(x).numpy())


def test_fully_masked_rows_raise():
    m = Attention(8, 2)
    x = tinyattn.randn(2, 4, 8)
    for backend in BACKENDS:
        m.backend = backend
        with pytest.raises(ValueError, match=r"attention rows \[\(1, 0, 0\).*every key masked"):
            m(x, mask=padding_mask([4, 0], 4))  # sequence 1 is all padding
    with pytest.raises(ValueError, match="every key masked"):
        m(x, context=tinyattn.randn(2, 2, 8), is_causal=True)  # 4 queries, 2 keys, bottom-right: rows 0, 1 see nothing


def test_additive_float_mask_is_refused_not_inverted():
    # A PyTorch-style additive padding mask (0 = attend, -inf = pad) read as 0/1 would attend to the
    # padding only. It must be an error on every backend; the bool mask is the way to say it.
    m = Attention(8, 2)
    x = tinyattn.randn(2, 4, 8)
    additive = np.where(padding_mask([2, 3], 4), 0.0, -np.inf)  # (B, 1, 1, S)
    for backend in BACKENDS:
        m.backend = backend
        with pytest.raises(ValueError, match=r"mask must be bool or 0/1.*-inf.*additive"):
            m(x, mask=additive)
        as01 = padding_mask([2, 3], 4).astype(np.float32)
        np.testing.assert_array_equal(m(x, mask=as01).numpy(),
                                      m(x, mask=padding_mask([2, 3], 4)).numpy())  # 0/1 floats still mean keep


def test_errors_name_the_numbers():
    with pytest.raises(ValueError, match="d_model=10 is not divisible by n_heads=3"):
        Attention(10, 3)
    with pytest.raises(ValueError, match="n_heads=8 is not divisible by n_kv_heads=3"):
        Attention(16, 8, n_kv_heads=3)
    with pytest.raises(ValueError, match="backend"):
        Attention(16, 8, backend="cuda")
    with pytest.raises(ValueError, match="window=0"):
        Attention(16, 8, window=0)
    m = Attention(16, 4)
    with pytest.raises(ValueError, match=r"x has shape \(2, 5, 12\) but Attention\(d_model=16\) expects \(B, T, 16\)"):
        m(tinyattn.randn(2, 5, 12))
    x = tinyattn.randn(2, 5, 16)
    with pytest.raises(ValueError, match=r"mask has shape \(3, 5\).*\(B, H, T, S\) = \(2, 4, 5, 5\)"):
        m(x, mask=np.ones((3, 5), dtype=bool))
    with pytest.raises(ValueError, match=r"head_mask has shape \(3,\).*n_heads=4"):
        m(x, head_mask=np.ones(3))
    with pytest.raises(ValueError, match="batch size 2 but context has 3"):
        m(x, context=tinyattn.randn(3, 5, 16))
    with pytest.raises(ValueError, match="kv_cache"):
        m(x, context=x, kv_cache=KVCache())
    cache = KVCache()
    m(x, kv_cache=cache)
    with pytest.raises(ValueError, match=r"KVCache holds keys of shape \(2, 4, 5, 4\) but got \(1, 4, 1, 4\)"):
        m(tinyattn.randn(1, 1, 16), kv_cache=cache)


def test_kv_cache_outside_the_graph_appends_in_place_with_the_same_values_and_keeps_the_graph_otherwise():
    """Under no_grad the cache appends into buffers with room to spare (no copy of every held position
    each step); what it returns is exactly the concatenation, and views it returned earlier keep their
    values. With grad enabled it concatenates in the graph, so gradients reach earlier steps' keys."""
    rng = np.random.default_rng(5)
    steps = [rng.standard_normal((2, 3, n, 4)).astype(np.float32) for n in (5, 1, 1, 70, 1)]  # 70: past the room
    cache, earlier = KVCache(), []
    with tinyattn.no_grad():
        for i, a in enumerate(steps):
            if i == 3:
                cache.keep_last(3)  # k and v replaced by slices: the next update starts fresh buffers
            k, v = cache.update(tinyattn.tensor(a), tinyattn.tensor(-a))
            held = np.concatenate(steps[:i + 1], axis=2)
            want = held if i < 3 else np.concatenate([held[:, :, 4:7], held[:, :, 7:]], axis=2)
            np.testing.assert_array_equal(k.numpy(), want)
            np.testing.assert_array_equal(v.numpy(), -want)
            earlier.append((k, want))
    for k, want in earlier:
        np.testing.assert_array_equal(k.numpy(), want)  # not overwritten by later appends
    assert cache.held == 74 and cache.nbytes == 2 * 2 * 3 * 74 * 4 * 4  # what is held, as before
    first = tinyattn.tensor(steps[0], requires_grad=True)
    cache = KVCache()
    cache.update(first, first)
    k, _ = cache.update(tinyattn.tensor(steps[1]), tinyattn.tensor(steps[1]))
    k.sum().backward()
    np.testing.assert_array_equal(first.grad.numpy(), np.ones_like(steps[0]))
