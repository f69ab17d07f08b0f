"""``torch.storage``: the memory under a tensor, as PyTorch's UntypedStorage and TypedStorage name it.

In PyTorch a tensor is a view (shape, strides, offset) of a storage: one flat buffer that views of it
share. Here that buffer is the NumPy array that owns the memory of ``x._data`` (the end of its
``.base`` chain), so ``x.untyped_storage()`` is that array's bytes and ``x.storage()`` its elements:

  * ``UntypedStorage``: bytes; ``nbytes()``, ``size()`` and ``len()`` count them; ``data_ptr()`` is the address of
    the buffer's first byte (a slice ``x[1:]`` has the same storage, at ``storage_offset()`` elements in);
    writing ``s[i] = b`` writes the tensor's memory, as in PyTorch;
  * ``TypedStorage``: the same bytes read as ``dtype``; ``size()`` counts elements; PyTorch deprecates it
    (``tensor.storage()`` warns), and checkpoint code still reads ``_untyped_storage``, ``_size()`` and
    ``_pickle_storage_type()`` from it;
  * ``is_storage(obj)`` is True for these two classes only.

Checkpoint writers of public code (lit-llama's and TinyLlama's incremental saver) test ``is_storage``,
read ``nbytes()``/``data_ptr()``, and ask ``torch.serialization.location_tag`` (here always 'cpu') and
``normalize_storage_type``; they then write PyTorch's pickle format, which tinyattn.save does not use
(tinyattn.load runs no code from a file), so such a saver stops at PyTorch's private writer.
"""
from __future__ import annotations

import warnings
import weakref

import numpy as np

from .checks import device as _check_device
from .devices import device as _device
from .tensor import Tensor

__all__ = ["TypedStorage", "UntypedStorage", "is_storage"]

_DEPRECATED = ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
               "storage class. This should only matter to you if you are using storages directly.  To access "
               "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")
_LEGACY = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage", "int64": "LongStorage",
           "int32": "IntStorage", "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
           "bool": "BoolStorage", "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage"}


_warned = False  # PyTorch warns about TypedStorage once per process


def _warn_removal() -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(_DEPRECATED, UserWarning, stacklevel=3)


def _owner(arr: np.ndarray) -> np.ndarray:
    """The array that owns arr's memory: the last ndarray on its .base chain (arr itself if it owns it);
    NumPy's stride tricks put a holder between a window view and its array, whose .base is followed too."""
    while True:
        base = arr.base
        if not isinstance(base, np.ndarray):
            base = getattr(base, "base", None)
        if not isinstance(base, np.ndarray):
            return arr
        arr = base


class _Storage:
    """What both storages share: a flat NumPy view ``_array`` over the buffer's bytes, read element by element."""

    _array: np.ndarray  # (size,) the bytes (UntypedStorage) or the elements (TypedStorage)
    device = property(lambda self: _device("cpu"), doc="Always the CPU.")
    is_cuda = property(lambda self: False)

    def size(self) -> int:
        return int(self._array.size)

    def __len__(self) -> int:
        return self.size()

    def element_size(self) -> int:
        return self._array.itemsize

    def data_ptr(self) -> int:
        """The address of the buffer's first byte."""
        return int(self.untyped()._bytes.__array_interface__["data"][0])

    def nbytes(self) -> int:
        return int(self.untyped()._bytes.size)

    def __getitem__(self, i):
        return self._array[i].item() if isinstance(i, (int, np.integer)) else self._array[i].tolist()

    def __setitem__(self, i, value) -> None:
        self._array[i] = value  # writes the tensor's memory

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self) -> list:
        return self._array.tolist()

    def cpu(self):
        return self

    def is_shared(self) -> bool:
        return False

    def __repr__(self) -> str:  # PyTorch's: one element a line, then what it is
        kind = f"dtype=torch.{self._array.dtype.name}, " if isinstance(self, TypedStorage) else ""
        return "\n".join([f" {v}" for v in self.tolist()] + [f"[torch.storage.{type(self).__name__}({kind}device=cpu)"
                                                               f" of size {len(self)}]"])


