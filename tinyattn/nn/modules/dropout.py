"""torch.nn.modules.dropout: dropout, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d"]

Dropout = _nn.Dropout
Dropout1d = _nn.Dropout1d
Dropout2d = _nn.Dropout2d
Dropout3d = _nn.Dropout3d
