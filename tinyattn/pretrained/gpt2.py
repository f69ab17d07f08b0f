"""A Hugging Face GPT-2 checkpoint folder -> the course's own TransformerLM, weight by weight.

GPT-2 is exactly the course's pre-LayerNorm decoder: token embedding + learned positions, n_layer blocks
x = x + attn(ln_1(x)); x = x + mlp(ln_2(x)), a final LayerNorm, and a head that reuses the token
embedding. Three things differ only in how Hugging Face stores the weights:

* ``Conv1D``: GPT-2's projections keep their weight as (in, out) and compute x @ W + b, where
  nn.Linear keeps (out, in) and computes x @ W^T + b; so every matrix is transposed on the way in
  (only in shape: in memory it keeps Conv1D's row order, see ``_conv1d_layout``).
* ``c_attn``: the query, key and value projections are one fused (C, 3C) matrix; its three column blocks
  are W_q, W_k and W_v, in that order.
* ``lm_head``: tied to ``wte``, so the checkpoint stores the matrix once.

The FFN's GELU is the tanh formula ("gelu_new"), and LayerNorm's eps comes from the config.
"""
from __future__ import annotations

import os

import numpy as np

from .. import checks, get_rng
from .. import Tensor
from ..nn import Linear, TransformerLM
from ..nn.hook_points import hooked_layer_norm
from ..nn.transformer import _last
from .hub import resolve
from .checkpoint import FLOATS as _FLOATS, ModelConfig, float_dtype as _dtype, open_weights as _open_weights
from .task_heads import build_task_model, plan_labels, task_config, task_of, task_schema
from .checkpoint import read_json as _read_json, task_head_error

__all__ = ["load_gpt2", "read_config", "build_model", "GPT2LMHeadModel"]

_SIZES = ("vocab_size", "n_positions", "n_embd", "n_layer", "n_head")
# Hugging Face's names for GPT-2's activation -> nn.GELU's `approximate`.
_GELU = {"gelu_new": "tanh", "gelu_pytorch_tanh": "tanh", "gelu": "none"}
# Buffers some checkpoints carry (the causal mask GPT-2 kept per layer): rebuilt here, never loaded.
_BUFFERS = (".attn.bias", ".attn.masked_bias")


