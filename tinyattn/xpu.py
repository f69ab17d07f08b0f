"""torch.xpu (Intel GPUs), answered as PyTorch's build without XPU support answers: none available."""
from __future__ import annotations

__all__ = ["device_count", "get_device_properties", "is_available"]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def get_device_properties(device=None):
    raise AssertionError("Torch not compiled with XPU enabled")
