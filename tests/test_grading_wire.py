"""The judge <-> learner pipe format: plain data in, fresh plain arrays out, nothing else."""
from __future__ import annotations

import json
import os
import struct

import numpy as np
import pytest

from tinyattn.grading import shared_inputs, wire


def roundtrip(obj, hook=None):
    r, w = os.pipe()
    try:
        wire.write_message(w, obj)
        return wire.read_message(r, hook=hook)
    finally:
        os.close(r)
        os.close(w)


def test_plain_values_and_arrays_come_back_equal_and_plain():
    class Sub(np.ndarray):
        pass

    sub = np.arange(6.0).reshape(2, 3).view(Sub)
    got = roundtrip({"a": [1, 2.5, None, True, "x"], "t": (np.float32(1.5), np.int64(3)), "arr": sub,
                     "mask": np.eye(3, dtype=bool), "f16": np.ones(2, np.float16), "col": np.ones((3, 1))[::2]})
    assert got["a"] == [1, 2.5, None, True, "x"] and isinstance(got["t"], tuple)
    assert type(got["t"][0]) is np.float32 and got["t"][1] == 3
    assert type(got["arr"]) is np.ndarray and np.array_equal(got["arr"], np.arange(6.0).reshape(2, 3))
    assert got["mask"].dtype == bool and got["f16"].dtype == np.float16 and got["col"].shape == (2, 1)
    assert got["arr"].flags.writeable and np.shape(roundtrip(np.float64(2.0))) == ()


def test_objects_need_a_hook_on_both_sides():
    with pytest.raises(TypeError, match="can not send a object"):
        wire.dumps(object())
    with pytest.raises(TypeError):
        wire.dumps(np.array([object()]))                      # object arrays never cross
    assert wire.dumps(object(), hook=lambda o, enc: {"R": 7})  # a handle instead


def _raw(header: dict, bufs=()) -> bytes:
    h = json.dumps(header).encode()
    return struct.pack(">Q", len(h)) + h + b"".join(struct.pack(">Q", len(b)) + b for b in bufs)


@pytest.mark.parametrize("header, bufs", [
    ({"v": {"A": 0, "dt": "|O", "sh": [1]}, "n": 1}, [b"\0" * 8]),          # object dtype
    ({"v": {"A": 0, "dt": "<f8", "sh": [3]}, "n": 1}, [b"\0" * 8]),         # size does not match
    ({"v": {"A": 0, "dt": "<U3", "sh": [1]}, "n": 1}, [b"\0" * 12]),        # strings are not numbers
    ({"v": {"A": 0, "dt": [["a", "<f8"]], "sh": [1]}, "n": 1}, [b"\0" * 8]),  # a structured dtype
    ({"v": {"weird": 1}, "n": 0}, []),                                       # an unknown tag
    ({"v": [1, 2], "n": 0}, []),                                             # a bare list
])
def test_a_malformed_message_is_a_protocol_error(header, bufs):
    r, w = os.pipe()
    try:
        os.write(w, _raw(header, bufs))
        with pytest.raises(wire.ProtocolError):
            wire.read_message(r)
    finally:
        os.close(r)
        os.close(w)


def test_an_oversized_message_is_refused_before_it_is_read():
    r, w = os.pipe()
    try:
        os.write(w, struct.pack(">Q", wire.MAX_MESSAGE + 1))
        with pytest.raises(wire.ProtocolError, match="more than"):
            wire.read_message(r)
    finally:
        os.close(r)
        os.close(w)


# ---- a call's arrays in the judge's shared memory (shared_inputs.py) ------------------------------------------------

def _shared_roundtrip(obj):
    """(decoded value as the learner's side gets it, the judge's placed arrays, the judge's file, the mapping)."""
    import mmap

    from tinyattn.grading import shared_inputs
    shared = []
    data = wire.dumps(obj, shared=shared)
    fd = shared_inputs.place(shared)
    memory = mmap.mmap(fd, os.fstat(fd).st_size)           # as the learner's process maps it: shared, writable
    r, w = os.pipe()
    try:
        os.write(w, data)
        return wire.read_message(r, shared=lambda: memory), shared, fd, memory
    finally:
        os.close(r)
        os.close(w)


