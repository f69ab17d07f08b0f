"""The older hook-based ``torch.nn.utils.weight_norm`` and ``spectral_norm`` (with ``remove_weight_norm`` and
``remove_spectral_norm``), still in many tutorials (WaveNet, HiFi-GAN, GANs): the weight is recomputed before each
forward by a forward pre-hook, as PyTorch 2.13 does it:

  * weight_norm: ``weight`` is replaced by the Parameters ``weight_g`` and ``weight_v``, weight = g * v / ||v||
    (PyTorch's FutureWarning points at ``nn.utils.parametrizations.weight_norm``, which this package also has);
  * spectral_norm: ``weight`` moves to the Parameter ``weight_orig`` with the buffers ``weight_u`` and
    ``weight_v``; weight = weight_orig / sigma, sigma = u . (W v), after ``n_power_iterations`` steps of
    v <- normalize(W^T u), u <- normalize(W v) in training mode (none in eval mode, none when registered).
    u and v start from tinyattn.manual_seed's stream (docs/pytorch.md).
"""
from __future__ import annotations

import warnings

from ...sampling import randn
from ...tensor import Tensor, no_grad
from .. import functional as F
from ..module import Module, Parameter
from .parametrizations import norm_except_dim

__all__ = ["remove_spectral_norm", "remove_weight_norm", "spectral_norm", "weight_norm"]


class WeightNorm:
    """The forward pre-hook: writes ``module.<name>`` = g * v / ||v|| (the norm over every dim but ``dim``)."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def compute_weight(self, module: Module):
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, self.dim))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def _hooks(module: Module, name: str, kind: type):
    return [(key, hook) for key, (hook, _) in module.__dict__.get("_forward_pre_hooks", {}).items()
            if isinstance(hook, kind) and hook.name == name]


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split ``module.<name>`` into ``<name>_g`` (its norm) and ``<name>_v`` (its direction). Returns module."""
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    if _hooks(module, name, WeightNorm):
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
    found = _hooks(module, name, WeightNorm)
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


class SpectralNorm:
    """The forward pre-hook: writes ``module.<name>`` = W / sigma (power iteration first, in training mode)."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float) -> None:
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        mat = self.matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(mat.mT @ u, dim=0, eps=self.eps))
                    u.copy_(F.normalize(mat @ v, dim=0, eps=self.eps))
            u, v = u.clone(), v.clone()
        sigma = (u * (mat @ v)).sum()
        return weight / sigma

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its largest singular value, estimated by power iteration, before each forward."""
    if _hooks(module, name, SpectralNorm):
        raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
    if dim is None:
        from ..conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    hook = SpectralNorm(name, n_power_iterations, dim, eps)
    weight = module._parameters[name]
    h, w = hook.matrix(weight).shape
    with no_grad():
        u = F.normalize(randn(h, dtype=weight.dtype), dim=0, eps=eps)
        v = F.normalize(randn(w, dtype=weight.dtype), dim=0, eps=eps)
    del module._parameters[name]
    module.register_parameter(name + "_orig", weight)
    object.__setattr__(module, name, weight.detach())  # the plain weight until the first forward, as PyTorch's
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(hook)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Put ``module.<name>`` back as one Parameter holding W / sigma from the current u and v. Returns module."""
    found = _hooks(module, name, SpectralNorm)
    if not found:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    key, hook = found[0]
    with no_grad():
        weight = hook.compute_weight(module, do_power_iteration=False)
    del module._forward_pre_hooks[key]
    object.__delattr__(module, name)
    del module._buffers[name + "_u"], module._buffers[name + "_v"], module._parameters[name + "_orig"]
    setattr(module, name, Parameter(weight.detach()))
    return module