class UntypedStorage(_Storage):
    """A flat buffer of bytes. ``UntypedStorage(n)`` makes n zero bytes; ``tensor.untyped_storage()`` gives
    the bytes the tensor lives in (shared: writes show in the tensor)."""

    _of = weakref.WeakValueDictionary()  # id(owner array) -> its storage: one object per buffer, as PyTorch

    def __init__(self, size: int = 0, *, device=None) -> None:
        if device is not None:
            _check_device(device, "UntypedStorage")  # a GPU: a CPU-only PyTorch's error
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
            raise TypeError(f"UntypedStorage(size): size must be a non-negative int, got {size!r}")
        self._bytes = np.zeros(int(size), dtype=np.uint8)  # (nbytes,)

    @classmethod
    def _over(cls, owner: np.ndarray) -> UntypedStorage:
        """The storage of the buffer ``owner`` owns (made once per buffer)."""
        s = cls._of.get(id(owner))
        if s is None or s._owner is not owner:
            s = cls.__new__(cls)
            s._owner = owner  # keeps the buffer (and so the id) alive as long as the storage
            s._bytes = owner.reshape(-1, order="A").view(np.uint8)  # (nbytes,) a view: an owner is contiguous
            cls._of[id(owner)] = s
        return s

    _array = property(lambda self: self._bytes)

    def untyped(self) -> UntypedStorage:
        return self


class TypedStorage(_Storage):
    """The bytes of an UntypedStorage read as ``dtype``: ``TypedStorage(wrap_storage=s, dtype=d, _internal=True)``,
    ``TypedStorage(n, dtype=d)`` (n zeros) or ``TypedStorage([1, 2], dtype=d)``. Deprecated in PyTorch."""

    def __init__(self, *args, wrap_storage: UntypedStorage | None = None, dtype=None, device=None,
                 _internal: bool = False) -> None:
        if not _internal:
            _warn_removal()
        if device is not None:
            _check_device(device, "TypedStorage")
        from .tensor import get_default_dtype
        self.dtype = np.dtype(get_default_dtype() if dtype is None else dtype).type
        if wrap_storage is not None:
            if args:
                raise RuntimeError("TypedStorage: no positional arguments are allowed together with wrap_storage")
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(f"expected a UntypedStorage for wrap_storage, got {type(wrap_storage).__name__}")
            self._untyped_storage = wrap_storage
            return
        if len(args) > 1:
            raise TypeError(f"TypedStorage takes a size or a sequence, got {len(args)} positional arguments")
        arg = args[0] if args else 0
        data = np.zeros(int(arg), self.dtype) if isinstance(arg, (int, np.integer)) else np.asarray(arg, self.dtype)
        self._untyped_storage = UntypedStorage._over(np.ascontiguousarray(data).reshape(-1))

    @property
    def _array(self) -> np.ndarray:
        b, item = self._untyped_storage._bytes, np.dtype(self.dtype).itemsize
        return b[:b.size // item * item].view(self.dtype)  # (size,) whole elements only

    _size = _Storage.size  # what PyTorch's own savers call

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def _pickle_storage_type(self) -> str:
        return _LEGACY[np.dtype(self.dtype).name]


def is_storage(obj) -> bool:
    """True for an UntypedStorage or a TypedStorage (not for a tensor)."""
    return isinstance(obj, (UntypedStorage, TypedStorage))


# --- the Tensor's side (attached here: tensor.py stays within its line budget) ----------------------
def _untyped_storage(self) -> UntypedStorage:
    """The bytes this tensor lives in: shared with every view of it (``x[1:]`` has x's storage)."""
    return UntypedStorage._over(_owner(self._data))


def _typed_storage(self) -> TypedStorage:
    return TypedStorage(wrap_storage=_untyped_storage(self), dtype=self.dtype, _internal=True)


def _storage(self) -> TypedStorage:
    """Deprecated in PyTorch (it warns, once per process): the storage read as this tensor's dtype."""
    _warn_removal()
    return _typed_storage(self)


def _storage_offset(self) -> int:
    """How many elements into its storage this tensor's first element is."""
    start = _owner(self._data).__array_interface__["data"][0]
    return (self._data.__array_interface__["data"][0] - start) // self._data.itemsize


Tensor.untyped_storage, Tensor.storage, Tensor._typed_storage = _untyped_storage, _storage, _typed_storage
Tensor.storage_offset = _storage_offset
