"""nn.Bilinear and F.bilinear, as PyTorch's: y[b, o] = x1[b] . W[o] . x2[b] + bias[o], a learned pairwise
score between two vectors (biaffine attention, relation classifiers). Two einsums (x1 . W, then . x2, PyTorch's
order), so the gradient is theirs."""
from __future__ import annotations

import numpy as np

from .. import checks
from ..tensor import Tensor, get_default_dtype
from .module import Module, Parameter

__all__ = ["Bilinear", "bilinear"]


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """(*, in1), (*, in2) with weight (out, in1, in2) -> (*, out)."""
    from ..functions import einsum
    for name, x, d in (("input1", input1, 1), ("input2", input2, 2)):
        if x.shape[-1] != weight.shape[d]:
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got {x.shape[-1]} but expected "
                               f"{weight.shape[d]}")
    # x1 . W first, then . x2: PyTorch's order, which decides where an inf meets a 0 (inf * 0 = NaN)
    out = einsum("...oj,...j->...o", einsum("...i,oij->...oj", input1, weight), input2)  # (*, out)
    return out if bias is None else out + bias


class Bilinear(Module):
    """F.bilinear as a module: weight (out, in1, in2) and bias (out,) uniform in +-1/sqrt(in1), as PyTorch."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        checks.device(device)
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        from .layers import _uniform_init  # U(-1/sqrt(fan_in), 1/sqrt(fan_in)); (layers imports nn.functional)
        dt = np.dtype(dtype or get_default_dtype())
        self.weight = Parameter(_uniform_init((out_features, in1_features, in2_features), in1_features).astype(dt))
        if bias:
            self.bias = Parameter(_uniform_init((out_features,), in1_features).astype(dt))
        else:
            self.register_parameter("bias", None)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
