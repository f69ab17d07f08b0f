"""torch.nn.modules.normalization: normalization layers, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = ["GroupNorm", "LayerNorm", "RMSNorm"]

GroupNorm = _nn.GroupNorm
LayerNorm = _nn.LayerNorm
RMSNorm = _nn.RMSNorm
