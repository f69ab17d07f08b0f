"""Tiny GPT-2 checkpoints for the tests, written from scratch, and a plain-NumPy GPT-2 to check them against.

Each checkpoint is a folder as Hugging Face saves one: config.json, model.safetensors with random weights
under GPT-2's key names and Conv1D (in, out) layout, and a byte-level BPE vocabulary (vocab.json +
merges.txt, or tokenizer.json). ``reference_gpt2`` is GPT-2's forward written here from the published
architecture (Radford et al. 2019: pre-LayerNorm blocks, learned positions, tanh GELU, the head tied
to the token embedding), in float64 throughout. Nothing here imports tinyattn.
"""
from __future__ import annotations

import json
import os

import numpy as np
import safetensors.numpy
import tokenizers

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
