"""Transformer block and models: gradients, causality, sliding-window reach, padding, KV-cache decoding."""
import numpy as np
import pytest

import tinyattn
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck
from tinyattn.nn import Seq2SeqTransformer, TransformerBlock, TransformerClassifier, TransformerLM
from tinyattn.nn.attention import KVCache
from tinyattn.nn.transformer import _pick_next
from tinyattn.optim import Adam

V, D, H, T = 7, 8, 2, 4  # the tiny sizes every gradcheck uses


def _ids(shape, vocab=V, seed=0):
    return np.random.default_rng(seed).integers(0, vocab, shape)


# ---------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("config", [dict(causal=True), dict(causal=True, window=2),
                                    dict(causal=False, window=2), dict(causal=True, cross_attention=True),
                                    dict(causal=True, n_kv_heads=1)])
def test_block_gradcheck_inputs(float64, config):
    block = TransformerBlock(D, H, d_ff=12, **config)
    rng = np.random.default_rng(1)
    x = tinyattn.tensor(rng.standard_normal((2, T, D)), requires_grad=True)
    if config.get("cross_attention"):
        ctx = tinyattn.tensor(rng.standard_normal((2, 3, D)), requires_grad=True)
        assert gradcheck(lambda x, c: block(x, context=c), [x, ctx])
    else:
        assert gradcheck(lambda x: block(x), [x])


def test_block_gradcheck_parameters(float64):
    block = TransformerBlock(D, H, d_ff=4, causal=True, window=3, cross_attention=True)
    rng = np.random.default_rng(2)
    x, ctx = tinyattn.tensor(rng.standard_normal((1, T, D))), tinyattn.tensor(rng.standard_normal((1, 3, D)))
    params = list(block.parameters())
    names = [n for n, _ in block.named_parameters()]
    assert any(n.startswith("cross.") for n in names) and any(n.startswith("ffn.") for n in names)
    assert gradcheck(lambda *ps: block(x, context=ctx), params)


def test_lm_loss_gradcheck_wrt_every_parameter(float64):
    lm = TransformerLM(V, D, H, n_layers=2, max_len=T, d_ff=8, n_kv_heads=1, positional="learned")
    idx, targets = _ids((2, T), seed=3), _ids((2, T), seed=4)

    def loss(*params):
        return F.cross_entropy(lm(idx).reshape(-1, V), targets.reshape(-1))

    assert gradcheck(loss, list(lm.parameters()))


# ---------------------------------------------------------------------------- structure
def test_block_layout_is_pre_ln_with_4x_ffn():
    block = TransformerBlock(8, 2)
    names = {n for n, _ in block.named_parameters()}
    assert {"ln1.weight", "ln2.weight", "attn.W_q.weight", "ffn.0.weight", "ffn.2.weight"} <= names
    assert block.ffn[0].weight.shape == (32, 8) and block.ffn[2].weight.shape == (8, 32)
    assert not any(n.startswith(("cross", "ln_c")) for n in names)
    assert block.ffn[1].approximate == "tanh"  # GPT-2's GELU, so GPT-2 weights give GPT-2's numbers


def test_block_is_a_residual_of_its_sublayers(float64):
    """With the sublayers' output projections zeroed, the block is exactly the identity."""
    block = TransformerBlock(D, H, causal=True)
    for p in (block.attn.W_o.weight, block.attn.W_o.bias, block.ffn[2].weight, block.ffn[2].bias):
        p.data[...] = 0.0
    x = tinyattn.randn(2, T, D)
    np.testing.assert_array_equal(block(x).numpy(), x.numpy())


def test_block_return_weights(float64):
    block = TransformerBlock(D, H, causal=True, window=2)
    x = tinyattn.randn(2, 5, D)
    out, w = block(x, return_weights=True)
    np.testing.assert_allclose(out.numpy(), block(x).numpy(), rtol=1e-12, atol=1e-12)
    assert w.shape == (2, H, 5, 5)
    np.testing.assert_allclose(w.numpy().sum(-1), 1.0, rtol=1e-12)
    allowed = np.tril(np.ones((5, 5), bool)) & ~np.tril(np.ones((5, 5), bool), -2)  # itself and one back
    assert (w.numpy()[..., ~allowed] == 0).all() and (w.numpy()[..., allowed] > 0).all()