def read_config(folder: str) -> dict:
    """config.json, checked: the five sizes are positive ints, and nothing asks for what is not built here."""
    path = os.path.join(folder, "config.json")
    cfg = _read_json(folder, "config.json", "a Hugging Face GPT-2 folder holds config.json, model.safetensors, "
                                             "and vocab.json + merges.txt or tokenizer.json")
    for key in _SIZES:
        if key not in cfg:
            raise ValueError(f"{path} has no {key!r}: a GPT-2 config needs {', '.join(_SIZES)}")
        v = cfg[key]
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ValueError(f"{path}: {key} must be a positive int, got {v!r}")
    if cfg.get("model_type", "gpt2") != "gpt2":
        raise ValueError(f"{path}: model_type is {cfg['model_type']!r}; load_gpt2 reads GPT-2 checkpoints "
                         "(model_type 'gpt2': gpt2, distilgpt2, gpt2-medium/large/xl)")
    if cfg["n_embd"] % cfg["n_head"]:
        raise ValueError(f"{path}: n_embd={cfg['n_embd']} is not divisible by n_head={cfg['n_head']}")
    act = cfg.get("activation_function", "gelu_new")  # the defaults are Hugging Face's GPT2Config's
    if act not in _GELU:
        raise ValueError(f"{path}: activation_function={act!r} is not supported (expected one of {sorted(_GELU)})")
    unsupported = {"scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False, "add_cross_attention": False}
    for key, built in unsupported.items():
        if cfg.get(key, built) != built:
            raise ValueError(f"{path}: {key}={cfg[key]!r} is not supported (only {key}={built} is built here)")
    return cfg


def _names(f) -> dict[str, str]:
    """{GPT-2 name: key in the file}: some checkpoints put 'transformer.' in front; mask buffers are left out."""
    return {k.removeprefix("transformer."): k for k in f.keys() if not k.endswith(_BUFFERS)}


def _expected_shapes(cfg: dict) -> dict[str, tuple]:
    """Every weight a GPT-2 checkpoint must hold, with its shape, in Hugging Face's names and layout."""
    V, P, C, L = cfg["vocab_size"], cfg["n_positions"], cfg["n_embd"], cfg["n_layer"]
    F = cfg.get("n_inner") or 4 * C  # the FFN's hidden width
    shapes = {"wte.weight": (V, C), "wpe.weight": (P, C)}
    for i in range(L):
        p = f"h.{i}."
        shapes.update({
            p + "ln_1.weight": (C,), p + "ln_1.bias": (C,),
            p + "attn.c_attn.weight": (C, 3 * C), p + "attn.c_attn.bias": (3 * C,),  # Conv1D: (in, out)
            p + "attn.c_proj.weight": (C, C), p + "attn.c_proj.bias": (C,),
            p + "ln_2.weight": (C,), p + "ln_2.bias": (C,),
            p + "mlp.c_fc.weight": (C, F), p + "mlp.c_fc.bias": (F,),
            p + "mlp.c_proj.weight": (F, C), p + "mlp.c_proj.bias": (C,),
        })
    shapes.update({"ln_f.weight": (C,), "ln_f.bias": (C,)})
    if not cfg.get("tie_word_embeddings", True):
        shapes["lm_head.weight"] = (V, C)  # an untied head must be in the file
    return shapes


def _check_weights(f, names: dict, cfg: dict, where: str, head: dict) -> None:
    """Names, shapes and dtypes from the file's header, against the config, before any tensor is read.
    ``head``: {name: shape} of the task head the file holds (GPT2ForSequenceClassification's score), or {}."""
    expected = {**_expected_shapes(cfg), **head}
    missing = [k for k in expected if k not in names]
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise ValueError(f"{where} is missing weights {missing[:5]}{more} (for n_layer={cfg['n_layer']})")
    unexpected = [k for k in names if k not in expected and k != "lm_head.weight"]
    refused = task_head_error(where, unexpected, cfg, "load_gpt2", "GPT2Model, GPT2LMHeadModel (the language-model "
                              "head) and GPT2ForSequenceClassification")
    if refused is not None:
        raise refused
    if unexpected:
        raise ValueError(f"{where} has weights a GPT-2 with this config does not have: {unexpected[:5]} "
                         f"(n_layer={cfg['n_layer']} in config.json)")
    expected.setdefault("lm_head.weight", expected["wte.weight"])  # a tied head, stored anyway: same shape
    for k, key in names.items():
        info = f.get_slice(key)
        shape, dtype = tuple(info.get_shape()), info.get_dtype()
        if shape != expected[k]:
            labels = f" and {expected[k][0]} labels (num_labels)" if k in head else ""
            raise ValueError(f"{where}: {k!r} has shape {shape} but config.json (n_embd={cfg['n_embd']}, "
                             f"vocab_size={cfg['vocab_size']}, n_positions={cfg['n_positions']}){labels} needs "
                             f"{expected[k]}")
        if dtype not in _FLOATS:
            raise ValueError(f"{where}: {k!r} has dtype {dtype}; expected floats "
                             f"({', '.join(_FLOATS)})")


def _embedding_state(get) -> dict[str, np.ndarray]:
    return {"tok_emb.weight": get("wte.weight"),  # (V, C): the same in both
            "pos.weight": get("wpe.weight")}  # (P, C): learned positions, one row per position


def _block_state(get, i: int, C: int) -> dict[str, np.ndarray]:
    """Block i: GPT-2's names and Conv1D (in, out) layout -> TransformerBlock's keys and nn.Linear's (out, in)."""
    h, b = f"h.{i}.", f"blocks.{i}."
    # c_attn computes x @ [W_q | W_k | W_v] + [b_q | b_k | b_v]: cut the (C, 3C) matrix into three (C, C).
    w_q, w_k, w_v = np.split(get(h + "attn.c_attn.weight"), [C, 2 * C], axis=1)  # each (C, C) (in, out)
    b_q, b_k, b_v = np.split(get(h + "attn.c_attn.bias"), [C, 2 * C])  # each (C,)
    return {
        b + "ln1.weight": get(h + "ln_1.weight"), b + "ln1.bias": get(h + "ln_1.bias"),
        b + "attn.W_q.weight": w_q.T, b + "attn.W_q.bias": b_q,  # .T: Conv1D (in, out) -> Linear (out, in)
        b + "attn.W_k.weight": w_k.T, b + "attn.W_k.bias": b_k,
        b + "attn.W_v.weight": w_v.T, b + "attn.W_v.bias": b_v,
        b + "attn.W_o.weight": get(h + "attn.c_proj.weight").T, b + "attn.W_o.bias": get(h + "attn.c_proj.bias"),
        b + "ln2.weight": get(h + "ln_2.weight"), b + "ln2.bias": get(h + "ln_2.bias"),
        b + "ffn.0.weight": get(h + "mlp.c_fc.weight").T, b + "ffn.0.bias": get(h + "mlp.c_fc.bias"),
        b + "ffn.2.weight": get(h + "mlp.c_proj.weight").T, b + "ffn.2.bias": get(h + "mlp.c_proj.bias"),
    }


def _final_state(get, cfg: dict) -> dict[str, np.ndarray]:
    state = {"ln_f.weight": get("ln_f.weight"), "ln_f.bias": get("ln_f.bias")}
    if not cfg.get("tie_word_embeddings", True):  # the tied head is tok_emb.weight itself: nothing to copy
        state["head.weight"] = get("lm_head.weight")
        state["head.bias"] = np.zeros(cfg["vocab_size"])  # GPT-2's head has no bias
    return state


def _parts(get, cfg: dict):
    """The model's state in pieces: the embeddings, each block, then the final LayerNorm (and an untied head)."""
    yield _embedding_state(get)
    for i in range(cfg["n_layer"]):
        yield _block_state(get, i, cfg["n_embd"])
    yield _final_state(get, cfg)


class GPT2LMHeadModel(TransformerLM):
    """The course's TransformerLM with GPT-2's architecture, called either way:

    * the course's: ``model(idx)`` -> logits (B, T, V); ``return_weights``, ``head_mask``, ``generate``;
    * Hugging Face's: ``model(input_ids=..., attention_mask=..., output_attentions=True)`` (any of these
      keywords) -> ModelOutput with ``logits``, ``last_hidden_state`` (after ln_f) and ``attentions``.
    """

    def forward(self, idx=None, kv_cache=None, return_weights: bool = False, head_mask=None, *, input_ids=None,
                attention_mask=None, output_attentions: bool = False, output_hidden_states: bool = False,
                return_dict=None, logits_to_keep: int = 0):
        hf = input_ids is not None or attention_mask is not None or output_attentions or output_hidden_states \
            or return_dict
        if not hf:
            return super().forward(idx, kv_cache=kv_cache, return_weights=return_weights, head_mask=head_mask,
                                   logits_to_keep=logits_to_keep)
        if idx is not None and input_ids is not None:
            raise TypeError("GPT2LMHeadModel got ids twice: pass input_ids=... or the ids first, not both")
        if kv_cache is not None or return_weights:
            raise TypeError("kv_cache and return_weights are the course's calling style; with Hugging Face's "
                            "(input_ids=, attention_mask=, output_attentions=) use outputs.attentions")
        return self._hf_forward(input_ids if input_ids is not None else idx, attention_mask, head_mask,
                                output_attentions, output_hidden_states, logits_to_keep)

    def _hf_forward(self, input_ids, attention_mask, head_mask, output_attentions, output_hidden_states,
                    logits_to_keep):
        from .outputs import ModelOutput

        logits_to_keep = checks.nonneg_int("logits_to_keep", logits_to_keep)
        h, hidden, attentions = self.hidden_states(input_ids, attention_mask, head_mask, output_attentions)
        return ModelOutput(logits=self.head(_last(h, logits_to_keep)), last_hidden_state=h,
                           attentions=tuple(attentions) if output_attentions else None,
                           hidden_states=tuple(hidden) if output_hidden_states else None)

    def hidden_states(self, input_ids, attention_mask=None, head_mask=None, output_attentions: bool = False,
                      where: str = "GPT2LMHeadModel"):
        """(the last hidden state (B, T, C) after ln_f, every layer's input and that last state, the attention
        weights or Nones): the body Hugging Face's GPT2Model computes, which the heads read."""
        from .outputs import model_inputs

        ids, keep = model_inputs(input_ids, attention_mask, self.vocab_size, self.max_len, where)
        mask = None if keep is None else keep[:, None, None, :]  # (B, 1, 1, T): padded keys, on top of causal
        head_masks = self._layer_head_masks(head_mask)
        x = self._embed(ids)  # (B, T) -> (B, T, C): tokens + learned positions 0..T-1 (through the hook points)
        hidden, attentions = [x], []
        for block, hm in zip(self.blocks, head_masks):
            out = block(x, mask=mask, return_weights=output_attentions, head_mask=hm)
            x, w = out if output_attentions else (out, None)  # (B, T, C), (B, H, T, T)
            attentions.append(w)
            hidden.append(x)
        h = hooked_layer_norm(self.ln_f, x)  # (B, T, C)
        hidden[-1] = h  # as Hugging Face: the last hidden state is the one after the final LayerNorm
        return h, hidden, attentions


def build_model(cfg: dict, dtype=None) -> GPT2LMHeadModel:
    """An untrained GPT2LMHeadModel (a TransformerLM) with GPT-2's architecture for this config (eval mode)."""
    dt = _dtype(dtype)
    rng = get_rng()
    state = rng.bit_generator.state  # building draws random init weights: leave the user's seeded stream as it was
    try:
        model = GPT2LMHeadModel(cfg["vocab_size"], cfg["n_embd"], cfg["n_head"], cfg["n_layer"], cfg["n_positions"],
                                d_ff=cfg.get("n_inner") or None, positional="learned",
                                layer_norm_eps=float(cfg.get("layer_norm_epsilon", 1e-5)),
                                gelu=_GELU[cfg.get("activation_function", "gelu_new")],
                                tie_weights=bool(cfg.get("tie_word_embeddings", True)))
    finally:
        rng.bit_generator.state = state
    return _conv1d_layout(model.to(dt).eval())


def _conv1d_layout(model: GPT2LMHeadModel) -> GPT2LMHeadModel:
    """Every Linear's weight stored as GPT-2's Conv1D stores it: (in, out), row after row.

    The shapes stay nn.Linear's (out, in) and the values stay the same; only the order in memory changes:
    each weight is the transpose of a row-major (in, out) array (so ``is_contiguous()`` is False, as for
    ``conv1d.weight.t()`` in PyTorch). x @ W^T then reads W as a plain (in, out) matrix, and OpenBLAS
    multiplies that faster than a transposed one. The tied head's matrix (the token embedding) is stored
    the same way: a lookup reads a strided row, which costs little next to the head's product.
    Measured on GPT-2 124M, one thread, OpenBLAS's SkylakeX kernel, the two layouts interleaved: one generated
    token 36.3 -> 28.7 ms (alone, the 12 blocks' products by one row 19.8 -> 15.5 ms, the head's 9.6 -> 6.1 ms),
    a 128-token forward 412 -> 381 ms.
    """
    for module in model.modules():
        if isinstance(module, Linear):  # (a tied head is tok_emb.weight itself: laid out once, for both)
            module.weight.data = np.asfortranarray(module.weight.numpy())  # (out, in), stored (in, out)
    return model


def load_gpt2(path, dtype=None, *, task: str = "auto", num_labels: int | None = None):
    """A Hugging Face GPT-2 checkpoint folder, or a model name in the local cache ("gpt2") -> (model, tokenizer).

    The folder holds config.json, model.safetensors (or its shards and model.safetensors.index.json), and
    vocab.json + merges.txt or tokenizer.json
    (as ``hf download gpt2 --include "*.json" --include "*.txt" --include "*.safetensors"`` fetches them).
    model: a GPT2LMHeadModel (a TransformerLM) in eval mode: model(idx (B, T) ints) -> logits (B, T, vocab_size),
    model(idx, return_weights=True) -> (logits, a list over layers of weights (B, H, T, T)),
    model(idx, head_mask=...), model.generate(...); and Hugging Face's model(**tokenizer(text,
    return_tensors="pt"), output_attentions=True) -> outputs.logits, .last_hidden_state, .attentions.
    dtype: float32 or float64 (None = tinyattn's default). task: "auto" (what the checkpoint holds), "causal"
    (the language-model head) or "sequence" (GPT2ForSequenceClassification, task_heads.py; from a checkpoint
    without it, the head starts untrained with num_labels labels).
    tokenizer: encode(str) -> list[int], decode(ids) -> str, and tokenizer(text, return_tensors="pt").
    """
    from .tokenizer import load_tokenizer

    folder = resolve(path, "load_gpt2", "config.json, model.safetensors, and vocab.json + merges.txt or "
                                        "tokenizer.json")
    cfg = read_config(folder)
    tokenizer = load_tokenizer(folder)
    if tokenizer.vocab_size > cfg["vocab_size"]:
        raise ValueError(f"{folder}: the tokenizer has {tokenizer.vocab_size} tokens but config.json has "
                         f"vocab_size={cfg['vocab_size']}: some ids would have no embedding")
    with _open_weights(folder) as f:
        names = _names(f)
        task, n, fresh = _plan(f, names, cfg, f.where, task, num_labels)
        _check_weights(f, names, cfg, f.where, {} if task is None or fresh else
                       {k: shape for k, (_, shape) in task_schema("gpt2", task, cfg["n_embd"], n).items()})
        model = build_model(cfg, dtype)

        def get(name: str) -> np.ndarray:
            return f.get_tensor(names[name])

        # Part by part, so only one block's arrays are ever held next to the model (not a second copy of it all).
        loaded = set()
        for part in _parts(get, cfg):
            model.load_state_dict(part, strict=False)  # copies (and casts) into the model's own arrays
            loaded |= set(part)
        score = {"score.weight": get("score.weight")} if task is not None and not fresh else None
    left = {name for name, _ in model.named_parameters()} - loaded  # a tied head.weight is listed as tok_emb.weight
    assert not left, f"load_gpt2 left {sorted(left)} unset"  # the mapping covers every parameter by construction
    model.config = ModelConfig(cfg)
    if task is not None:
        model = build_task_model(model, task, task_config(cfg, n), n, fresh)
        if score is not None:
            model.load_state_dict(score, strict=False)
    return model, tokenizer


def _plan(f, names: dict, cfg: dict, where: str, want: str, num_labels) -> tuple[str | None, int, bool]:
    """(the task head to build or None, its labels, whether it starts untrained) for ``want``: "auto" (what the
    checkpoint holds), "causal" (the language-model head) or "sequence"."""
    if want not in ("auto", "causal", "sequence"):
        raise ValueError(f"load_gpt2: task must be 'auto', 'causal' or 'sequence' (GPT2ForSequenceClassification), "
                         f"got {want!r}")
    held = task_of(cfg, "gpt2", names)
    if held is not None and want == "causal":
        raise ValueError(f"{where} holds a GPT2ForSequenceClassification head, not the language-model head asked "
                         "for; load it with AutoModelForSequenceClassification")
    task = held if want == "auto" else (None if want == "causal" else "sequence")
    return plan_labels(f, names, cfg, where, "gpt2", task, held, num_labels)
