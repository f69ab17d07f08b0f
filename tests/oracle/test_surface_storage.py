"""Storage names against PyTorch 2.13: untyped_storage/storage of tensors and views (sizes, offsets, bytes,
shared writes), TypedStorage, is_storage, serialization.location_tag and normalize_storage_type."""
import warnings

import numpy as np
import torch

import tinyattn


def facts(lib, make):
    x = make(lib)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        u, s = x.untyped_storage(), x.storage()
    base = u.data_ptr()
    return dict(nbytes=u.nbytes(), size=u.size(), len=len(u), element_size=u.element_size(),
                first_byte_offset=x.data_ptr() - base, storage_offset=x.storage_offset(), same=u is x.untyped_storage(),
                bytes=u.tolist(), typed_size=s.size(), typed_len=len(s), typed_nbytes=s.nbytes(),
                typed_ptr=s.data_ptr() - base, typed=s.tolist(), _size=s._size(), pickle=s._pickle_storage_type(),
                elem=s.element_size(), untyped_is=type(s._untyped_storage).__name__, kinds=type(u).__name__,
                is_storage=(lib.is_storage(u), lib.is_storage(s), lib.is_storage(x), lib.is_storage(3)),
                tags=(lib.serialization.location_tag(u), lib.serialization.location_tag(s),
                      lib.serialization.location_tag(x)),
                normal=(lib.serialization.normalize_storage_type(type(u)).__name__,
                        lib.serialization.normalize_storage_type(lib.storage.TypedStorage).__name__),
                repr=repr(u).splitlines()[-1].replace("torch.storage.", ""))


MAKERS = [lambda t: t.arange(12, dtype=t.float32).reshape(3, 4)[1:, 2:],
          lambda t: t.tensor([[1, 2, 3], [4, 5, 6]])[:, 1],
          lambda t: t.ones(3, dtype=t.float64).expand(2, 3),
          lambda t: t.zeros(2, 5, dtype=t.float32).t()[3],
          lambda t: t.tensor(np.arange(6.0)).view(2, 3).transpose(0, 1)[1:],
          lambda t: t.empty(0)]


def test_storage_facts_match():
    for make in MAKERS:
        assert facts(tinyattn, make) == facts(torch, make)


def test_writes_through_storages_and_typed_storage_constructors():
    def run(lib):
        x = lib.zeros(3, dtype=lib.float64)
        for i, b in enumerate(np.float64(2.5).tobytes()):
            x.untyped_storage()[8 + i] = b  # byte by byte, as PyTorch allows
        with warnings.catch_warnings():  # (PyTorch warns once per process: whether here depends on test order)
            warnings.simplefilter("ignore")
            x.storage()[2] = -1.0
            made = lib.storage.TypedStorage(3, dtype=lib.float32)
            listed = lib.storage.TypedStorage([1, 2], dtype=lib.int64)
            wrapped = lib.storage.TypedStorage(wrap_storage=x.untyped_storage(), dtype=lib.int32, _internal=True)
        return (x.tolist(), made.size(), made.nbytes(), listed.tolist(),
                wrapped.size(), wrapped.tolist(), repr(listed).splitlines()[-1])
    assert run(tinyattn) == run(torch)


def test_location_tag_of_something_without_a_device():
    errs = []
    for lib in (tinyattn, torch):
        try:
            lib.serialization.location_tag(3)
        except Exception as e:  # noqa: BLE001
            errs.append((type(e).__name__, str(e)))
    assert errs[0] == errs[1]
