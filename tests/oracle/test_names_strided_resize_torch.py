"""as_strided and resize_/resize_as_ against PyTorch 2.13 over random cases: values, dtypes, every gradient,
the version counter and whether (and with which exception type) it raises. resize_'s new elements are
uninitialised in PyTorch, so only the elements kept are compared."""
import numpy as np
import pytest
import torch

import tinyattn
from test_names_statistics_torch import compare


@pytest.mark.parametrize("seed", range(100))
def test_as_strided_as_pytorch(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 13))
    dtype = str(rng.choice(["float64", "float32", "int64"]))
    a = np.asarray(rng.normal(size=(n,) if seed % 2 else (1, n)) * 3).astype(dtype)
    ndim = int(rng.integers(0, 4))
    size = [int(k) for k in rng.integers(0 if seed % 9 == 0 else 1, 4, ndim)]
    stride = [int(s) for s in rng.integers(-1 if seed % 15 == 0 else 0, 3, ndim + (seed % 23 == 0))]
    offset = None if seed % 3 == 0 else int(rng.integers(-1 if seed % 19 == 0 else 0, 4))
    maker = lambda lib: (lib.tensor(a, requires_grad=dtype != "int64"),)  # noqa: E731
    compare(maker, lambda lib, x: x.as_strided(size, stride, offset), 1e-6, seed)
    compare(maker, lambda lib, x: lib.as_strided(x, size, stride, offset), 1e-6, seed)


@pytest.mark.parametrize("seed", range(80))
def test_resize_as_pytorch(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(0, 3))))
    a = np.asarray(rng.normal(size=shape)).astype(str(rng.choice(["float64", "float32", "int64"])))
    new = [int(n) for n in rng.integers(0 if seed % 7 == 0 else 1, 4, int(rng.integers(0, 4)))]
    as_list = seed % 2 == 0
    got = {}
    for lib in (torch, tinyattn):
        x = lib.tensor(a)
        v = x._version
        try:
            out = x.resize_(new) if as_list else x.resize_(*new)  # (no sizes at all: a TypeError)
        except TypeError as e:
            got[lib.__name__] = type(e).__name__
            continue
        keep = min(int(np.prod(new)), a.size)
        got[lib.__name__] = (out is x, tuple(x.shape), x._version - v, x.numpy().reshape(-1)[:keep].tolist(),
                             str(x.dtype).split(".")[-1])
        like = lib.zeros(tuple(new[::-1]))
        y = lib.tensor(a)
        got[lib.__name__] += (tuple(y.resize_as_(like).shape),)
    assert got["tinyattn"] == got["torch"]


def test_resize_refuses_a_tensor_that_requires_grad_as_pytorch():
    for lib in (torch, tinyattn):
        x = lib.ones(3, requires_grad=True)
        for call in (lambda: x.resize_(2), lambda: (x * 2).resize_(4)):
            with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
                call()
