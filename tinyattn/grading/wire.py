"""The judge <-> learner pipe format: plain data and raw array bytes, never pickle.

A message is an 8-byte length, a JSON header, then each array's raw bytes (8-byte length
first). Values are None, bool, int, float, str, lists, tuples, dicts and NumPy arrays of
bool/int/uint/float/complex dtype; anything else is left to a `hook` on each side (the learner
side turns its objects into handles, the judge side turns handles into proxies). Decoding
builds fresh, plain `numpy.ndarray`s from bytes after checking dtype and size, so what comes
back can not be a subclass, an object with `__array__`, or anything that runs code.

A call's array arguments may travel in memory the judge shares with the learner's process instead
(`dumps(..., shared=[])` on the judge's side, `read_message(..., shared=...)` on the learner's): each
is {"M": offset, ...} into that memory, and the learner's code works on the judge's own bytes, so the
judge sees for itself what a call wrote into its arguments (learner.py). A reply can hold no such entry.

This file imports nothing from tinyattn: the learner's process loads it by path.
"""
from __future__ import annotations

import json
import os
import struct

import numpy as np

MAX_MESSAGE = 64 << 20           # bytes: a reply larger than this is a protocol error, not a memory blow-up
MAX_HEADER = 1 << 20             # bytes of JSON in one message (arrays travel as raw bytes beside it)
MAX_ARRAYS = 4096                # arrays in one message
KINDS = "biufc"                  # bool, int, uint, float, complex: the only dtypes that cross the pipe
_LEN = struct.Struct(">Q")
ALIGN = 64                       # bytes: where each shared array starts (a cache line; every dtype's alignment)


class ProtocolError(Exception):
    """A malformed or oversized message (the learner's process wrote something that is not a reply)."""


