"""Layers that only change a tensor's shape: nn.Unflatten and PyTorch's padding modules (ZeroPad1d/2d/3d,
ConstantPad*, ReflectionPad*, ReplicationPad*, CircularPad*), each a remembered call of x.unflatten or
F.pad (nn/padding.py), so their gradients are those ops'. A padding given as one int pads every side
of the last 1, 2 or 3 dims by it; a tuple lists (before, after) pairs from the last dim, as F.pad's."""
from __future__ import annotations

from ..tensor import Tensor
from .module import Module
from .padding import pad

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "Unflatten", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]


class Unflatten(Module):
    """x.unflatten(dim, unflattened_size): (B, 12) -> (B, 3, 4) with Unflatten(1, (3, 4)); undoes Flatten."""

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class _PadNd(Module):
    nd, mode = 1, "constant"

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = (padding,) * (2 * self.nd) if isinstance(padding, int) else tuple(padding)
        if len(self.padding) != 2 * self.nd:
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple of {2 * self.nd} ints "
                             f"(before, after) from the last dim, got {padding!r}")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


def _family(base: type, mode: str, prefix: str, doc: str) -> tuple:
    return tuple(type(f"{prefix}{nd}d", (base,), {"nd": nd, "mode": mode, "__module__": __name__,
                                                 "__doc__": f"{doc} of the last {nd} dim{'s' * (nd > 1)}."})
                 for nd in (1, 2, 3))


ZeroPad1d, ZeroPad2d, ZeroPad3d = _family(_ZeroPadNd, "constant", "ZeroPad", "Zeros around each side")
ConstantPad1d, ConstantPad2d, ConstantPad3d = _family(_ConstantPadNd, "constant", "ConstantPad",
                                                      "value around each side")
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = _family(_PadNd, "reflect", "ReflectionPad",
                                                            "A mirror (without the edge) at each side")
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = _family(_PadNd, "replicate", "ReplicationPad",
                                                               "The edge repeated at each side")
CircularPad1d, CircularPad2d, CircularPad3d = _family(_PadNd, "circular", "CircularPad",
                                                      "The other end wrapped around at each side")
