"""``torch.nn.utils.clip_grad_value_``, ``parameters_to_vector`` and ``vector_to_parameters`` (re-exported by
tinyattn.nn.utils), as PyTorch 2.13 does them (tests/oracle/test_names_nn_utils_torch.py)."""
from __future__ import annotations

from typing import Any

from ... import functions
from ...tensor import Tensor, no_grad

__all__ = ["clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]


def _tensors(parameters: Any) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def clip_grad_value_(parameters: Any, clip_value: float, foreach: Any = None) -> None:
    """Clamp every gradient, in place, into [-clip_value, clip_value]; parameters without a .grad are skipped.
    (A negative clip_value clamps everything to clip_value, as clamp(min=-c, max=c) does with min > max.)"""
    clip_value = float(clip_value)
    with no_grad():
        for p in _tensors(parameters):
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)


def parameters_to_vector(parameters: Any) -> Tensor:
    """Every parameter flattened and joined into one 1-D tensor (differentiable: the gradient flows back)."""
    return functions.cat([p.reshape(-1) for p in _tensors(parameters)])


def vector_to_parameters(vec: Tensor, parameters: Any) -> None:
    """Write consecutive slices of vec into the parameters' values (outside autograd): the inverse of
    parameters_to_vector. A vec longer than needed leaves its tail unused, as PyTorch's."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    start = 0
    for p in _tensors(parameters):
        n = p.numel()
        p.data = vec[start:start + n].view_as(p).data
        start += n
