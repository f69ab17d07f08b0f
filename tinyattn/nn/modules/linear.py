"""torch.nn.modules.linear: linear layers, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear", "NonDynamicallyQuantizableLinear"]

Bilinear = _nn.Bilinear
Identity = _nn.Identity
LazyLinear = _nn.LazyLinear
Linear = _nn.Linear


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's marker subclass of Linear (MultiheadAttention's out_proj); here a plain Linear."""
