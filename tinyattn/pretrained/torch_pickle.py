"""PyTorch's checkpoint file (pytorch_model.bin, what ``torch.save`` writes), read without PyTorch.

Since PyTorch 1.6 the file is a zip archive: ``<name>/data.pkl`` is a pickle of the state dict, and each
tensor's storage is a raw little-endian array in ``<name>/data/<key>``. In the pickle a tensor is a call
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)`` whose storage is a "persistent id"
``('storage', torch.FloatStorage, key, location, numel)``. A pickle may call any function it names, so
this reader allows only those few names (and refuses any other), and it reads a storage only when its
tensor is asked for, as safetensors does.
"""
from __future__ import annotations

import pickle
import zipfile
from collections import OrderedDict

import numpy as np

__all__ = ["TorchFile"]

# PyTorch's storage classes -> (safetensors' dtype name, the NumPy dtype of the stored bytes).
_STORAGES = {"DoubleStorage": ("F64", np.float64), "FloatStorage": ("F32", np.float32),
             "HalfStorage": ("F16", np.float16), "BFloat16Storage": ("BF16", np.uint16),
             "LongStorage": ("I64", np.int64), "IntStorage": ("I32", np.int32), "ShortStorage": ("I16", np.int16),
             "CharStorage": ("I8", np.int8), "ByteStorage": ("U8", np.uint8), "BoolStorage": ("BOOL", np.bool_)}


class _StorageType:
    def __init__(self, name: str) -> None:
        self.name = name


class _Lazy:
    """One tensor as the pickle describes it: where its numbers are, not the numbers (the header's view)."""

    def __init__(self, storage, offset, size, stride, *_rest) -> None:
        (self.kind, self.key, self.numel), self.offset = storage, int(offset)
        self.size, self.stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)

    def get_shape(self) -> list[int]:
        return list(self.size)

    def get_dtype(self) -> str:
        return _STORAGES[self.kind.name][0]


def _parameter(data, *_rest):  # torch._utils._rebuild_parameter(tensor, requires_grad, hooks): the tensor
    return data


class _Unpickler(pickle.Unpickler):
    _ALLOWED = {("torch._utils", "_rebuild_tensor_v2"): _Lazy, ("torch._utils", "_rebuild_parameter"): _parameter,
                ("collections", "OrderedDict"): OrderedDict}

    def __init__(self, file, where: str) -> None:
        super().__init__(file)
        self.where = where

    def find_class(self, module: str, name: str):
        if module == "torch" and name in _STORAGES:
            return _StorageType(name)
        if (module, name) in self._ALLOWED:
            return self._ALLOWED[module, name]
        raise ValueError(f"{self.where} names {module}.{name}, which a file of tensors does not need; it is not "
                         "read (a pickle can run the code it names). Fetch the checkpoint's .safetensors instead")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise ValueError(f"{self.where} holds a persistent id {pid!r}; expected ('storage', type, key, "
                             "location, numel)")
        return pid[1], str(pid[2]), int(pid[4])


class TorchFile:
    """pytorch_model.bin opened: its pickle read (no tensor yet); keys / get_slice / get_tensor as safe_open's."""

    def __init__(self, path: str) -> None:
        if not zipfile.is_zipfile(path):
            raise ValueError(f"{path} is not a zip archive: PyTorch before 1.6 wrote this format, which is read "
                             "only by PyTorch; fetch the checkpoint's .safetensors instead")
        self.path, self._zip = path, zipfile.ZipFile(path)
        pkl = [n for n in self._zip.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pkl) != 1:
            self._zip.close()
            raise ValueError(f"{path} is a zip archive without one <name>/data.pkl: not a torch.save file")
        self._prefix = pkl[0][: -len("data.pkl")]
        order = self._read(self._prefix + "byteorder", b"little")
        try:
            state = _Unpickler(self._zip.open(pkl[0]), path).load()
        except Exception:
            self._zip.close()
            raise
        if order.strip() != b"little":
            self._zip.close()
            raise ValueError(f"{path} stores its numbers big-endian; only little-endian files are read")
        if not isinstance(state, dict) or not all(isinstance(v, _Lazy) for v in state.values()):
            self._zip.close()
            raise ValueError(f"{path} does not hold a state dict (a dict of tensors)")
        self._tensors = state

    def _read(self, name: str, default: bytes) -> bytes:
        return self._zip.read(name) if name in self._zip.namelist() else default

    def keys(self) -> list[str]:
        return list(self._tensors)

    def get_slice(self, key: str) -> _Lazy:
        return self._tensors[key]

    def get_tensor(self, key: str) -> np.ndarray:
        t = self._tensors[key]
        dtype = np.dtype(_STORAGES[t.kind.name][1])
        data = np.frombuffer(self._zip.read(f"{self._prefix}data/{t.key}"), dtype=dtype)
        last = t.offset + sum((n - 1) * s for n, s in zip(t.size, t.stride)) if all(t.size) else t.offset - 1
        if data.size != t.numel or t.offset < 0 or last >= data.size:
            raise ValueError(f"{self.path}: {key!r} reaches past its storage ({data.size} numbers)")
        view = np.lib.stride_tricks.as_strided(data[t.offset:], shape=t.size,
                                               strides=[s * dtype.itemsize for s in t.stride])
        return np.array(view)  # a copy: the tensor's own numbers, in row-major order

    def __exit__(self, *exc) -> None:
        self._zip.close()
