"""Tiny BERT and DistilBERT checkpoints for the tests, written from scratch, and a plain-NumPy BERT to check them.

Each checkpoint is a folder as Hugging Face saves one: config.json, model.safetensors with random weights
under the family's key names (with or without the masked-LM head, or the bare encoder's keys), and a
tiny WordPiece vocabulary (vocab.txt, or tokenizer.json). ``reference_bert`` is the encoder's forward
written here from the published architecture (Devlin et al. 2019; DistilBERT: Sanh et al. 2019):
word + position (+ token type) embeddings and LayerNorm, post-LayerNorm layers with the exact erf GELU,
the head tied to the word embeddings; float64 throughout. Nothing here imports tinyattn.
"""
from __future__ import annotations

import json
import math
import os

import numpy as np
import safetensors.numpy

# ---------------------------------------------------------------------------- a tiny WordPiece vocabulary
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ["the", "lawyer", "doctor", "asked", "if", "she", "could", "help", "with", "case", "play", "##ing", "##s",
         "cafe", "cat", "sat", "on", "mat", "it", "is", "un", "##aff", "##able", "a", "b", "c", "e", "i", "l", "n",
         "o", "p", "s", "t", "y", "##a", "##e", "##n", "##o", "##t", "##y", ".", ",", "'", "?", "!"]
VOCAB = SPECIAL + WORDS


def write_vocab(folder, vocab=VOCAB) -> None:
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in vocab))


def write_tokenizer_json(folder, lowercase: bool = True) -> None:
    """The one-file format, as Hugging Face's BertTokenizerFast saves it (built with `tokenizers` directly)."""
    import tokenizers as tk

    ids = {t: i for i, t in enumerate(VOCAB)}
    tok = tk.Tokenizer(tk.models.WordPiece(ids, unk_token="[UNK]"))
    tok.normalizer = tk.normalizers.BertNormalizer(lowercase=lowercase)
    tok.pre_tokenizer = tk.pre_tokenizers.BertPreTokenizer()
    tok.post_processor = tk.processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0", pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])])
    tok.decoder = tk.decoders.WordPiece()
    tok.add_special_tokens([tk.AddedToken(t, special=True) for t in SPECIAL])
    tok.save(os.path.join(folder, "tokenizer.json"))


# ---------------------------------------------------------------------------- tiny random checkpoints
def tiny_config(family: str = "bert", **changes) -> dict:
    if family == "bert":
        cfg = {"model_type": "bert", "vocab_size": len(VOCAB), "hidden_size": 12, "num_hidden_layers": 2,
               "num_attention_heads": 3, "intermediate_size": 20, "max_position_embeddings": 24,
               "type_vocab_size": 2, "layer_norm_eps": 1e-3, "hidden_act": "gelu"}
    else:
        cfg = {"model_type": "distilbert", "vocab_size": len(VOCAB), "dim": 12, "n_layers": 2, "n_heads": 3,
               "hidden_dim": 20, "max_position_embeddings": 24, "activation": "gelu"}
    cfg.update(changes)
    return cfg


def _layer_names(family: str) -> dict[str, str]:
    """The family's name for each part of one layer (the reference forward below reads these)."""
    if family == "bert":
        return {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
                "o": "attention.output.dense", "ln1": "attention.output.LayerNorm", "f1": "intermediate.dense",
                "f2": "output.dense", "ln2": "output.LayerNorm", "layers": "encoder.layer"}
    return {"q": "attention.q_lin", "k": "attention.k_lin", "v": "attention.v_lin", "o": "attention.out_lin",
            "ln1": "sa_layer_norm", "f1": "ffn.lin1", "f2": "ffn.lin2", "ln2": "output_layer_norm",
            "layers": "transformer.layer"}


def _sizes(cfg):
    if cfg["model_type"] == "bert":
        return (cfg["vocab_size"], cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"],
                cfg["intermediate_size"], cfg["max_position_embeddings"])
    return (cfg["vocab_size"], cfg["dim"], cfg["n_layers"], cfg["n_heads"], cfg["hidden_dim"],
            cfg["max_position_embeddings"])


def head_names(family: str) -> dict[str, str]:
    if family == "bert":
        return {"dense": "cls.predictions.transform.dense", "ln": "cls.predictions.transform.LayerNorm",
                "bias": "cls.predictions.bias"}
    return {"dense": "vocab_transform", "ln": "vocab_layer_norm", "bias": "vocab_projector.bias"}


