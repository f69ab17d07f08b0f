"""The in-place functional activations, as PyTorch's: F.relu_, leaky_relu_, elu_, celu_, selu_, hardtanh_
and threshold_ write the activation into their input and return it (``F.leaky_relu_(h, 0.2)`` in a GAN's
discriminator). Each is its out-of-place function computed from a clone and copied back
(Tensor._inplace_from), so the gradient is that function's and a leaf that requires grad is refused."""
from __future__ import annotations

from ..tensor import Tensor
from . import functional as F

__all__ = ["celu_", "elu_", "hardtanh_", "leaky_relu_", "relu_", "selu_", "threshold_"]


def relu_(input: Tensor) -> Tensor:
    return F.relu(input, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return input._inplace_from("leaky_relu_", lambda x: F.leaky_relu(x, negative_slope))


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return input._inplace_from("elu_", lambda x: F.elu(x, alpha))


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return input._inplace_from("celu_", lambda x: F.celu(x, alpha))


def selu_(input: Tensor) -> Tensor:
    return input._inplace_from("selu_", F.selu)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return input._inplace_from("hardtanh_", lambda x: F.hardtanh(x, min_val, max_val))


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return input._inplace_from("threshold_", lambda x: F.threshold(x, threshold, value))
