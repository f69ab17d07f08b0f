"""``tinyattn.cuda``: the answers of a PyTorch built without CUDA.

``is_available()`` is False and ``device_count()`` is 0, so the idiom
``device = 'cuda' if torch.cuda.is_available() else 'cpu'`` picks the CPU. Seeding the (absent)
GPU generators is accepted and does nothing; anything that needs a GPU raises PyTorch's error.
"""
from __future__ import annotations

from . import amp  # noqa: F401  (torch.cuda.amp.GradScaler)

__all__ = ["is_available", "device_count", "is_bf16_supported", "manual_seed", "manual_seed_all", "empty_cache",
           "max_memory_reserved",
           "current_device", "synchronize", "amp", "set_device", "get_device_name", "get_device_properties",
           "get_device_capability", "memory_allocated", "max_memory_allocated", "reset_peak_memory_stats",
           "HalfTensor", "FloatTensor", "LongTensor", "Stream", "Event"]

_NO_CUDA = "Torch not compiled with CUDA enabled (tinyattn runs on the CPU with NumPy)"


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
    raise AssertionError(_NO_CUDA)


def synchronize(device: object = None) -> None:
    raise AssertionError(_NO_CUDA)


def get_device_name(device: object = None) -> str:
    raise AssertionError(_NO_CUDA)


def get_device_properties(device: object = None) -> object:
    raise AssertionError(_NO_CUDA)


def get_device_capability(device: object = None) -> tuple:
    raise AssertionError(_NO_CUDA)


def set_device(device: object) -> None:
    """PyTorch's CPU build checks the device is a CUDA one, then finds no CUDA binding to call."""
    if isinstance(device, str):
        kind, _, index = device.partition(":")
    elif hasattr(device, "type"):
        kind, index = device.type, getattr(device, "index", None)
    else:
        kind, index = "cuda", device
    if kind != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {device}")
    if index in (None, ""):
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
    raise AttributeError("module 'torch._C' has no attribute '_cuda_setDevice' (a build without CUDA has no "
                         "device to select; tinyattn runs on the CPU)")


def memory_allocated(device: object = None) -> int:
    """0 bytes: no GPU memory is ever allocated (PyTorch's CPU build answers the same)."""
    return 0


def max_memory_allocated(device: object = None) -> int:
    """0 bytes: no GPU memory is ever allocated (PyTorch's CPU build answers the same)."""
    return 0


def max_memory_reserved(device: object = None) -> int:
    """0 bytes: no GPU memory is ever reserved (PyTorch's CPU build answers the same)."""
    return 0


def reset_peak_memory_stats(device: object = None) -> None:
    raise AttributeError("module 'torch._C' has no attribute '_cuda_resetPeakMemoryStats' (a build without CUDA "
                         "keeps no GPU memory statistics)")


def _gpu_tensor_type(name: str) -> type:
    def __new__(cls, *args: object, **kwargs: object) -> None:
        raise TypeError(f"type torch.cuda.{name} not available. Torch not compiled with CUDA enabled.")
    return type(name, (), {"__new__": __new__, "__doc__": f"torch.cuda.{name}: a GPU tensor type; raises here."})


HalfTensor, FloatTensor, LongTensor = (_gpu_tensor_type(n) for n in ("HalfTensor", "FloatTensor", "LongTensor"))


class Stream:
    """A GPU work queue: PyTorch's CPU build raises on making one."""

    def __new__(cls, *args: object, **kwargs: object) -> "Stream":
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


class Event:
    """A GPU timing marker: PyTorch's CPU build raises on making one."""

    def __new__(cls, *args: object, **kwargs: object) -> "Event":
        raise RuntimeError("Tried to instantiate dummy base class Event")
