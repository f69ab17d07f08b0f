"""tinyattn.lens without PyTorch: hook names and shapes, caches, hooks, cleanup, patching and bwd hooks.

Expected values come from the models' own independent paths (head_mask, plain forwards, finite
differences); the comparison with TransformerLens itself is tests/oracle/test_lens_gpt2.py.
"""
import numpy as np
import pytest

import tinyattn
from tinyattn.lens import HookPoint, get_act_name, ablate_heads, patch_head_out, patch_resid_pre
from tinyattn.nn import TransformerLM
from tinyattn.pretrained import load_bert, load_gpt2

import bert_tiny
import gpt2_tiny

PER_LAYER = {"hook_resid_pre": "BTC", "ln1.hook_scale": "BT1", "ln1.hook_normalized": "BTC", "attn.hook_q": "BTHD",
             "attn.hook_k": "BTHD", "attn.hook_v": "BTHD", "attn.hook_z": "BTHD", "attn.hook_attn_scores": "BHTT",
             "attn.hook_pattern": "BHTT", "hook_attn_out": "BTC", "hook_resid_mid": "BTC", "ln2.hook_scale": "BT1",
             "ln2.hook_normalized": "BTC", "mlp.hook_pre": "BTF", "mlp.hook_post": "BTF", "hook_mlp_out": "BTC",
             "hook_resid_post": "BTC"}
TOP = {"hook_embed": "BTC", "hook_pos_embed": "BTC", "ln_final.hook_scale": "BT1", "ln_final.hook_normalized": "BTC"}


def _lm(**kw):
    tinyattn.manual_seed(0)
    return TransformerLM(30, 16, 4, 2, 12, positional="learned", **kw).to(tinyattn.float64).eval()


IDS = np.array([[3, 7, 1, 9, 3, 7, 2], [0, 5, 5, 8, 1, 2, 4]])