def test_block_context_errors():
    with pytest.raises(ValueError, match="cross_attention=True: pass context"):
        TransformerBlock(8, 2, cross_attention=True)(tinyattn.randn(1, 3, 8))
    with pytest.raises(ValueError, match="cross_attention=False"):
        TransformerBlock(8, 2)(tinyattn.randn(1, 3, 8), context=tinyattn.randn(1, 2, 8))


# ---------------------------------------------------------------------------- causality and reach
def _reach(grad_rows: np.ndarray) -> set:
    return set(np.flatnonzero(np.abs(grad_rows).sum(axis=-1) > 0).tolist())


@pytest.mark.parametrize("W,L", [(2, 3), (3, 2), (4, 1)])
@pytest.mark.parametrize("backend", ["sdpa", "flash"])
def test_sliding_window_stack_reaches_back_exactly_W_minus_1_times_L(float64, W, L, backend):
    """Output t depends on input s iff 0 <= t - s <= (W-1)*L: (W-1)*L + 1 positions."""
    n = 10
    blocks = [TransformerBlock(D, H, d_ff=8, causal=True, window=W, backend=backend) for _ in range(L)]
    x = tinyattn.tensor(np.random.default_rng(5).standard_normal((1, n, D)), requires_grad=True)
    for t in range(n):
        x.grad = None
        y = x
        for b in blocks:
            y = b(y)
        y[:, t].sum().backward()
        assert _reach(x.grad.numpy()[0]) == {s for s in range(n) if 0 <= t - s <= (W - 1) * L}, f"t={t}"
    assert len(_reach(x.grad.numpy()[0])) == (W - 1) * L + 1  # the last position sees the full reach


def test_lm_with_window_token_dependency():
    W, L, n = 2, 2, 8
    lm = TransformerLM(V, D, H, n_layers=L, max_len=n, window=W)
    idx = _ids((1, n), seed=6)
    base = lm(idx).numpy()
    for s in range(n):
        changed = idx.copy()
        changed[0, s] = (changed[0, s] + 1) % V
        diff = np.abs(lm(changed).numpy() - base).sum(axis=-1)[0]  # (n,)
        assert set(np.flatnonzero(diff > 0).tolist()) == {t for t in range(n) if 0 <= t - s <= (W - 1) * L}


def test_causal_lm_future_tokens_change_no_past_logit():
    lm = TransformerLM(V, D, H, n_layers=2, max_len=8)
    idx = _ids((2, 8), seed=7)
    base = lm(idx).numpy()
    for t in range(7):
        changed = idx.copy()
        changed[:, t + 1:] = (changed[:, t + 1:] + 3) % V
        out = lm(changed).numpy()
        np.testing.assert_array_equal(out[:, :t + 1], base[:, :t + 1])  # exactly 0.0 difference
        assert np.abs(out[:, t + 1] - base[:, t + 1]).max() > 1e-4  # and the future really did change


# ---------------------------------------------------------------------------- classifier
@pytest.mark.parametrize("pool", ["mean", "cls", "last"])
def test_classifier_pad_tokens_change_nothing(pool):
    clf = TransformerClassifier(V, D, H, n_layers=2, max_len=6, n_classes=3, pool=pool)
    idx = _ids((3, 6), seed=8)
    lengths = np.array([2, 6, 4])
    base = clf(idx, lengths=lengths).numpy()
    assert base.shape == (3, 3)
    rng = np.random.default_rng(9)
    for _ in range(3):
        changed = idx.copy()
        for b, n in enumerate(lengths):
            changed[b, n:] = rng.integers(0, V, 6 - n)
        np.testing.assert_array_equal(clf(changed, lengths=lengths).numpy(), base)
    # Without the lengths the same edit does change the output: the mask is what protects it.
    assert np.abs(clf(changed).numpy()[0] - clf(idx).numpy()[0]).max() > 1e-4


