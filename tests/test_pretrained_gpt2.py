"""tinyattn.pretrained.load_gpt2's model on tiny GPT-2 checkpoints that the tests write (gpt2_tiny.py):
logits against a plain-NumPy GPT-2 in float32 and float64, generation with and without the KV cache,
attention weights, head_mask, the head tools, and `tinyattn gpt2`.
"""
from __future__ import annotations

import numpy as np
import pytest
from gpt2_tiny import IDS, random_weights, reference_gpt2, reference_greedy, tiny_config, write_checkpoint

import tinyattn
from tinyattn.cli import main as cli_main
from tinyattn.gradcheck import gradcheck
from tinyattn.pretrained import (attention_weights, induction_scores, load_gpt2, previous_token_scores,
                                 repeated_random_tokens)
from tinyattn.viz import head_view


@pytest.fixture
def ckpt(tmp_path):
    return write_checkpoint(tmp_path / "gpt2-tiny")


# ---------------------------------------------------------------------------- logits
@pytest.mark.parametrize("prefix", ["", "transformer."])
def test_float64_logits_match_the_reference(tmp_path, prefix):
    folder, cfg, w = write_checkpoint(tmp_path / "m", prefix=prefix)
    model, _ = load_gpt2(folder, dtype=np.float64)
    logits = model(IDS[None])
    assert logits.shape == (1, len(IDS), cfg["vocab_size"]) and logits.dtype == np.float64
    ref, _ = reference_gpt2(w, cfg, IDS)
    assert np.abs(ref).max() > 1.0  # the comparison is not between near-zero numbers
    np.testing.assert_allclose(logits.numpy()[0], ref, rtol=0, atol=1e-10)


def test_float32_logits_match_the_reference(ckpt):
    folder, cfg, w = ckpt
    model, _ = load_gpt2(folder)  # default dtype: float32
    assert model.tok_emb.weight.dtype == np.float32
    logits = model(IDS[None]).numpy()[0]
    assert logits.dtype == np.float32
    np.testing.assert_allclose(logits, reference_gpt2(w, cfg, IDS)[0], rtol=0, atol=1e-5)


def test_batch_rows_are_independent(ckpt):
    folder, cfg, w = ckpt
    model, _ = load_gpt2(folder, dtype="float64")
    other = IDS[::-1].copy()
    logits = model(np.stack([IDS, other])).numpy()
    np.testing.assert_allclose(logits[1], reference_gpt2(w, cfg, other)[0], rtol=0, atol=1e-10)


def test_config_eps_width_and_untied_head_are_used(tmp_path):
    cfg = tiny_config(layer_norm_epsilon=0.5, n_inner=20, tie_word_embeddings=False, n_layer=3)
    w = random_weights(cfg, seed=1)
    w["lm_head.weight"] = (0.4 * np.random.default_rng(2).standard_normal(w["wte.weight"].shape)).astype(np.float32)
    folder, _, _ = write_checkpoint(tmp_path / "m", cfg=cfg, weights=w)
    model, _ = load_gpt2(folder, dtype=np.float64)
    assert model.blocks[0].ffn[0].out_features == 20 and model.ln_f.eps == 0.5
    np.testing.assert_allclose(model(IDS[None]).numpy()[0], reference_gpt2(w, cfg, IDS)[0], rtol=0, atol=1e-10)


def test_the_head_is_tied_and_generation_leaves_the_seed_alone(ckpt):
    folder, cfg, _ = ckpt
    tinyattn.manual_seed(5)
    expected = tinyattn.rand(3).numpy()
    tinyattn.manual_seed(5)
    model, _ = load_gpt2(folder)
    assert np.array_equal(tinyattn.rand(3).numpy(), expected)  # building the model drew nothing from the stream
    assert model.head.weight is model.tok_emb.weight and model.head.bias is None
    assert not model.training


def test_linear_weights_keep_the_checkpoints_row_order(ckpt):
    """Each Linear's weight has nn.Linear's (out, in) shape and values, stored as Conv1D's (in, out) rows."""
    folder, cfg, w = ckpt
    model, _ = load_gpt2(folder, dtype=np.float64)
    block, C = model.blocks[1], cfg["n_embd"]
    conv1d = {block.attn.W_k: w["h.1.attn.c_attn.weight"][:, C:2 * C], block.attn.W_o: w["h.1.attn.c_proj.weight"],
              block.ffn[0]: w["h.1.mlp.c_fc.weight"], block.ffn[2]: w["h.1.mlp.c_proj.weight"]}
    for linear, stored in conv1d.items():
        weight = linear.weight
        assert weight.shape == (linear.out_features, linear.in_features) == stored.T.shape
        assert np.array_equal(weight.numpy(), stored.T)
        assert not weight.is_contiguous() and weight.numpy().T.flags.c_contiguous  # rows of (in, out) in memory
    head = model.head.weight  # the tied embedding matrix, stored the same way
    assert not head.is_contiguous() and np.array_equal(head.numpy(), w["wte.weight"])
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        block.ffn[0].weight.view(-1)  # as PyTorch for a transposed tensor; .contiguous() or reshape copies
    assert block.ffn[0].weight.contiguous().is_contiguous()


