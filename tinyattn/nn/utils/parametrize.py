"""``torch.nn.utils.parametrize``: a parameter computed from other tensors each time it is read.

``register_parametrization(layer, "weight", P)`` moves ``layer.weight`` to
``layer.parametrizations.weight.original`` (the same Parameter object, so an optimizer made earlier still
holds it) and makes ``layer.weight`` a property returning ``P(original)``. The layer's own forward, which
reads ``self.weight``, is unchanged: LoRA (``W + B @ A``), weight normalisation, a symmetric or orthogonal
weight are written this way. Registering again on the same name chains: ``P2(P1(original))``. Assigning
``layer.weight = X`` calls the chain's ``right_inverse`` (each P's, last first) and stores the result in
``original``; a P without one may not be assigned through.

How it is done, as in PyTorch: the module's class is swapped for a subclass named ``Parametrized<Class>``
that holds the property (so other instances of the class are untouched), and the parametrizations live
in a ``ModuleDict`` named ``parametrizations``: their tensors are in ``parameters()`` and ``state_dict()``
under ``parametrizations.weight.original`` and ``parametrizations.weight.0.<name>``.
``remove_parametrizations`` puts a plain parameter back: the computed value (``leave_parametrized=True``,
written into the same ``original`` Parameter) or ``original`` as it is.
"""
from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...tensor import Tensor, no_grad
from ..containers import ModuleDict
from ..module import Module, ModuleList, Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "transfer_parametrizations_and_params", "type_before_parametrizations"]

_cache_depth = 0
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Inside ``with cached():`` each parametrized tensor is computed once, at its first read (a weight read
    at every step of an RNN loop), and forgotten on leaving the outermost block."""
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


def _register(module: Module, name: str, value: Tensor) -> None:
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set(dest: Tensor, src: Tensor) -> None:
    """dest takes src's values (and shape) and stays the same object, as PyTorch's ``dest.set_(src)``."""
    if src is not dest:
        dest._data = src._data
        dest._bump_version()


class ParametrizationList(ModuleList):
    """``module.parametrizations[name]``: the parametrizations of one tensor, in the order registered, and the
    tensor(s) they start from: ``original``, or ``original0``, ``original1``, ... when the first one's
    ``right_inverse`` returns several. Made by register_parametrization, not by hand."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        new = original
        with no_grad():
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    try:
                        new = m.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                             f"Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if new.dtype != dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {dtype}\nright_inverse(original).dtype: {new.dtype}")
            _set(original, new)
            _register(self, "original", original)
        else:
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, "
                                     f"tuple...). Got element {i} of the sequence with type {type(t).__name__}.")
                t = Parameter(t, original.requires_grad) if isinstance(original, Parameter) else t
                _register(self, f"original{i}", t)
        if not unsafe:
            _check_same(self(), shape, dtype, "Registering a parametrization", "unparametrized", "parametrized")

    def right_inverse(self, value: Tensor) -> None:
        """What assigning ``module.<name> = value`` runs: every ``right_inverse``, last registered first; the
        result is stored in ``original`` (or ``original0``, ...) in place."""
        with no_grad():
            for m in reversed(list(self)):
                if not hasattr(m, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(m).__name__} does not implement right_inverse.")
                value = m.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got {type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                                     f"while `original` has dtype {self.original.dtype}")
                _set(self.original, value)
                return
            if not isinstance(value, Sequence) or len(value) != self.ntensors:
                raise ValueError(f"'right_inverse' must return a sequence of {self.ntensors} tensors. "
                                 f"Got {type(value).__name__}")
            for i, t in enumerate(value):
                mine = getattr(self, f"original{i}")
                if not isinstance(t, Tensor) or t.dtype != mine.dtype:
                    raise ValueError(f"Tensor {i} returned by `right_inverse` must be a tensor of dtype "
                                     f"{mine.dtype}; got {getattr(t, 'dtype', type(t).__name__)}")
                _set(mine, t)

    def forward(self) -> Tensor:
        ms = list(self)
        x = ms[0](self.original) if self.is_tensor else ms[0](*(getattr(self, f"original{i}")
                                                                 for i in range(self.ntensors)))
        for m in ms[1:]:
            x = m(x)
        return x


