"""The dict- and list-shaped containers: ModuleDict, ParameterList, ParameterDict.

Each registers what it holds with the Module machinery, so ``parameters()``, ``state_dict()``,
``train()``/``eval()`` and the printed tree see inside it, under the keys or positions as names
(``transformer.wte.weight``, ``scales.0``). None of them has a forward.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..tensor import Tensor
from .module import Module, Parameter, _adopt, _check_index, _list_item

__all__ = ["ModuleDict", "ParameterList", "ParameterDict"]


def _check_key(container: Module, key: Any) -> str:
    """A key is a string without '.', and not a name the container already uses (e.g. 'keys')."""
    name = type(container).__name__
    if not isinstance(key, str):
        raise TypeError(f"{name} keys must be strings, got {type(key).__name__}")
    if "." in key or key == "":
        raise KeyError(f"{name} key {key!r} can not be empty or contain '.' (dots separate names in state_dict)")
    if hasattr(type(container), key):
        raise KeyError(f"{name} key {key!r} is already the name of an attribute of {name}")
    return key


def _as_parameter(value: Any, who: str) -> Parameter:
    """A Parameter as given; a plain Tensor becomes one (as PyTorch does); anything else is refused."""
    if isinstance(value, Parameter):
        return value
    if isinstance(value, Tensor):
        return Parameter(value)
    raise TypeError(f"{who} holds Parameters (or Tensors, wrapped as Parameters), got {type(value).__name__}")


def _describe(params: Mapping[str, Parameter]) -> str:
    """One line per Parameter for the printed tree: its name, dtype and size (not its values)."""
    return "\n".join(f"({k}): Parameter containing: [{p.dtype} of size {tuple(p.shape)}]" for k, p in params.items())


def _items(values: Any, who: str) -> Iterable[tuple[Any, Any]]:
    """(key, value) pairs from a dict/mapping or from an iterable of pairs."""
    if isinstance(values, Mapping):
        return list(values.items())
    if isinstance(values, Module) or not isinstance(values, Iterable):
        raise TypeError(f"{who} expects a dict (or pairs of key and value), got {type(values).__name__}")
    return list(values)


class _DictOf(Module):
    """What ModuleDict and ParameterDict share: a dict view of one registry, in insertion order."""

    _registry = ""  # "_modules" or "_parameters"
    _holds = ""  # what a forward would call, for the error message

    def __init__(self, values: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None) -> None:
        super().__init__()
        if values is not None:
            self.update(values)

    def _checked(self, key: str, value: Any) -> Any:  # pragma: no cover
        raise NotImplementedError

    def _add(self, key: str, value: Any) -> None:  # pragma: no cover
        raise NotImplementedError

    def __setitem__(self, key: str, value: Any) -> None:
        value = self._checked(key, value)
        if key in self._store():
            self._register(self._registry, key, value)  # replaced where it stands, as in a dict
        else:
            self._add(_check_key(self, key), value)

    def _store(self) -> dict[str, Any]:
        return self.__dict__[self._registry]

    def __getitem__(self, key: str) -> Any:
        if key not in self._store():
            raise KeyError(f"{type(self).__name__} has no key {key!r}; its keys are {list(self._store())}")
        return self._store()[key]

    def __delitem__(self, key: str) -> None:
        self[key]  # the KeyError, if absent
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._store())

    def __iter__(self) -> Iterator[str]:
        return iter(self._store())

    def __contains__(self, key: object) -> bool:
        return key in self._store()

    def keys(self):
        return self._store().keys()

    def items(self):
        return self._store().items()

    def values(self):
        return self._store().values()

    def update(self, values: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        for key, value in _items(values, type(self).__name__):
            self[key] = value

    def pop(self, key: str) -> Any:
        value = self[key]
        del self[key]
        return value

    def clear(self) -> None:
        for key in list(self._store()):
            del self[key]

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no forward: look its entries up, e.g. {self._holds}")


class ModuleDict(_DictOf):
    """A dict of named submodules: ``self.transformer = nn.ModuleDict(dict(wte=..., h=nn.ModuleList(...)))``.

    Entries are reached as ``d["wte"]`` or as attributes ``d.wte``; insertion order is kept.
    """

    _registry, _holds = "_modules", "`self.layers['proj'](x)`"

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__(modules)

    def _checked(self, key: str, module: Any) -> Module:
        module = _adopt(module)
        if not isinstance(module, Module):
            raise TypeError(f"ModuleDict holds Modules, got {type(module).__name__} for key {key!r}")
        return module

    def _add(self, key: str, module: Module) -> None:
        self.add_module(key, module)


class ParameterList(Module):
    """A list of Parameters, registered as '0', '1', ... (a learned value per layer, per head, ...)."""

    def __init__(self, values: Iterable[Tensor] | None = None) -> None:
        super().__init__()
        if values is not None:
            self.extend(values)

    def append(self, value: Tensor) -> ParameterList:
        self.register_parameter(str(len(self)), _as_parameter(value, "ParameterList"))
        return self

    def extend(self, values: Iterable[Tensor]) -> ParameterList:
        if isinstance(values, Tensor) or not isinstance(values, Iterable):
            raise TypeError(f"ParameterList.extend expects an iterable of Parameters, got {type(values).__name__}")
        for v in values:
            self.append(v)
        return self

    def __getitem__(self, idx: int | slice) -> Parameter | ParameterList:
        return _list_item(self, self._parameters, idx)

    def __setitem__(self, idx: int, value: Tensor) -> None:
        i = _check_index(idx, len(self), "ParameterList")
        self._register("_parameters", str(i), _as_parameter(value, "ParameterList"))  # keeps its place

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    def extra_repr(self) -> str:
        return _describe(self._parameters)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ParameterList has no forward: index it, e.g. `x * self.scales[i]`")


class ParameterDict(_DictOf):
    """A dict of named Parameters; entries as ``d["alpha"]`` or ``d.alpha``, insertion order kept."""

    _registry, _holds = "_parameters", "`x * self.gains['alpha']`"

    def __init__(self, parameters: Mapping[str, Tensor] | Iterable[tuple[str, Tensor]] | None = None) -> None:
        super().__init__(parameters)

    def _checked(self, key: str, value: Any) -> Parameter:
        return _as_parameter(value, "ParameterDict")

    def _add(self, key: str, value: Parameter) -> None:
        self.register_parameter(key, value)

    def extra_repr(self) -> str:
        return _describe(self._parameters)
