"""``tinyattn.onnx``: ``import torch.onnx`` works, for training scripts that export only when asked to.

PyTorch's word-language-model example imports ``torch.onnx`` at the top and calls ``torch.onnx.export``
only under ``--onnx-export``. Exporting means tracing the model into ONNX operators, which tinyattn has
no tracer for; ``export`` says so and how to get an ONNX file (load the state_dict into the same model
written for PyTorch, and export there). ``is_in_onnx_export()`` is False, as it is outside an export.
"""
from __future__ import annotations

from typing import Any

__all__ = ["OnnxExporterError", "export", "is_in_onnx_export"]


class OnnxExporterError(RuntimeError):
    """PyTorch's error class for a failed export (raised by ``export`` here)."""


def is_in_onnx_export() -> bool:
    """False: tinyattn never runs a model inside an ONNX export."""
    return False


def export(model: Any, args: Any = (), f: Any = None, *rest: Any, **kwargs: Any) -> None:
    """Refuse with the way out: tinyattn has no tracer to write ONNX operators from."""
    raise OnnxExporterError(
        f"tinyattn.onnx.export: tinyattn can not export {type(model).__name__} to ONNX (it has no tracer to "
        "turn a model into ONNX operators). Save the weights with tinyattn.save(model.state_dict(), ...) or as "
        "NumPy arrays, load them into the same model built with PyTorch, and call torch.onnx.export there")
