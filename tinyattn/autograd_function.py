"""``torch.autograd.function``: the module path PyTorch code also imports ``Function`` from.

``from torch.autograd.function import Function`` and ``torch.autograd.function.Function`` name the very
class ``torch.autograd.Function`` is. tinyattn's engine is the single file tinyattn/autograd.py (not a
package), so this module is made here and registered as ``tinyattn.autograd.function`` (in
``sys.modules`` and as an attribute of the engine module): both import spellings then find it.
"""
from __future__ import annotations

import functools
import sys
import types

from . import autograd


def once_differentiable(backward):
    """Decorator for a ``backward`` that is not itself differentiable: it runs with gradients off, as in
    PyTorch (whose double backward through it raises; here no graph is recorded to go through)."""
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with autograd.no_grad():
            return backward(ctx, *grads)
    return wrapper


function = types.ModuleType("tinyattn.autograd.function", __doc__)
function.Function = autograd.Function
function.FunctionCtx = autograd.Context  # the class of every ``ctx`` that forward/backward receive
function.once_differentiable = once_differentiable
function.__all__ = ["Function", "FunctionCtx", "once_differentiable"]
sys.modules[function.__name__] = function
autograd.function = function
