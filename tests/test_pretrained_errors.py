"""load_gpt2 on wrong or incomplete checkpoint folders: every error names the file, the key or the shape."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import safetensors.numpy
from gpt2_tiny import write_checkpoint

from tinyattn.pretrained import load_gpt2


@pytest.fixture
def ckpt(tmp_path):
    return write_checkpoint(tmp_path / "gpt2-tiny")


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
    ("model.safetensors", "has no weights: expected model.safetensors or"),
    ("vocab.json", r"missing: vocab.json"),
    ("merges.txt", r"missing: merges.txt"),
])
def test_missing_file(ckpt, name, message):
    os.remove(os.path.join(ckpt[0], name))
    with pytest.raises(FileNotFoundError, match=message):
        load_gpt2(ckpt[0])


def test_a_pytorch_bin_that_is_not_a_zip_archive(ckpt):  # (a real one loads: test_pretrained_checkpoint.py)
    os.rename(os.path.join(ckpt[0], "model.safetensors"), os.path.join(ckpt[0], "pytorch_model.bin"))
    with pytest.raises(ValueError, match="pytorch_model.bin is not a zip archive: PyTorch before 1.6 .* fetch the "
                                         "checkpoint's .safetensors"):
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


def _write_by_hand(folder, w, dtype_of) -> None:
    """model.safetensors written byte by byte (8-byte header length, JSON header, raw data), so that dtypes
    NumPy has no name for can be stored: dtype_of(name) -> "F32", "BF16" (the top 16 bits of each float32) or "I32"."""
    header, blobs, at = {}, [], 0
    for k, v in w.items():
        kind = dtype_of(k)
        raw = {"F32": lambda: v.astype(np.float32).tobytes(), "I32": lambda: v.astype(np.int32).tobytes(),
               "BF16": lambda: (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16).tobytes()}[kind]()
        header[k] = {"dtype": kind, "shape": list(v.shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    text = json.dumps(header).encode()
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))


def test_bfloat16_weights_are_read_exactly(ckpt, tmp_path):
    """NumPy has no bfloat16: each is read as the float32 whose low 16 mantissa bits are 0, which it is."""
    folder, cfg, w = ckpt
    _write_by_hand(folder, w, lambda k: "BF16" if k != "ln_f.bias" else "F32")
    cut = {k: (v.astype(np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32) if k != "ln_f.bias" else v
           for k, v in w.items()}
    assert any(np.any(cut[k] != w[k]) for k in w)  # the cut changed the weights
    same, _, _ = write_checkpoint(tmp_path / "f32", weights=cut)
    model = load_gpt2(folder, dtype=np.float64)[0]
    assert model.tok_emb.weight.numpy().tolist() == cut["wte.weight"].astype(np.float64).tolist()
    ids = np.array([[1, 5, 9, 200, 7]])
    np.testing.assert_array_equal(model(ids).numpy(), load_gpt2(same, dtype=np.float64)[0](ids).numpy())


def test_integer_weights_are_refused_by_name(ckpt):
    folder, _, w = ckpt
    _write_by_hand(folder, w, lambda k: "I32" if k == "ln_f.bias" else "F32")
    with pytest.raises(ValueError, match=r"'ln_f.bias' has dtype I32; expected floats \(F16, F32, F64, BF16\)"):
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
