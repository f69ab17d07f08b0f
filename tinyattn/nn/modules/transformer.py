"""torch.nn.modules.transformer: PyTorch's transformer layers, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = [
    "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer",
]

Transformer = _nn.Transformer
TransformerDecoder = _nn.TransformerDecoder
TransformerDecoderLayer = _nn.TransformerDecoderLayer
TransformerEncoder = _nn.TransformerEncoder
TransformerEncoderLayer = _nn.TransformerEncoderLayer
