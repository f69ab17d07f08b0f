"""``tinyattn.compile``: PyTorch 2's compiler entry point, which here returns what it was given.

``torch.compile(model)`` makes a faster callable that computes the same function. tinyattn's ops
are NumPy calls with nothing to fuse, so ``compile`` hands back the model (or function) itself:
outputs, gradients and ``state_dict()`` names stay exactly as before. Used as a decorator, with or
without options (``@torch.compile`` or ``@torch.compile(mode="max-autotune")``), it does the same.
"""
from __future__ import annotations

from typing import Any

__all__ = ["compile", "is_compiling"]


def compile(model: Any = None, **options: Any) -> Any:  # noqa: A001  (PyTorch's name)
    """Return ``model`` unchanged; with no model, a decorator that returns the function unchanged."""
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise TypeError(f"compile expects a Module or a function, got {type(model).__name__}")
    return model


def is_compiling() -> bool:
    """False: no code is ever being compiled here."""
    return False