@pytest.mark.parametrize("pool", ["mean", "cls", "last"])
def test_classifier_padded_batch_equals_each_sequence_alone(float64, pool):
    pad = 0
    clf = TransformerClassifier(V, D, H, n_layers=2, max_len=6, n_classes=3, pad_id=pad, pool=pool)
    seqs = [[3, 1, 4], [1, 5, 6, 2, 6], [5]]
    batch = np.full((3, 6), pad)
    for b, s in enumerate(seqs):
        batch[b, :len(s)] = s
    out = clf(batch).numpy()
    for b, s in enumerate(seqs):
        np.testing.assert_allclose(out[b], clf(np.array([s])).numpy()[0], rtol=1e-10, atol=1e-12)


def test_classifier_errors():
    clf = TransformerClassifier(V, D, H, n_layers=1, max_len=5, n_classes=2, pad_id=0)
    with pytest.raises(ValueError, match=r"T=6.*max_len=5"):
        clf(np.ones((1, 6), dtype=int))
    with pytest.raises(ValueError, match=r"sequences \[1\] are all padding"):
        clf(np.array([[1, 2], [0, 0]]))
    with pytest.raises(ValueError, match=r"lengths must be 2 integers"):
        clf(np.ones((2, 3), dtype=int), lengths=[3])
    with pytest.raises(ValueError, match=r"\[1, T=3\].*\[0, 3\]"):
        clf(np.ones((2, 3), dtype=int), lengths=[0, 3])
    with pytest.raises(ValueError, match="pool must be one of"):
        TransformerClassifier(V, D, H, 1, 5, 2, pool="max")