def _encode(obj, bufs: list, hook, shared: list | None = None):
    if obj is None or type(obj) in (bool, int, float, str):
        return obj
    if type(obj) is list:
        return {"L": [_encode(o, bufs, hook, shared) for o in obj]}
    if type(obj) is tuple:
        return {"T": [_encode(o, bufs, hook, shared) for o in obj]}
    if type(obj) is dict:
        return {"D": [[_encode(k, bufs, hook, shared), _encode(v, bufs, hook, shared)] for k, v in obj.items()]}
    if isinstance(obj, (np.ndarray, np.generic)) and np.asarray(obj).dtype.kind in KINDS:
        arr = np.array(obj, order="C", subok=False)          # a plain, C-ordered copy (0-d stays 0-d)
        head = {"dt": arr.dtype.str, "sh": list(arr.shape)}
        if shared is not None and isinstance(obj, np.ndarray):
            start = -(-(shared[-1][0] + shared[-1][1].nbytes) // ALIGN) * ALIGN if shared else 0
            shared.append((start, arr))                       # (the caller lays the bytes out there)
            return {"M": start, **head}
        bufs.append(arr.tobytes())
        return {"A": len(bufs) - 1, **head, "scalar": isinstance(obj, np.generic)}
    if hook is not None:
        return hook(obj, lambda o: _encode(o, bufs, hook, shared))
    raise TypeError(f"can not send a {type(obj).__name__} over the grading pipe")


def _decode(tree, bufs: list, hook, shared=None):
    if tree is None or isinstance(tree, (bool, int, float, str)):
        return tree
    if isinstance(tree, dict):
        if "L" in tree:
            return [_decode(o, bufs, hook, shared) for o in tree["L"]]
        if "T" in tree:
            return tuple(_decode(o, bufs, hook, shared) for o in tree["T"])
        if "D" in tree:
            return {_decode(k, bufs, hook, shared): _decode(v, bufs, hook, shared) for k, v in tree["D"]}
        if "A" in tree:
            return _array(tree, bufs)
        if "M" in tree and shared is not None:
            return _array(tree, bufs, shared)
        if hook is not None:
            return hook(tree, lambda t: _decode(t, bufs, hook, shared))
    raise ProtocolError(f"unexpected value in a message: {str(tree)[:80]}")


def _array(tree: dict, bufs: list, shared=None) -> np.ndarray:
    """A fresh, writable, plain ndarray from the message's bytes; or ("M") a view of the shared memory."""
    try:
        dt, shape = np.dtype(str(tree["dt"])), tuple(int(n) for n in tree["sh"])
        raw = bufs[int(tree["A"])] if shared is None else None
        start = int(tree["M"]) if shared is not None else 0
    except (TypeError, ValueError, KeyError, IndexError) as e:
        raise ProtocolError(f"bad array header: {e}") from None
    size = dt.itemsize * int(np.prod(shape, dtype=np.int64)) if len(shape) <= 32 and min(shape, default=0) >= 0 else -1
    if dt.kind not in KINDS or dt.fields is not None or dt.subdtype is not None or size < 0 \
            or (size != len(raw) if raw is not None else start < 0 or start % ALIGN):
        raise ProtocolError(f"bad array: dtype {dt}, shape {shape}")
    if raw is None:
        memory = shared()                                     # the judge's memory, mapped here
        if start + size > len(memory):
            raise ProtocolError(f"an array past the end of the shared memory ({start} + {size} bytes)")
        return np.frombuffer(memory, dtype=dt, count=size // dt.itemsize, offset=start).reshape(shape)
    arr = np.frombuffer(raw, dtype=dt).reshape(shape).copy()
    return arr[()] if tree.get("scalar") else arr


def shared_size(shared: list) -> int:
    """Bytes of shared memory the arrays `dumps` placed need (at least one page: nothing maps 0 bytes)."""
    return max(4096, shared[-1][0] + shared[-1][1].nbytes if shared else 0)


def dumps(obj, hook=None, shared: list | None = None) -> bytes:
    """The message's bytes. shared: a list that gets (offset, array) for each array placed in shared memory."""
    bufs: list[bytes] = []
    header = json.dumps({"v": _encode(obj, bufs, hook, shared), "n": len(bufs)}).encode()
    return b"".join([_LEN.pack(len(header)), header] + [_LEN.pack(len(b)) + b for b in bufs])


def _read_exact(fd: int, n: int, wait) -> bytes:
    chunks, got = [], 0
    while got < n:
        wait()
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            raise EOFError("the pipe closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_message(fd: int, hook=None, wait=lambda: None, limit: int = MAX_MESSAGE, header_limit: int = MAX_HEADER,
                 shared=None):
    """One message from `fd`; `wait()` is called before each read (the judge's deadline check).
    shared: (the learner's side) a function giving the message's shared memory, called at its first "M" array.

    Every length is checked against the caps BEFORE anything of that size is read or parsed: the
    JSON header against `header_limit`, the arrays' count against MAX_ARRAYS, the total against `limit`."""
    total = 0

    def length(cap: int) -> int:
        nonlocal total
        (n,) = _LEN.unpack(_read_exact(fd, 8, wait))
        total += n
        if n > cap or total > limit:
            raise ProtocolError(f"a message of more than {min(cap, limit)} bytes")
        return n

    try:
        header = json.loads(_read_exact(fd, length(header_limit), wait))
        count = int(header["n"])
        if not 0 <= count <= MAX_ARRAYS:
            raise ProtocolError(f"a message with {count} arrays (at most {MAX_ARRAYS})")
        bufs = [_read_exact(fd, length(limit), wait) for _ in range(count)]
        return _decode(header["v"], bufs, hook, shared)
    except (ValueError, KeyError, TypeError, RecursionError) as e:
        raise ProtocolError(f"malformed message: {type(e).__name__}: {e}") from None


def write_message(fd: int, obj, hook=None) -> None:
    data = memoryview(dumps(obj, hook))
    while data:
        data = data[os.write(fd, data):]
