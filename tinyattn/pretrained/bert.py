"""A Hugging Face BERT or DistilBERT checkpoint folder -> the encoder of ``encoder.py``, weight by weight.

The two families store the same architecture under different names (both keep nn.Linear's (out, in)
layout, so no matrix is transposed on the way in):

    this encoder        BERT (prefix "bert.")                DistilBERT (prefix "distilbert.")
    attn.W_q/W_k/W_v    attention.self.query/key/value       attention.q_lin/k_lin/v_lin
    attn.W_o            attention.output.dense               attention.out_lin
    ln1                 attention.output.LayerNorm           sa_layer_norm
    ffn.0 / ffn.2       intermediate.dense / output.dense    ffn.lin1 / ffn.lin2
    ln2                 output.LayerNorm                     output_layer_norm
    head                cls.predictions.*                    vocab_transform, vocab_layer_norm, vocab_projector

A checkpoint saved from the bare encoder (BertModel, DistilBertModel) has no prefix and no head. Older
BERT files name LayerNorm's weight and bias "gamma" and "beta"; Hugging Face renames them on load, and so
does this loader. The head's projection is tied to the word embeddings, so a stored copy is not needed.
"""
from __future__ import annotations

import os

from .. import get_rng
from .checkpoint import FLOATS, ModelConfig, float_dtype, open_weights, read_json, task_head_error
from .encoder import BertModel
from .hub import resolve
from .task_heads import _PREFIX, TASKS, build_task_model, plan_labels, task_config, task_of, task_schema

__all__ = ["load_bert", "read_bert_config", "build_bert"]

_NEEDS = "config.json, model.safetensors, and vocab.txt or tokenizer.json"
# config.json's names for the sizes, per family -> the names used here.
_SIZES = {
    "bert": {"vocab_size": "V", "hidden_size": "C", "num_hidden_layers": "L", "num_attention_heads": "H",
             "intermediate_size": "F", "max_position_embeddings": "P"},
    "distilbert": {"vocab_size": "V", "dim": "C", "n_layers": "L", "n_heads": "H", "hidden_dim": "F",
                   "max_position_embeddings": "P"},
}
_GELU = {"gelu": "none", "gelu_new": "tanh", "gelu_pytorch_tanh": "tanh"}  # Hugging Face's names -> nn.GELU's
_LAYER = {  # this encoder's name in layer i -> the family's
    "bert": {"attn.W_q": "attention.self.query", "attn.W_k": "attention.self.key", "attn.W_v": "attention.self.value",
             "attn.W_o": "attention.output.dense", "ln1": "attention.output.LayerNorm", "ffn.0": "intermediate.dense",
             "ffn.2": "output.dense", "ln2": "output.LayerNorm"},
    "distilbert": {"attn.W_q": "attention.q_lin", "attn.W_k": "attention.k_lin", "attn.W_v": "attention.v_lin",
                   "attn.W_o": "attention.out_lin", "ln1": "sa_layer_norm", "ffn.0": "ffn.lin1", "ffn.2": "ffn.lin2",
                   "ln2": "output_layer_norm"},
}
_LAYERS = {"bert": "encoder.layer", "distilbert": "transformer.layer"}
_HEAD = {  # the masked-LM head: this encoder's name -> the family's
    "bert": {"head.dense": "cls.predictions.transform.dense", "head.norm": "cls.predictions.transform.LayerNorm",
             "head.decoder.bias": "cls.predictions.bias"},
    "distilbert": {"head.dense": "vocab_transform", "head.norm": "vocab_layer_norm",
                   "head.decoder.bias": "vocab_projector.bias"},
}
_HEAD_START = {"bert": "cls.predictions.", "distilbert": "vocab_"}
_TIED = {"bert": ("cls.predictions.decoder.weight", "cls.predictions.decoder.bias"),  # copies of what is tied
         "distilbert": ("vocab_projector.weight",)}
# Weights of other heads some checkpoints carry (BertForPreTraining's pooler and next-sentence head): not used here.
_BUILDS = {"bert": "BertModel, BertForMaskedLM / BertForPreTraining (their masked-LM head) and Bert" +
                   "/".join(TASKS.values()),
           "distilbert": "DistilBertModel, DistilBertForMaskedLM and DistilBert" + "/".join(TASKS.values())}
