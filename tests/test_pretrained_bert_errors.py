"""load_bert on wrong or incomplete BERT / DistilBERT folders: every error names the file, the key or the shape."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import safetensors.numpy
from bert_tiny import VOCAB, tiny_config, write_checkpoint

from tinyattn.pretrained import AutoModel, AutoTokenizer, load_bert


@pytest.fixture(params=["bert", "distilbert"])
def ckpt(tmp_path, request):
    return write_checkpoint(tmp_path / "m", family=request.param)


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


def _rewrite_weights(folder, weights):
    safetensors.numpy.save_file(weights, os.path.join(folder, "model.safetensors"))


def _stored(folder) -> dict:
    return safetensors.numpy.load_file(os.path.join(folder, "model.safetensors"))


_DROP = object()


def test_not_a_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="load_bert: .* is not a folder"):
        load_bert(tmp_path / "nowhere")


@pytest.mark.parametrize("name, error, message", [
    ("config.json", FileNotFoundError, "has no config.json"),
    ("model.safetensors", FileNotFoundError, "has no weights: expected model.safetensors or"),
    ("vocab.txt", FileNotFoundError, "has no tokenizer: a BERT or DistilBERT folder needs vocab.txt or tokenizer.json"),
])
def test_missing_file(ckpt, name, error, message):
    os.remove(os.path.join(ckpt[0], name))
    with pytest.raises(error, match=message):
        load_bert(ckpt[0])


def test_a_pytorch_bin_that_is_not_a_zip_archive(ckpt):  # (a real one loads: test_pretrained_checkpoint.py)
    os.rename(os.path.join(ckpt[0], "model.safetensors"), os.path.join(ckpt[0], "pytorch_model.bin"))
    with pytest.raises(ValueError, match="pytorch_model.bin is not a zip archive: PyTorch before 1.6 .* fetch the "
                                         "checkpoint's .safetensors"):
        load_bert(ckpt[0])


@pytest.mark.parametrize("model_type, message", [
    ("gpt2", "model_type is 'gpt2'; load_bert reads model_type 'bert' or 'distilbert' \\(use load_gpt2"),
    ("roberta", "model_type is 'roberta'; load_bert reads"),
])  # no model_type at all: test_pretrained_checkpoint.py
def test_wrong_model_type(ckpt, model_type, message):
    _rewrite_config(ckpt[0], model_type=model_type)
    with pytest.raises(ValueError, match=message):
        load_bert(ckpt[0])
    if model_type == "roberta":
        with pytest.raises(ValueError, match="model_type is 'roberta'; tinyattn reads 'gpt2', 'bert', 'distilbert'"):
            AutoModel.from_pretrained(ckpt[0])
        with pytest.raises(ValueError, match="model_type is 'roberta'"):
            AutoTokenizer.from_pretrained(ckpt[0])


_KEYS = {"bert": ["vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                  "max_position_embeddings"],
         "distilbert": ["vocab_size", "dim", "n_layers", "n_heads", "hidden_dim", "max_position_embeddings"]}


@pytest.mark.parametrize("family", ["bert", "distilbert"])
@pytest.mark.parametrize("index", range(6))
def test_missing_config_key(tmp_path, family, index):
    folder, _, _ = write_checkpoint(tmp_path / "m", family=family)
    key = _KEYS[family][index]
    _rewrite_config(folder, **{key: _DROP})
    with pytest.raises(ValueError, match=f"config.json has no '{key}': a {family} config needs"):
        load_bert(folder)


@pytest.mark.parametrize("family, changes, message", [
    ("bert", {"hidden_size": 0}, "hidden_size must be a positive int, got 0"),
    ("bert", {"num_attention_heads": True}, "num_attention_heads must be a positive int, got True"),
    ("distilbert", {"n_layers": "2"}, "n_layers must be a positive int, got '2'"),
    ("bert", {"num_attention_heads": 5}, "hidden_size=12 is not divisible by num_attention_heads=5"),
    ("distilbert", {"n_heads": 5}, "dim=12 is not divisible by n_heads=5"),
    ("bert", {"hidden_act": "relu"}, "hidden_act='relu' is not supported"),
    ("distilbert", {"activation": "swish"}, "activation='swish' is not supported"),
    ("bert", {"type_vocab_size": 0}, "type_vocab_size must be a positive int, got 0"),
    ("bert", {"position_embedding_type": "relative_key"}, "position_embedding_type='relative_key' is not supported"),
    ("bert", {"is_decoder": True}, "is_decoder=True is not supported"),
    ("distilbert", {"sinusoidal_pos_embds": True}, "sinusoidal_pos_embds=True is not supported"),
    ("bert", {"tie_word_embeddings": False}, "tie_word_embeddings=False is not supported"),
])
def test_bad_config_value(tmp_path, family, changes, message):
    folder, _, _ = write_checkpoint(tmp_path / "m", family=family)
    _rewrite_config(folder, **changes)
    with pytest.raises(ValueError, match=message):
        load_bert(folder)


@pytest.mark.parametrize("content, message", [("{not json", "config.json is not valid JSON"),
                                              ("[1]", "must hold a JSON object, got list")])
def test_config_that_is_not_a_json_object(ckpt, content, message):
    with open(os.path.join(ckpt[0], "config.json"), "w") as f:
        f.write(content)
    with pytest.raises(ValueError, match=message):
        load_bert(ckpt[0])


def test_missing_weight_is_named(ckpt):
    folder, cfg, _ = ckpt
    w = _stored(folder)
    key = next(k for k in w if k.endswith(("layer.1.attention.q_lin.bias", "layer.1.attention.self.query.bias")))
    del w[key]
    _rewrite_weights(folder, w)
    name = key.split(".", 1)[1]  # without the family prefix
    with pytest.raises(ValueError, match=f"is missing weights \\['{name}'\\] for a {cfg['model_type']} with 2 layers"):
        load_bert(folder)


def test_part_of_the_head_is_missing(ckpt):
    folder, cfg, _ = ckpt
    w = _stored(folder)
    key = "cls.predictions.bias" if cfg["model_type"] == "bert" else "vocab_projector.bias"
    del w[key]
    _rewrite_weights(folder, w)
    with pytest.raises(ValueError, match=f"missing weights \\['{key}'\\].*the masked-LM head's weights"):
        load_bert(folder)


def test_unknown_weight_is_named(ckpt):
    folder, cfg, _ = ckpt
    w = _stored(folder)
    w["adapter.weight"] = np.zeros((2, 12), np.float32)  # no part of any model built here (task heads:
    _rewrite_weights(folder, w)  # test_pretrained_checkpoint.py)
    with pytest.raises(ValueError, match="has weights a .* with this config does not have: \\['adapter.weight'\\]"):
        load_bert(folder)


def test_more_layers_in_the_file_than_in_the_config(ckpt):
    _rewrite_config(ckpt[0], **({"num_hidden_layers": 1} if ckpt[1]["model_type"] == "bert" else {"n_layers": 1}))
    with pytest.raises(ValueError, match="layer.1.* \\(.* in all; config.json says 1 layers\\)"):
        load_bert(ckpt[0])


def test_weight_with_the_wrong_shape(ckpt):
    folder, cfg, _ = ckpt
    w = _stored(folder)
    key = next(k for k in w if k.endswith("position_embeddings.weight"))
    w[key] = w[key][:10]
    _rewrite_weights(folder, w)
    with pytest.raises(ValueError, match=f"'{key}' has shape \\(10, 12\\) but config.json \\(.*"
                                         "max_position_embeddings=24\\) needs \\(24, 12\\)"):
        load_bert(folder)


def test_a_stored_copy_of_the_tied_projection_is_checked(ckpt):
    folder, cfg, _ = ckpt
    w = _stored(folder)
    key = "cls.predictions.decoder.weight" if cfg["model_type"] == "bert" else "vocab_projector.weight"
    w[key] = np.zeros((len(VOCAB), 11), np.float32)
    _rewrite_weights(folder, w)
    with pytest.raises(ValueError, match=f"'{key}' has shape \\({len(VOCAB)}, 11\\)"):
        load_bert(folder)
    w[key] = w[next(k for k in w if k.endswith("word_embeddings.weight"))]  # the tied copy, as the right shape
    _rewrite_weights(folder, w)
    assert load_bert(folder)[0].head is not None


def test_integer_weights_are_refused(ckpt):
    folder, _, _ = ckpt
    w = _stored(folder)
    key = next(k for k in w if k.endswith("embeddings.LayerNorm.bias"))
    w[key] = np.zeros(12, dtype=np.int32)
    _rewrite_weights(folder, w)
    with pytest.raises(ValueError, match=f"'{key}' has dtype I32; expected floats"):
        load_bert(folder)


def test_corrupt_safetensors(ckpt):
    with open(os.path.join(ckpt[0], "model.safetensors"), "wb") as f:
        f.write(b"\x00" * 5)
    with pytest.raises(ValueError, match="could not be read as safetensors"):
        load_bert(ckpt[0])


@pytest.mark.parametrize("drop", ["[CLS]", "[SEP]", "[UNK]"])
def test_vocabulary_without_a_special_token(ckpt, drop):
    with open(os.path.join(ckpt[0], "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in VOCAB if t != drop))
    with pytest.raises(ValueError, match=f"vocab.txt has no '{drop.replace('[', '.').replace(']', '.')}'"):
        load_bert(ckpt[0])


def test_vocabulary_with_a_token_twice(ckpt):
    with open(os.path.join(ckpt[0], "vocab.txt"), "a", encoding="utf-8") as f:
        f.write("cat\n")
    with pytest.raises(ValueError, match=f"vocab.txt line {len(VOCAB) + 1}: 'cat' is listed twice"):
        load_bert(ckpt[0])


def test_vocabulary_larger_than_the_embedding(ckpt):
    with open(os.path.join(ckpt[0], "vocab.txt"), "a", encoding="utf-8") as f:
        f.write("zebra\n")
    with pytest.raises(ValueError, match=f"the tokenizer has {len(VOCAB) + 1} tokens but config.json has "
                                         f"vocab_size={len(VOCAB)}"):
        load_bert(ckpt[0])


def test_malformed_tokenizer_files(tmp_path):
    folder, _, _ = write_checkpoint(tmp_path / "m", tokenizer="json")
    with open(os.path.join(folder, "tokenizer.json"), "w") as f:
        f.write('{"model": 3}')
    with pytest.raises(ValueError, match="tokenizer.json could not be read as a Hugging Face tokenizer"):
        load_bert(folder)
    folder, _, _ = write_checkpoint(tmp_path / "n")
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        f.write("{nope")
    with pytest.raises(ValueError, match="tokenizer_config.json is not valid JSON"):
        load_bert(folder)


def test_bad_dtype(ckpt):
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        load_bert(ckpt[0], dtype=np.int64)


def test_bad_model_inputs(tmp_path):
    folder, _, _ = write_checkpoint(tmp_path / "m", tiny_config("bert"))
    model, tok = load_bert(folder)
    ids = tok("it is", return_tensors="pt")["input_ids"]
    with pytest.raises(TypeError, match="input_ids must be integer token ids of shape \\(B, T\\)"):
        model(input_ids="it is")
    with pytest.raises(ValueError, match="input_ids must have shape \\(B, T\\) .*got shape \\(4,\\)"):
        model(ids[0])
    with pytest.raises(ValueError, match="input_ids has T=30 tokens, more than the model's 24 positions"):
        model(np.zeros((1, 30), np.int64))
    with pytest.raises(ValueError, match=f"input_ids holds id {len(VOCAB)}"):
        model(np.array([[len(VOCAB)]]))
    with pytest.raises(ValueError, match="attention_mask has shape \\(1, 3\\) but input_ids has \\(1, 4\\)"):
        model(ids, attention_mask=np.ones((1, 3), np.int64))
    with pytest.raises(ValueError, match="attention_mask must hold 0 .* and 1"):
        model(ids, attention_mask=np.full((1, 4), 2))
    with pytest.raises(ValueError, match="rows \\[0\\] of attention_mask are all 0"):
        model(ids, attention_mask=np.zeros((1, 4), np.int64))
    with pytest.raises(ValueError, match="token_type_ids holds id 2 .*type_vocab_size=2"):
        model(ids, token_type_ids=np.full((1, 4), 2))
