"""torch.nn.modules.loss: losses, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss", "GaussianNLLLoss", "HingeEmbeddingLoss",
    "HuberLoss", "KLDivLoss", "L1Loss", "MSELoss", "MarginRankingLoss", "MultiLabelSoftMarginLoss", "NLLLoss",
    "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss",
]

BCELoss = _nn.BCELoss
BCEWithLogitsLoss = _nn.BCEWithLogitsLoss
CrossEntropyLoss = _nn.CrossEntropyLoss
GaussianNLLLoss = _nn.GaussianNLLLoss
HuberLoss = _nn.HuberLoss
KLDivLoss = _nn.KLDivLoss
L1Loss = _nn.L1Loss
MSELoss = _nn.MSELoss
NLLLoss = _nn.NLLLoss
SmoothL1Loss = _nn.SmoothL1Loss
CosineEmbeddingLoss = _nn.CosineEmbeddingLoss
HingeEmbeddingLoss = _nn.HingeEmbeddingLoss
MarginRankingLoss = _nn.MarginRankingLoss
MultiLabelSoftMarginLoss = _nn.MultiLabelSoftMarginLoss
SoftMarginLoss = _nn.SoftMarginLoss
TripletMarginLoss = _nn.TripletMarginLoss
