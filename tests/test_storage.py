"""torch.storage names: Tensor.untyped_storage()/storage() over the NumPy buffer a tensor lives in, is_storage,
torch.serialization.location_tag / normalize_storage_type. (Compared with PyTorch in
tests/oracle/test_surface_storage.py.)"""
import warnings

import numpy as np
import pytest

import tinyattn
import tinyattn.storage
from tinyattn.serialization import location_tag, normalize_storage_type


def test_a_view_shares_its_base_storage_at_an_offset():
    x = tinyattn.arange(12, dtype=tinyattn.float32).reshape(3, 4)
    v = x[1:, 2:]
    u = v.untyped_storage()
    assert u is x.untyped_storage()  # one storage object per buffer
    assert u.nbytes() == u.size() == len(u) == 48 and u.element_size() == 1
    assert u.data_ptr() == x.data_ptr() and v.storage_offset() == 6 and x.storage_offset() == 0
    assert v.data_ptr() - u.data_ptr() == 6 * 4
    assert u.tolist() == list(np.arange(12, dtype=np.float32).tobytes())  # its bytes, little or big endian alike
    assert x.expand(5, 3, 4).untyped_storage().nbytes() == 48  # a broadcast view adds no memory
    assert tinyattn.empty(0).untyped_storage().nbytes() == 0


def test_writing_the_storage_writes_the_tensor():
    x = tinyattn.zeros(2, dtype=tinyattn.float64)
    u = x.untyped_storage()
    for i, b in enumerate(np.float64(2.5).tobytes()):
        u[8 + i] = b
    assert x.tolist() == [0.0, 2.5]
    tinyattn.storage._warned = False  # PyTorch warns once per process: make this the first time
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        s = x.storage()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x.storage()  # the second time is silent
    s[0] = -1.0
    assert x.tolist() == [-1.0, 2.5] and s.tolist() == [-1.0, 2.5]


def test_typed_storage_reads_the_bytes_as_its_dtype():
    x = tinyattn.tensor([[1, 2, 3], [4, 5, 6]])[:, 1]
    s = x._typed_storage()
    assert s.dtype is np.int64 and s.size() == s._size() == len(s) == 6 and s.nbytes() == 48
    assert s.tolist() == [1, 2, 3, 4, 5, 6] and s.element_size() == 8 and s[4] == 5
    assert s._untyped_storage is x.untyped_storage() and s._pickle_storage_type() == "LongStorage"
    assert s.data_ptr() == x.untyped_storage().data_ptr()
    wrapped = tinyattn.storage.TypedStorage(wrap_storage=s._untyped_storage, dtype=tinyattn.int32, _internal=True)
    assert wrapped.size() == 12 and wrapped.tolist() == np.arange(1, 7).view(np.int32).tolist()  # the same bytes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        made = tinyattn.storage.TypedStorage(3, dtype=tinyattn.float64)
        listed = tinyattn.storage.TypedStorage([1.5, 2.0], dtype=tinyattn.float32)
    assert made.tolist() == [0.0, 0.0, 0.0] and made.nbytes() == 24
    assert listed.tolist() == [1.5, 2.0] and listed._pickle_storage_type() == "FloatStorage"
    assert repr(listed).splitlines() == [" 1.5", " 2.0",
                                         "[torch.storage.TypedStorage(dtype=torch.float32, device=cpu) of size 2]"]
    assert repr(tinyattn.UntypedStorage(2)).splitlines() == [" 0", " 0",
                                                             "[torch.storage.UntypedStorage(device=cpu) of size 2]"]


def test_is_storage_location_tag_and_normalize_storage_type():
    x = tinyattn.ones(3)
    u = x.untyped_storage()
    assert tinyattn.is_storage(u) and tinyattn.is_storage(x._typed_storage())
    assert not tinyattn.is_storage(x) and not tinyattn.is_storage(np.ones(3)) and not tinyattn.is_storage(3)
    assert location_tag(u) == location_tag(x._typed_storage()) == location_tag(x) == "cpu"
    with pytest.raises(AttributeError, match="'int' object has no attribute 'device'"):
        location_tag(3)
    assert normalize_storage_type(type(u)) is tinyattn.UntypedStorage is tinyattn.storage.UntypedStorage
    assert normalize_storage_type(tinyattn.storage.TypedStorage) is tinyattn.TypedStorage
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        tinyattn.UntypedStorage(2, device="cuda")