# ---------------------------------------------------------------------------- KV cache and generation
@pytest.mark.parametrize("config", [dict(), dict(window=2), dict(n_kv_heads=1, positional="learned")])
def test_kv_cache_decode_logits_equal_full_forward(float64, config):
    lm = TransformerLM(V, D, H, n_layers=2, max_len=8, **config)
    idx = _ids((2, 7), seed=10)
    full = lm(idx).numpy()  # (B, 7, V)
    cache = lm.new_cache()
    chunks = [lm(idx[:, :3], kv_cache=cache).numpy()]  # a 3-token prompt, then one token at a time
    for t in range(3, 7):
        chunks.append(lm(idx[:, t:t + 1], kv_cache=cache).numpy())
    assert cache[0].seq_len == 7 and len(cache) == 2 and isinstance(cache[0], KVCache)
    assert all(c.held == (config["window"] - 1 if "window" in config else 7) for c in cache)  # bounded by the window
    np.testing.assert_allclose(np.concatenate(chunks, axis=1), full, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("config", [dict(), dict(window=3, n_kv_heads=1)])
def test_generate_greedy_same_tokens_with_and_without_cache(config):
    lm = TransformerLM(V, 16, H, n_layers=2, max_len=12, **config)
    prompt = _ids((3, 4), seed=11)
    a = lm.generate(prompt, 8, temperature=0)
    b = lm.generate(prompt, 8, temperature=0, use_cache=False)
    assert a.shape == (3, 12) and np.issubdtype(a.dtype, np.integer) and not a.requires_grad
    np.testing.assert_array_equal(a.numpy()[:, :4], prompt)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    # greedy really is argmax of the model's next-token logits at every step
    for t in range(4, 12):
        np.testing.assert_array_equal(a.numpy()[:, t], lm(a.numpy()[:, :t]).numpy()[:, -1].argmax(-1))


def test_generate_sampled_same_tokens_with_and_without_cache_same_seed(float64):
    lm = TransformerLM(V, 16, H, n_layers=2, max_len=12)
    prompt = _ids((4, 3), seed=12)
    tinyattn.manual_seed(123)
    a = lm.generate(prompt, 9, temperature=1.5, top_k=4)
    tinyattn.manual_seed(123)
    b = lm.generate(prompt, 9, temperature=1.5, top_k=4, use_cache=False)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    tinyattn.manual_seed(124)
    c = lm.generate(prompt, 9, temperature=1.5, top_k=4)
    assert (c.numpy() != a.numpy()).any()  # a different seed samples something else: it is random


def test_generate_mode_and_length_limits():
    lm = TransformerLM(V, D, H, n_layers=1, max_len=6, dropout=0.2)
    lm.train()
    prompt = _ids((1, 2), seed=13)
    assert lm.generate(prompt, 5, temperature=0).shape == (1, 7)  # feeds 6 positions: fits exactly
    assert lm.training  # restored after generation
    assert lm.generate(prompt, 0).shape == (1, 2)
    with pytest.raises(ValueError, match=r"T=2 tokens plus max_new_tokens=6 needs 7 positions.*max_len=6"):
        lm.generate(prompt, 6)
    with pytest.raises(ValueError, match=r"T=3 new tokens after 5 cached.*max_len=6"):
        cache = lm.new_cache()
        lm(_ids((1, 5)), kv_cache=cache)
        lm(_ids((1, 3)), kv_cache=cache)
    with pytest.raises(ValueError, match="top_k must be None or an int in \\[1, vocab_size=7\\]"):
        lm.generate(prompt, 2, top_k=8)
    with pytest.raises(ValueError, match="temperature must be a number >= 0, got temperature=-1.0"):
        lm.generate(prompt, 2, temperature=-1.0)


def test_sampling_follows_softmax_and_top_k():
    logits = np.log(np.array([[0.5, 0.3, 0.15, 0.05]]))
    rows = np.repeat(logits, 20000, axis=0)  # (20000, 4): many independent draws at once
    freq = np.bincount(_pick_next(rows, 1.0, None), minlength=4) / len(rows)
    np.testing.assert_allclose(freq, [0.5, 0.3, 0.15, 0.05], atol=0.015)
    freq2 = np.bincount(_pick_next(rows, 1.0, 2), minlength=4) / len(rows)
    np.testing.assert_allclose(freq2, [0.625, 0.375, 0.0, 0.0], atol=0.015)  # renormalised over the top 2
    hot = np.bincount(_pick_next(rows, 0.25, None), minlength=4) / len(rows)
    assert hot[0] > 0.85  # low temperature sharpens towards the argmax
    np.testing.assert_array_equal(_pick_next(rows[:5], 0.0, None), 0)


def test_lm_input_errors():
    lm = TransformerLM(V, D, H, n_layers=1, max_len=5)
    with pytest.raises(ValueError, match=r"T=6 tokens, more than max_len=5"):
        lm(np.zeros((1, 6), dtype=int))
    with pytest.raises(ValueError, match=r"^idx holds id 7 at position \(0, 1\), outside \[0, 6\] \(vocab_size=7\)"):
        lm(np.array([[1, 7]]))
    with pytest.raises(ValueError, match=r"idx holds id -1"):
        lm(np.array([[-1, 2]]))
    with pytest.raises(TypeError, match="idx must be integer ids .*got dtype float"):
        lm(np.array([[1.0, 2.0]]))
    with pytest.raises(ValueError, match=r"\(B, T\), got shape \(3,\)"):
        lm(np.array([1, 2, 3]))
    with pytest.raises(ValueError, match="positional must be one of"):
        TransformerLM(V, D, H, 1, 5, positional="rotary")
    with pytest.raises(ValueError, match="d_model=8 is not divisible by n_heads=3"):
        TransformerLM(V, D, 3, 1, 5)


def test_dropout_only_in_training_mode():
    lm = TransformerLM(V, 16, H, n_layers=1, max_len=6, dropout=0.5)
    idx = _ids((2, 6), seed=14)
    assert (lm(idx).numpy() != lm(idx).numpy()).any()
    lm.eval()
    np.testing.assert_array_equal(lm(idx).numpy(), lm(idx).numpy())


def test_tiny_lm_learns_to_copy():
    """[a b c d a b c d]: the second half is predictable only by attending back 4 positions."""
    tinyattn.manual_seed(0)
    half, B = 4, 32
    lm = TransformerLM(8, 16, 2, n_layers=1, max_len=2 * half)
    opt = Adam(lm.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(120):
        a = rng.integers(0, 8, (B, half))
        seq = np.concatenate([a, a], axis=1)  # (B, 8)
        targets = seq[:, 1:].copy()
        targets[:, :half - 1] = -100  # the first half is random: only the copied half is scored
        loss = F.cross_entropy(lm(seq[:, :-1]).reshape(-1, 8), targets.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[0] > 1.8  # chance is ln 8 = 2.08
    assert np.mean(losses[-5:]) < 0.3
    a = rng.integers(0, 8, (64, half))
    out = lm.generate(a, half, temperature=0).numpy()  # (64, 8)
    assert (out[:, half:] == a).mean() > 0.95


# ---------------------------------------------------------------------------- seq2seq
def test_seq2seq_shapes_causality_and_source_padding():
    model = Seq2SeqTransformer(V, 9, D, H, n_layers=2, max_len=6, src_pad_id=0)
    src = np.array([[3, 1, 4, 0, 0], [2, 6, 5, 3, 1]])
    tgt = _ids((2, 5), vocab=9, seed=15)
    out = model(src, tgt).numpy()
    assert out.shape == (2, 5, 9)
    changed = tgt.copy()
    changed[:, 3:] = (changed[:, 3:] + 1) % 9
    np.testing.assert_array_equal(model(src, changed).numpy()[:, :3], out[:, :3])  # the decoder is causal
    # The encoder sees the whole source: changing its last real token changes every target position.
    src2 = src.copy()
    src2[1, 4] = 2
    assert (np.abs(model(src2, tgt).numpy()[1] - out[1]).max(axis=-1) > 0).all()
    # With src_lengths, whatever sits in the padding is ignored everywhere.
    lengths = np.array([3, 5])
    base = model(src, tgt, src_lengths=lengths).numpy()
    src3 = src.copy()
    src3[0, 3:] = [5, 6]
    np.testing.assert_array_equal(model(src3, tgt, src_lengths=lengths).numpy(), base)


def test_seq2seq_gradcheck_through_cross_attention_into_the_encoder(float64):
    model = Seq2SeqTransformer(5, 6, D, H, n_layers=1, max_len=4, d_ff=4)
    src, tgt_in, tgt_out = _ids((1, 3), 5, seed=16), _ids((1, 3), 6, seed=17), _ids((1, 3), 6, seed=18)
    # The parts the LM check does not cover: cross-attention, and the encoder reached only through it.
    params = [*model.decoder[0].cross.parameters(), *model.encoder[0].ffn.parameters(), model.src_emb.weight]
    assert gradcheck(lambda *ps: F.cross_entropy(model(src, tgt_in).reshape(-1, 6), tgt_out.reshape(-1)), params)


def test_seq2seq_generate_is_greedy_and_cache_agrees():
    model = Seq2SeqTransformer(V, 9, 16, H, n_layers=2, max_len=8)
    src = _ids((3, 5), seed=19)
    a = model.generate(src, bos_id=1, max_new_tokens=6)
    b = model.generate(src, bos_id=1, max_new_tokens=6, use_cache=False)
    assert a.shape == (3, 7)
    np.testing.assert_array_equal(a.numpy()[:, 0], 1)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    for t in range(1, 7):
        np.testing.assert_array_equal(a.numpy()[:, t], model(src, a.numpy()[:, :t]).numpy()[:, -1].argmax(-1))
    with pytest.raises(ValueError, match=r"max_new_tokens=9.*max_len=8"):
        model.generate(src, bos_id=1, max_new_tokens=9)
    with pytest.raises(ValueError, match=r"bos_id=9 is outside"):
        model.generate(src, bos_id=9, max_new_tokens=2)
    memory, src_mask = model.encode(src)
    with pytest.raises(ValueError, match=r"kv_cache has 1 entries but the decoder has n_layers=2"):
        model.decode(np.ones((3, 1), dtype=np.int64), memory, src_mask, kv_cache=[KVCache()])
