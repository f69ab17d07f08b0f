"""A torch.save file (zip archive + pickle) written from NumPy arrays without PyTorch, opcode by opcode,
as PyTorch 1.6+ writes a state dict: see tinyattn/pretrained/torch_pickle.py for the layout."""
from __future__ import annotations

import struct
import zipfile

import numpy as np

_STORAGE = {np.dtype(np.float32): "FloatStorage", np.dtype(np.float64): "DoubleStorage",
            np.dtype(np.float16): "HalfStorage", np.dtype(np.int64): "LongStorage"}


def _str(s: str) -> bytes:
    b = s.encode("utf-8")
    return b"X" + struct.pack("<I", len(b)) + b  # BINUNICODE


def _int(v: int) -> bytes:
    return b"J" + struct.pack("<i", v)  # BININT


def _ints(vs) -> bytes:
    return b"(" + b"".join(_int(v) for v in vs) + b"t"  # MARK ... TUPLE


def _global(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def state_dict_pickle(tensors: dict, transposed=(), bfloat16=()) -> tuple[bytes, dict]:
    """(the data.pkl bytes, {storage key: raw bytes}); names in ``transposed`` are stored as the transpose
    of a row-major array (strides (1, rows)), as a saved ``weight.t()`` is; names in ``bfloat16`` (float32
    arrays) as bfloat16, the top 16 bits of each float32."""
    out, storages = bytearray(b"\x80\x02}("), {}  # PROTO 2, EMPTY_DICT, MARK
    for i, (name, arr) in enumerate(tensors.items()):
        arr = np.asarray(arr)
        if name in transposed:
            data, stride = np.ascontiguousarray(arr.T), (1, arr.shape[0])
        else:
            data = np.ascontiguousarray(arr)
            stride = tuple(s // arr.itemsize for s in data.strides)
        bf16 = name in bfloat16
        storages[str(i)] = (data.astype(np.float32).view(np.uint32) >> 16).astype("<u2").tobytes() if bf16 \
            else data.tobytes()
        out += _str(name) + _global("torch._utils", "_rebuild_tensor_v2") + b"("
        storage = _global("torch", "BFloat16Storage" if bf16 else _STORAGE[arr.dtype])
        out += b"(" + _str("storage") + storage + _str(str(i)) + _str("cpu")
        out += _int(arr.size) + b"tQ"  # the persistent id, then BINPERSID
        out += _int(0) + _ints(arr.shape) + _ints(stride) + b"\x89"  # offset, size, stride, requires_grad=False
        out += _global("collections", "OrderedDict") + b")R" + b"tR"  # backward hooks: OrderedDict(); the call
    out += b"u."  # SETITEMS, STOP
    return bytes(out), storages


def write_torch_file(path, tensors: dict, transposed=(), bfloat16=(), pickle_bytes: bytes | None = None) -> None:
    pkl, storages = state_dict_pickle(tensors, transposed, bfloat16)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", pkl if pickle_bytes is None else pickle_bytes)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")
        for key, raw in storages.items():
            z.writestr(f"archive/data/{key}", raw)
