"""torch.accelerator: the device-generic questions PyTorch 2.6+ code asks (``torch.accelerator.is_available()``
to choose between a GPU and the CPU). tinyattn runs on the CPU only, so it answers as a CPU-only PyTorch:
no accelerator, and the code's CPU branch runs."""
from __future__ import annotations

__all__ = ["current_accelerator", "device_count", "is_available"]


def is_available() -> bool:
    return False


def current_accelerator(check_available: bool = False):
    """None: there is no accelerator (PyTorch's CPU-only build answers None too)."""
    return None


def device_count() -> int:
    return 0
