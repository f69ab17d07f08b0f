"""``tinyattn.save`` / ``tinyattn.load``: checkpoints that load without running any code.

PyTorch's ``torch.save`` pickles, and unpickling a file can run arbitrary code. Here a file is
a zip archive holding ``manifest.json`` (the structure: dicts, lists, tuples, numbers, strings,
None, and where each array goes) and one ``.npy`` file per array, read back with
``allow_pickle=False``. Nothing else can be stored, so nothing else can come out.

What can be saved: Tensors and Parameters (with requires_grad), NumPy arrays and scalars,
``state_dict()`` of a Module or an optimizer, and any nesting of dict (str or int keys), list
and tuple around them with bool/int/float/str/None leaves. The same Tensor stored twice comes
back as one Tensor. A whole Module (``torch.save(model, f)``) or a dataclass instance (a model's
config) is stored as its class's name and its attributes, and a module-level function (a layer's
``activation``) as its name. As in PyTorch, loading those needs ``weights_only=False`` or their classes
and functions listed in ``add_safe_globals``/``safe_globals``; they must already be imported (nothing is
imported from a file) and are rebuilt as pickle does, without running ``__init__``. Anything else is
refused with the path to it, e.g. ``obj['config']['fn']``.
"""
from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import pickle
import sys
import types
import zipfile
from collections import OrderedDict
from typing import Any, BinaryIO, Iterable

import numpy as np

from .nn.module import Module, Parameter
from .checks import device as _device
from .tensor import Tensor

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load", "location_tag",
           "normalize_storage_type", "safe_globals", "save"]

FORMAT = "tinyattn.save/1"  # written into every manifest; load refuses anything else
_SAFE: list = []  # classes and functions a weights_only load may rebuild (PyTorch's allowlist)


def add_safe_globals(safe_globals: Iterable[Any]) -> None:
    """Let ``load(weights_only=True)`` rebuild these classes (a Module, a dataclass) and functions."""
    _SAFE.extend(g for g in safe_globals if not any(g is h for h in _SAFE))


def get_safe_globals() -> list:
    return list(_SAFE)


def clear_safe_globals() -> None:
    _SAFE.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: Iterable[Any]):
    """``with torch.serialization.safe_globals([MyModel, ...]): model = torch.load(f)``: allowed inside only."""
    before = list(_SAFE)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _SAFE[:] = before


