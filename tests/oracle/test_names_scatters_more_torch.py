"""select_scatter, slice_scatter, diagonal_scatter, frexp, ldexp, gcd, lcm, vander and chain_matmul against
PyTorch 2.13 over random cases: values, dtypes, shapes, every gradient and whether (and with which exception
type) it raises. vander's gradient is not compared: PyTorch 2.13's backward raises for N >= 2 (it modifies a
tensor it saved); the torch-free test checks tinyattn's by finite differences."""
import warnings

import numpy as np
import pytest
import torch

import tinyattn
from test_names_statistics_torch import compare, tensor_maker


def draw(rng, lo=1, hi=4, dtypes=("float64", "float64", "float32", "int64")):
    shape = tuple(int(n) for n in rng.integers(1, 5, int(rng.integers(lo, hi))))
    return np.asarray(rng.normal(size=shape) * 3).astype(str(rng.choice(dtypes)))


def pair_maker(a, s):
    return lambda lib: (lib.tensor(a, requires_grad=a.dtype.kind == "f"), lib.tensor(s, requires_grad=s.dtype.kind == "f"))


@pytest.mark.parametrize("seed", range(120))
def test_select_and_slice_scatter_as_pytorch(seed):
    rng = np.random.default_rng(seed)
    a = draw(rng)
    dim = int(rng.integers(-a.ndim - (seed % 13 == 0), a.ndim))
    d = dim % a.ndim if -a.ndim <= dim < a.ndim else 0
    index = int(rng.integers(-a.shape[d] - (seed % 7 == 0), a.shape[d] + (seed % 11 == 0)))
    sdtype = a.dtype if seed % 5 else np.dtype(rng.choice(["float64", "float32", "int64"]))
    sel_shape = a.shape[:d] + a.shape[d + 1:]
    src = np.asarray(rng.normal(size=sel_shape if seed % 9 else sel_shape + (1,))).astype(sdtype)
    tol = 1e-6
    compare(pair_maker(a, src), lambda lib, x, s: lib.select_scatter(x, s, dim, index), tol, seed)
    start, end = (None if rng.random() < 0.3 else int(rng.integers(-5, 6)) for _ in range(2))
    step = int(rng.integers(0 if seed % 17 == 0 else 1, 4))
    place = a[(slice(None),) * d + (slice(start, end, max(step, 1)),)].shape
    src = np.asarray(rng.normal(size=place if seed % 9 else place + (1,))).astype(sdtype)
    compare(pair_maker(a, src), lambda lib, x, s: x.slice_scatter(s, dim, start, end, step), tol, seed)


@pytest.mark.parametrize("seed", range(100))
def test_diagonal_scatter_as_pytorch(seed):
    rng = np.random.default_rng(seed)
    a = draw(rng, 2, 4)
    d1, d2 = (int(d) for d in rng.choice(np.arange(-a.ndim, a.ndim), 2, replace=False))
    offset = int(rng.integers(-4, 5))
    try:
        place = np.diagonal(a, offset, d1, d2).shape
    except ValueError:  # the same dim twice (d1 = -d2 wrapped): PyTorch refuses too
        place = (1,)
    src = np.asarray(rng.normal(size=place if seed % 9 else (2,) + place)).astype(a.dtype)
    compare(pair_maker(a, src), lambda lib, x, s: lib.diagonal_scatter(x, s, offset, d1, d2), 1e-6, seed)


