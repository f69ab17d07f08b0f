"""What every Hugging Face checkpoint folder shares: config.json, the weights, and the dtype asked for.

The weights are model.safetensors, or for a large model several shards (model-00001-of-00003.safetensors, ...)
with model.safetensors.index.json saying which shard holds each tensor; failing those, PyTorch's own
pytorch_model.bin (or its shards), read without PyTorch by torch_pickle.py. All are read the same way.

The weights are opened lazily (safetensors reads only the header until a tensor is asked for), so the
loaders check every name, shape and dtype before they read a single weight.
"""
from __future__ import annotations

import json
import os

import numpy as np

from .. import get_default_dtype

__all__ = ["FLOATS", "ModelConfig", "Weights", "float_dtype", "open_weights", "read_json"]


def _safe_open():
    try:
        from safetensors import safe_open
    except ImportError:
        raise ImportError("loading Hugging Face weights needs the 'safetensors' package: "
                          "pip install -e \".[pretrained]\" (or pip install safetensors)") from None
    return safe_open


# The stored float dtypes read here (safetensors' names). NumPy has no bfloat16: BF16 is read as float32, exactly
# (a bfloat16 is a float32 with the low 16 bits of its mantissa cut off).
FLOATS = {"F16": "float16", "F32": "float32", "F64": "float64", "BF16": "float32"}


# The weight files a folder may hold, in the order they are looked for: (single file, index of its shards).
_FILES = (("model.safetensors", "model.safetensors.index.json"), ("pytorch_model.bin", "pytorch_model.bin.index.json"))


class Weights:
    """A checkpoint's tensors by name, in one model.safetensors or in the shards its index lists.

    Only headers are read on opening; ``get_tensor`` reads one tensor. ``where``: the file to name in errors.
    """

    def __init__(self, where: str, files: dict, owner: dict[str, str]) -> None:
        self.where, self._files, self._owner = where, files, owner  # owner: {tensor name: shard file name}

    def keys(self) -> list[str]:
        return list(self._owner)

    def get_slice(self, key: str):
        return self._files[self._owner[key]].get_slice(key)

    def get_tensor(self, key: str) -> np.ndarray:
        name = self._owner[key]
        f = self._files[name]
        if f.get_slice(key).get_dtype() != "BF16":
            return f.get_tensor(key)
        # bfloat16: its 16 bits as uint16 (safetensors' numpy reader refuses BF16, so read from the file's header),
        # then shifted into the high half of a float32
        bits = f.get_tensor(key) if name.endswith(".bin") else \
            _raw_safetensors(os.path.join(os.path.dirname(self.where), name), key, "<u2")  # torch_pickle: uint16
        return (bits.astype(np.uint32) << 16).view(np.float32)

    def __enter__(self) -> "Weights":
        return self

    def __exit__(self, *exc) -> None:
        for f in self._files.values():
            f.__exit__(None, None, None)


def _raw_safetensors(path: str, key: str, dtype: str) -> np.ndarray:
    """Tensor ``key`` of a safetensors file as raw numbers of ``dtype``: an 8-byte little-endian header length,
    the JSON header ({name: {"dtype", "shape", "data_offsets": [begin, end]}}), then the data."""
    with open(path, "rb") as fh:
        n = int.from_bytes(fh.read(8), "little")
        info = json.loads(fh.read(n))[key]
        begin, end = info["data_offsets"]
        fh.seek(8 + n + begin)
        return np.frombuffer(fh.read(end - begin), dtype=dtype).reshape(info["shape"])


def _open(path: str):
    if path.endswith(".bin"):
        from .torch_pickle import TorchFile
        return TorchFile(path)
    try:
        return _safe_open()(path, framework="np")
    except Exception as e:  # a truncated file, a header that is not JSON, ...
        raise ValueError(f"{path} could not be read as safetensors: {e}") from None


