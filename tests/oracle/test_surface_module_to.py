"""Module.to against PyTorch 2.13: every form, what changes (dtypes of parameters, gradients and buffers,
object identity) and what raises (type and text), measured on the same calls."""
import numpy as np
import pytest
import torch

import tinyattn


def model(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
    m(lib.tensor(np.arange(6.0, dtype=np.float32).reshape(3, 2))).sum().backward()
    return m


CALLS = [
    lambda t, m: m.to(t.float64), lambda t, m: m.to(device="cpu", dtype=t.float64), lambda t, m: m.to(dtype=t.float64),
    lambda t, m: m.to(t.zeros(1, dtype=t.float64)), lambda t, m: m.to("cpu", t.float64),
    lambda t, m: m.to(t.float64, True), lambda t, m: m.to(float), lambda t, m: m.to(t.float16),
    lambda t, m: m.to(t.device("cpu"), t.float64, non_blocking=True), lambda t, m: m.to("cpu"), lambda t, m: m.to(),
    lambda t, m: m.to("cpu", non_blocking=True), lambda t, m: m.to(memory_format=t.channels_last),
    lambda t, m: m.to(t.int64), lambda t, m: m.to(t.zeros(1, dtype=t.int32)), lambda t, m: m.to("cuda:0", t.int64),
    lambda t, m: m.to(t.float64, copy=False), lambda t, m: m.to("cpu", t.float64, False, True),
    lambda t, m: m.to("cuda"), lambda t, m: m.to(0), lambda t, m: m.to(foo=1),
    lambda t, m: m.to(t.float64, non_blocking=1),
]


def outcome(lib, call):
    m = model(lib)
    w, g = m[0].weight, m[0].weight.grad
    before = w.detach().numpy().copy()
    try:
        r = call(lib, m)
    except Exception as e:  # noqa: BLE001  (the error is the outcome)
        return type(e).__name__, str(e).split(" (")[0].splitlines()[0]
    name = lambda dt: str(dt).replace("torch.", "")  # noqa: E731
    return (r is m, m[0].weight is w, m[0].weight.grad is g, name(w.dtype), name(g.dtype),
            name(m[1].running_var.dtype), name(m[1].num_batches_tracked.dtype),
            np.array_equal(w.detach().numpy(), before.astype(w.detach().numpy().dtype)))  # the values, cast


@pytest.mark.parametrize("i", range(len(CALLS)))
def test_module_to_as_pytorch(i):
    theirs, mine = outcome(torch, CALLS[i]), outcome(tinyattn, CALLS[i])
    assert mine == theirs
