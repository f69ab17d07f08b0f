"""torch.nn.modules.activation: activations and attention, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = [
    "ELU", "GELU", "GLU", "CELU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU",
    "LogSigmoid", "LogSoftmax", "Mish", "MultiheadAttention", "PReLU", "ReLU", "ReLU6", "Sigmoid", "SiLU",
    "Softmax", "Softmin", "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold",
]

ELU = _nn.ELU
GELU = _nn.GELU
GLU = _nn.GLU
CELU = _nn.CELU
SELU = _nn.SELU
Hardshrink = _nn.Hardshrink
Hardsigmoid = _nn.Hardsigmoid
Hardswish = _nn.Hardswish
Hardtanh = _nn.Hardtanh
LeakyReLU = _nn.LeakyReLU
LogSigmoid = _nn.LogSigmoid
LogSoftmax = _nn.LogSoftmax
Mish = _nn.Mish
MultiheadAttention = _nn.MultiheadAttention
PReLU = _nn.PReLU
ReLU = _nn.ReLU
ReLU6 = _nn.ReLU6
Sigmoid = _nn.Sigmoid
SiLU = _nn.SiLU
Softmax = _nn.Softmax
Softmin = _nn.Softmin
Softplus = _nn.Softplus
Softshrink = _nn.Softshrink
Softsign = _nn.Softsign
Tanh = _nn.Tanh
Tanhshrink = _nn.Tanhshrink
Threshold = _nn.Threshold
