"""put(_) and index_reduce(_) against PyTorch 2.13 over random cases: values, dtypes, every
gradient, the version counter and whether (and with which exception type) it raises."""
import warnings

import numpy as np
import pytest
import torch

import tinyattn
from test_names_statistics_torch import compare


@pytest.mark.parametrize("seed", range(150))
def test_put_as_pytorch(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(0, 3))))
    n = int(np.prod(shape))
    dtype = str(rng.choice(["float64", "float32", "int64"]))
    a = np.asarray(rng.normal(size=shape) * 3).astype(dtype)
    accumulate = bool(rng.integers(0, 2))
    k = int(rng.integers(0, n + 1))
    pos = rng.integers(0, n, k) if accumulate else rng.choice(n, k, replace=False)  # (no repeats: see the docstring)
    index = (pos - n * rng.integers(0, 2, k)).reshape(-1 if seed % 2 else (1, k))
    if seed % 13 == 0:
        index = np.append(index.reshape(-1), n)  # out of range
    idt = "int32" if seed % 17 == 0 else "int64"
    sdt = dtype if seed % 11 else ("float64" if dtype != "float64" else "float32")
    src = np.asarray(rng.normal(size=index.size + (seed % 19 == 0)) * 3).astype(sdt)

    def make(lib):
        return (lib.tensor(a, requires_grad=dtype != "int64"), lib.tensor(index.astype(idt)),
                lib.tensor(src, requires_grad=sdt != "int64"))

    compare(make, lambda lib, x, i, s: x.put(i, s, accumulate), 1e-6, seed)
    compare(make, lambda lib, x, i, s: lib.put(x, i, s, accumulate=accumulate), 1e-6, seed)
    compare(make, lambda lib, x, i, s: (x * 1).put_(i, s, accumulate), 1e-6, seed)


@pytest.mark.parametrize("seed", range(200))
def test_index_reduce_as_pytorch(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(1, 4))))
    dtype = str(rng.choice(["float64", "float32", "int64"]))
    ties = seed % 3 == 0
    a = np.asarray(rng.integers(-2, 3, shape) if ties else rng.normal(size=shape)).astype(dtype)
    dim = int(rng.integers(-len(shape), len(shape)))
    k = int(rng.integers(0, 5))
    index = rng.integers(0, shape[dim] + (seed % 13 == 0), k)
    sshape = list(shape)
    sshape[dim] = k + (seed % 11 == 0)
    src = np.asarray(rng.integers(-2, 3, sshape) if ties else rng.normal(size=sshape)).astype(dtype)
    reduce = str(rng.choice(["prod", "mean", "amax", "amin"] + (["sum"] if seed % 7 == 0 else [])))
    include_self = bool(rng.integers(0, 2))

    def make(lib):
        return (lib.tensor(a, requires_grad=dtype != "int64"), lib.tensor(index),
                lib.tensor(src, requires_grad=dtype != "int64"))

    tol = 1e-5 if dtype == "float32" else 1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch: "index_reduce() is in beta")
        compare(make, lambda lib, x, i, s: x.index_reduce(dim, i, s, reduce, include_self=include_self), tol, seed)
        compare(make, lambda lib, x, i, s: (x * 1).index_reduce_(dim, i, s, reduce, include_self=include_self), tol,
                seed)


def test_in_place_forms_count_one_version_as_pytorch():
    for lib in (torch, tinyattn):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for op in (lambda x: x.put_(lib.tensor([1, 1]), lib.tensor([1.0, 2.0]), accumulate=True),
                       lambda x: x.index_reduce_(0, lib.tensor([0, 0]), lib.tensor([5.0, 7.0]), "amax")):
                x = lib.ones(4)
                v = x._version
                assert op(x) is x and x._version == v + 1


def test_vander_backward_raises_in_pytorch_and_is_the_derivative_here():
    # PyTorch 2.13's vander backward finds a tensor it saved modified in place (N >= 2); tinyattn's gradient is
    # d/dx sum_j x^j = sum_j j x^(j-1)
    x = torch.tensor([0.0, 2.0, -1.0], dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        torch.vander(x, 3).sum().backward()
    y = tinyattn.tensor([0.0, 2.0, -1.0], dtype=tinyattn.float64, requires_grad=True)
    tinyattn.vander(y, 3).sum().backward()
    assert y.grad.tolist() == [1.0, 5.0, -1.0]

