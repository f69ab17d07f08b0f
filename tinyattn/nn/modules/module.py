"""torch.nn.modules.module: the base class, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = ["Module"]

Module = _nn.Module
