"""tinyattn.pretrained.load_gpt2 on tiny GPT-2 checkpoints that the tests write themselves.

Each checkpoint is a folder as Hugging Face saves one: config.json, model.safetensors with random weights
under GPT-2's key names and Conv1D (in, out) layout, and a byte-level BPE vocabulary (vocab.json +
merges.txt, or tokenizer.json). The logits are checked against a plain-NumPy GPT-2 forward written
here from the published architecture (Radford et al. 2019: pre-LayerNorm blocks, learned positions,
tanh GELU, the head tied to the token embedding), in float64 throughout.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import safetensors.numpy
import tokenizers

import tinyattn
from tinyattn.cli import main as cli_main
from tinyattn.gradcheck import gradcheck
from tinyattn.pretrained import (attention_weights, induction_scores, load_gpt2, previous_token_scores,
                                 repeated_random_tokens)
from tinyattn.viz import head_view


# ---------------------------------------------------------------------------- a tiny byte-level BPE
def byte_symbols() -> dict[int, str]:
    """GPT-2's byte -> printable character table: printable Latin-1 bytes stand for themselves,
    the other 68 (controls, space, ...) take the characters from U+0100 on, in byte order."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("Ġ", "c"), ("a", "t"), ("Ġc", "at"), ("i", "n"), ("in", "g"),
          ("Ġ", "s"), ("Ġs", "at")]


def bpe_vocab() -> dict[str, int]:
    vocab = {sym: i for i, sym in enumerate(byte_symbols().values())}  # ids 0..255: single bytes
    for a, b in MERGES:
        vocab[a + b] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    return vocab


VOCAB = bpe_vocab()


def write_bpe_files(folder) -> None:
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(VOCAB, f, ensure_ascii=False)
    with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in MERGES))


# ---------------------------------------------------------------------------- a tiny random GPT-2
def tiny_config(**changes) -> dict:
    cfg = {"model_type": "gpt2", "vocab_size": len(VOCAB), "n_positions": 24, "n_embd": 12, "n_head": 3,
           "n_layer": 2, "n_inner": None, "layer_norm_epsilon": 1e-3, "activation_function": "gelu_new",
           "tie_word_embeddings": True}
    cfg.update(changes)
    return cfg


def random_weights(cfg: dict, seed: int = 0) -> dict[str, np.ndarray]:
    """Every GPT-2 weight under Hugging Face's name, Conv1D matrices as (in, out), float32."""
    rng = np.random.default_rng(seed)
    V, P, C = cfg["vocab_size"], cfg["n_positions"], cfg["n_embd"]
    F = cfg["n_inner"] or 4 * C

    def normal(*shape, scale=0.3):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    w = {"wte.weight": normal(V, C, scale=0.5), "wpe.weight": normal(P, C, scale=0.2)}
    for i in range(cfg["n_layer"]):
        p = f"h.{i}."
        w.update({p + "ln_1.weight": 1 + normal(C, scale=0.1), p + "ln_1.bias": normal(C, scale=0.1),
                  p + "attn.c_attn.weight": normal(C, 3 * C), p + "attn.c_attn.bias": normal(3 * C, scale=0.1),
                  p + "attn.c_proj.weight": normal(C, C), p + "attn.c_proj.bias": normal(C, scale=0.1),
                  p + "ln_2.weight": 1 + normal(C, scale=0.1), p + "ln_2.bias": normal(C, scale=0.1),
                  p + "mlp.c_fc.weight": normal(C, F), p + "mlp.c_fc.bias": normal(F, scale=0.1),
                  p + "mlp.c_proj.weight": normal(F, C), p + "mlp.c_proj.bias": normal(C, scale=0.1)})
    w.update({"ln_f.weight": 1 + normal(C, scale=0.1), "ln_f.bias": normal(C, scale=0.1)})
    return w


