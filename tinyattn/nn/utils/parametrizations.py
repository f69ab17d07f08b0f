"""``torch.nn.utils.parametrizations``: ``weight_norm`` and ``spectral_norm`` written as parametrizations
(tinyattn.nn.utils.parametrize), as PyTorch 2.x writes them, so they print, save and train as PyTorch's:

  * ``weight_norm(layer)``: ``weight = g * v / ||v||``, the norm taken over every dim but ``dim`` (0: one norm
    per output row; None or -1: one norm for the whole tensor). ``g`` and ``v`` are the Parameters
    ``parametrizations.weight.original0`` and ``original1``, started at ``||W||`` and ``W``, so the layer computes
    what it computed before.
  * ``spectral_norm(layer)``: ``weight = W / sigma``, sigma W's largest singular value estimated by power
    iteration on the buffers ``_u`` and ``_v`` (15 steps when registered, ``n_power_iterations`` more at each read
    in training mode, none in eval mode). The gradient does not flow through u and v, as in PyTorch.
u and v start from tinyattn's random stream (tinyattn.manual_seed), not PyTorch's, so their first values differ
from PyTorch's; after the power iterations both estimate the same sigma.
"""
from __future__ import annotations

from ...sampling import randn
from ...tensor import Tensor, no_grad
from .. import functional as F
from ..module import Module
from .parametrize import register_parametrization

__all__ = ["spectral_norm", "weight_norm"]


def norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of v over every dim but ``dim``, kept as size-1 dims (dim=-1: the norm of all of v, 0-d)."""
    if dim == -1:
        return v.norm()
    dim = dim + v.ndim if dim < 0 else dim
    return v.norm(2, tuple(d for d in range(v.ndim) if d != dim), keepdim=True)


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Re-express ``module.<name>`` as ``g * v / ||v||`` with g and v learned separately. Returns module."""
    return register_parametrization(module, name, _WeightNorm(dim), unsafe=True)


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._matrix(weight)
            h, w = mat.shape
            with no_grad():
                self.register_buffer("_u", F.normalize(randn(h, dtype=weight.dtype), dim=0, eps=eps))
                self.register_buffer("_v", F.normalize(randn(w, dtype=weight.dtype), dim=0, eps=eps))
            self._power_method(mat, 15)

    def _matrix(self, weight: Tensor) -> Tensor:
        """weight as (size of dim, everything else): the matrix whose largest singular value is sigma."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, mat: Tensor, steps: int) -> None:
        """u <- normalize(W v), v <- normalize(W^T u), ``steps`` times, written into the buffers in place."""
        with no_grad():
            for _ in range(steps):
                self._u.copy_(F.normalize(mat @ self._v, dim=0, eps=self.eps))
                self._v.copy_(F.normalize(mat.mT @ self._u, dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = self._matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u * (mat @ v)).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its largest singular value at each read (GANs' Lipschitz constraint).
    dim: the output dim (1 for transposed convolutions, else 0). Returns module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        from ..conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    return register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
