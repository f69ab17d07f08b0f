"""``tinyattn.amp`` (also ``tinyattn.cuda.amp``): mixed precision's names, answering as PyTorch does without a GPU.

Mixed precision runs matmuls in float16/bfloat16 on a GPU. There is no GPU here, and NumPy has no
bfloat16, so nothing changes precision: ``autocast`` is a context manager that leaves every
dtype as it is, and ``GradScaler`` scales nothing. Training code written for both devices (a
scaler made with ``enabled=(dtype == 'float16')``, an ``autocast`` around the forward) runs
unchanged; each stand-in warns when it was asked for something it can not do, as PyTorch does.
"""
from __future__ import annotations

import warnings
from typing import Any

__all__ = ["autocast", "GradScaler"]


class autocast:  # noqa: N801  (PyTorch's spelling)
    """``with autocast(device_type, dtype=None, enabled=True):`` runs the block in the tensors' own dtypes."""

    def __init__(self, device_type: str = "cuda", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        self.device_type, self.fast_dtype, self.enabled = str(device_type), dtype, False
        if enabled and self.device_type == "cuda":
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling",
                          UserWarning, stacklevel=2)
        elif enabled:
            warnings.warn(f"autocast(device_type={self.device_type!r}) changes nothing in tinyattn: NumPy has no "
                          "bfloat16, so every op keeps its inputs' dtype", UserWarning, stacklevel=2)

    def __enter__(self) -> autocast:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __call__(self, fn: Any) -> Any:  # also usable as a decorator, as in PyTorch
        return fn


class GradScaler:
    """Loss scaling for float16 training; without a GPU it is always disabled (PyTorch warns and does the same).

    Disabled, ``scale(loss)`` returns loss, ``step(optimizer)`` just calls ``optimizer.step()``, and
    ``unscale_``/``update`` do nothing, so the usual scaler loop trains exactly as the plain loop.
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        if enabled:
            warnings.warn("GradScaler is enabled, but CUDA is not available. Disabling.", UserWarning, stacklevel=2)
        self._enabled = False

    def is_enabled(self) -> bool:
        return self._enabled

    def scale(self, outputs: Any) -> Any:
        return outputs

    def unscale_(self, optimizer: Any) -> None:
        return None

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: float | None = None) -> None:
        return None

    def get_scale(self) -> float:
        return 1.0

    def state_dict(self) -> dict[str, Any]:
        return {}  # a disabled scaler has no state (as in PyTorch)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if state_dict:
            raise RuntimeError("GradScaler.load_state_dict: this scaler is disabled (no CUDA), so it can not take "
                               "the state of an enabled one")
