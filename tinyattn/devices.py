"""``tinyattn.device``: PyTorch's device names, for code that passes them around.

Every tensor here lives in NumPy's memory on the CPU. A ``device`` is therefore just its name:
it is a ``str`` ('cpu', 'cuda:0'), with PyTorch's ``.type`` and ``.index``, so it can go wherever a
device string goes (``x.to(dev)``, ``zeros(..., device=dev)``, ``model.to(dev)``). Naming a CUDA
device is allowed, as in a CPU-only PyTorch; putting a tensor on it raises PyTorch's error.
"""
from __future__ import annotations

from .checks import device as _check

__all__ = ["device"]

_KINDS = ("cpu", "cuda", "mps", "meta")


class device(str):  # noqa: N801  (PyTorch's spelling)
    """device('cpu'), device('cuda'), device('cuda', 1), device('cuda:1'); .type and .index as in PyTorch."""

    def __new__(cls, type: str | device, index: int | None = None) -> device:  # noqa: A002
        if isinstance(type, device) and index is None:
            return type
        if not isinstance(type, str):
            raise TypeError(f"device() expects a device name such as 'cpu' or 'cuda:0', got {type!r}")
        kind, _, num = type.partition(":")
        if kind not in _KINDS:
            raise RuntimeError(f"Expected one of {', '.join(_KINDS)} device type at start of device string: {type}")
        if num:
            if index is not None:
                raise RuntimeError(f"device(): type {type!r} already has an index, and index={index} was also given")
            if not num.isdigit():
                raise RuntimeError(f"Invalid device string: {type!r} (the index after ':' must be an int >= 0)")
            index = int(num)
        if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
            raise RuntimeError(f"device(): index must be an int >= 0, got {index!r}")
        self = super().__new__(cls, kind if index is None else f"{kind}:{index}")
        self._type, self._index = kind, index
        return self

    @property
    def type(self) -> str:  # noqa: A003
        return self._type

    @property
    def index(self) -> int | None:
        return self._index

    def __repr__(self) -> str:
        return f"device(type='{self._type}')" if self._index is None else \
            f"device(type='{self._type}', index={self._index})"

    def __enter__(self) -> device:  # `with torch.device('cpu'):` sets the default device; here it always is
        _check(self, "with device")
        return self

    def __exit__(self, *exc: object) -> None:
        return None
