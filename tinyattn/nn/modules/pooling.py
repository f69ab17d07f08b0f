"""torch.nn.modules.pooling: pooling layers, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d",
]

AdaptiveAvgPool1d = _nn.AdaptiveAvgPool1d
AdaptiveAvgPool2d = _nn.AdaptiveAvgPool2d
AdaptiveAvgPool3d = _nn.AdaptiveAvgPool3d
AdaptiveMaxPool1d = _nn.AdaptiveMaxPool1d
AdaptiveMaxPool2d = _nn.AdaptiveMaxPool2d
AdaptiveMaxPool3d = _nn.AdaptiveMaxPool3d
AvgPool1d = _nn.AvgPool1d
AvgPool2d = _nn.AvgPool2d
AvgPool3d = _nn.AvgPool3d
MaxPool1d = _nn.MaxPool1d
MaxPool2d = _nn.MaxPool2d
MaxPool3d = _nn.MaxPool3d
