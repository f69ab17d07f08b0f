"""``tinyattn.nn.parallel``: DataParallel and DistributedDataParallel for code written for several GPUs.

Without GPUs PyTorch's ``DataParallel`` calls the wrapped module directly; it keeps it as
``.module``, so parameter names gain a ``module.`` prefix. ``DistributedDataParallel`` needs a
process group, which one process never has, so making one raises PyTorch's error.
"""
from __future__ import annotations

from typing import Any

from ..distributed import _NO_GROUP
from .module import Module

__all__ = ["DataParallel", "DistributedDataParallel"]


class DataParallel(Module):
    """Wraps ``module`` (as ``self.module``) and forwards every call to it: there is no device to split over."""

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel wraps a Module, got {type(module).__name__}")
        self.module = module
        self.device_ids: list = []  # no GPUs here
        self.dim = dim

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)


class DistributedDataParallel(Module):
    """Needs a process group (made by init_process_group under torchrun); one process has none, so it raises."""

    def __init__(self, module: Module, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(f"DistributedDataParallel: {_NO_GROUP}")
