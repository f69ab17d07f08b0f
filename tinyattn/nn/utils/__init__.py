"""tinyattn.nn.utils: gradient-norm clipping under PyTorch's name, ``nn.utils.clip_grad_norm_``; below it the
other ``torch.nn.utils`` names: ``clip_grad_value_``, ``parameters_to_vector``/``vector_to_parameters``
(convert_and_clip.py), the hook forms ``weight_norm``/``spectral_norm`` (norm_hooks.py) and the submodules
``rnn``, ``parametrize`` and ``parametrizations``.

The implementation lives here (``nn`` may not import ``optim``); ``tinyattn.optim.clip_grad_norm``
calls it, and the optimizers share the parameter-list check below (``param_list``).
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ... import checks
from ...tensor import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "remove_spectral_norm",
           "remove_weight_norm", "spectral_norm", "vector_to_parameters", "weight_norm"]


def param_list(params: Any, who: str, leaves: bool = False) -> list[Tensor]:
    """model.parameters() (a generator), a list, or a single Tensor, as a list of Tensors, each once
    (a tied weight listed twice is still updated once). ``leaves=True`` (an optimizer's groups) also
    refuses a tensor computed from others: an update would not reach what it came from."""
    if isinstance(params, Tensor):
        params = [params]
    if isinstance(params, (str, dict)) or not isinstance(params, Iterable):
        raise TypeError(f"{who} expects an iterable of Parameters (e.g. model.parameters()), "
                        f"got {type(params).__name__}")
    out: list[Tensor] = []
    seen: set[int] = set()
    for i, p in enumerate(params):
        if not isinstance(p, Tensor):
            raise TypeError(f"{who}: params[{i}] is a {type(p).__name__}, expected a Parameter (Tensor)")
        if leaves and not p.is_leaf:
            raise ValueError(f"{who}: params[{i}] is not a leaf tensor (it was computed from others), so "
                             "an update would not reach what it came from; pass the Parameters themselves")
        if id(p) not in seen:
            seen.add(id(p))
            out.append(p)
    return out


def _clip_grad_norm(params: list[Tensor], max_norm: float, norm_type: float, error_if_nonfinite: bool,
                    who: str) -> float:
    """Scale every .grad by min(1, max_norm / total), total = ||all gradients joined||_norm_type; returns total.

    ``params`` is already a checked list (``param_list``): the public functions check their argument once."""
    max_norm = checks.number("max_norm", max_norm, who, at_least=0)  # (inf: measure only)
    if norm_type in ("inf", math.inf):
        norm_type = math.inf
    elif isinstance(norm_type, bool) or not isinstance(norm_type, (int, float, np.integer, np.floating)) \
            or not 0 < norm_type < math.inf:
        raise ValueError(f"{who}: norm_type must be a number p > 0 (2.0 is the L2 norm) or float('inf') "
                         f"(the largest |g|), got {norm_type!r}")
    grad_tensors = [p.grad for p in params if p.grad is not None]
    grads = [g._data for g in grad_tensors]
    if norm_type == math.inf:
        total = max((float(np.max(np.abs(g))) for g in grads if g.size), default=0.0)
    elif norm_type == 2:  # accumulate squares in float64 so a large float32 gradient does not overflow the sum
        total = math.sqrt(sum(float(np.sum(np.square(g, dtype=np.float64))) for g in grads))
    else:  # (sum |g|^p)^(1/p) over all gradients together, also in float64
        p_ = float(norm_type)
        total = sum(float(np.sum(np.abs(g.astype(np.float64)) ** p_)) for g in grads) ** (1.0 / p_)
    if error_if_nonfinite and not math.isfinite(total):
        raise ValueError(f"{who}: the total gradient norm is {total} (a gradient holds inf or NaN); "
                         "the loss probably overflowed. Pass error_if_nonfinite=False to clip anyway")
    coef = max_norm / (total + 1e-6)  # the 1e-6 avoids 0/0 when every gradient is zero
    if coef < 1.0:
        for g in grad_tensors:
            g.mul_(coef)
    return total


def clip_grad_norm_(parameters: Any, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = True) -> Tensor:
    """Scale all gradients together, in place, so their joint p-norm (default 2; inf = largest |g|) is at most max_norm.

    Returns the total norm BEFORE clipping as a 0-d Tensor in the gradients' dtype, as PyTorch does
    (so ``clip_grad_norm_(...).item()`` logs it). One factor for
    every gradient keeps the update's direction; only its length shrinks. max_norm=inf just measures.
    Unlike PyTorch (whose default is False), a non-finite norm raises unless error_if_nonfinite=False:
    clipping an inf gradient would silently turn every gradient into NaN. (Same default as
    ``tinyattn.optim.clip_grad_norm``.)
    """
    params = param_list(parameters, "clip_grad_norm_")
    total = _clip_grad_norm(params, max_norm, norm_type, error_if_nonfinite, "clip_grad_norm_")
    dtypes = [p.grad.dtype for p in params if p.grad is not None]
    return Tensor(np.asarray(total, dtype=dtypes[0] if dtypes else np.float32))  # no gradients: PyTorch's tensor(0.)


def clip_grad_norm(parameters: Any, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = True,
                   foreach: Any = None) -> Tensor:
    """PyTorch's deprecated spelling of clip_grad_norm_ (it warns as PyTorch does, then clips as clip_grad_norm_;
    foreach, a CUDA speed option, changes nothing here)."""
    import warnings
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


from . import rnn  # noqa: E402,F401  (nn.utils.rnn.pad_sequence & co.; after the names optim imports from here)
from . import parametrize  # noqa: E402,F401  (nn.utils.parametrize.register_parametrization & co.)
from . import parametrizations  # noqa: E402,F401  (nn.utils.parametrizations.weight_norm, spectral_norm)
from .convert_and_clip import clip_grad_value_, parameters_to_vector, vector_to_parameters  # noqa: E402,F401
from .norm_hooks import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm  # noqa: E402,F401