def write_checkpoint(folder, cfg=None, weights=None, prefix: str = "", tokenizer: str = "bpe"):
    """A Hugging Face-style GPT-2 folder; returns (folder, config, weights)."""
    os.makedirs(folder, exist_ok=True)
    cfg = tiny_config() if cfg is None else cfg
    weights = random_weights(cfg) if weights is None else weights
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f)
    safetensors.numpy.save_file({prefix + k: v for k, v in weights.items()}, os.path.join(folder, "model.safetensors"))
    if tokenizer == "bpe":
        write_bpe_files(folder)
    elif tokenizer == "json":  # the one-file format, as Hugging Face's tokenizers library writes it
        tok = tokenizers.Tokenizer(tokenizers.models.BPE(VOCAB, MERGES))
        tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = tokenizers.decoders.ByteLevel()
        tok.add_special_tokens([tokenizers.AddedToken("<|endoftext|>", special=True)])
        tok.save(os.path.join(folder, "tokenizer.json"))
    return str(folder), cfg, weights


@pytest.fixture
def ckpt(tmp_path):
    return write_checkpoint(tmp_path / "gpt2-tiny")


# ---------------------------------------------------------------------------- the reference forward
def _layer_norm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def reference_gpt2(weights, cfg, ids, head_mask=None):
    """GPT-2 in float64 NumPy, one sequence: ids (T,) -> (logits (T, V), attention (L, H, T, T))."""
    w = {k: v.astype(np.float64) for k, v in weights.items()}
    T, C, H, eps = len(ids), cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"]
    d = C // H
    x = w["wte.weight"][ids] + w["wpe.weight"][:T]  # (T, C)
    future = np.triu(np.ones((T, T), dtype=bool), k=1)  # key j > query i
    maps = []
    for i in range(cfg["n_layer"]):
        p = f"h.{i}."
        a = _layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]  # (T, 3C)
        q, k, v = (qkv[:, j * C:(j + 1) * C].reshape(T, H, d).transpose(1, 0, 2) for j in range(3))  # (H, T, d)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(d)  # (H, T, T)
        s[:, future] = -np.inf
        att = np.exp(s - s.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        maps.append(att)
        o = att @ v  # (H, T, d)
        if head_mask is not None:
            o = o * np.asarray(head_mask, dtype=np.float64)[i][:, None, None]
        o = o.transpose(1, 0, 2).reshape(T, C)
        x = x + o @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        m = _layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        x = x + _gelu_tanh(m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]) @ w[p + "mlp.c_proj.weight"] \
            + w[p + "mlp.c_proj.bias"]
    x = _layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], eps)
    head = w["wte.weight"] if cfg["tie_word_embeddings"] else w["lm_head.weight"]  # (V, C)
    return x @ head.T, np.stack(maps)


def reference_greedy(weights, cfg, ids, n):
    ids = list(ids)
    for _ in range(n):
        ids.append(int(reference_gpt2(weights, cfg, np.array(ids))[0][-1].argmax()))
    return ids


IDS = np.array([3, 70, 200, 5, 261, 14, 99, 0, 255, 40, 7])


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


# ---------------------------------------------------------------------------- tokenizer
@pytest.mark.parametrize("kind", ["bpe", "json"])
def test_byte_level_cases(tmp_path, kind):
    folder, _, _ = write_checkpoint(tmp_path / kind, tokenizer=kind)
    _, tok = load_gpt2(folder)
    sym = tok.convert_ids_to_tokens
    # A space belongs to the word after it: "the" at the start is spelled differently from " the".
    assert sym(tok.encode(" the cat")) == ["Ġthe", "Ġcat"]
    assert sym(tok.encode("the")) == ["t", "he"]
    assert tok.encode(" the") == [VOCAB["Ġthe"]]
    # Runs of spaces: all but the last stand alone, the last joins the next word.
    assert sym(tok.encode("  the")) == ["Ġ", "Ġthe"]
    assert sym(tok.encode("sing ")) == ["s", "ing", "Ġ"]
    # A newline is byte 10, written with a stand-in character; é is two UTF-8 bytes, so two tokens.
    assert sym(tok.encode("a\nb")) == ["a", "Ċ", "b"]
    assert sym(tok.encode("é")) == ["Ã", "©"]
    assert tok.decode(tok.encode("é")[:1]) == "\ufffd"  # half a character decodes to U+FFFD
    assert tok.encode("<|endoftext|>") == [VOCAB["<|endoftext|>"]] and tok.eos_token_id == VOCAB["<|endoftext|>"]


