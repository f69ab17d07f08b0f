"""What a Hugging Face folder may hold besides one model.safetensors: shards with an index, PyTorch's
pytorch_model.bin (written here without PyTorch: torch_file.py), a task head the loaders do not build
(GPT-2's multiple-choice head; the heads
that are built: test_pretrained_task_heads.py), a config.json without model_type. Checkpoints written here (bert_tiny.py, gpt2_tiny.py);
a sharded folder is the single file cut in two, so the loaded model must equal the single file's exactly.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
import safetensors.numpy
from bert_tiny import reference_bert, tiny_config, write_checkpoint
from gpt2_tiny import reference_gpt2
from gpt2_tiny import write_checkpoint as write_gpt2
from torch_file import write_torch_file

from tinyattn.pretrained import AutoModel, AutoTokenizer, load_bert, load_gpt2

INDEX = "model.safetensors.index.json"


def _shard(folder, n_first: int = 5) -> dict:
    """model.safetensors -> two shards and the index save_pretrained(max_shard_size=...) writes; returns the map."""
    path = os.path.join(folder, "model.safetensors")
    weights = safetensors.numpy.load_file(path)
    os.remove(path)
    names = sorted(weights)
    parts = {"model-00001-of-00002.safetensors": names[:n_first], "model-00002-of-00002.safetensors": names[n_first:]}
    for file, keys in parts.items():
        safetensors.numpy.save_file({k: weights[k] for k in keys}, os.path.join(folder, file))
    weight_map = {k: file for file, keys in parts.items() for k in keys}
    with open(os.path.join(folder, INDEX), "w") as f:
        json.dump({"metadata": {"total_size": sum(w.nbytes for w in weights.values())}, "weight_map": weight_map}, f)
    return weight_map


@pytest.mark.parametrize("family", ["bert", "distilbert"])
def test_sharded_bert_equals_the_single_file(tmp_path, family):
    single, cfg, w = write_checkpoint(tmp_path / "one", family=family)
    sharded, _, _ = write_checkpoint(tmp_path / "two", family=family, weights=w)
    _shard(sharded)
    assert not os.path.exists(os.path.join(sharded, "model.safetensors"))
    a, tok = load_bert(single, dtype=np.float64)
    b, _ = load_bert(sharded, dtype=np.float64)
    inputs = tok(["the cat sat on the mat", "it is"], return_tensors="pt", padding=True)
    out_a, out_b = a(**inputs, output_attentions=True), b(**inputs, output_attentions=True)
    np.testing.assert_array_equal(out_b.logits.numpy(), out_a.logits.numpy())
    np.testing.assert_array_equal(out_b.attentions[-1].numpy(), out_a.attentions[-1].numpy())
    ids, keep = inputs["input_ids"].numpy()[0], inputs["attention_mask"].numpy()[0].astype(bool)
    types = inputs["token_type_ids"].numpy()[0] if "token_type_ids" in inputs else None
    h, _, logits = reference_bert(w, cfg, ids, types, keep)
    np.testing.assert_allclose(out_b.logits.numpy()[0], logits, rtol=0, atol=1e-9)


def test_sharded_gpt2_equals_the_single_file(tmp_path):
    single, cfg, w = write_gpt2(tmp_path / "one")
    sharded, _, _ = write_gpt2(tmp_path / "two", weights=w)
    _shard(sharded, n_first=3)
    a, _ = load_gpt2(single, dtype=np.float64)
    b, _ = load_gpt2(sharded, dtype=np.float64)
    ids = np.array([[1, 5, 9, 200, 7, 3]])
    np.testing.assert_array_equal(b(ids).numpy(), a(ids).numpy())
    np.testing.assert_allclose(b(ids).numpy()[0], reference_gpt2(w, cfg, ids[0])[0], rtol=0, atol=1e-9)
    assert AutoModel.from_pretrained(sharded, dtype=np.float64)(ids).numpy().tolist() == a(ids).numpy().tolist()


def test_shard_errors_name_the_index_and_the_shard(tmp_path):
    folder, _, _ = write_checkpoint(tmp_path / "m")
    weight_map = _shard(folder)
    os.remove(os.path.join(folder, "model-00002-of-00002.safetensors"))
    with pytest.raises(FileNotFoundError, match=r"index.json lists shards this folder does not have: "
                                                r"\['model-00002-of-00002.safetensors'\]"):
        load_bert(folder)
    moved = dict(weight_map)
    key = next(k for k, v in weight_map.items() if v.startswith("model-00001"))
    moved[key] = "model-00002-of-00002.safetensors"
    folder, _, _ = write_checkpoint(tmp_path / "m2")
    _shard(folder)
    with open(os.path.join(folder, INDEX), "w") as f:
        json.dump({"weight_map": moved}, f)
    with pytest.raises(ValueError, match=f"index.json places \\['{key}'\\] in shards that do not hold them"):
        load_bert(folder)
    with open(os.path.join(folder, INDEX), "w") as f:
        json.dump({"metadata": {}}, f)
    with pytest.raises(ValueError, match='must hold a "weight_map" object'):
        load_bert(folder)


def _to_torch_file(folder, transposed=(), dtype=None) -> dict:
    """model.safetensors -> pytorch_model.bin (written without PyTorch: torch_file.py); returns the weights."""
    path = os.path.join(folder, "model.safetensors")
    weights = safetensors.numpy.load_file(path)
    if dtype is not None:
        weights = {k: v.astype(dtype) for k, v in weights.items()}
    os.remove(path)
    write_torch_file(os.path.join(folder, "pytorch_model.bin"), weights, transposed=transposed)
    return weights


def test_pytorch_bin_gpt2_equals_the_safetensors_file(tmp_path):
    single, cfg, w = write_gpt2(tmp_path / "one")
    folder, _, _ = write_gpt2(tmp_path / "two", weights=w)
    _to_torch_file(folder, transposed=("wte.weight", "h.0.attn.c_attn.weight"))  # strided storages too
    ids = np.array([[1, 5, 9, 200, 7, 3]])
    a, b = load_gpt2(single, dtype=np.float64)[0], load_gpt2(folder, dtype=np.float64)[0]
    np.testing.assert_array_equal(b(ids).numpy(), a(ids).numpy())


def test_pytorch_bin_in_bfloat16(tmp_path):
    _, cfg, w = write_gpt2(tmp_path / "one")
    cut = {k: (v.view(np.uint32) & 0xFFFF0000).view(np.float32) if k != "ln_f.bias" else v for k, v in w.items()}
    single, _, _ = write_gpt2(tmp_path / "cut", weights=cut)  # float32 holding the bfloat16 values exactly
    folder, _, _ = write_gpt2(tmp_path / "two", weights=w)
    os.remove(os.path.join(folder, "model.safetensors"))
    write_torch_file(os.path.join(folder, "pytorch_model.bin"), w, bfloat16=set(w) - {"ln_f.bias"})
    ids = np.array([[1, 5, 9, 200, 7, 3]])
    a, b = load_gpt2(single, dtype=np.float64)[0], load_gpt2(folder, dtype=np.float64)[0]
    assert b.ln_f.bias.numpy().tolist() == w["ln_f.bias"].astype(np.float64).tolist()  # the one left in float32
    np.testing.assert_array_equal(b.tok_emb.weight.numpy(), a.tok_emb.weight.numpy())
    np.testing.assert_array_equal(b(ids).numpy(), a(ids).numpy())


@pytest.mark.parametrize("family", ["bert", "distilbert"])
def test_pytorch_bin_bert_with_an_integer_buffer_and_float16(tmp_path, family):
    single, cfg, w = write_checkpoint(tmp_path / "one", family=family)
    folder, _, _ = write_checkpoint(tmp_path / "two", family=family, weights=w)
    stored = _to_torch_file(folder, dtype=np.float16)
    stored[f"{family}.embeddings.position_ids"] = np.arange(24, dtype=np.int64)[None]  # as older BertModel saved
    write_torch_file(os.path.join(folder, "pytorch_model.bin"), stored)
    model, tok = load_bert(folder, dtype=np.float64)
    inputs = tok("the cat sat on the mat", return_tensors="np")
    h, _, logits = reference_bert({k: v.astype(np.float16).astype(np.float64) for k, v in w.items()}, cfg,
                                  inputs["input_ids"][0], inputs.get("token_type_ids", [None])[0])
    np.testing.assert_allclose(model(**inputs).logits.numpy()[0], logits, rtol=0, atol=1e-9)


def test_sharded_pytorch_bin(tmp_path):
    single, cfg, w = write_gpt2(tmp_path / "one")
    folder, _, _ = write_gpt2(tmp_path / "two", weights=w)
    os.remove(os.path.join(folder, "model.safetensors"))
    names = sorted(w)
    parts = {"pytorch_model-00001-of-00002.bin": names[:4], "pytorch_model-00002-of-00002.bin": names[4:]}
    for file, keys in parts.items():
        write_torch_file(os.path.join(folder, file), {k: w[k] for k in keys})
    with open(os.path.join(folder, "pytorch_model.bin.index.json"), "w") as f:
        json.dump({"weight_map": {k: file for file, keys in parts.items() for k in keys}}, f)
    ids = np.array([[3, 1, 4, 1, 5]])
    np.testing.assert_array_equal(load_gpt2(folder, dtype=np.float64)[0](ids).numpy(),
                                  load_gpt2(single, dtype=np.float64)[0](ids).numpy())


def test_a_pickle_naming_other_code_is_not_run(tmp_path):
    folder, _, w = write_gpt2(tmp_path / "m")
    os.remove(os.path.join(folder, "model.safetensors"))
    marker = tmp_path / "ran"
    evil = b"\x80\x02cos\nsystem\n(X" + len(f"touch {marker}").to_bytes(4, "little") + f"touch {marker}".encode() \
        + b"tR."  # os.system("touch ...")
    write_torch_file(os.path.join(folder, "pytorch_model.bin"), {"x": np.zeros(1, np.float32)}, pickle_bytes=evil)
    with pytest.raises(ValueError, match=r"pytorch_model.bin names os.system, which a file of tensors does not need; "
                                         r"it is not read"):
        load_gpt2(folder)
    assert not marker.exists()
    os.remove(os.path.join(folder, "pytorch_model.bin"))
    with pytest.raises(FileNotFoundError, match="has no weights: expected model.safetensors or "
                                                "model.safetensors.index.json or pytorch_model.bin or "
                                                "pytorch_model.bin.index.json"):
        load_gpt2(folder)


def test_a_gpt2_multiple_choice_head_is_refused_by_name(tmp_path):
    folder, cfg, w = write_gpt2(tmp_path / "m")
    path = os.path.join(folder, "model.safetensors")
    stored = safetensors.numpy.load_file(path)
    stored["multiple_choice_head.summary.weight"] = np.zeros((1, cfg["n_embd"]), np.float32)
    safetensors.numpy.save_file(stored, path)
    with pytest.raises(ValueError, match=r"holds a multiple-choice head \(GPT2DoubleHeadsModel\): "
                                         r"\['multiple_choice_head.summary.weight'\]\. load_gpt2 builds GPT2Model, "
                                         r"GPT2LMHeadModel \(the language-model head\) and GPT2ForSequence"):
        load_gpt2(folder)


def test_a_config_without_model_type(tmp_path):
    """prajjwal1/bert-tiny's and Google's BERT miniatures' config.json have no model_type: load_bert reads
    the fields, as BertModel.from_pretrained does; AutoModel, which has nothing to go on, says so."""
    folder, cfg, w = write_checkpoint(tmp_path / "m")
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump({k: v for k, v in cfg.items() if k != "model_type"}, f)
    model, tok = load_bert(folder, dtype=np.float64)
    assert model.family == "bert" and "token_type_ids" in tok("it is")
    inputs = tok("it is a cat", "on the mat", return_tensors="np")
    h, _, _ = reference_bert(w, cfg, inputs["input_ids"][0], inputs["token_type_ids"][0])
    np.testing.assert_allclose(model(**inputs).last_hidden_state.numpy()[0], h, rtol=0, atol=1e-10)
    for auto in (AutoModel, AutoTokenizer):
        with pytest.raises(ValueError, match="config.json has no model_type, so the family is not known .*call "
                                             "load_bert or load_gpt2"):
            auto.from_pretrained(folder)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump({"hidden_size": 12}, f)
    with pytest.raises(ValueError, match="has no model_type and not all the size fields of either family"):
        load_bert(folder)