def test_fine_tuning_a_loaded_model_keeps_its_layout_and_gradients(ckpt, tmp_path):
    """Gradients reach the (in, out)-stored weights and the tied matrix; an optimizer step and a state-dict
    round trip through a file give the same model."""
    folder, cfg, w = ckpt
    model, _ = load_gpt2(folder, dtype=np.float64)
    block = model.blocks[0]
    checked = [block.attn.W_q.weight, block.ffn[2].weight, model.tok_emb.weight]
    assert gradcheck(lambda *ps: model(IDS[None, :6]), checked)
    model.train()
    opt = tinyattn.optim.SGD(model.parameters(), lr=0.1)
    loss = tinyattn.nn.functional.cross_entropy(model(IDS[None, :-1])[0], tinyattn.tensor(IDS[1:]))
    loss.backward()
    opt.step()
    assert not block.ffn[0].weight.is_contiguous()  # updated in place, still Conv1D's order
    assert not np.array_equal(block.ffn[0].weight.numpy(), w["h.0.mlp.c_fc.weight"].T)
    other, _ = load_gpt2(folder, dtype=np.float64)
    tinyattn.save(model.state_dict(), tmp_path / "tuned.pt")
    other.load_state_dict(tinyattn.load(tmp_path / "tuned.pt"))
    np.testing.assert_array_equal(other.eval()(IDS[None]).numpy(), model.eval()(IDS[None]).numpy())


@pytest.mark.parametrize("hf", [False, True])
def test_logits_to_keep_gives_the_last_positions(ckpt, hf):
    model, _ = load_gpt2(ckpt[0], dtype=np.float64)
    ids = IDS[None, :7]

    def logits(**kw):
        return model(input_ids=ids, **kw).logits if hf else model(ids, **kw)

    every = logits().numpy()
    for k in (1, 3, 7):
        kept = logits(logits_to_keep=k)
        assert kept.shape == (1, k, model.vocab_size)
        np.testing.assert_allclose(kept.numpy(), every[:, -k:], rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="logits_to_keep"):
        logits(logits_to_keep=-1)


# ---------------------------------------------------------------------------- generation, weights, head_mask
def test_greedy_generation_with_and_without_cache_matches_the_reference(ckpt):
    folder, cfg, w = ckpt
    model, _ = load_gpt2(folder, dtype=np.float64)
    prompt = IDS[:4]
    with_cache = model.generate(prompt[None], 10, temperature=0, use_cache=True).numpy()[0]
    without = model.generate(prompt[None], 10, temperature=0, use_cache=False).numpy()[0]
    assert with_cache.tolist() == without.tolist() == reference_greedy(w, cfg, prompt, 10)


def test_sampling_is_seeded_and_the_same_with_and_without_cache(ckpt):
    model, _ = load_gpt2(ckpt[0])
    tinyattn.manual_seed(3)
    a = model.generate(IDS[None, :3], 12, temperature=1.5, use_cache=True).numpy()
    tinyattn.manual_seed(3)
    b = model.generate(IDS[None, :3], 12, temperature=1.5, use_cache=False).numpy()
    assert a.tolist() == b.tolist()


def test_generation_past_the_positions_is_refused(ckpt):
    model, _ = load_gpt2(ckpt[0])
    with pytest.raises(ValueError, match="max_len=24"):
        model.generate(IDS[None, :4], 30, temperature=0)


def test_attention_weights_of_every_layer_and_head(ckpt):
    folder, cfg, w = ckpt
    model, _ = load_gpt2(folder, dtype=np.float64)
    logits, weights = model(IDS[None], return_weights=True)
    assert len(weights) == cfg["n_layer"] and weights[0].shape == (1, cfg["n_head"], len(IDS), len(IDS))
    ref_logits, ref_maps = reference_gpt2(w, cfg, IDS)
    np.testing.assert_allclose(np.stack([a.numpy()[0] for a in weights]), ref_maps, rtol=0, atol=1e-12)
    np.testing.assert_allclose(logits.numpy()[0], ref_logits, rtol=0, atol=1e-10)
    np.testing.assert_allclose(attention_weights(model, IDS), ref_maps, rtol=0, atol=1e-12)


