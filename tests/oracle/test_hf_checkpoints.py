"""Hugging Face checkpoints written by transformers itself, loaded by tinyattn.pretrained and compared with
transformers' own forward: logits, every hidden state, every attention map, in float64 and float32.

The configs are real Hub models' config.json (every field kept; only the layer count cut to 2 so CI stays
quick), with random weights (LayerNorms and biases moved off 1 and 0 so every weight matters). Formats:
model.safetensors, a sharded checkpoint (model.safetensors.index.json), float16- and bfloat16-stored weights
(compared with transformers loading that same file into float32), and PyTorch's pytorch_model.bin
(torch.save). Configs tinyattn does not build must be refused naming the field and its value. Tolerances: float64 1e-10 relative to the largest value (measured: 2e-13 at
worst, gpt2-medium's widths); float32 5e-4 (measured 1.4e-4 at worst: random weights saturate the softmax).
"""
import copy
import json
import os

import numpy as np
import pytest
import tokenizers as tk
import torch
import transformers

from tinyattn.pretrained import AutoModel, load_bert, load_gpt2

TEXT = ("The quick brown fox jumps over the lazy dog. It's 2024; naïve café, résumé. Attention is all you need. "
        "中文 東京 😀") * 10

GPT2 = {"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"], "attn_pdrop": 0.1,
        "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256, "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024, "n_embd": 768, "n_head": 12,
        "n_inner": None, "n_layer": 12, "n_positions": 1024, "reorder_and_upcast_attn": False, "resid_pdrop": 0.1,
        "scale_attn_by_inverse_layer_idx": False, "scale_attn_weights": True, "summary_activation": None,
        "summary_first_dropout": 0.1, "summary_proj_to_labels": True, "summary_type": "cls_index",
        "summary_use_proj": True, "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}},
        "transformers_version": "4.32.1", "use_cache": True, "vocab_size": 50257}  # gpt2
TINY_GPT2 = dict(GPT2, n_embd=2, n_head=2, n_layer=2)  # sshleifer/tiny-gpt2's sizes
DISTILGPT2 = {k: v for k, v in GPT2.items() if k not in ("n_inner", "reorder_and_upcast_attn",
                                                         "scale_attn_by_inverse_layer_idx", "scale_attn_weights")}
DISTILGPT2.update(_num_labels=1, id2label={"0": "LABEL_0"}, label2id={"LABEL_0": 0}, n_layer=6)
MEDIUM = dict(GPT2, n_embd=1024, n_head=16, n_layer=24, n_special=0, predict_special_tokens=True)
BERT_BASE = {"architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1, "gradient_checkpointing": False,
             "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02,
             "intermediate_size": 3072, "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "bert",
             "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 0,
             "position_embedding_type": "absolute", "transformers_version": "4.6.0.dev0", "type_vocab_size": 2,
             "use_cache": True, "vocab_size": 30522}  # bert-base-uncased
BERT_TINY = {"hidden_size": 128, "hidden_act": "gelu", "initializer_range": 0.02, "vocab_size": 30522,
             "hidden_dropout_prob": 0.1, "num_attention_heads": 2, "type_vocab_size": 2,
             "max_position_embeddings": 512, "num_hidden_layers": 2, "intermediate_size": 512,
             "attention_probs_dropout_prob": 0.1}  # prajjwal1/bert-tiny: no model_type, no architectures
MINILM = dict(BERT_BASE, architectures=["BertModel"], hidden_size=384, intermediate_size=1536, num_hidden_layers=6,
              _name_or_path="nreimers/MiniLM-L6-H384-uncased", transformers_version="4.8.2")  # all-MiniLM-L6-v2
MULTI = {k: v for k, v in BERT_BASE.items() if k not in ("gradient_checkpointing", "position_embedding_type",
                                                         "transformers_version", "use_cache")}
MULTI.update(directionality="bidi", pooler_fc_size=768, pooler_num_attention_heads=12, pooler_num_fc_layers=3,
             pooler_size_per_head=128, pooler_type="first_token_transform", vocab_size=119547)  # multilingual-cased