_UNUSED = {"bert": ("pooler.", "cls.seq_relationship.", "embeddings.position_ids"),
           "distilbert": ("embeddings.position_ids",)}


def read_bert_config(folder: str) -> dict:
    """config.json -> {"family", V, C, L, H, F, P, types, eps, gelu}, checked."""
    path = os.path.join(folder, "config.json")
    cfg = read_json(folder, "config.json", f"a Hugging Face BERT or DistilBERT folder holds {_NEEDS}")
    family = cfg.get("model_type")
    if family is None:  # older configs (prajjwal1/bert-tiny, Google's BERT miniatures) have no model_type:
        # as BertModel.from_pretrained does, read the fields; the family is the one whose size names are there
        family = next((fam for fam, sizes in _SIZES.items() if all(k in cfg for k in sizes)), None)
    if family not in _SIZES:
        if "model_type" not in cfg:
            raise ValueError(f"{path} has no model_type and not all the size fields of either family (bert: "
                             f"{', '.join(_SIZES['bert'])}; distilbert: {', '.join(_SIZES['distilbert'])})")
        raise ValueError(f"{path}: model_type is {family!r}; load_bert reads model_type 'bert' or 'distilbert'"
                         + (" (use load_gpt2 for GPT-2)" if family == "gpt2" else ""))
    out = {"family": family}
    for key, short in _SIZES[family].items():
        if key not in cfg:
            raise ValueError(f"{path} has no {key!r}: a {family} config needs {', '.join(_SIZES[family])}")
        v = cfg[key]
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ValueError(f"{path}: {key} must be a positive int, got {v!r}")
        out[short] = v
    names = {v: k for k, v in _SIZES[family].items()}
    if out["C"] % out["H"]:
        raise ValueError(f"{path}: {names['C']}={out['C']} is not divisible by {names['H']}={out['H']}")
    act_key = "hidden_act" if family == "bert" else "activation"
    act = cfg.get(act_key, "gelu")  # the defaults are Hugging Face's BertConfig / DistilBertConfig's
    if act not in _GELU:
        raise ValueError(f"{path}: {act_key}={act!r} is not supported (expected one of {sorted(_GELU)})")
    out["gelu"] = _GELU[act]
    if family == "bert":
        out["types"] = cfg.get("type_vocab_size", 2)
        if isinstance(out["types"], bool) or not isinstance(out["types"], int) or out["types"] <= 0:
            raise ValueError(f"{path}: type_vocab_size must be a positive int, got {out['types']!r}")
        out["eps"] = float(cfg.get("layer_norm_eps", 1e-12))
        unsupported = {"position_embedding_type": "absolute", "is_decoder": False, "add_cross_attention": False}
    else:
        out["types"], out["eps"] = 0, 1e-12  # DistilBERT: no token types; its LayerNorms' eps is fixed at 1e-12
        unsupported = {"sinusoidal_pos_embds": False}  # the positions are then a formula, not weights to read
    unsupported["tie_word_embeddings"] = True
    for key, built in unsupported.items():
        if cfg.get(key, built) != built:
            raise ValueError(f"{path}: {key}={cfg[key]!r} is not supported (only {key}={built!r} is built here)")
    out["raw"] = cfg
    return out


def _schema(c: dict) -> tuple[dict, dict]:
    """({family's name: (module name, shape)} of the encoder, the same for the masked-LM head)."""
    fam, V, C, F, P = c["family"], c["V"], c["C"], c["F"], c["P"]
    body = {"embeddings.word_embeddings.weight": ("embeddings.word.weight", (V, C)),
            "embeddings.position_embeddings.weight": ("embeddings.position.weight", (P, C)),
            "embeddings.LayerNorm.weight": ("embeddings.norm.weight", (C,)),
            "embeddings.LayerNorm.bias": ("embeddings.norm.bias", (C,))}
    if c["types"]:
        body["embeddings.token_type_embeddings.weight"] = ("embeddings.token_type.weight", (c["types"], C))
    out_in = {"attn.W_q": (C, C), "attn.W_k": (C, C), "attn.W_v": (C, C), "attn.W_o": (C, C),
              "ffn.0": (F, C), "ffn.2": (C, F), "ln1": None, "ln2": None}  # nn.Linear: (out, in), as stored
    for i in range(c["L"]):
        for ours, theirs in _LAYER[fam].items():
            shape = out_in[ours]
            w, b = (shape, (shape[0],)) if shape else ((C,), (C,))
            body[f"{_LAYERS[fam]}.{i}.{theirs}.weight"] = (f"layers.{i}.{ours}.weight", w)
            body[f"{_LAYERS[fam]}.{i}.{theirs}.bias"] = (f"layers.{i}.{ours}.bias", b)
    h = _HEAD[fam]
    head = {h["head.dense"] + ".weight": ("head.dense.weight", (C, C)),
            h["head.dense"] + ".bias": ("head.dense.bias", (C,)),
            h["head.norm"] + ".weight": ("head.norm.weight", (C,)), h["head.norm"] + ".bias": ("head.norm.bias", (C,)),
            h["head.decoder.bias"]: ("head.decoder.bias", (V,))}
    return body, head