def _named(obj: Any) -> list[str] | None:
    """[module, qualname] of a class or a module-level function, or None for one that has no such name."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", "")
    if not isinstance(module, str) or not qualname or "<" in qualname:  # a lambda or a local function
        return None
    return [module, qualname]


def _where(path: list[str]) -> str:
    return "obj" + "".join(path)


class _Writer:
    """Turns an object into a JSON-able tree; arrays go to a list, referred to by their position."""

    def __init__(self) -> None:
        self.arrays: list[np.ndarray] = []
        self.tensors: dict[int, int] = {}  # id(tensor) -> its node's array index (a tensor stored twice, once)

    def _array(self, arr: np.ndarray, path: list[str]) -> int:
        if arr.dtype.hasobject or arr.dtype.kind not in "biufcUS":
            raise TypeError(f"tinyattn.save: {_where(path)} is an array of dtype {arr.dtype}, which can not be "
                            "stored without pickle; store numbers, strings or bools")
        self.arrays.append(arr)
        return len(self.arrays) - 1

    def node(self, obj: Any, path: list[str]) -> dict[str, Any]:
        if obj is None:
            return {"type": "none"}
        if isinstance(obj, np.generic):  # a NumPy scalar (np.float32(1.5)): kept with its dtype
            return {"type": "scalar", "array": self._array(np.asarray(obj), path)}
        for kind in (bool, int, float, str):  # bool first: True is also an int
            if isinstance(obj, kind):
                return {"type": kind.__name__, "value": kind(obj)}
        if isinstance(obj, Tensor):
            if id(obj) not in self.tensors:
                self.tensors[id(obj)] = self._array(np.asarray(obj), path)
            return {"type": "parameter" if isinstance(obj, Parameter) else "tensor",
                    "array": self.tensors[id(obj)], "requires_grad": bool(obj.requires_grad)}
        if isinstance(obj, np.ndarray):
            return {"type": "ndarray", "array": self._array(obj, path)}
        if isinstance(obj, (list, tuple)):
            return {"type": type(obj).__name__ if type(obj) in (list, tuple) else "list",
                    "items": [self.node(v, path + [f"[{i}]"]) for i, v in enumerate(obj)]}
        if isinstance(obj, dict):
            items = []
            for k, v in obj.items():
                if isinstance(k, bool) or not isinstance(k, (str, int, np.integer)):
                    raise TypeError(f"tinyattn.save: {_where(path)} has a key {k!r} of type {type(k).__name__}; "
                                    "dict keys must be str or int")
                key = {"type": "str", "value": k} if isinstance(k, str) else {"type": "int", "value": int(k)}
                items.append([key, self.node(v, path + [f"[{k!r}]"])])
            return {"type": "ordereddict" if isinstance(obj, OrderedDict) else "dict", "items": items}
        is_dc = dataclasses.is_dataclass(obj) and not isinstance(obj, type)  # build-nanogpt's GPTConfig
        if (is_dc or isinstance(obj, Module)) and _named(type(obj)):  # torch.save(model, f)
            state = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)} if is_dc else vars(obj)
            return {"type": "object", "class": _named(type(obj)),
                    "fields": [[k, self.node(v, path + [f".{k}"])] for k, v in state.items()]}
        if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, type)) and _named(obj):
            return {"type": "global", "class": _named(obj)}  # a layer's activation=F.relu, by name
        raise TypeError(f"tinyattn.save: {_where(path)} is a {type(obj).__name__}, which tinyattn.save can not store "
                        "(it stores Tensors, arrays, numbers, strings, None, dict/list/tuple of them, and Modules, "
                        "dataclasses and functions defined at a module's top level, so a file loads without "
                        "running code; or save a Module as model.state_dict())")


def save(obj: Any, f: str | os.PathLike | BinaryIO) -> None:
    """Write obj to f (a path, written exactly as named, or a binary file object). See the module docstring."""
    writer = _Writer()
    manifest = {"format": FORMAT, "root": writer.node(obj, []), "arrays": len(writer.arrays)}
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise TypeError(f"tinyattn.save expects a file path or a binary file object, got {type(f).__name__}")
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr("manifest.json", json.dumps(manifest))
        for i, arr in enumerate(writer.arrays):
            buf = io.BytesIO()
            np.save(buf, arr, allow_pickle=False)
            z.writestr(f"arrays/{i}.npy", buf.getvalue())


class _Reader:
    def __init__(self, z: zipfile.ZipFile, n_arrays: int, name: str, weights_only: bool) -> None:
        self.z, self.n, self.name, self.weights_only = z, n_arrays, name, weights_only
        self.tensors: dict[int, Tensor] = {}

    def _array(self, i: Any) -> np.ndarray:
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < self.n:
            raise ValueError(f"tinyattn.load: {self.name} is damaged (array index {i!r} of {self.n})")
        with self.z.open(f"arrays/{i}.npy") as fh:
            return np.load(io.BytesIO(fh.read()), allow_pickle=False)

    def obj(self, node: Any) -> Any:
        kind = node.get("type") if isinstance(node, dict) else None
        if kind == "none":
            return None
        if kind in ("bool", "int", "float", "str"):
            value = node["value"]
            want = {"bool": bool, "int": int, "float": (int, float), "str": str}[kind]
            if not isinstance(value, want) or (kind == "int" and isinstance(value, bool)):
                raise ValueError(f"tinyattn.load: {self.name} is damaged (a {kind} holding {value!r})")
            return float(value) if kind == "float" else value
        if kind == "scalar":
            return self._array(node["array"])[()]
        if kind == "ndarray":
            return self._array(node["array"])
        if kind in ("tensor", "parameter"):
            i = node["array"]
            if i not in self.tensors:
                arr = self._array(i)
                if kind == "parameter":
                    t = Parameter(arr, requires_grad=bool(node.get("requires_grad", True)))
                else:
                    t = Tensor(arr, requires_grad=bool(node.get("requires_grad", False)))
                self.tensors[i] = t
            return self.tensors[i]
        if kind in ("list", "tuple"):
            items = [self.obj(v) for v in node["items"]]
            return items if kind == "list" else tuple(items)
        if kind in ("dict", "ordereddict"):
            out = OrderedDict() if kind == "ordereddict" else {}
            for key, value in node["items"]:
                k = self.obj(key)
                if not isinstance(k, (str, int)):
                    raise ValueError(f"tinyattn.load: {self.name} is damaged (a dict key {k!r})")
                out[k] = self.obj(value)
            return out
        if kind == "object":
            return self._object(node)
        if kind == "global":
            return self._global(node, "function")
        raise ValueError(f"tinyattn.load: {self.name} is damaged (unknown entry {str(node)[:60]!r})")

    def _global(self, node: dict, what: str) -> Any:
        """The class or function a node names: already imported, and allowed (weights_only) or trusted."""
        names = node.get("class")
        if not (isinstance(names, list) and len(names) == 2 and all(isinstance(n, str) for n in names)):
            raise ValueError(f"tinyattn.load: {self.name} is damaged (a {what} entry without its name)")
        module, qualname = names
        found = sys.modules.get(module)
        for part in qualname.split("."):
            found = getattr(found, part, None)
        if found is None:
            raise ValueError(f"tinyattn.load: {self.name} holds a {module}.{qualname}; import the module that "
                             "defines it first (tinyattn.load imports nothing)")
        if self.weights_only and not any(found is g for g in _SAFE):  # PyTorch's default since 2.6
            raise pickle.UnpicklingError(
                f"Weights only load failed: GLOBAL {module}.{qualname} was not an allowed global by default. "
                f"If you trust {self.name}, load it with weights_only=False, or allow the {what} with "
                f"torch.serialization.add_safe_globals([{qualname}]) or the safe_globals([...]) context manager")
        return found

    def _object(self, node: dict) -> Any:
        """Rebuild a Module or a dataclass as pickle does: __new__, then its attributes (no __init__ runs)."""
        cls = self._global(node, "class")
        if not (isinstance(cls, type) and (issubclass(cls, Module) or dataclasses.is_dataclass(cls))):
            raise ValueError(f"tinyattn.load: {self.name} names {cls!r}, which is not a Module or a dataclass")
        obj = cls.__new__(cls)
        for name, value in node["fields"]:
            object.__setattr__(obj, name, self.obj(value))  # object's setter: no Module bookkeeping, frozen too
        return obj


def _check_map_location(map_location: Any) -> None:
    """Everything loads to the CPU; a map_location naming another device gets PyTorch's error for it."""
    if map_location is None or callable(map_location) and not isinstance(map_location, str):
        return
    targets = map_location.values() if isinstance(map_location, dict) else [map_location]
    for t in targets:
        _device(t, "map_location")


