"""torch.nn.modules.conv: convolutions, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = [
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
    "LazyConv2d", "LazyConv3d",
]

Conv1d = _nn.Conv1d
Conv2d = _nn.Conv2d
Conv3d = _nn.Conv3d
ConvTranspose1d = _nn.ConvTranspose1d
ConvTranspose2d = _nn.ConvTranspose2d
ConvTranspose3d = _nn.ConvTranspose3d
LazyConv1d = _nn.LazyConv1d
LazyConv2d = _nn.LazyConv2d
LazyConv3d = _nn.LazyConv3d
