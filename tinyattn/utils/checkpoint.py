"""``tinyattn.utils.checkpoint``: activation checkpointing, which trades compute for GPU memory.

PyTorch's ``checkpoint(fn, *args)`` frees ``fn``'s activations after the forward pass and recomputes
them during backward; the values and gradients are those of ``fn(*args)`` itself. Here it runs
``fn(*args)`` with its graph kept, so every number is the same and only the memory saving is
absent. ``get_device_states``/``set_device_states`` save and restore GPU generator states: with no
GPU there are none (PyTorch's CPU build answers ``([], [])``).
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

__all__ = ["checkpoint", "checkpoint_sequential", "get_device_states", "set_device_states"]


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], Any] | None = None, determinism_check: str = "default",
               debug: bool = False, early_stop: bool = True, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``: the same values and gradients as PyTorch's checkpoint."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch "
            "2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default behavior, you can pass use_reentrant=True. "
            "Refer to docs for more details on the differences between the two variants.", UserWarning, stacklevel=2)
        use_reentrant = True
    if use_reentrant and kwargs:  # PyTorch's reentrant variant passes positional arguments only
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    return function(*args, **kwargs)


def checkpoint_sequential(functions: Any, segments: int, input: Any, use_reentrant: bool | None = None,
                          **kwargs: Any) -> Any:
    """Run the modules of ``functions`` (a Sequential or a list) one after another on ``input``."""
    for f in (functions.children() if hasattr(functions, "children") else functions):
        input = f(input)
    return input


def get_device_states(*args: Any) -> tuple[list, list]:
    """The GPUs the tensors in args live on, and their generator states: none here."""
    return [], []


def set_device_states(devices: list, states: list, *, device_type: str | None = None) -> None:
    """Restore GPU generator states: with no GPU there is nothing to restore."""