def _names(keys, family: str) -> dict[str, str]:
    """{the family's name without prefix, LayerNorm's gamma/beta read as weight/bias: the key in the file}."""
    names = {}
    for key in keys:
        name = key.removeprefix(family + ".")
        if name.endswith(".gamma"):
            name = name[: -len("gamma")] + "weight"
        elif name.endswith(".beta"):
            name = name[: -len("beta")] + "bias"
        names[name] = key
    return names


def _check(f, names: dict, c: dict, where: str, task: str | None, n: int) -> bool:
    """Every name, shape and dtype in the file against the config; returns whether the file has the MLM head.
    ``task``: the task head (task_heads.py) the model is built with, read from the file if it holds it."""
    fam = c["family"]
    body, head = _schema(c)
    has_head = any(n.startswith(_HEAD_START[fam]) for n in names)
    expected = {**body, **head} if has_head else body
    missing = [k for k in expected if k not in names]
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        what = " (the file has some of the masked-LM head's weights, so it needs all of them)" \
            if has_head and any(k in head for k in missing) else ""
        raise ValueError(f"{where} is missing weights {missing[:5]}{more} for a {fam} with "
                         f"{c['L']} layers{what}")
    if task is not None:
        expected.update(task_schema(fam, task, c["C"], n))  # (none of it missing: _plan saw the head's weights)
    tied = {k: (c["V"], c["C"]) if k.endswith("weight") else (c["V"],) for k in _TIED[fam]}
    unexpected = [k for k in names if k not in expected and k not in tied and not k.startswith(_UNUSED[fam])]
    head = task_head_error(where, unexpected, c["raw"], "load_bert", _BUILDS[fam])
    if head is not None:
        raise head
    if unexpected:
        raise ValueError(f"{where} has weights a {fam} with this config does not have: {unexpected[:5]} "
                         f"({len(unexpected)} in all; config.json says {c['L']} layers)")
    sizes = ", ".join(f"{k}={c['raw'][k]}" for k in _SIZES[fam])
    for name, key in names.items():
        shape_needed = expected[name][1] if name in expected else tied.get(name)
        if shape_needed is None:
            continue  # an unused head's weight: not read
        info = f.get_slice(key)
        shape, dtype = tuple(info.get_shape()), info.get_dtype()
        if shape != shape_needed:
            labels = f" and {n} labels (num_labels)" if task and name in task_schema(fam, task, c["C"], n) else ""
            raise ValueError(f"{where}: {key!r} has shape {shape} but config.json ({sizes}){labels} needs "
                             f"{shape_needed}")
        if dtype not in FLOATS:
            raise ValueError(f"{where}: {key!r} has dtype {dtype}; expected floats "
                             f"({', '.join(FLOATS)})")
    return has_head


