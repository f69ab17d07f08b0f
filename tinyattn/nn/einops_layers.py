"""einops' layers (``Rearrange``, ``Reduce``, ``EinMix``) as tinyattn Modules, and the adoption of torch's.

einops builds its layers for each framework the same way: a mixin that holds the pattern and its
recipes, plus that framework's Module (``einops/layers/torch.py`` is ``class Rearrange(RearrangeMixin,
torch.nn.Module)``). The classes here are that pairing for tinyattn, so they apply their recipe with
tinyattn ops (through the backend in ``tinyattn.einops_backend``) and gradients flow through them.

Teaching code writes ``from einops.layers.torch import Rearrange`` and puts the layer in a model
(``nn.Sequential(Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=8, p2=8), nn.Linear(...))``).
With only its torch imports changed to tinyattn, that layer is a ``torch.nn.Module``; ``adopt``
turns it into the same layer here (same pattern and axis lengths; an EinMix keeps its weight and
bias values), which Module, Sequential, ModuleList and ModuleDict call for any child from
``einops.layers.torch``. This module is imported only when such a layer is met, so einops stays
optional.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from einops.layers import RearrangeMixin, ReduceMixin
from einops.layers._einmix import _EinmixMixin

from .. import einops_backend
from ..tensor import Tensor
from .module import Module, Parameter

__all__ = ["Rearrange", "Reduce", "EinMix", "adopt"]

einops_backend.install()  # einops is imported by now: the tinyattn backend exists from here on


class Rearrange(RearrangeMixin, Module):
    """``Rearrange(pattern, **axes_lengths)(x)`` is ``einops.rearrange(x, pattern, **axes_lengths)``."""

    def forward(self, x: Tensor) -> Tensor:
        return self._apply_recipe(x)


class Reduce(ReduceMixin, Module):
    """``Reduce(pattern, reduction, **axes_lengths)(x)`` is ``einops.reduce(x, pattern, reduction, ...)``."""

    def forward(self, x: Tensor) -> Tensor:
        return self._apply_recipe(x)


class EinMix(_EinmixMixin, Module):
    """einops' linear layer over named axes: an einsum with a learned weight (and bias), as einops' torch one."""

    def _create_parameters(self, weight_shape, weight_bound, bias_shape, bias_bound) -> None:
        from ..factories import zeros
        # uniform in [-bound, bound], the bounds einops computes from the fan-in (as its torch layer)
        self.weight = Parameter(zeros(weight_shape).uniform_(-weight_bound, weight_bound))
        self.bias = (Parameter(zeros(bias_shape).uniform_(-bias_bound, bias_bound))
                     if bias_shape is not None else None)

    def _create_rearrange_layers(self, pre_reshape_pattern, pre_reshape_lengths,
                                 post_reshape_pattern, post_reshape_lengths) -> None:
        self.pre_rearrange = (Rearrange(pre_reshape_pattern, **pre_reshape_lengths)
                              if pre_reshape_pattern is not None else None)
        self.post_rearrange = (Rearrange(post_reshape_pattern, **post_reshape_lengths)
                               if post_reshape_pattern is not None else None)

    def forward(self, x: Tensor) -> Tensor:
        from ..functions import einsum
        if self.pre_rearrange is not None:
            x = self.pre_rearrange(x)
        out = einsum(self.einsum_pattern, x, self.weight)
        if self.bias is not None:
            out = out + self.bias
        if self.post_rearrange is not None:
            out = self.post_rearrange(out)
        return out


def adopt(layer: Any) -> Module:
    """The tinyattn layer equal to one of ``einops.layers.torch`` (same pattern, lengths, and weights)."""
    kind = type(layer).__name__
    if kind == "Rearrange":
        return Rearrange(layer.pattern, **layer.axes_lengths)
    if kind == "Reduce":
        return Reduce(layer.pattern, layer.reduction, **layer.axes_lengths)
    if kind == "EinMix":
        mine = EinMix(layer.pattern, layer.weight_shape, layer.bias_shape, **layer.axes_lengths)
        for name in ("weight", "bias"):
            theirs = getattr(layer, name)
            if theirs is not None:  # the values it already has (a trained or seeded layer)
                value = np.array(theirs.detach().cpu().numpy(), dtype=getattr(mine, name).dtype)
                setattr(mine, name, Parameter(Tensor(value), requires_grad=theirs.requires_grad))
        return mine
    raise TypeError(f"einops.layers.torch.{kind} has no tinyattn counterpart (Rearrange, Reduce and EinMix do)")
