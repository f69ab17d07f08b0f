"""torch.nn.modules.sparse: embeddings, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = ["Embedding"]

Embedding = _nn.Embedding