DISTIL = {"activation": "gelu", "architectures": ["DistilBertForMaskedLM"], "attention_dropout": 0.1, "dim": 768,
          "dropout": 0.1, "hidden_dim": 3072, "initializer_range": 0.02, "max_position_embeddings": 512,
          "model_type": "distilbert", "n_heads": 12, "n_layers": 6, "pad_token_id": 0, "qa_dropout": 0.1,
          "seq_classif_dropout": 0.2, "sinusoidal_pos_embds": False, "tie_weights_": True,
          "transformers_version": "4.18.0", "vocab_size": 30522}  # distilbert-base-uncased
SMALL_BERT = dict(BERT_TINY, model_type="bert", architectures=["BertForMaskedLM"])
SMALL_DISTIL = dict(DISTIL, dim=64, hidden_dim=128, n_heads=4)


def _family(cfg):
    return cfg.get("model_type", "bert")


def _build(cfg: dict, layers: int = 2):
    """transformers' model for this config.json (its architectures[0]), random weights, eager attention."""
    cfg = dict(cfg)
    fam = _family(cfg)
    key = {"gpt2": "n_layer", "bert": "num_hidden_layers", "distilbert": "n_layers"}[fam]
    cfg[key] = min(cfg[key], layers)
    config = {"gpt2": transformers.GPT2Config, "bert": transformers.BertConfig,
              "distilbert": transformers.DistilBertConfig}[fam](**cfg)
    config._attn_implementation = "eager"  # the only one that returns attention maps
    default = {"gpt2": "GPT2LMHeadModel", "bert": "BertModel", "distilbert": "DistilBertModel"}[fam]
    model = getattr(transformers, cfg.get("architectures", [default])[0])(config).eval()
    torch.manual_seed(0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            is_norm = "LayerNorm" in name or "layer_norm" in name or ".ln_" in name or "ln_f" in name
            p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.3 * torch.randn_like(p) if is_norm
                    else 0.3 * torch.randn_like(p))
    return model, cfg


def _tokenizer_files(folder, fam):
    if fam == "gpt2":
        tok = tk.Tokenizer(tk.models.BPE())
        tok.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
        trainer = tk.trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>"],
                                         initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet())
        tok.train_from_iterator([TEXT], trainer)
        tok.model.save(folder)  # vocab.json, merges.txt
        return
    tok = tk.Tokenizer(tk.models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = tk.normalizers.BertNormalizer()
    tok.pre_tokenizer = tk.pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator([TEXT], tk.trainers.WordPieceTrainer(
        vocab_size=300, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1])))


def _save(model, cfg, folder, fmt):
    if fmt in ("fp16", "bf16"):
        copy.deepcopy(model).to(torch.float16 if fmt == "fp16" else torch.bfloat16).save_pretrained(folder)
    elif fmt == "bf16-bin":
        os.makedirs(folder, exist_ok=True)
        torch.save(copy.deepcopy(model).to(torch.bfloat16).state_dict(), os.path.join(folder, "pytorch_model.bin"))
    elif fmt == "bin":  # PyTorch's own file, as older Hub checkpoints have (transformers 5 writes only safetensors)
        os.makedirs(folder, exist_ok=True)
        torch.save(model.state_dict(), os.path.join(folder, "pytorch_model.bin"))
    else:
        model.save_pretrained(folder, **({"max_shard_size": "2MB"} if fmt == "sharded" else {}))
    if fmt == "sharded":
        assert os.path.isfile(os.path.join(folder, "model.safetensors.index.json"))
        assert not os.path.isfile(os.path.join(folder, "model.safetensors"))
    with open(os.path.join(folder, "config.json"), "w") as f:  # the Hub's config.json, as it is
        json.dump(cfg, f)
    _tokenizer_files(folder, _family(cfg))
    if fmt in ("fp16", "bf16", "bf16-bin"):  # the reference: transformers reading that file into float32
        cls = type(model)
        model = cls.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").eval()
    return model


