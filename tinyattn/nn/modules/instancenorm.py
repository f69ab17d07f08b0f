"""torch.nn.modules.instancenorm: instance normalization, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]

InstanceNorm1d = _nn.InstanceNorm1d
InstanceNorm2d = _nn.InstanceNorm2d
InstanceNorm3d = _nn.InstanceNorm3d
