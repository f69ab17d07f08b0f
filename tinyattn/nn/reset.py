"""``reset_parameters()`` of the standard layers: draw their initial values again, in place, as PyTorch's do.

Code re-initialises a model with ``for m in model.modules(): if hasattr(m, "reset_parameters"): ...``, and a
subclass overrides it to initialise its own way: a LoRA layer calls ``nn.Linear.reset_parameters(self)`` and
then zeroes its low-rank factor. The Parameter objects stay the same (an optimizer built earlier still holds
them); the values follow each layer's PyTorch init: Linear and convolutions U(-1/sqrt(fan_in), 1/sqrt(fan_in))
for weight and bias (fan_in = weight.shape[1] * the kernel's size), Embedding N(0, 1) with the padding row
at 0, LayerNorm and GroupNorm ones and zeros, MultiheadAttention Xavier-uniform projections and zero biases.
As in PyTorch, a layer whose class overrides ``reset_parameters`` has it called at the end of construction.
"""
from __future__ import annotations

import math

import numpy as np

from ..autograd import no_grad
from ..tensor import get_rng
from . import init
from .conv import _ConvNd
from .conv_transpose import _ConvTransposeNd
from .layers import Embedding, LayerNorm, Linear
from .normalization import GroupNorm
from .torch_transformer import MultiheadAttention

__all__ = []


def _uniform_fan_in(self) -> None:
    w = self.weight
    fan_in = w.shape[1] * math.prod(w.shape[2:])
    if fan_in == 0:
        return  # a lazy layer before its first input: nothing drawn yet
    bound = 1.0 / math.sqrt(fan_in)
    with no_grad():
        w.copy_(get_rng().uniform(-bound, bound, w.shape))
        if self.bias is not None:
            self.bias.copy_(get_rng().uniform(-bound, bound, self.bias.shape))


def _embedding(self) -> None:
    with no_grad():
        self.weight.copy_(get_rng().standard_normal(self.weight.shape))
        if self.padding_idx is not None:
            self.weight[self.padding_idx] = 0


def _affine(self) -> None:
    with no_grad():
        if getattr(self, "weight", None) is not None:
            self.weight.copy_(np.ones(self.weight.shape))
        if getattr(self, "bias", None) is not None:
            self.bias.copy_(np.zeros(self.bias.shape))


def _attention(self) -> None:
    for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight"):
        if getattr(self, name) is not None:
            init.xavier_uniform_(getattr(self, name))
    for b in (self.in_proj_bias, self.out_proj.bias):
        if b is not None:
            init.zeros_(b)


Linear.reset_parameters = _ConvNd.reset_parameters = _ConvTransposeNd.reset_parameters = _uniform_fan_in
Embedding.reset_parameters = _embedding
LayerNorm.reset_parameters = GroupNorm.reset_parameters = _affine
MultiheadAttention._reset_parameters = _attention