def _rel(ours, theirs):
    ours, theirs = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
    assert ours.shape == theirs.shape
    return float(np.abs(ours - theirs).max() / max(1.0, np.abs(theirs).max()))


def _compare(folder, hf, dtype, auto=False):
    fam = hf.config.model_type
    ours = AutoModel.from_pretrained(folder, dtype=dtype) if auto else \
        (load_gpt2 if fam == "gpt2" else load_bert)(folder, dtype=dtype)[0]
    hf = hf.to(torch.float64 if dtype == np.float64 else torch.float32)
    rng = np.random.default_rng(1)
    ids = rng.integers(0, hf.config.vocab_size, size=(2, 11))
    mask = np.ones_like(ids)
    mask[1, 6:] = 0  # the second sequence is padded
    extra = {}
    if fam == "bert":
        extra["token_type_ids"] = np.repeat([[0] * 5 + [1] * 6], 2, axis=0)
    with torch.no_grad():
        theirs = hf(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask), output_attentions=True,
                    output_hidden_states=True, **{k: torch.tensor(v) for k, v in extra.items()})
    out = ours(input_ids=ids, attention_mask=mask, output_attentions=True, output_hidden_states=True, **extra)
    real = mask.astype(bool)  # a padded position's own output is not compared (meaningless in both)
    worst = {}
    if getattr(theirs, "logits", None) is not None:
        worst["logits"] = _rel(out.logits.numpy()[real], theirs.logits.numpy()[real])
    assert len(out.hidden_states) == len(theirs.hidden_states)
    worst["hidden"] = max(_rel(a.numpy()[real], b.numpy()[real]) for a, b in zip(out.hidden_states,
                                                                               theirs.hidden_states))
    assert len(out.attentions) == len(theirs.attentions)
    worst["attentions"] = max(_rel(a.numpy().transpose(0, 2, 1, 3)[real], b.numpy().transpose(0, 2, 1, 3)[real])
                              for a, b in zip(out.attentions, theirs.attentions))
    assert out.last_hidden_state.dtype == dtype
    return worst


CASES = {"gpt2": GPT2, "distilgpt2": DISTILGPT2, "gpt2-medium": MEDIUM, "sshleifer/tiny-gpt2": TINY_GPT2,
         "bert-base-uncased": BERT_BASE, "bert-base-multilingual-cased": MULTI, "prajjwal1/bert-tiny": BERT_TINY,
         "sentence-transformers/all-MiniLM-L6-v2": MINILM, "distilbert-base-uncased": DISTIL}


@pytest.mark.parametrize("name", list(CASES))
def test_real_configs_match_transformers(tmp_path, name):
    hf, cfg = _build(CASES[name])
    hf = _save(hf, cfg, str(tmp_path), "safetensors")
    for dtype, tol in ((np.float64, 1e-10), (np.float32, 5e-4)):
        worst = _compare(str(tmp_path), hf, dtype, auto="model_type" in cfg)
        assert max(worst.values()) < tol, (name, np.dtype(dtype).name, worst)


@pytest.mark.parametrize("fmt", ["sharded", "fp16", "bf16", "bin", "bf16-bin"])
@pytest.mark.parametrize("name", ["sshleifer/tiny-gpt2", "prajjwal1/bert-tiny", "distilbert"])
def test_sharded_float16_and_pytorch_files(tmp_path, fmt, name):
    hf, cfg = _build({"sshleifer/tiny-gpt2": dict(TINY_GPT2, n_embd=64, n_head=4), "prajjwal1/bert-tiny": SMALL_BERT,
                      "distilbert": SMALL_DISTIL}[name])
    hf = _save(hf, cfg, str(tmp_path), fmt)
    worst = _compare(str(tmp_path), hf, np.float64)
    assert max(worst.values()) < 1e-10, worst


