"""renorm(_), histc, unique_consecutive, combinations and trapz against PyTorch 2.13 over random cases:
values, dtypes, shapes, every gradient and whether (and with which exception type) it raises."""
import numpy as np
import pytest
import torch

import tinyattn
from test_names_statistics_torch import compare, tensor_maker


def draw(rng, lo=0, hi=4, dtypes=("float64", "float64", "float32", "int64")):
    shape = tuple(int(n) for n in rng.integers(1, 5, int(rng.integers(lo, hi))))
    dtype = str(rng.choice(dtypes))
    return np.asarray(rng.normal(size=shape) * rng.uniform(0.2, 3.0)).astype(dtype)


@pytest.mark.parametrize("seed", range(150))
def test_renorm_as_pytorch(seed):
    rng = np.random.default_rng(seed)
    a = draw(rng) if seed % 4 == 0 else draw(rng, 2, 4, ("float64", "float32"))  # (mostly inputs it takes)
    p = float(rng.choice([1, 2, 3, 0.5, np.inf, 0, -1])) if seed % 5 == 0 else float(rng.choice([1, 2, 3, np.inf]))
    dim = int(rng.integers(-max(a.ndim, 1) - (seed % 13 == 0), max(a.ndim, 1)))
    maxnorm = float(rng.uniform(-0.5 if seed % 11 == 0 else 0.1, 3.0))
    tol = 1e-5 if a.dtype == np.float32 else 1e-11
    compare(tensor_maker(a), lambda lib, x: x.renorm(p, dim, maxnorm), tol, seed)
    compare(tensor_maker(a), lambda lib, x: lib.renorm(x, p, dim, maxnorm), tol, seed)
    compare(tensor_maker(a), lambda lib, x: (x * 1).renorm_(p, dim, maxnorm), tol, seed)


def test_renorm_in_place_counts_a_version_as_pytorch():
    for lib in (torch, tinyattn):
        x = lib.tensor([[3.0, 4.0], [0.3, 0.4]])
        v = x._version
        assert x.renorm_(2, 0, 1.0) is x and x._version == v + 1
        np.testing.assert_allclose(x.numpy(), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)


@pytest.mark.parametrize("seed", range(150))
def test_histc_as_pytorch(seed):
    rng = np.random.default_rng(seed)
    a = draw(rng, 0, 3, ("float64", "float32", "float32", "int64"))
    if seed % 7 == 0 and a.dtype.kind == "f" and a.size:
        a.reshape(-1)[0] = rng.choice([np.nan, np.inf])
    if seed % 9 == 0:
        a = np.full_like(a, 2)  # one point
    bins = int(rng.integers(-1 if seed % 17 == 0 else 1, 12))
    lo, hi = (0, 0) if seed % 3 == 0 else sorted(rng.normal(size=2).round(1).tolist())[:: -1 if seed % 19 == 0 else 1]
    compare(tensor_maker(a), lambda lib, x: x.histc(bins, lo, hi), 0, seed)
    compare(tensor_maker(a, rg=False), lambda lib, x: lib.histc(x, bins=bins, min=lo, max=hi), 0, seed)


@pytest.mark.parametrize("seed", range(150))
def test_unique_consecutive_as_pytorch(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(0 if seed % 10 == 0 else 1, 5, int(rng.integers(0, 4))))
    a = rng.integers(0, 2, shape).astype(str(rng.choice(["int64", "float64", "bool"])))
    if a.ndim and seed % 2:  # repeated slices along a dim
        d = int(rng.integers(0, a.ndim))
        a = np.repeat(a, rng.integers(1, 3, a.shape[d]), axis=d) if a.shape[d] else a
    dim = None if seed % 3 == 0 or not a.ndim else int(rng.integers(-a.ndim - (seed % 17 == 0), a.ndim))
    inv, counts = bool(rng.integers(0, 2)), bool(rng.integers(0, 2))
    compare(tensor_maker(a, rg=False), lambda lib, x: lib.unique_consecutive(x, return_inverse=inv, return_counts=counts,
                                                                           dim=dim), 0, seed)
    compare(tensor_maker(a, rg=False), lambda lib, x: x.unique_consecutive(inv, counts, dim), 0, seed)


@pytest.mark.parametrize("seed", range(80))
def test_combinations_as_pytorch(seed):
    rng = np.random.default_rng(seed)
    a = draw(rng, 1, 2) if seed % 10 else draw(rng, 0, 3)
    r = int(rng.integers(-1 if seed % 13 == 0 else 0, 6))
    repl = bool(rng.integers(0, 2))
    compare(tensor_maker(a), lambda lib, x: lib.combinations(x, r, with_replacement=repl),
            1e-5 if a.dtype == np.float32 else 1e-12, seed)  # (float32 gradients add up in its own order)


@pytest.mark.parametrize("seed", range(40))
def test_trapz_as_pytorch(seed):
    rng = np.random.default_rng(seed)
    y = np.asarray(rng.normal(size=(3, 4)))
    x = np.sort(rng.normal(size=4))
    compare(lambda lib: (lib.tensor(y, requires_grad=True), lib.tensor(x, requires_grad=True)),
            lambda lib, a, b: lib.trapz(a, b), 1e-12, seed)
    compare(tensor_maker(y), lambda lib, a: lib.trapz(a, dx=float(seed) / 7, dim=seed % 2 - 1), 1e-12, seed)
