"""torch.nn.modules.loss: losses, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "GaussianNLLLoss", "HuberLoss", "KLDivLoss", "L1Loss",
    "MSELoss", "NLLLoss", "SmoothL1Loss",
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
