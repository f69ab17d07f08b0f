"""torch.nn.modules.padding: padding layers, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]

CircularPad1d = _nn.CircularPad1d
CircularPad2d = _nn.CircularPad2d
CircularPad3d = _nn.CircularPad3d
ConstantPad1d = _nn.ConstantPad1d
ConstantPad2d = _nn.ConstantPad2d
ConstantPad3d = _nn.ConstantPad3d
ReflectionPad1d = _nn.ReflectionPad1d
ReflectionPad2d = _nn.ReflectionPad2d
ReflectionPad3d = _nn.ReflectionPad3d
ReplicationPad1d = _nn.ReplicationPad1d
ReplicationPad2d = _nn.ReplicationPad2d
ReplicationPad3d = _nn.ReplicationPad3d
ZeroPad1d = _nn.ZeroPad1d
ZeroPad2d = _nn.ZeroPad2d
ZeroPad3d = _nn.ZeroPad3d