def open_weights(folder: str) -> Weights:
    """The folder's weights, opened (only headers read): model.safetensors, or the shards its index lists;
    else PyTorch's pytorch_model.bin (or its shards), read without PyTorch (torch_pickle.py)."""
    for single, index in _FILES:
        path = os.path.join(folder, single)
        if os.path.isfile(path):
            f = _open(path)
            return Weights(path, {single: f}, {k: single for k in f.keys()})
        if os.path.isfile(os.path.join(folder, index)):
            return _open_shards(folder, index)
    raise FileNotFoundError(f"{folder} has no weights: expected {' or '.join(n for pair in _FILES for n in pair)}")


def _open_shards(folder: str, index_name: str) -> Weights:
    index = read_json(folder, index_name, "")
    where = os.path.join(folder, index_name)
    owner = index.get("weight_map")
    if not isinstance(owner, dict) or not owner or not all(isinstance(v, str) for v in owner.values()):
        raise ValueError(f"{where} must hold a \"weight_map\" object mapping each tensor name to its shard file")
    missing = sorted(n for n in set(owner.values()) if not os.path.isfile(os.path.join(folder, n)))
    if missing:
        raise FileNotFoundError(f"{where} lists shards this folder does not have: {missing}")
    files = {}
    try:
        for name in dict.fromkeys(owner.values()):
            files[name] = _open(os.path.join(folder, name))
        absent = [k for k, n in owner.items() if k not in files[n].keys()]
    except BaseException:
        Weights(where, files, {}).__exit__()
        raise
    if absent:
        Weights(where, files, {}).__exit__()
        raise ValueError(f"{where} places {absent[:3]} in shards that do not hold them")
    return Weights(where, files, dict(owner))


def float_dtype(dtype):
    if dtype is None:
        return np.dtype(get_default_dtype())
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be float32 or float64 (or None for the default), got {dtype!r}") from None
    if dt not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64 (or None for the default), got {dt}")
    return dt


def read_json(folder: str, name: str, what: str) -> dict:
    """``folder/name`` as a JSON object; what: a sentence of what such a folder holds, for the missing-file error."""
    path = os.path.join(folder, name)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{folder} has no {name} ({what})")
    try:
        with open(path, encoding="utf-8") as f:
            obj = json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path} is not valid JSON ({e})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{path} must hold a JSON object, got {type(obj).__name__}")
    return obj


class ModelConfig(dict):
    """config.json as a loaded model holds it: a dict whose keys also read as attributes, as Hugging Face's
    configs do (``model.config.id2label[i]``, ``model.config["n_embd"]``)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"this config.json has no {name!r}") from None

    def __setattr__(self, name, value):
        self[name] = value


# Hugging Face's task heads that the loaders do not build, by the start of their weights' names.
_TASK_HEADS = {"classifier.": "a classification head (*ForSequenceClassification or *ForTokenClassification)",
               "pre_classifier.": "a classification head (*ForSequenceClassification or *ForTokenClassification)",
               "score.": "a classification head (GPT2ForSequenceClassification)",
               "qa_outputs.": "a question-answering head (*ForQuestionAnswering)",
               "multiple_choice_head.": "a multiple-choice head (GPT2DoubleHeadsModel)"}


def task_head_error(where: str, unexpected: list[str], cfg: dict, loader: str, builds: str) -> ValueError | None:
    """The error for weights of a task head the loader does not build, or None if ``unexpected`` holds none.

    Loading the body alone would give outputs that are not the checkpoint's (no class scores, no answer
    spans), so such a checkpoint is refused by name, not loaded without its head."""
    heads = sorted({what for k in unexpected for start, what in _TASK_HEADS.items() if k.startswith(start)})
    if not heads:
        return None
    arch = f" (config.json: architectures={cfg['architectures']})" if cfg.get("architectures") else ""
    return ValueError(f"{where} holds {' and '.join(heads)}: {sorted(unexpected)[:5]}{arch}. {loader} builds "
                      f"{builds} only, and a model without the checkpoint's head would not give its outputs")
