"""PyTorch's deprecated overloads that put the scale first: ``x.add_(alpha, other)``, ``x.sub(alpha, other)``,
``x.addcmul_(value, t1, t2)``, ``x.addcdiv_(value, t1, t2)`` and ``torch.add(x, alpha, other)`` & co.

Older tutorials and hand-written optimizers use them: a char-RNN tutorial's update
``p.data.add_(-learning_rate, p.grad.data)``, an Adam written out as
``exp_avg.mul_(beta1).add_(1 - beta1, grad)``, ``exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)``,
``p.data.addcdiv_(-step_size, exp_avg, denom)``. PyTorch still runs them, with a UserWarning naming the
current signature; so does this module, in one place: a call whose first argument is a number and which has
one more positional argument than the current signature is read as (scale, the rest). A scale keyword
given as well, or a scale passed by position after the tensor, raise a TypeError as in PyTorch.
"""
from __future__ import annotations

import functools
import numbers
import warnings

from .. import functions, tail_functions
from ..tensor import Tensor

__all__ = ["add", "sub", "addcmul", "addcdiv"]  # the torch.* forms; tinyattn/__init__.py takes these

_SCALE = {"add": "alpha", "sub": "alpha", "add_": "alpha", "sub_": "alpha", "addcmul": "value", "addcdiv": "value",
          "addcmul_": "value", "addcdiv_": "value"}
_OPERANDS = {"add": "Tensor other", "sub": "Tensor other", "addcmul": "Tensor tensor1, Tensor tensor2",
             "addcdiv": "Tensor tensor1, Tensor tensor2"}


def _read(name: str, args: tuple, kwargs: dict, n_operands: int, before: int = 0) -> tuple:
    """(operands, kwargs) with the deprecated leading scale moved to its keyword."""
    scale = _SCALE[name]
    operands = _OPERANDS[name.rstrip("_")]
    if len(args) == n_operands + 1 and isinstance(args[0], numbers.Number) and not isinstance(args[0], Tensor):
        if scale in kwargs:
            raise TypeError(f"{name}() received an invalid combination of arguments - got unrecognized keyword "
                            f"arguments: {scale}")
        warnings.warn(f"This overload of {name} is deprecated:\n\t{name}(Number {scale}, {operands})\nConsider using "
                      f"one of the following signatures instead:\n\t{name}({operands}, *, Number {scale} = 1)",
                      UserWarning, stacklevel=3)
        return args[1:], {**kwargs, scale: args[0]}
    if len(args) > n_operands:
        n = n_operands + before  # (the function form counts its input)
        raise TypeError(f"{name}() takes {n} positional argument{'s' * (n > 1)} but {len(args) + before} were "
                        f"given ({name}({operands}, *, Number {scale} = 1): the {scale} is a keyword)")
    return args, kwargs


def _method(name: str, n_operands: int):
    plain = getattr(Tensor, name)

    @functools.wraps(plain)
    def method(self, *args, **kwargs):
        args, kwargs = _read(name, args, kwargs, n_operands)
        return plain(self, *args, **kwargs)
    return method


def _function(module, name: str, n_operands: int):
    plain = getattr(module, name)

    @functools.wraps(plain)
    def function(input, *args, **kwargs):
        args, kwargs = _read(name, args, kwargs, n_operands, before=1)
        return plain(input, *args, **kwargs)
    return function


for _name, _n in (("add", 1), ("sub", 1), ("add_", 1), ("sub_", 1), ("addcmul", 2), ("addcdiv", 2),
                  ("addcmul_", 2), ("addcdiv_", 2)):
    setattr(Tensor, _name, _method(_name, _n))
add, sub = _function(functions, "add", 1), _function(functions, "sub", 1)
addcmul, addcdiv = _function(tail_functions, "addcmul", 2), _function(tail_functions, "addcdiv", 2)