def test_head_mask_switches_heads_off(ckpt):
    folder, cfg, w = ckpt
    model, _ = load_gpt2(folder, dtype=np.float64)
    mask = np.ones((cfg["n_layer"], cfg["n_head"]))
    mask[0, 1] = 0
    mask[1, 2] = 0
    got = model(IDS[None], head_mask=mask).numpy()[0]
    np.testing.assert_allclose(got, reference_gpt2(w, cfg, IDS, head_mask=mask)[0], rtol=0, atol=1e-10)
    assert np.abs(got - reference_gpt2(w, cfg, IDS)[0]).max() > 1e-3  # switching heads off changed the logits
    one_row = model(IDS[None], head_mask=mask[0]).numpy()[0]  # (n_heads,): the same mask in every layer
    np.testing.assert_allclose(one_row, reference_gpt2(w, cfg, IDS, head_mask=[mask[0]] * 2)[0], rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match=r"expected \(2, 3\) or \(3,\)"):
        model(IDS[None], head_mask=np.ones((3, 3)))


def test_head_view_of_a_sentence(ckpt):
    model, tok = load_gpt2(ckpt[0])
    ids = tok.encode("the cat sat")
    labels = tok.convert_ids_to_tokens(ids)
    assert labels == ["t", "he", "Ġcat", "Ġsat"]
    view = head_view(attention_weights(model, ids), labels)
    assert "Ġcat" in view.html and "layer 1" in view.html


def test_head_scores_find_planted_heads():
    L, H, T = 2, 2, 9
    w = np.full((L, H, T, T), 0.0)
    w[..., 0] = 1.0  # every head looks at the first token ...
    t = np.arange(1, T)
    w[0, 1, :, 0] = 0
    w[0, 1, t, t - 1] = 1.0  # ... except a previous-token head
    n, start = 4, 1
    q = np.arange(start + n, start + 2 * n)
    w[1, 0, q, 0] = 0
    w[1, 0, q, q - n + 1] = 1.0  # and an induction head on the second copy
    prev, ind = previous_token_scores(w), induction_scores(w, n, start=start)
    assert prev[0, 1] == 1.0 and prev[1, 1] == 1 / (T - 1)  # the sink head scores only its t=1 query
    assert ind[1, 0] == 1.0 and ind[0, 0] == 0.0
    seq = repeated_random_tokens(50, n, bos=7)
    assert seq[0] == 7 and np.array_equal(seq[1:1 + n], seq[1 + n:]) and 7 not in seq[1:] and len(set(seq[1:])) == n


def test_gradients_through_the_tied_head_and_a_float_head_mask(float64):
    """The tied matrix gets the gradient of both its uses (lookup and head); a float head_mask gets its own."""
    lm = tinyattn.nn.TransformerLM(9, 8, 2, 2, 6, positional="learned", gelu="tanh", layer_norm_eps=1e-3,
                                   tie_weights=True)
    assert lm.head.weight is lm.tok_emb.weight
    ids = np.array([[1, 4, 4, 8, 0], [2, 3, 7, 7, 5]])
    hm = tinyattn.tensor(np.array([[1.0, 0.5], [0.25, 1.0]]), requires_grad=True)
    params = list(lm.parameters())
    assert sum(p is lm.tok_emb.weight for p in params) == 1  # one Parameter, listed once for the optimizer
    assert gradcheck(lambda *ps: lm(ids, head_mask=hm), params + [hm])


# ---------------------------------------------------------------------------- the command line
def test_cli_gpt2(ckpt, tmp_path, capsys):
    out = tmp_path / "out"
    assert cli_main(["gpt2", ckpt[0], "--text", " the cat sat", "--out", str(out), "--new-tokens", "5",
                     "--repeat", "8"]) == 0
    text = capsys.readouterr().out
    assert "3 tokens ('Ġ' stands for a space): 'Ġthe' 'Ġcat' 'Ġsat'" in text
    assert "top 5 next tokens:" in text and "greedy continuation (5 tokens)" in text
    assert "previous-token heads, on the text" in text and "induction heads, on 8 random tokens seen twice" in text
    assert (out / "head_view.html").stat().st_size > 1000 and (out / "heads.png").stat().st_size > 1000


def test_cli_gpt2_bad_folder_is_one_line(tmp_path, capsys):
    assert cli_main(["gpt2", str(tmp_path), "--text", "hi"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tinyattn: error:") and "has no config.json" in err and err.count("\n") == 1