def random_weights(cfg: dict, head: bool = True, seed: int = 0) -> dict[str, np.ndarray]:
    """Every weight under the family's name without the model prefix (Linear as (out, in)), float32."""
    rng = np.random.default_rng(seed)
    fam = cfg["model_type"]
    V, C, L, H, F, P = _sizes(cfg)

    def normal(*shape, scale=0.3):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    w = {"embeddings.word_embeddings.weight": normal(V, C, scale=0.5),
         "embeddings.position_embeddings.weight": normal(P, C, scale=0.2),
         "embeddings.LayerNorm.weight": 1 + normal(C, scale=0.1), "embeddings.LayerNorm.bias": normal(C, scale=0.1)}
    if fam == "bert":
        w["embeddings.token_type_embeddings.weight"] = normal(cfg["type_vocab_size"], C, scale=0.3)
    n = _layer_names(fam)
    for i in range(L):
        p = f"{n['layers']}.{i}."
        for part, shape in (("q", (C, C)), ("k", (C, C)), ("v", (C, C)), ("o", (C, C)), ("f1", (F, C)), ("f2", (C, F))):
            w[p + n[part] + ".weight"] = normal(*shape)
            w[p + n[part] + ".bias"] = normal(shape[0], scale=0.1)
        for part in ("ln1", "ln2"):
            w[p + n[part] + ".weight"] = 1 + normal(C, scale=0.1)
            w[p + n[part] + ".bias"] = normal(C, scale=0.1)
    if head:
        h = head_names(fam)
        w.update({h["dense"] + ".weight": normal(C, C), h["dense"] + ".bias": normal(C, scale=0.1),
                  h["ln"] + ".weight": 1 + normal(C, scale=0.1), h["ln"] + ".bias": normal(C, scale=0.1),
                  h["bias"]: normal(V, scale=0.1)})
    return w


def is_head_key(family: str, key: str) -> bool:
    return key.startswith("cls." if family == "bert" else "vocab_")


def write_checkpoint(folder, cfg=None, weights=None, head: bool = True, prefixed: bool = True,
                     tokenizer: str = "vocab", family: str = "bert"):
    """A Hugging Face-style folder; returns (folder, config, weights without prefixes).

    prefixed=True: the encoder's keys carry "bert." / "distilbert." as a *ForMaskedLM saves them (the head's
    keys never do); prefixed=False: the bare encoder's keys, as BertModel / DistilBertModel saves them.
    """
    os.makedirs(folder, exist_ok=True)
    cfg = tiny_config(family) if cfg is None else cfg
    fam = cfg["model_type"]
    weights = random_weights(cfg, head=head) if weights is None else weights
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f)
    stored = {(k if not prefixed or is_head_key(fam, k) else f"{fam}.{k}"): v for k, v in weights.items()}
    safetensors.numpy.save_file(stored, os.path.join(folder, "model.safetensors"))
    if tokenizer == "vocab":
        write_vocab(folder)
    elif tokenizer == "json":
        write_tokenizer_json(folder)
    return str(folder), cfg, weights


# ---------------------------------------------------------------------------- the reference forward
def _layer_norm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


_erf = np.vectorize(math.erf)


def gelu_exact(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def reference_bert(weights, cfg, ids, types=None, keep=None):
    """One sequence, float64: ids (T,) [, token types (T,), keep (T,) bool = real token] ->
    (hidden (T, C), attention (L, H, T, T), logits (T, V) or None without the head)."""
    fam = cfg["model_type"]
    w = {k: v.astype(np.float64) for k, v in weights.items()}
    V, C, L, H, F, P = _sizes(cfg)
    eps = cfg.get("layer_norm_eps", 1e-12) if fam == "bert" else 1e-12
    T, d = len(ids), C // H
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:T]
    if fam == "bert":
        x = x + w["embeddings.token_type_embeddings.weight"][np.zeros(T, int) if types is None else types]
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    blocked = np.zeros(T, bool) if keep is None else ~np.asarray(keep)  # padded keys
    n, maps = _layer_names(fam), []
    for i in range(L):
        p = f"{n['layers']}.{i}."

        def lin(part, h):
            return h @ w[p + n[part] + ".weight"].T + w[p + n[part] + ".bias"]

        q, k, v = (lin(part, x).reshape(T, H, d).transpose(1, 0, 2) for part in "qkv")  # (H, T, d)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(d)  # (H, T, T)
        s[:, :, blocked] = -np.inf
        att = np.exp(s - s.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        maps.append(att)
        a = (att @ v).transpose(1, 0, 2).reshape(T, C)
        x = _layer_norm(x + lin("o", a), w[p + n["ln1"] + ".weight"], w[p + n["ln1"] + ".bias"], eps)
        x = _layer_norm(x + lin("f2", gelu_exact(lin("f1", x))), w[p + n["ln2"] + ".weight"],
                        w[p + n["ln2"] + ".bias"], eps)
    h = head_names(fam)
    logits = None
    if h["bias"] in w:
        t = gelu_exact(x @ w[h["dense"] + ".weight"].T + w[h["dense"] + ".bias"])
        t = _layer_norm(t, w[h["ln"] + ".weight"], w[h["ln"] + ".bias"], eps)
        logits = t @ w["embeddings.word_embeddings.weight"].T + w[h["bias"]]  # tied to the word embeddings
    return x, np.stack(maps), logits
