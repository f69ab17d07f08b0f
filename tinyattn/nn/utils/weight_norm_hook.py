"""The deprecated hook-based ``torch.nn.utils.weight_norm`` / ``remove_weight_norm``, still in many tutorials
(WaveNet, HiFi-GAN, ...): ``weight`` is replaced by the Parameters ``weight_g`` and ``weight_v`` and recomputed
as ``g * v / ||v||`` before each forward, by a forward pre-hook, as PyTorch 2.13 does it (with its FutureWarning
pointing at ``nn.utils.parametrizations.weight_norm``, the parametrization this package also has)."""
from __future__ import annotations

import warnings

from ..module import Module, Parameter
from .parametrizations import norm_except_dim

__all__ = ["remove_weight_norm", "weight_norm"]


class WeightNorm:
    """The forward pre-hook: writes ``module.<name>`` = g * v / ||v|| (the norm over every dim but ``dim``)."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def compute_weight(self, module: Module):
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, self.dim))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def _hooks(module: Module, name: str):
    return [(key, hook) for key, (hook, _) in module.__dict__.get("_forward_pre_hooks", {}).items()
            if isinstance(hook, WeightNorm) and hook.name == name]


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split ``module.<name>`` into ``<name>_g`` (its norm) and ``<name>_v`` (its direction). Returns module."""
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    if _hooks(module, name):
        raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    hook = WeightNorm(name, -1 if dim is None else dim)
    weight = getattr(module, name)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, hook.dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, hook.compute_weight(module))
    module.register_forward_pre_hook(hook)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Put ``module.<name>`` back as one Parameter holding the current g * v / ||v||. Returns module."""
    found = _hooks(module, name)
    if not found:
        raise ValueError(f"weight_norm of '{name}' not found in {module}")
    key, hook = found[0]
    weight = hook.compute_weight(module).detach()
    del module._forward_pre_hooks[key]
    object.__delattr__(module, name)  # the computed tensor, a plain attribute
    del module._parameters[name + "_g"]
    del module._parameters[name + "_v"]
    setattr(module, name, Parameter(weight))
    return module