def _check_same(z: Any, shape, dtype, what: str, before: str, after: str) -> None:
    if not isinstance(z, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
    if z.dtype != dtype:
        raise ValueError(f"{what} may not change the dtype of the tensor, unless the `unsafe` flag is enabled.\n"
                         f"{before} dtype: {dtype}\n{after} dtype: {z.dtype}")
    if tuple(z.shape) != tuple(shape):
        raise ValueError(f"{what} may not change the shape of the tensor, unless the `unsafe` flag is enabled.\n"
                         f"{before} shape: {tuple(shape)}\n{after} shape: {tuple(z.shape)}")


def _refuse_pickling(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through state_dict(): save "
                       "model.state_dict() and load it into a model parametrized the same way")


def _copy_parametrized(self, memo):
    """copy.deepcopy of a parametrized module (pickling is refused, so deepcopy can not go through it)."""
    import copy
    if id(self) in memo:
        return memo[id(self)]
    twin = self.__new__(type(self))
    memo[id(self)] = twin
    twin.__dict__ = copy.deepcopy(self.__dict__, memo)
    return twin


def _parametrize_class(module: Module, name: str) -> None:
    """Give ``module`` its own subclass (once) and put the property ``name`` on it."""
    if not is_parametrized(module):
        cls = type(module)
        extra: dict = {"__getstate__": _refuse_pickling}
        if not hasattr(cls, "__deepcopy__"):
            extra["__deepcopy__"] = _copy_parametrized
        module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), extra)

    def read(self) -> Tensor:
        chain = self.parametrizations[name]
        if not _cache_depth:
            return chain()
        key = (id(self), name)
        if key not in _cache:
            _cache[key] = chain()
        return _cache[key]

    def write(self, value: Tensor) -> None:
        self.parametrizations[name].right_inverse(value)

    setattr(type(module), name, property(read, write))


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` read as ``parametrization(original)`` (see the module docstring);
    ``unsafe=True`` lets the result have another shape or dtype. Returns module."""
    if not isinstance(parametrization, Module):
        raise TypeError(f"register_parametrization expects the parametrization as an nn.Module, "
                        f"got {type(parametrization).__name__}")
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            _check_same(x, y.shape, y.dtype, "Registering a parametrization", f"module.{tensor_name}",
                        f"parametrization(module.{tensor_name})")
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    _check_same(z, y.shape, y.dtype, "parametrization.right_inverse", f"module.{tensor_name}",
                                "returned")
        chain = module.parametrizations[tensor_name]
        chain.append(parametrization)
        chain.unsafe |= unsafe
    elif tensor_name in module._parameters or tensor_name in module._buffers:
        original = getattr(module, tensor_name)
        if original is None:
            raise ValueError(f"Module '{type(module).__name__}' has no tensor under '{tensor_name}' (it is None)")
        chain = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        fresh = not is_parametrized(module)
        _parametrize_class(module, tensor_name)
        if fresh:
            module.parametrizations = ModuleDict()
        module.parametrizations[tensor_name] = chain
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
                         f"with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether module has any parametrization (tensor_name None) or one on tensor_name."""
    chains = getattr(module, "parametrizations", None)
    if not isinstance(chains, ModuleDict):
        return False
    return len(chains) > 0 if tensor_name is None else tensor_name in chains


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Make ``module.<tensor_name>`` a plain parameter (or buffer) again: the parametrized value
    (leave_parametrized=True, written into the same ``original`` object) or ``original`` unchanged. The
    module gets its own class back when its last parametrization goes. Returns module."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    chain = module.parametrizations[tensor_name]
    if chain.is_tensor:
        original = chain.original
        if leave_parametrized:
            with no_grad():
                _set(original, getattr(module, tensor_name))
    elif leave_parametrized:
        t = getattr(module, tensor_name)
        original = Parameter(t) if t.requires_grad else t
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                         "parametrized in terms of a sequence of tensors.")
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The class module had before it was parametrized (its class if it is not)."""
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = None) -> Module:
    """Register from_module's parametrizations (all, or those of tensor_name) on to_module and make its
    originals the same tensors as from_module's. Returns to_module."""
    if not is_parametrized(from_module):
        return to_module
    for name in (list(from_module.parametrizations) if tensor_name is None else [tensor_name]):
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for p in from_module.parametrizations[name]:
            register_parametrization(to_module, name, p)
        source, target = from_module.parametrizations[name], to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            for i in range(source.ntensors):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
    return to_module
