"""``tinyattn.cuda``: the answers of a PyTorch built without CUDA.

``is_available()`` is False and ``device_count()`` is 0, so the idiom
``device = 'cuda' if torch.cuda.is_available() else 'cpu'`` picks the CPU. Seeding the (absent)
GPU generators is accepted and does nothing; anything that needs a GPU raises PyTorch's error.
"""
from __future__ import annotations

from . import amp  # noqa: F401  (torch.cuda.amp.GradScaler)

__all__ = ["is_available", "device_count", "is_bf16_supported", "manual_seed", "manual_seed_all", "empty_cache",
           "current_device", "synchronize", "amp"]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def manual_seed(seed: int) -> None:
    """Accepted and ignored, as in a CPU-only PyTorch: there is no GPU generator (seed with tinyattn.manual_seed)."""


def manual_seed_all(seed: int) -> None:
    """Accepted and ignored, as in a CPU-only PyTorch: there are no GPU generators."""


def empty_cache() -> None:
    """Nothing is cached on a GPU here."""


def current_device() -> int:
    raise AssertionError("Torch not compiled with CUDA enabled (tinyattn runs on the CPU with NumPy)")


def synchronize(device: object = None) -> None:
    raise AssertionError("Torch not compiled with CUDA enabled (tinyattn runs on the CPU with NumPy)")
