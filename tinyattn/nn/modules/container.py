"""torch.nn.modules.container: containers, the classes of tinyattn.nn under PyTorch's file path."""
from ... import nn as _nn

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]

ModuleDict = _nn.ModuleDict
ModuleList = _nn.ModuleList
ParameterDict = _nn.ParameterDict
ParameterList = _nn.ParameterList
Sequential = _nn.Sequential