def _plan(f, names: dict, c: dict, where: str, want: str, num_labels) -> tuple[str | None, int, bool]:
    """(the task head to build or None, its number of labels, whether it starts untrained) for ``want``:
    "auto" (whatever the checkpoint holds), "mlm" (the masked-LM head), or one of TASKS."""
    fam = c["family"]
    if want not in ("auto", "mlm", *TASKS):
        raise ValueError(f"load_bert: task must be one of {['auto', 'mlm', *TASKS]}, got {want!r}")
    held = task_of(c["raw"], fam, names)
    if held is not None and want != "auto" and want != held:  # Hugging Face would load the encoder and start a
        # new head (or reuse a same-shaped classifier): refused, so no fine-tuned head is silently dropped
        raise ValueError(f"{where} holds a {_PREFIX[fam]}{TASKS[held]} head, not the "
                         f"{'masked-LM head' if want == 'mlm' else _PREFIX[fam] + TASKS[want]} asked for; "
                         f"load it with AutoModel{TASKS[held]}")
    if want == "mlm" and not any(k.startswith(_HEAD_START[fam]) for k in names):
        raise ValueError(f"{where} has no masked-LM head ({_HEAD_START[fam]}* weights): it is a bare encoder; "
                         "AutoModel loads it")
    task = held if want in ("auto", "mlm") else want
    return plan_labels(f, names, c["raw"], where, fam, task, held, num_labels)


def build_bert(c: dict, mlm_head: bool, dtype=None) -> BertModel:
    """An untrained BertModel for this (read_bert_config) config, in eval mode; tinyattn's seeded stream untouched."""
    dt = float_dtype(dtype)
    rng = get_rng()
    state = rng.bit_generator.state  # building draws random init weights: leave the user's seeded stream as it was
    try:
        model = BertModel(c["family"], c["V"], c["P"], c["C"], c["H"], c["L"], c["F"], c["types"], c["eps"],
                          gelu=c["gelu"], mlm_head=mlm_head)
    finally:
        rng.bit_generator.state = state
    return model.to(dt).eval()


def load_bert(path, dtype=None, *, task: str = "auto", num_labels: int | None = None):
    """A Hugging Face BERT or DistilBERT folder, or a model name in the local cache -> (model, tokenizer).

    The folder holds config.json (model_type "bert" or "distilbert"), model.safetensors (with or without
    the masked-LM head, or the bare encoder's keys, or a task head: task_heads.py), and vocab.txt or
    tokenizer.json; as ``hf download distilbert-base-uncased --include "*.json" --include "*.txt"
    --include "*.safetensors"`` fetches them. dtype: float32 or float64 (None = tinyattn's default).
    task: "auto" (what the checkpoint holds), "mlm", or "sequence" / "token" / "qa" (a head the checkpoint
    lacks starts untrained, with num_labels labels: the start of fine-tuning).

    model(**tokenizer(texts, return_tensors="pt", padding=True), output_attentions=True) -> outputs with
    last_hidden_state (B, T, C), attentions (a tuple over layers of (B, H, T, T)) and, with the head,
    logits (B, T, vocab_size); a task model's outputs are Hugging Face's (loss, logits, start/end_logits).
    """
    from .wordpiece import load_wordpiece

    folder = resolve(path, "load_bert", _NEEDS)
    c = read_bert_config(folder)
    tokenizer = load_wordpiece(folder, c["family"])
    if tokenizer.vocab_size > c["V"]:
        raise ValueError(f"{folder}: the tokenizer has {tokenizer.vocab_size} tokens but config.json has "
                         f"vocab_size={c['V']}: some ids would have no embedding")
    with open_weights(folder) as f:
        names = _names(f.keys(), c["family"])
        task, n, fresh = _plan(f, names, c, f.where, task, num_labels)
        has_head = _check(f, names, c, f.where, None if fresh else task, n) and task is None
        model = build_bert(c, has_head, dtype)
        body, head = _schema(c)
        wanted = {**body, **(head if has_head else {})}  # {the family's name: (this model's name, shape)}
        if task is not None:
            model = build_task_model(model, task, task_config(c["raw"], n), n, fresh)
            wanted = {k: ("body." + ours, shape) for k, (ours, shape) in wanted.items()}
            if not fresh:
                wanted.update(task_schema(c["family"], task, c["C"], n))
        state = {ours: f.get_tensor(names[theirs]) for theirs, (ours, _) in wanted.items()}
    model.load_state_dict(state, strict=False)  # copies (and casts) into the model's own arrays
    left = {n for n, _ in model.named_parameters()} - set(state)  # the tied decoder.weight is listed as the embedding
    assert fresh or not left, f"load_bert left {sorted(left)} unset"  # the mapping covers every parameter
    if task is None:
        model.config = ModelConfig(c["raw"])
    return model, tokenizer