def _shape(code, B, T, C, H, F):
    sizes = {"B": B, "T": T, "C": C, "H": H, "D": C // H, "F": F, "1": 1}
    return tuple(sizes[c] for c in code)


def test_transformer_lm_has_every_name_with_transformerlens_shapes():
    model = _lm()
    logits, cache = model.run_with_cache(IDS)
    want = dict(TOP)
    want.update({f"blocks.{i}.{n}": s for i in range(2) for n, s in PER_LAYER.items()})
    assert set(cache.keys()) == set(want)
    for name, code in want.items():
        assert tuple(cache[name].shape) == _shape(code, 2, 7, 16, 4, 64), name
    np.testing.assert_allclose(logits.numpy(), model(IDS).numpy(), rtol=0, atol=1e-12)
    # the pieces add up as TransformerLens defines them
    c = {k: v.numpy() for k, v in cache.items()}
    np.testing.assert_allclose(c["blocks.0.hook_resid_pre"], c["hook_embed"] + c["hook_pos_embed"], atol=1e-12)
    np.testing.assert_allclose(c["blocks.1.hook_resid_mid"], c["blocks.1.hook_resid_pre"] + c["blocks.1.hook_attn_out"],
                               atol=1e-12)
    np.testing.assert_allclose(c["blocks.0.hook_resid_post"], c["blocks.1.hook_resid_pre"], atol=0)
    np.testing.assert_allclose(c["blocks.0.attn.hook_pattern"].sum(-1), 1.0, atol=1e-12)
    scores = c["blocks.0.attn.hook_attn_scores"]
    assert np.isneginf(scores[:, :, np.triu_indices(7, 1)[0], np.triu_indices(7, 1)[1]]).all()  # causal: -inf
    assert np.isfinite(scores[:, :, np.tril_indices(7)[0], np.tril_indices(7)[1]]).all()
    x = c["blocks.0.hook_resid_mid"]
    xc = x - x.mean(-1, keepdims=True)
    np.testing.assert_allclose(c["blocks.0.ln2.hook_scale"], np.sqrt((xc ** 2).mean(-1, keepdims=True) + 1e-5),
                               rtol=1e-12)
    np.testing.assert_allclose(c["blocks.0.ln2.hook_normalized"], xc / c["blocks.0.ln2.hook_scale"], atol=1e-12)


def test_no_hook_leaves_the_output_bit_identical_and_costs_no_second_path():
    model = _lm()
    before = model(IDS).numpy()
    model.run_with_cache(IDS)  # adds and removes a hook everywhere
    assert not any(hp.active for hp in model.hook_dict.values())
    assert np.array_equal(model(IDS).numpy(), before)


def test_cache_short_forms_and_filters():
    model = _lm()
    _, cache = model.run_with_cache(IDS)
    assert cache["pattern", 0] is cache["blocks.0.attn.hook_pattern"]
    assert cache["pattern", -1] is cache["blocks.1.attn.hook_pattern"]
    assert cache["resid_pre", 1] is cache["blocks.1.hook_resid_pre"]
    assert cache["scale", 0, "ln1"] is cache["blocks.0.ln1.hook_scale"]
    assert cache["normalized"] is cache["ln_final.hook_normalized"]
    assert cache["q1"] is cache["blocks.1.attn.hook_q"]
    assert ("z", 1) in cache and ("z", 5) not in cache
    assert cache.stack("pattern").shape == (2, 2, 4, 7, 7)
    with pytest.raises(KeyError, match="blocks.5.attn.hook_z"):
        cache["z", 5]
    _, small = model.run_with_cache(IDS, names_filter=lambda n: n.endswith("hook_pattern"))
    assert list(small.keys()) == ["blocks.0.attn.hook_pattern", "blocks.1.attn.hook_pattern"]
    _, one = model.run_with_cache(IDS[:1], names_filter="hook_embed", remove_batch_dim=True)
    assert tuple(one["hook_embed"].shape) == (7, 16)
    assert get_act_name("attn", 3) == "blocks.3.attn.hook_pattern"


def test_a_returned_activation_replaces_it_zeroing_hook_z_is_head_mask():
    model = _lm()

    def zero_head(z, hook):
        assert hook.name == "blocks.1.attn.hook_z" and isinstance(hook, HookPoint)
        arr = z.numpy().copy()
        arr[:, :, 2] = 0.0
        return tinyattn.tensor(arr)

    got = model.run_with_hooks(IDS, fwd_hooks=[("blocks.1.attn.hook_z", zero_head)]).numpy()
    mask = np.ones((2, 4))
    mask[1, 2] = 0.0
    want = model(IDS, head_mask=mask).numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert np.abs(got - model(IDS).numpy()).max() > 1e-3


def test_hooks_on_the_pattern_change_what_the_values_are_mixed_with():
    model = _lm()

    def uniform(p, hook):  # every query attends its visible keys equally
        T = p.shape[-1]
        causal = np.tril(np.ones((T, T)))
        return tinyattn.tensor(np.broadcast_to(causal / causal.sum(-1, keepdims=True), p.shape).copy())

    _, cache = model.run_with_cache(IDS)
    out, hooked = model.run_with_cache(IDS, names_filter=["blocks.0.attn.hook_pattern", "blocks.0.attn.hook_z"])
    with model.hooks(fwd_hooks=[("pattern0", uniform)]):
        _, after = model.run_with_cache(IDS, names_filter="blocks.0.attn.hook_z")
    v = cache["v", 0].numpy()  # (B, T, H, D): z at query t is the mean of v over keys 0..t
    want = np.cumsum(v, axis=1) / np.arange(1, 8)[None, :, None, None]
    np.testing.assert_allclose(after["z", 0].numpy(), want, atol=1e-12)


def test_the_hooks_context_removes_its_hooks_even_after_an_exception():
    model = _lm()
    seen = []
    other = model.hook_dict["blocks.0.hook_resid_pre"].add_hook(lambda a, hook: None)  # someone else's
    with pytest.raises(RuntimeError, match="boom"):
        with model.hooks(fwd_hooks=[("blocks.0.hook_resid_pre", lambda a, hook: seen.append(1))]):
            model(IDS)
            raise RuntimeError("boom")
    assert seen == [1]
    model(IDS)
    assert seen == [1]  # removed
    assert model.hook_dict["blocks.0.hook_resid_pre"].active  # the other hook stayed
    other.remove()

    def bad(a, hook):
        raise ValueError("inside the forward")

    with pytest.raises(ValueError, match="inside the forward"):
        model.run_with_hooks(IDS, fwd_hooks=[("hook_embed", bad)])
    assert not any(hp.active for hp in model.hook_dict.values())
    with pytest.raises(KeyError, match="hook_patern"):
        model.run_with_hooks(IDS, fwd_hooks=[("blocks.0.attn.hook_patern", bad)])
    assert not any(hp.active for hp in model.hook_dict.values())


def test_bwd_hooks_see_the_gradient_that_finite_differences_give():
    model = _lm()
    R = np.random.default_rng(1).standard_normal((2, 7, 30))
    grads = {}

    def keep(g, hook):
        grads[hook.name] = g.numpy().copy()

    def loss(shift=None):
        hooks = [] if shift is None else [("blocks.1.hook_resid_mid", lambda a, hook: a + tinyattn.tensor(shift))]
        return float((model.run_with_hooks(IDS, fwd_hooks=hooks).numpy() * R).sum())

    out = model.run_with_hooks(IDS, bwd_hooks=[("blocks.1.hook_resid_mid", keep)])
    (out * tinyattn.tensor(R)).sum().backward()
    g = grads["blocks.1.hook_resid_mid"]
    assert g.shape == (2, 7, 16)
    eps = 1e-6
    for b, t, c in [(0, 0, 0), (1, 3, 5), (0, 6, 15), (1, 6, 7)]:
        e = np.zeros((2, 7, 16))
        e[b, t, c] = eps
        fd = (loss(e) - loss(-e)) / (2 * eps)
        assert abs(fd - g[b, t, c]) < 1e-6 * max(1.0, abs(fd))


def _logprob(answer):
    def metric(logits):
        z = logits.numpy()[0, -1].astype(np.float64)
        return float(z[answer] - z.max() - np.log(np.exp(z - z.max()).sum()))
    return metric


def test_patching_the_embedding_of_the_one_changed_position_restores_the_clean_run():
    model = _lm()
    clean, corrupted = np.array([[3, 7, 1, 9, 3, 7]]), np.array([[3, 7, 1, 9, 11, 7]])
    metric = _logprob(1)
    clean_logits, cache = model.run_with_cache(clean)
    grid = patch_resid_pre(model, corrupted, cache, metric)
    assert grid.shape == (2, 6) and grid.dtype == np.float64
    corrupted_value, clean_value = metric(model(corrupted)), metric(clean_logits)
    assert abs(clean_value - corrupted_value) > 1e-3
    # layer 0's residual stream is the embedding: only position 4 differs, and it carries all of it
    np.testing.assert_allclose(grid[0, 4], clean_value, atol=1e-12)
    np.testing.assert_allclose(np.delete(grid[0], 4), corrupted_value, atol=1e-12)
    # causal: before the changed position the two runs' residual streams are equal, so patching changes nothing
    np.testing.assert_allclose(grid[1, :4], corrupted_value, atol=1e-12)
    assert abs(grid[1, 4] - corrupted_value) > 1e-4  # while the changed position's layer-1 stream matters


def test_head_patching_and_ablation_agree_with_head_masks():
    model = _lm()
    clean, corrupted = np.array([[3, 7, 1, 9, 3, 7]]), np.array([[3, 7, 1, 9, 11, 7]])
    metric = _logprob(1)
    _, cache = model.run_with_cache(clean)
    grid = patch_head_out(model, corrupted, cache, metric)
    assert grid.shape == (2, 4)
    # patching one head of the last layer: by hand, the clean z of that head in the corrupted run
    for h in range(4):
        def hand(z, hook, h=h):
            arr = z.numpy().copy()
            arr[:, :, h] = cache["z", 1].numpy()[:, :, h]
            return tinyattn.tensor(arr)
        np.testing.assert_allclose(grid[1, h], metric(model.run_with_hooks(corrupted, fwd_hooks=[("z1", hand)])),
                                   atol=1e-12)
    zero = ablate_heads(model, clean, metric, how="zero")
    for layer in range(2):
        for h in range(4):
            mask = np.ones((2, 4))
            mask[layer, h] = 0
            np.testing.assert_allclose(zero[layer, h], metric(model(clean, head_mask=mask)), atol=1e-12)
    batch = np.array([[3, 7, 1, 9, 3, 7], [3, 7, 1, 9, 11, 7]])
    mean = ablate_heads(model, clean, metric, how="mean", reference_tokens=batch)
    assert mean.shape == (2, 4)
    _, ref_cache = model.run_with_cache(batch)
    for layer in range(2):  # by hand: head h's z is the batch's mean of z[:, :, h], position by position
        avg = ref_cache["z", layer].numpy().mean(axis=0)  # (T, H, d_head)
        for h in range(4):
            def by_mean(z, hook, h=h):
                arr = z.numpy().copy()
                arr[:, :, h] = avg[:, h]
                return tinyattn.tensor(arr)
            want = metric(model.run_with_hooks(clean, fwd_hooks=[(f"blocks.{layer}.attn.hook_z", by_mean)]))
            np.testing.assert_allclose(mean[layer, h], want, atol=1e-12)
    assert np.abs(mean - metric(model(clean))).max() > 1e-4  # the means differ from the clean run's own z
    # the mean of a batch of one is that input's own z: ablating with it changes nothing
    np.testing.assert_allclose(ablate_heads(model, clean, metric, how="mean"), metric(model(clean)), atol=1e-12)
    with pytest.raises(ValueError, match="how must be"):
        ablate_heads(model, clean, metric, how="resample")


def test_gpt2_and_bert_checkpoints_have_the_names(tmp_path):
    folder, cfg, _ = gpt2_tiny.write_checkpoint(tmp_path / "gpt2")
    gpt2, _ = load_gpt2(str(folder), dtype=tinyattn.float64)
    ids = np.array([[1, 2, 3, 4, 5]])
    logits, cache = gpt2.run_with_cache(ids)
    C, H = cfg["n_embd"], cfg["n_head"]
    for i in range(cfg["n_layer"]):
        for n, code in PER_LAYER.items():
            assert tuple(cache[f"blocks.{i}.{n}"].shape) == _shape(code, 1, 5, C, H, 4 * C)
    np.testing.assert_allclose(logits.numpy(), gpt2(ids).numpy(), atol=1e-12)
    hf = gpt2(input_ids=ids)  # Hugging Face's calling style goes through the same hook points
    _, hf_cache = gpt2.run_with_cache(input_ids=ids, names_filter="blocks.0.attn.hook_pattern")
    assert tuple(hf_cache["pattern", 0].shape) == (1, H, 5, 5) and hf.logits.shape == (1, 5, cfg["vocab_size"])

    folder, bcfg, _ = bert_tiny.write_checkpoint(tmp_path / "bert")
    bert, _ = load_bert(str(folder), dtype=tinyattn.float64)
    out, bcache = bert.run_with_cache(input_ids=ids)
    C, H, F = bcfg["hidden_size"], bcfg["num_attention_heads"], bcfg["intermediate_size"]
    for i in range(bcfg["num_hidden_layers"]):
        for n, code in PER_LAYER.items():
            assert tuple(bcache[f"blocks.{i}.{n}"].shape) == _shape(code, 1, 5, C, H, F), n
        assert np.isfinite(bcache[f"blocks.{i}.attn.hook_attn_scores"].numpy()).all()  # an encoder masks nothing
    for n in ("hook_embed", "hook_pos_embed", "hook_token_type_embed", "embed_ln.hook_scale", "ln_final.hook_scale"):
        assert n in bcache
    np.testing.assert_allclose(bcache["blocks.1.hook_resid_pre"].numpy(), out.hidden_states[1].numpy()
                               if out.hidden_states else bert(input_ids=ids, output_hidden_states=True)
                               .hidden_states[1].numpy(), atol=1e-12)
