"""What every Hugging Face checkpoint folder shares: config.json, model.safetensors, and the dtype asked for.

The weights are opened lazily (safetensors reads only the header until a tensor is asked for), so the
loaders check every name, shape and dtype before they read a single weight.
"""
from __future__ import annotations

import json
import os

import numpy as np

from .. import get_default_dtype

__all__ = ["FLOATS", "float_dtype", "open_weights", "read_json"]


def _safe_open():
    try:
        from safetensors import safe_open
    except ImportError:
        raise ImportError("loading Hugging Face weights needs the 'safetensors' package: "
                          "pip install -e \".[pretrained]\" (or pip install safetensors)") from None
    return safe_open


FLOATS = {"F16": "float16", "F32": "float32", "F64": "float64"}  # safetensors' names NumPy can read


def open_weights(folder: str):
    """model.safetensors, opened: only its header is read now; tensors are read when asked for."""
    path = os.path.join(folder, "model.safetensors")
    if not os.path.isfile(path):
        extra = " (this folder has PyTorch's pytorch_model.bin; fetch the .safetensors file instead)" \
            if os.path.isfile(os.path.join(folder, "pytorch_model.bin")) else ""
        raise FileNotFoundError(f"{folder} has no model.safetensors{extra}")
    safe_open = _safe_open()
    try:
        return safe_open(path, framework="np")
    except Exception as e:  # a truncated file, a header that is not JSON, ...
        raise ValueError(f"{path} could not be read as safetensors: {e}") from None


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