@pytest.mark.parametrize("text", ["", "the cat sat", "  two  spaces ", "tabs\tand\nnewlines\r\n",
                                  "Unicode: é ß 漢字 🙂", "it's 3.14159, isn't it?", "<|endoftext|>the end"])
def test_round_trip(ckpt, text):
    _, tok = load_gpt2(ckpt[0])
    ids = tok.encode(text)
    assert all(isinstance(i, int) for i in ids)
    assert tok.decode(ids) == text
    assert tok.decode(np.array(ids, dtype=np.int64)) == text


def test_tokenizer_input_errors(ckpt):
    _, tok = load_gpt2(ckpt[0])
    with pytest.raises(TypeError, match="expects a str"):
        tok.encode([1, 2])
    with pytest.raises(ValueError, match=rf"token id {len(VOCAB)} is outside the vocabulary \[0, {len(VOCAB) - 1}\]"):
        tok.decode([1, len(VOCAB)])
    with pytest.raises(TypeError, match="1-D sequence of integer"):
        tok.decode([1.5])


# ---------------------------------------------------------------------------- malformed folders
def _rewrite_config(folder, **changes):
    path = os.path.join(folder, "config.json")
    with open(path) as f:
        cfg = json.load(f)
    for k, v in changes.items():
        if v is _DROP:
            del cfg[k]
        else:
            cfg[k] = v
    with open(path, "w") as f:
        json.dump(cfg, f)


_DROP = object()


def test_not_a_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        load_gpt2(tmp_path / "nowhere")


@pytest.mark.parametrize("name, message", [
    ("config.json", "has no config.json"),
    ("model.safetensors", "has no model.safetensors"),
    ("vocab.json", r"missing: vocab.json"),
    ("merges.txt", r"missing: merges.txt"),
])
def test_missing_file(ckpt, name, message):
    os.remove(os.path.join(ckpt[0], name))
    with pytest.raises(FileNotFoundError, match=message):
        load_gpt2(ckpt[0])


def test_pytorch_bin_instead_of_safetensors(ckpt):
    os.rename(os.path.join(ckpt[0], "model.safetensors"), os.path.join(ckpt[0], "pytorch_model.bin"))
    with pytest.raises(FileNotFoundError, match="fetch the .safetensors file"):
        load_gpt2(ckpt[0])


@pytest.mark.parametrize("key", ["vocab_size", "n_positions", "n_embd", "n_layer", "n_head"])
def test_missing_config_key(ckpt, key):
    _rewrite_config(ckpt[0], **{key: _DROP})
    with pytest.raises(ValueError, match=f"config.json has no '{key}'"):
        load_gpt2(ckpt[0])


@pytest.mark.parametrize("changes, message", [
    ({"n_embd": 0}, "n_embd must be a positive int, got 0"),
    ({"n_head": "3"}, "n_head must be a positive int, got '3'"),
    ({"n_head": 5}, "n_embd=12 is not divisible by n_head=5"),
    ({"model_type": "bert"}, "model_type is 'bert'"),
    ({"activation_function": "relu"}, "activation_function='relu' is not supported"),
    ({"scale_attn_by_inverse_layer_idx": True}, "scale_attn_by_inverse_layer_idx=True is not supported"),
    ({"vocab_size": 200}, "the tokenizer has 267 tokens but config.json has vocab_size=200"),
])
def test_bad_config_value(ckpt, changes, message):
    _rewrite_config(ckpt[0], **changes)
    with pytest.raises(ValueError, match=message):
        load_gpt2(ckpt[0])


def test_config_that_is_not_json(ckpt):
    with open(os.path.join(ckpt[0], "config.json"), "w") as f:
        f.write("{vocab_size: 12")
    with pytest.raises(ValueError, match="config.json is not valid JSON"):
        load_gpt2(ckpt[0])


def _rewrite_weights(folder, weights):
    safetensors.numpy.save_file(weights, os.path.join(folder, "model.safetensors"))


def test_missing_weight(ckpt):
    folder, _, w = ckpt
    del w["h.1.mlp.c_fc.bias"]
    _rewrite_weights(folder, w)
    with pytest.raises(ValueError, match=r"missing weights \['h.1.mlp.c_fc.bias'\]"):
        load_gpt2(folder)


