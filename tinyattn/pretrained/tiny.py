"""Tiny checkpoints with random weights, in Hugging Face's folder layout, built without any network.

For running the tools (the loaders, the snippet, the views) where no real weights are at hand: a
notebook under the tests, or a first try. The weights are random, so the heads attend at random:
nothing measured on these says anything about a real model's heads.

* ``write_random_bert(folder, words, family="distilbert")``: config.json, model.safetensors (the masked-LM
  head included) and a vocab.txt of the special tokens, the lower-cased ``words`` and the letters.
* ``write_random_gpt2(folder, words)``: config.json, model.safetensors, and a byte-level vocab.json +
  merges.txt in which each of ``words`` is one token after a space, and a capitalised word also without.
"""
from __future__ import annotations

import json
import os

import numpy as np

__all__ = ["write_random_bert", "write_random_gpt2"]


def _normal(rng, shape, name: str) -> np.ndarray:
    """LayerNorms at 1 and 0, everything else N(0, 0.3): far from uniform attention, as trained models are."""
    if "LayerNorm" in name or "layer_norm" in name or ".ln_" in name or name.startswith("ln_f"):
        return (np.ones if name.endswith("weight") else np.zeros)(shape, dtype=np.float32)
    return (0.3 * rng.standard_normal(shape)).astype(np.float32)


def write_random_bert(folder, words, family: str = "distilbert", d_model: int = 32, n_heads: int = 4,
                      n_layers: int = 2, seed: int = 0) -> str:
    """A random BERT or DistilBERT masked-LM folder whose vocabulary spells ``words``; returns the folder."""
    import safetensors.numpy

    from .bert import _schema, read_bert_config

    folder = os.fspath(folder)
    os.makedirs(folder, exist_ok=True)
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + list(".,!?'") + letters + ["##" + c for c in letters]
    vocab += [w for w in dict.fromkeys(w.lower() for w in words) if w not in vocab]
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in vocab))
    if family == "bert":
        cfg = {"model_type": "bert", "vocab_size": len(vocab), "hidden_size": d_model, "num_hidden_layers": n_layers,
               "num_attention_heads": n_heads, "intermediate_size": 4 * d_model, "max_position_embeddings": 64,
               "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu"}
    elif family == "distilbert":
        cfg = {"model_type": "distilbert", "vocab_size": len(vocab), "dim": d_model, "n_layers": n_layers,
               "n_heads": n_heads, "hidden_dim": 4 * d_model, "max_position_embeddings": 64, "activation": "gelu"}
    else:
        raise ValueError(f"family must be 'bert' or 'distilbert', got {family!r}")
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f)
    body, head = _schema(read_bert_config(folder))
    rng = np.random.default_rng(seed)
    weights = {}
    for name, (_, shape) in {**body, **head}.items():
        is_head = name.startswith(("cls.", "vocab_"))
        weights[name if is_head else f"{family}.{name}"] = _normal(rng, shape, name)  # as *ForMaskedLM saves
    safetensors.numpy.save_file(weights, os.path.join(folder, "model.safetensors"))
    return folder


def write_random_gpt2(folder, words, d_model: int = 32, n_heads: int = 4, n_layers: int = 2, seed: int = 0) -> str:
    """A random GPT-2 folder whose byte-level BPE spells each of ``words`` as one token; returns the folder."""
    import safetensors.numpy

    from .gpt2 import _expected_shapes
    from .tokenizer import EOS, _byte_symbols

    folder = os.fspath(folder)
    os.makedirs(folder, exist_ok=True)
    vocab = {sym: i for i, sym in enumerate(_byte_symbols().values())}  # ids 0..255: one per byte
    merges = []
    # Each word after a space (" lawyer"), and a capitalised word also without one ("The", a text's first word).
    # Every merge extends a word's prefix, and all those starting with the space come first: so in any of
    # these words the next merge of its own chain is always the best-ranked pair, and it ends as one token.
    table = _byte_symbols()
    spelled = [" " + w for w in dict.fromkeys(words)] + [w for w in dict.fromkeys(words) if w[:1].isupper()]
    for w in spelled:
        symbols = ["".join(table[b] for b in ch.encode("utf-8")) for ch in w]  # a character's bytes, as symbols
        prefix = symbols[0]
        for s in symbols[1:]:
            if prefix + s not in vocab:
                merges.append((prefix, s))
                vocab[prefix + s] = len(vocab)
            prefix += s
    vocab[EOS] = len(vocab)
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
    cfg = {"model_type": "gpt2", "vocab_size": len(vocab), "n_positions": 64, "n_embd": d_model, "n_layer": n_layers,
           "n_head": n_heads, "n_inner": None, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new",
           "tie_word_embeddings": True}
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f)
    rng = np.random.default_rng(seed)
    weights = {name: _normal(rng, shape, name) for name, shape in _expected_shapes(cfg).items()}
    safetensors.numpy.save_file(weights, os.path.join(folder, "model.safetensors"))
    return folder
