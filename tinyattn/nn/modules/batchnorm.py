"""torch.nn.modules.batchnorm: batch normalization, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "SyncBatchNorm"]

BatchNorm1d = _nn.BatchNorm1d
BatchNorm2d = _nn.BatchNorm2d
BatchNorm3d = _nn.BatchNorm3d
LazyBatchNorm1d = _nn.LazyBatchNorm1d
LazyBatchNorm2d = _nn.LazyBatchNorm2d
SyncBatchNorm = _nn.SyncBatchNorm
