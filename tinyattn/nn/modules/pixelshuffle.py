"""torch.nn.modules.pixelshuffle: PixelShuffle and PixelUnshuffle, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = ["PixelShuffle", "PixelUnshuffle"]

PixelShuffle = _nn.PixelShuffle
PixelUnshuffle = _nn.PixelUnshuffle