@pytest.fixture(params=["sealed", "unsealed"] if shared_inputs.SEALED else ["unsealed"])
def branch(request, monkeypatch):
    """Both kinds of file: a sealed memfd (where this platform has one) and an unlinked file, never sealed (macOS)."""
    from test_grading_hidden_write import unsealed
    if request.param == "unsealed":
        unsealed(monkeypatch)
    return request.param


def test_a_calls_arrays_are_views_of_the_judges_file_and_a_write_is_seen_by_the_judge(branch):
    from tinyattn.grading import shared_inputs
    x, mask = np.arange(12.0).reshape(3, 4), np.eye(3, dtype=bool)
    got, shared, fd, memory = _shared_roundtrip({"args": [x, mask, np.float32(2.0), np.zeros((0, 3))], "n": 3})
    try:
        a, m, scalar, empty = got["args"]
        assert np.array_equal(a, x) and np.array_equal(m, mask) and type(scalar) is np.float32 and empty.shape == (0, 3)
        assert a.flags.writeable and all(o % wire.ALIGN == 0 for o, _ in shared) and len(shared) == 3   # no scalar
        assert shared_inputs.written(fd, shared) == []
        a[1, 2] = np.nan                                    # any store into the view lands in the judge's file
        assert shared_inputs.written(fd, shared) == [[0, [3, 4]]]
        assert np.isnan(x).sum() == 0                       # the judge's own array was never touched
        a.base[6] = 6.0                                     # put back through the base: the judge sees it as it is
        assert shared_inputs.written(fd, shared) == []
    finally:
        os.close(fd)


def test_nan_stays_nan_and_a_file_still_mapped_writable_can_not_be_vouched_for(branch):
    import stat

    from tinyattn.grading import shared_inputs
    x = np.array([np.nan, 1.0, -0.0])
    got, shared, fd, memory = _shared_roundtrip([x])
    try:
        assert shared_inputs.written(fd, shared) == []      # NaN where NaN was: unchanged, as np.array_equal has it
        if branch == "unsealed":                            # an unlinked regular file: nothing to seal, nothing left
            st = os.fstat(fd)                               # on disk once the last descriptor and mapping go
            assert stat.S_ISREG(st.st_mode) and st.st_nlink == 0 and st.st_size == 4096
            assert shared_inputs.seal(fd) is True           # the learner's word for it: the order (R, read, S) only
            got[0][1] = 2.0
            assert shared_inputs.written(fd, shared) == [[0, [3]]]
        else:
            assert shared_inputs.seal(fd) is False          # still mapped shared and writable here: EBUSY
            assert shared_inputs.written(fd, shared, sealed=False) == [[0, [3]]]
            got = None
            memory.close()
            assert shared_inputs.seal(fd) is True           # no writable mapping left: no write can come any more
            with pytest.raises(OSError):
                os.pwrite(fd, b"\0" * 8, 0)
    finally:
        os.close(fd)


def test_the_judge_refuses_a_shared_array_in_a_reply():
    r, w = os.pipe()
    try:
        header = json.dumps({"v": {"M": 0, "dt": "<f8", "sh": [1]}, "n": 0}).encode()
        os.write(w, struct.pack(">Q", len(header)) + header)
        with pytest.raises(wire.ProtocolError):
            wire.read_message(r)                            # the judge reads replies with no shared memory at all
    finally:
        os.close(r)
        os.close(w)


@pytest.mark.parametrize("tree", [{"M": 4096, "dt": "<f8", "sh": [1]}, {"M": 8, "dt": "<f8", "sh": [1]},
                                  {"M": -64, "dt": "<f8", "sh": [1]}, {"M": 0, "dt": "|O", "sh": [1]}])
def test_a_shared_array_outside_the_memory_or_misaligned_is_a_protocol_error(tree):
    import mmap
    memory = mmap.mmap(-1, 4096)
    r, w = os.pipe()
    try:
        header = json.dumps({"v": tree, "n": 0}).encode()
        os.write(w, struct.pack(">Q", len(header)) + header)
        with pytest.raises(wire.ProtocolError):
            wire.read_message(r, shared=lambda: memory)
    finally:
        os.close(r)
        os.close(w)
