"""The judge <-> learner pipe format: plain data in, fresh plain arrays out, nothing else."""
from __future__ import annotations

import json
import os
import struct

import numpy as np
import pytest

from tinyattn.grading import wire


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