def load(f: str | os.PathLike | BinaryIO, map_location: Any = None, weights_only: bool | None = None,
         mmap: bool | None = None) -> Any:
    """Read what ``tinyattn.save`` wrote. Never runs code from the file, whatever weights_only says
    (weights_only=False only lets a stored Module or dataclass be rebuilt from its already-imported class).

    map_location is accepted as in PyTorch ('cpu', a device, a dict of them, or a function); everything
    loads to the CPU, and naming a GPU raises PyTorch's error. Files written by ``torch.save`` (pickles)
    are refused with a note on how to move weights between the two libraries.
    """
    _check_map_location(map_location)
    name = repr(os.fspath(f)) if isinstance(f, (str, os.PathLike)) else "the file"
    try:
        z = zipfile.ZipFile(f, "r")
    except zipfile.BadZipFile:
        raise ValueError(f"tinyattn.load: {name} is not a file written by tinyattn.save (not a zip archive). "
                         "Pickled files can run code when loaded, so tinyattn does not read them") from None
    with z:
        names = set(z.namelist())
        if "manifest.json" not in names:
            hint = (" It looks like a torch.save file (pickled); to move weights from PyTorch, save "
                    "{k: v.numpy() for k, v in model.state_dict().items()} with numpy.savez, or use safetensors, "
                    "and load it with model.load_state_dict") if any(n.endswith("data.pkl") for n in names) else ""
            raise ValueError(f"tinyattn.load: {name} is not a file written by tinyattn.save (no manifest.json).{hint}")
        try:
            manifest = json.loads(z.read("manifest.json"))
        except ValueError:
            raise ValueError(f"tinyattn.load: {name} is damaged (its manifest.json is not JSON)") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            got = manifest.get("format") if isinstance(manifest, dict) else None
            raise ValueError(f"tinyattn.load: {name} has format {got!r}; this version reads {FORMAT!r}")
        n = manifest.get("arrays")
        if isinstance(n, bool) or not isinstance(n, int) or any(f"arrays/{i}.npy" not in names for i in range(n)):
            raise ValueError(f"tinyattn.load: {name} is damaged (arrays listed in the manifest are missing)")
        return _Reader(z, n, name, weights_only is not False).obj(manifest["root"])


# --- PyTorch's storage helpers, for checkpoint code that names them (see tinyattn/storage.py) ------------
def location_tag(storage) -> str:
    """Where a storage (or tensor) lives, as torch.save tags it: always 'cpu' here."""
    dev = storage.device  # AttributeError for an object without one, as in PyTorch
    if getattr(dev, "type", str(dev)) == "cpu":
        return "cpu"
    raise RuntimeError(f"don't know how to determine data location of {type(storage).__module__}."
                       f"{type(storage).__name__}")


def normalize_storage_type(storage_type):
    """The top-level class of that name (``tinyattn.UntypedStorage`` for UntypedStorage), as PyTorch's."""
    import tinyattn
    return getattr(tinyattn, storage_type.__name__)

