"""load_bert's BERT and DistilBERT on tiny checkpoints the tests write (bert_tiny.py), against a plain-NumPy
BERT; Hugging Face's calling convention for all three families (the texts' own snippet, verbatim); model
names found in the local Hugging Face cache; fill-mask, minimal pairs and `tinyattn bert`.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from bert_tiny import reference_bert, tiny_config, write_checkpoint
from gpt2_tiny import tiny_config as gpt2_config
from gpt2_tiny import write_checkpoint as write_gpt2

import tinyattn
from tinyattn.cli import main as cli_main
from tinyattn.pretrained import AutoModel, AutoTokenizer, fill_mask, load_bert, load_gpt2, minimal_pairs
from tinyattn.pretrained.hub import download_command

TEXTS = ["The lawyer asked the doctor, if she could help!", "it is a cat", "She sat."]
PAIRS = ["the case", "on the mat", "unaffable playing cats"]


def _check_against_reference(model, tok, cfg, w, texts, pairs, atol):
    inputs = tok(texts, pairs, return_tensors="pt", padding=True)
    out = model(**inputs, output_attentions=True)
    mask = inputs["attention_mask"].numpy()
    assert (mask == 0).any()  # the batch really is padded
    B, T = mask.shape
    L = len(out.attentions)
    assert out.last_hidden_state.shape == (B, T, model.embeddings.word.weight.shape[1])
    assert all(a.shape == (B, 3, T, T) for a in out.attentions) and L == 2
    for b in range(B):
        types = inputs["token_type_ids"].numpy()[b] if "token_type_ids" in inputs else None
        h, att, logits = reference_bert(w, cfg, inputs["input_ids"].numpy()[b], types, mask[b].astype(bool))
        assert np.abs(h).max() > 1.0
        np.testing.assert_allclose(out.last_hidden_state.numpy()[b], h, rtol=0, atol=atol)
        np.testing.assert_allclose(np.stack([a.numpy()[b] for a in out.attentions]), att, rtol=0, atol=atol)
        if logits is None:
            assert out.logits is None
        else:
            np.testing.assert_allclose(out.logits.numpy()[b], logits, rtol=0, atol=atol * 10)
    return inputs, out


@pytest.mark.parametrize("family", ["bert", "distilbert"])
@pytest.mark.parametrize("head, prefixed", [(True, True), (False, True), (False, False), (True, False)])
def test_float64_forward_matches_the_reference_on_a_padded_batch(tmp_path, family, head, prefixed):
    folder, cfg, w = write_checkpoint(tmp_path / "m", family=family, head=head, prefixed=prefixed)
    model, tok = load_bert(folder, dtype=np.float64)
    assert (model.head is not None) == head
    inputs, out = _check_against_reference(model, tok, cfg, w, TEXTS, PAIRS, atol=1e-10)
    assert out.last_hidden_state.dtype == np.float64
    assert ("token_type_ids" in inputs) == (family == "bert")


@pytest.mark.parametrize("family", ["bert", "distilbert"])
def test_float32_forward_matches_the_reference(tmp_path, family):
    folder, cfg, w = write_checkpoint(tmp_path / "m", family=family)
    model, tok = load_bert(folder)  # default dtype: float32
    assert model.embeddings.word.weight.dtype == np.float32
    _check_against_reference(model, tok, cfg, w, TEXTS, None, atol=5e-5)


def test_padding_does_not_change_a_sequence(tmp_path):
    folder, _, _ = write_checkpoint(tmp_path / "m")
    model, tok = load_bert(folder, dtype=np.float64)
    alone = model(**tok(TEXTS[1], return_tensors="pt"), output_attentions=True)
    batch = model(**tok(TEXTS, return_tensors="pt", padding=True), output_attentions=True)
    T = alone.last_hidden_state.shape[1]
    np.testing.assert_allclose(batch.last_hidden_state.numpy()[1, :T], alone.last_hidden_state.numpy()[0], atol=1e-12)
    a = batch.attentions[1].numpy()[1]  # (H, T_pad, T_pad)
    assert np.all(a[:, :, T:] == 0)  # no query attends to padding
    np.testing.assert_allclose(a[:, :T, :T], alone.attentions[1].numpy()[0], atol=1e-12)


def test_the_head_is_tied_and_token_types_matter_for_bert_only(tmp_path):
    folder, _, _ = write_checkpoint(tmp_path / "b")
    model, tok = load_bert(folder, dtype=np.float64)
    assert model.head.decoder.weight is model.embeddings.word.weight
    inputs = tok("the cat", "sat", return_tensors="pt")
    assert inputs["token_type_ids"].numpy().tolist() == [[0, 0, 0, 0, 1, 1]]
    same = model(inputs["input_ids"], inputs["attention_mask"]).last_hidden_state.numpy()
    typed = model(**inputs).last_hidden_state.numpy()
    assert np.abs(same - typed).max() > 1e-3  # segment 1 is embedded differently
    folder, _, _ = write_checkpoint(tmp_path / "d", family="distilbert")
    model, tok = load_bert(folder, dtype=np.float64)
    inputs = tok("the cat", "sat", return_tensors="pt")
    assert "token_type_ids" not in inputs and model.embeddings.token_type is None
    ones = tinyattn.ones(*inputs["input_ids"].shape, dtype=np.int64)
    # As Hugging Face's DistilBERT: token types are accepted (a BERT tokenizer's output) and not used.
    np.testing.assert_array_equal(model(**inputs, token_type_ids=ones).last_hidden_state.numpy(),
                                  model(**inputs).last_hidden_state.numpy())


def test_old_gamma_beta_names_and_tokenizer_json(tmp_path):
    folder, cfg, w = write_checkpoint(tmp_path / "m", tokenizer="json")
    renamed = {k[: -len("weight")] + "gamma" if "LayerNorm" in k and k.endswith("weight") else
               k[: -len("bias")] + "beta" if "LayerNorm" in k and k.endswith("bias") else k: v for k, v in w.items()}
    assert sum(k.endswith("gamma") for k in renamed) == 6
    write_checkpoint(tmp_path / "m", cfg=cfg, weights=renamed, tokenizer="json")
    model, tok = load_bert(folder, dtype=np.float64)
    _check_against_reference(model, tok, cfg, w, TEXTS, PAIRS, atol=1e-10)


def test_outputs_fields_and_hidden_states(tmp_path):
    folder, _, _ = write_checkpoint(tmp_path / "m")
    model, tok = load_bert(folder, dtype=np.float64)
    out = model(**tok("it is", return_tensors="pt"))
    assert out.attentions is None and out.hidden_states is None and out.logits.shape == (1, 4, model.vocab_size)
    assert out["logits"] is out.logits and out[0] is out.last_hidden_state
    out = model(**tok("it is", return_tensors="pt"), output_hidden_states=True)
    assert len(out.hidden_states) == 3 and out.hidden_states[-1] is out.last_hidden_state
    with pytest.raises(AttributeError, match="has no field 'logit'"):
        out.logit


# ---------------------------------------------------------------------------- the texts' snippet, verbatim
def visualize_attention(model, tokenizer, text, layer=11, head=0):
    """Extract attention weights for a specific layer and head."""
    inputs = tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        outputs = model(**inputs, output_attentions=True)

    # outputs.attentions is tuple of (batch, heads, seq, seq) per layer
    attn = outputs.attentions[layer][0, head].cpu().numpy()
    tokens = tokenizer.convert_ids_to_tokens(inputs["input_ids"][0])

    return tokens, attn


torch = tinyattn  # the snippet's `import tinyattn as torch`


@pytest.mark.parametrize("family", ["bert", "distilbert", "gpt2"])
def test_the_texts_snippet_runs_on_every_family(tmp_path, family):
    if family == "gpt2":
        folder = write_gpt2(tmp_path / "m", gpt2_config(n_positions=64))[0]
    else:
        folder = write_checkpoint(tmp_path / "m", family=family)[0]
    model, tokenizer = AutoModel.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    text = "The lawyer asked the doctor if she could help with the case."
    tokens, attn = visualize_attention(model, tokenizer, text, layer=1, head=2)
    T = len(tokens)
    assert attn.shape == (T, T) and isinstance(attn, np.ndarray)
    np.testing.assert_allclose(attn.sum(-1), 1.0, atol=1e-6)
    if family == "gpt2":
        assert tokens == tokenizer.convert_ids_to_tokens(tokenizer.encode(text))  # GPT-2 adds no special tokens
        assert tokens[:2] == ["T", "he"] and "Ġthe" in tokens  # this tiny BPE's pieces
        assert np.all(np.triu(attn, 1) == 0)  # causal: nothing attends to the future
    else:
        assert tokens[:3] == ["[CLS]", "the", "lawyer"] and tokens[-1] == "[SEP]"
        assert (attn[np.triu_indices(T, 1)] > 0).all()  # bidirectional: every token sees every later one too


def test_gpt2_keeps_its_api_and_gains_the_hf_one(tmp_path):
    folder = write_gpt2(tmp_path / "g")[0]
    model, tok = load_gpt2(folder, dtype=np.float64)
    ids = tok.encode(" the cat sat")
    logits = model(np.array([ids])).numpy()  # the course's call: logits
    out = model(**tok(" the cat sat", return_tensors="pt"), output_attentions=True)
    np.testing.assert_allclose(out.logits.numpy(), logits, atol=1e-12)
    _, weights = model(np.array([ids]), return_weights=True)
    for a, b in zip(out.attentions, weights):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-12)
    assert model.generate(np.array([ids]), 2, temperature=0).shape == (1, len(ids) + 2)
    with pytest.raises(ValueError, match="tokenizer.pad_token = tokenizer.eos_token"):
        tok([" the cat", " sat"], return_tensors="pt", padding=True)
    tok.pad_token = tok.eos_token
    batch = tok([" the cat sat", " sat"], return_tensors="pt", padding=True)
    assert batch["attention_mask"].numpy().tolist() == [[1, 1, 1], [1, 0, 0]]
    padded = model(**batch, output_attentions=True)
    np.testing.assert_allclose(padded.logits.numpy()[0], logits[0], atol=1e-12)  # right padding: row 0 unchanged
    alone = model(np.array([tok.encode(" sat")])).numpy()[0, 0]
    np.testing.assert_allclose(padded.logits.numpy()[1, 0], alone, atol=1e-12)
    assert np.all(padded.attentions[0].numpy()[1, :, :, 1:] == 0)  # the padded keys get no weight
    assert tok.convert_ids_to_tokens(ids[1]) == "Ġcat" and tok.decode(batch["input_ids"][0]) == " the cat sat"


def test_tokenizer_call_conventions(tmp_path):
    folder, _, _ = write_checkpoint(tmp_path / "m")
    _, tok = load_bert(folder)
    one = tok("it is")
    assert one["input_ids"] == [2, tok.convert_tokens_to_ids("it"), tok.convert_tokens_to_ids("is"), 3]
    assert one.input_ids is one["input_ids"] and one["attention_mask"] == [1, 1, 1, 1]
    arr = tok(["it", "it is"], return_tensors="np", padding="max_length", max_length=6)
    assert arr["input_ids"].shape == (2, 6) and arr["attention_mask"].sum(1).tolist() == [3, 4]
    cut = tok("the lawyer asked the doctor", return_tensors="pt", truncation=True, max_length=4)
    assert tok.convert_ids_to_tokens(cut["input_ids"][0]) == ["[CLS]", "the", "lawyer", "[SEP]"]
    with pytest.raises(ValueError, match="different lengths .* padding=True"):
        tok(["it", "it is"], return_tensors="pt")
    with pytest.raises(ValueError, match="return_tensors must be one of"):
        tok("it", return_tensors="tf")
    with pytest.raises(TypeError, match="text must be a str or a non-empty list of str"):
        tok([1, 2])
    with pytest.raises(ValueError, match="text has 2 texts but text_pair has 1"):
        tok(["a", "b"], ["c"])
    assert tok.mask_token == "[MASK]" and tok.mask_token_id == 4 and tok.pad_token_id == 0
    ids = tok.convert_tokens_to_ids(["[CLS]", "play", "##ing", "[SEP]"])
    assert tok.decode(ids) == "[CLS] playing [SEP]" and tok.decode(ids, skip_special_tokens=True) == "playing"
    assert tok.convert_ids_to_tokens(ids, skip_special_tokens=True) == ["play", "##ing"]
    assert inputs_to_cpu(tok)  # BatchEncoding.to("cpu") is the same encoding


def inputs_to_cpu(tok):
    enc = tok("it", return_tensors="pt")
    return enc.to("cpu") is enc


# ---------------------------------------------------------------------------- names in the local cache
def _cache_snapshot(root, name, folder, commit="abc123"):
    repo = root / ("models--" + name.replace("/", "--"))
    snap = repo / "snapshots" / commit
    snap.mkdir(parents=True)
    for f in os.listdir(folder):
        os.symlink(os.path.join(folder, f), snap / f)  # the hub's snapshots are links into blobs/
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    return snap


@pytest.mark.parametrize("env", ["HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "default"])
def test_a_name_is_found_in_the_local_cache(tmp_path, monkeypatch, env):
    folder, cfg, w = write_checkpoint(tmp_path / "src", family="distilbert")
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    if env in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.setenv(env, str(tmp_path / "hub"))
        root = tmp_path / "hub"
    elif env == "XDG_CACHE_HOME":
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        root = tmp_path / "xdg" / "huggingface" / "hub"
    elif env == "HF_HOME":
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hfhome"))
        root = tmp_path / "hfhome" / "hub"
    else:
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        root = tmp_path / "home" / ".cache" / "huggingface" / "hub"
    _cache_snapshot(root, "distilbert-base-uncased", folder)
    monkeypatch.chdir(tmp_path)
    model, tok = load_bert("distilbert-base-uncased", dtype=np.float64)
    _check_against_reference(model, tok, cfg, w, TEXTS[:2], None, atol=1e-10)
    gpt2_folder = write_gpt2(tmp_path / "g")[0]
    _cache_snapshot(root, "openai-community/gpt2", gpt2_folder)
    assert load_gpt2("openai-community/gpt2")[0].n_layers == 2
    assert AutoTokenizer.from_pretrained("openai-community/gpt2").eos_token == "<|endoftext|>"


def test_a_name_not_in_the_cache_gives_the_download_command(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.chdir(tmp_path)
    cmd = 'hf download distilbert-base-uncased --include "*.json" --include "*.txt" --include "*.safetensors"'
    assert download_command("distilbert-base-uncased") == cmd
    with pytest.raises(FileNotFoundError) as e:
        load_bert("distilbert-base-uncased")
    assert cmd in str(e.value) and str(tmp_path / "empty") in str(e.value) and "network" in str(e.value)
    with pytest.raises(FileNotFoundError, match="hf download gpt2 --include"):
        load_gpt2("gpt2")


# ---------------------------------------------------------------------------- fill-mask and minimal pairs
def test_fill_mask_is_the_softmax_of_the_reference_logits(tmp_path):
    folder, cfg, w = write_checkpoint(tmp_path / "m")
    model, tok = load_bert(folder, dtype=np.float64)
    text = "the [MASK] sat on the [MASK]."
    preds = fill_mask(model, tok, text, top_k=3)
    ids = tok(text)["input_ids"]
    _, _, logits = reference_bert(w, cfg, np.array(ids))
    masks = [i for i, t in enumerate(ids) if t == tok.mask_token_id]
    assert len(preds) == 2 and all(len(p) == 3 for p in preds)
    for pos, got in zip(masks, preds):
        p = np.exp(logits[pos] - logits[pos].max())
        p /= p.sum()
        best = np.argsort(-p)[:3]
        assert [t for t, _ in got] == tok.convert_ids_to_tokens(best)
        np.testing.assert_allclose([q for _, q in got], p[best], atol=1e-10)
    with pytest.raises(ValueError, match="the text has no \\[MASK\\]"):
        fill_mask(model, tok, "the cat")
    bare, tok2 = load_bert(write_checkpoint(tmp_path / "bare", head=False)[0])
    with pytest.raises(ValueError, match="needs a masked-LM model"):
        fill_mask(bare, tok2, text)


def test_minimal_pairs_are_the_measured_weights(tmp_path):
    folder, cfg, w = write_checkpoint(tmp_path / "m")
    model, tok = load_bert(folder, dtype=np.float64)
    texts = ["The lawyer asked the doctor if she could help.", "The doctor asked the lawyer if she could help."]
    res = minimal_pairs(model, tok, texts, "she", ["lawyer", "doctor"])
    assert res.weights.shape == (2, 2, 3, 2)
    for i, text in enumerate(texts):
        toks = res.tokens[i]
        _, att, _ = reference_bert(w, cfg, np.array(tok(text)["input_ids"]))
        q, law, doc = toks.index("she"), toks.index("lawyer"), toks.index("doctor")
        np.testing.assert_allclose(res.weights[i, :, :, 0], att[:, :, q, law], atol=1e-12)
        np.testing.assert_allclose(res.weights[i, :, :, 1], att[:, :, q, doc], atol=1e-12)
    table = res.table()
    assert "text 0: The lawyer asked" in table
    assert len(table.splitlines()) == 1 + 2 + 2 + 2 * 3  # title, texts, header, rule, L * H rows
    # a word spelled in pieces: its attention is summed over the pieces
    res = minimal_pairs(model, tok, ["she is unaffable"], "she", ["unaffable"])
    _, att, _ = reference_bert(w, cfg, np.array(tok("she is unaffable")["input_ids"]))
    np.testing.assert_allclose(res.weights[0, :, :, 0], att[:, :, 1, 3:6].sum(-1), atol=1e-12)
    with pytest.raises(ValueError, match="'he' is not a word of"):
        minimal_pairs(model, tok, texts, "he", ["lawyer"])


# ---------------------------------------------------------------------------- the command line
def test_cli_bert(tmp_path, capsys):
    folder, _, _ = write_checkpoint(tmp_path / "m")
    out = tmp_path / "out"
    assert cli_main(["bert", folder, "--text", "The lawyer asked the doctor if she could help with the [MASK].",
                     "--pair", "The doctor asked the lawyer if she could help with the [MASK].", "--out", str(out),
                     "--top", "3"]) == 0
    text = capsys.readouterr().out
    assert "15 tokens ('##' joins a piece to the one before): '[CLS]' 'the' 'lawyer'" in text
    assert "[MASK] #1: " in text and text.split("[MASK] #1: ")[1].split("\n")[0].count(", ") == 2
    assert "attention from 'she' to each candidate" in text and "text 1:  lawyer  doctor" in text
    assert "2 layers x 3 heads" in text
    assert (out / "head_view.html").stat().st_size > 1000 and (out / "model_view.html").stat().st_size > 1000


def test_cli_bert_errors_are_one_line(tmp_path, capsys):
    assert cli_main(["bert", str(tmp_path), "--text", "hi"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tinyattn: error:") and "has no config.json" in err and err.count("\n") == 1
    folder, _, _ = write_checkpoint(tmp_path / "m", tiny_config("distilbert"))
    assert cli_main(["bert", folder, "--text", "the cat sat", "--pair", "a cat sat on", "--out",
                     str(tmp_path / "o")]) == 2
    assert "--candidates" in capsys.readouterr().err


# ---------------------------------------------------------------------------- the tiny stand-ins
@pytest.mark.parametrize("family", ["bert", "distilbert", "gpt2"])
def test_tiny_random_checkpoints_spell_their_words(tmp_path, family):
    from tinyattn.pretrained.tiny import write_random_bert, write_random_gpt2

    text = "The lawyer asked the doctor if she could help with the case."
    words = text.rstrip(".").split()
    folder = write_random_gpt2(tmp_path / "m", words) if family == "gpt2" else \
        write_random_bert(tmp_path / "m", words, family=family)
    model, tok = AutoModel.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    tokens = tok.convert_ids_to_tokens(tok(text)["input_ids"])
    if family == "gpt2":
        assert tokens == ["The", "Ġlawyer", "Ġasked", "Ġthe", "Ġdoctor", "Ġif", "Ġshe", "Ġcould", "Ġhelp", "Ġwith",
                          "Ġthe", "Ġcase", "."]
    else:
        assert tokens == ["[CLS]"] + text.lower().rstrip(".").split() + [".", "[SEP]"]
        assert model.head is not None and (model.embeddings.token_type is not None) == (family == "bert")
    out = model(**tok(text, return_tensors="pt"), output_attentions=True)
    assert len(out.attentions) == 2 and out.attentions[0].shape == (1, 4, len(tokens), len(tokens))


def test_a_pretraining_checkpoint_with_unused_heads_loads(tmp_path):
    """BertForPreTraining files also hold the pooler, the next-sentence head, a position_ids buffer and a stored
    copy of the tied decoder: they are accepted, shape-checked where they copy a used weight, and not used."""
    folder, cfg, w = write_checkpoint(tmp_path / "m")
    extra = {"pooler.dense.weight": np.ones((12, 12), np.float32), "pooler.dense.bias": np.ones(12, np.float32),
             "cls.seq_relationship.weight": np.ones((2, 12), np.float32),
             "cls.seq_relationship.bias": np.ones(2, np.float32),
             "embeddings.position_ids": np.arange(24, dtype=np.int64)[None],
             "cls.predictions.decoder.weight": w["embeddings.word_embeddings.weight"],
             "cls.predictions.decoder.bias": w["cls.predictions.bias"]}
    write_checkpoint(tmp_path / "m", cfg=cfg, weights={**w, **extra})
    model, tok = load_bert(folder, dtype=np.float64)
    _check_against_reference(model, tok, cfg, w, TEXTS, None, atol=1e-10)