@pytest.mark.parametrize("seed", range(80))
def test_frexp_and_ldexp_as_pytorch(seed):
    rng = np.random.default_rng(seed)
    a = draw(rng, 0, 3, ("float64", "float32", "float16", "int64"))
    if a.dtype.kind == "f" and a.size and seed % 4 == 0:
        a.reshape(-1)[0] = rng.choice([0.0, np.inf, np.nan, 1e-40])
    compare(tensor_maker(a), lambda lib, x: lib.frexp(x), 1e-3 if a.dtype == np.float16 else 1e-12, seed)
    e = np.asarray(rng.integers(-4, 5, a.shape)).astype(str(rng.choice(["int64", "int32", "float64", "float32"])))
    if e.dtype.kind == "i":  # (a negative integer exponent: see test_ldexp_gradient_at_a_negative_integer_exponent)
        e = np.abs(e)
    if seed % 10 == 0:
        e = e[None]  # broadcasts to a larger result
    tol = 1e-3 if np.float16 in (a.dtype, e.dtype) else 1e-6
    compare(pair_maker(a, e), lambda lib, x, y: x.ldexp(y), tol, seed)
    compare(tensor_maker(a), lambda lib, x: lib.ldexp(x, 2), tol, seed)  # a number: refused


def test_ldexp_gradient_at_a_negative_integer_exponent():
    # PyTorch 2.13 computes d/dx ldexp(x, e) = 2^e in e's integer dtype, so 2^-1 is 0 there; tinyattn's is 0.5
    got = {}
    for lib in (torch, tinyattn):
        x = lib.tensor([1.5, 3.0], dtype=lib.float64, requires_grad=True)
        out = lib.ldexp(x, lib.tensor([2, -1]))
        out.sum().backward()
        got[lib.__name__] = (out.detach().numpy().tolist(), x.grad.numpy().tolist())
    assert got["torch"] == ([6.0, 1.5], [4.0, 0.0])
    assert got["tinyattn"] == ([6.0, 1.5], [4.0, 0.5])


@pytest.mark.parametrize("seed", range(80))
def test_gcd_and_lcm_as_pytorch(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(0, 3))))
    dts = ["int64", "int32", "uint8", "int16"] + (["float32", "bool"] if seed % 5 == 0 else [])
    a = np.asarray(rng.integers(0 if seed % 2 else -40, 40, shape)).astype(str(rng.choice(dts)))
    b = np.asarray(rng.integers(-40, 40, shape[-1:] if seed % 3 == 0 else shape)).astype(a.dtype if seed % 4 else "int64")
    if a.dtype == np.uint8:
        b = np.abs(b).astype(np.uint8)
    maker = lambda lib: (lib.tensor(a), lib.tensor(b))  # noqa: E731
    compare(maker, lambda lib, x, y: lib.gcd(x, y), 0, seed)
    compare(maker, lambda lib, x, y: x.lcm(y), 0, seed)


def test_lcm_wraps_on_overflow_as_pytorch():
    maker = lambda lib: (lib.tensor([2 ** 40, -2 ** 63, 0]), lib.tensor([3 ** 20, 0, 0]))  # noqa: E731
    compare(maker, lambda lib, x, y: x.lcm(y), 0)
    compare(maker, lambda lib, x, y: x.gcd(y), 0)


@pytest.mark.parametrize("seed", range(60))
def test_vander_as_pytorch(seed):
    rng = np.random.default_rng(seed)
    a = draw(rng, 1, 2, ("float64", "float32", "int64", "int32", "bool")) if seed % 9 else draw(rng, 0, 3)
    n = None if seed % 3 == 0 else int(rng.integers(-1 if seed % 13 == 0 else 0, 6))
    inc = bool(seed % 2)
    compare(tensor_maker(a, rg=False), lambda lib, x: lib.vander(x, n, inc), 1e-12 if a.dtype != np.float32 else 1e-5)


@pytest.mark.parametrize("seed", range(60))
def test_chain_matmul_as_pytorch(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(0 if seed % 10 == 0 else 1, 5))
    sizes = [int(n) for n in rng.integers(1, 5, k + 1)]
    ms = [rng.normal(size=(sizes[i], sizes[i + 1] + (seed % 7 == 0 and i == 1))) for i in range(k)]
    if seed % 11 == 0 and ms:
        ms[0] = ms[0][0]  # a vector
    dt = ["float64", "float32"][seed % 2]
    maker = lambda lib: tuple(lib.tensor(m.astype(dt), requires_grad=True) for m in ms)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(maker, lambda lib, *m: lib.chain_matmul(*m), 1e-12 if dt == "float64" else 1e-5, seed)