@pytest.mark.parametrize("cfg", [
    dict(TINY_GPT2, n_embd=16, activation_function="gelu"),
    dict(TINY_GPT2, n_embd=16, activation_function="gelu_pytorch_tanh"),
    dict(TINY_GPT2, n_embd=16, n_inner=37), dict(TINY_GPT2, n_embd=16, tie_word_embeddings=False),
    dict(TINY_GPT2, n_embd=16, layer_norm_epsilon=0.5), dict(TINY_GPT2, n_embd=16, n_positions=16),
    dict(SMALL_BERT, hidden_act="gelu_new"), dict(SMALL_BERT, layer_norm_eps=0.5), dict(SMALL_BERT, type_vocab_size=3),
    dict(SMALL_DISTIL, activation="gelu_new"),
], ids=lambda c: "-".join(f"{k}={c[k]}" for k in ("activation_function", "n_inner", "tie_word_embeddings",
                                                   "layer_norm_epsilon", "n_positions", "hidden_act", "layer_norm_eps",
                                                   "type_vocab_size", "activation") if k in c))
def test_supported_options_match(tmp_path, cfg):
    hf, cfg = _build(cfg)
    hf = _save(hf, cfg, str(tmp_path), "safetensors")
    worst = _compare(str(tmp_path), hf, np.float64)
    assert max(worst.values()) < 1e-10, worst


def test_reorder_and_upcast_attn_changes_only_rounding(tmp_path):
    hf, cfg = _build(dict(TINY_GPT2, n_embd=16, reorder_and_upcast_attn=True))  # transformers runs it in float32 only
    hf = _save(hf, cfg, str(tmp_path), "safetensors")
    worst = _compare(str(tmp_path), hf, np.float32)
    assert max(worst.values()) < 5e-6, worst


@pytest.mark.parametrize("cfg, message", [
    (dict(TINY_GPT2, activation_function="relu"), "activation_function='relu' is not supported"),
    (dict(TINY_GPT2, scale_attn_by_inverse_layer_idx=True), "scale_attn_by_inverse_layer_idx=True is not supported"),
    (dict(TINY_GPT2, scale_attn_weights=False), "scale_attn_weights=False is not supported"),
    (dict(TINY_GPT2, add_cross_attention=True), "add_cross_attention=True is not supported"),
    (dict(SMALL_BERT, hidden_act="relu"), "hidden_act='relu' is not supported"),
    (dict(SMALL_BERT, position_embedding_type="relative_key"),
     "position_embedding_type='relative_key' is not supported .*only position_embedding_type='absolute'"),
    (dict(SMALL_BERT, tie_word_embeddings=False), "tie_word_embeddings=False is not supported"),
    (dict(SMALL_BERT, is_decoder=True), "is_decoder=True is not supported"),
    (dict(SMALL_DISTIL, sinusoidal_pos_embds=True), "sinusoidal_pos_embds=True is not supported"),
    (dict(SMALL_DISTIL, activation="relu"), "activation='relu' is not supported"),
    # (BERT's and DistilBERT's sequence, token and question-answering heads and GPT-2's sequence classifier are
    # built: test_hf_task_heads.py)
    (dict(SMALL_BERT, architectures=["BertForMultipleChoice"]),
     r"holds a classification head .*architectures=\['BertForMultipleChoice'\]"),
    (dict(SMALL_DISTIL, architectures=["DistilBertForMultipleChoice"]),
     r"holds a classification head .*architectures=\['DistilBertForMultipleChoice'\]"),
    (dict(TINY_GPT2, architectures=["GPT2DoubleHeadsModel"]), "holds a multiple-choice head"),
], ids=lambda x: x if isinstance(x, str) else None)
def test_what_is_not_built_is_refused_by_name(tmp_path, cfg, message):
    hf, cfg = _build(cfg)
    _save(hf, cfg, str(tmp_path), "safetensors")
    with pytest.raises(ValueError, match=message):
        (load_gpt2 if _family(cfg) == "gpt2" else load_bert)(str(tmp_path))