def test_weight_with_the_wrong_shape(ckpt):
    folder, _, w = ckpt
    w["h.0.attn.c_attn.weight"] = np.ascontiguousarray(w["h.0.attn.c_attn.weight"].T)  # (3C, C): nn.Linear's layout
    _rewrite_weights(folder, w)
    with pytest.raises(ValueError, match=r"'h.0.attn.c_attn.weight' has shape \(36, 12\) .* needs \(12, 36\)"):
        load_gpt2(folder)


def test_more_layers_in_the_file_than_in_the_config(ckpt):
    folder, _, w = ckpt
    _rewrite_config(folder, n_layer=1)
    with pytest.raises(ValueError, match=r"does not have: \['h.1."):
        load_gpt2(folder)


def test_untied_head_must_be_in_the_file(ckpt):
    _rewrite_config(ckpt[0], tie_word_embeddings=False)
    with pytest.raises(ValueError, match=r"missing weights \['lm_head.weight'\]"):
        load_gpt2(ckpt[0])


def test_integer_weights_are_refused(ckpt):
    folder, _, w = ckpt
    w["ln_f.bias"] = np.zeros(12, dtype=np.int32)
    _rewrite_weights(folder, w)
    with pytest.raises(ValueError, match="'ln_f.bias' has dtype I32; expected floats"):
        load_gpt2(folder)


def test_corrupt_safetensors(ckpt):
    with open(os.path.join(ckpt[0], "model.safetensors"), "wb") as f:
        f.write(b"\x00" * 5)
    with pytest.raises(ValueError, match="could not be read as safetensors"):
        load_gpt2(ckpt[0])


def test_merge_of_unknown_symbols(ckpt):
    with open(os.path.join(ckpt[0], "merges.txt"), "a", encoding="utf-8") as f:
        f.write("Ġc ing\n")
    with pytest.raises(ValueError, match=r"merges.txt line 12: merge 'Ġc ing' uses 'Ġcing'"):
        load_gpt2(ckpt[0])


def test_bfloat16_weights_are_refused_by_name(ckpt):
    """BF16 has no NumPy dtype; the file is written by hand (8-byte header length, JSON header, raw bytes)."""
    folder, _, w = ckpt
    header, blobs, at = {}, [], 0
    for k, v in w.items():
        raw = v.tobytes() if k != "ln_f.bias" else (v.view(np.uint32) >> 16).astype(np.uint16).tobytes()
        header[k] = {"dtype": "F32" if k != "ln_f.bias" else "BF16", "shape": list(v.shape),
                     "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    text = json.dumps(header).encode()
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))
    with pytest.raises(ValueError, match="'ln_f.bias' has dtype BF16; expected floats NumPy can read"):
        load_gpt2(folder)


@pytest.mark.parametrize("name, content, message", [
    ("vocab.json", "{not json", "vocab.json is not valid JSON"),
    ("vocab.json", '{"a": "0"}', "vocab.json must map each token"),
    ("merges.txt", "#version: 0.2\nĠ t h\n", "merges.txt line 2: a merge is two symbols separated by one space"),
])
def test_malformed_vocabulary(ckpt, name, content, message):
    with open(os.path.join(ckpt[0], name), "w", encoding="utf-8") as f:
        f.write(content)
    with pytest.raises(ValueError, match=message):
        load_gpt2(ckpt[0])


def test_malformed_tokenizer_json(tmp_path):
    folder, _, _ = write_checkpoint(tmp_path / "m", tokenizer="json")
    with open(os.path.join(folder, "tokenizer.json"), "w") as f:
        f.write('{"model": 3}')
    with pytest.raises(ValueError, match="tokenizer.json could not be read as a Hugging Face tokenizer"):
        load_gpt2(folder)


def test_config_that_is_not_an_object(ckpt):
    with open(os.path.join(ckpt[0], "config.json"), "w") as f:
        f.write("[1, 2]")
    with pytest.raises(ValueError, match="must hold a JSON object, got list"):
        load_gpt2(ckpt[0])


def test_bad_dtype(ckpt):
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        load_gpt2(ckpt[0], dtype=np.int64)


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
