"""renorm(_), histc, unique_consecutive, combinations and trapz without PyTorch: values against NumPy
(np.histogram, np.trapezoid) or plain loops (itertools.groupby, itertools.combinations, a row-by-row
renorm), gradients by finite differences in float64 over every element, bad input refused at the surface."""
import itertools

import numpy as np
import pytest

import tinyattn
from tinyattn import gradcheck

rng = np.random.default_rng(44)


def t(a, rg=True):
    return tinyattn.tensor(np.asarray(a, dtype=np.float64), dtype=tinyattn.float64, requires_grad=rg)


def loop_renorm(a, p, dim, maxnorm):
    out = np.moveaxis(a.copy(), dim, 0)
    for i, row in enumerate(out):
        norm = np.abs(row).max() if p == np.inf else (np.abs(row) ** p).sum() ** (1 / p)
        if norm > maxnorm:
            out[i] = row * (maxnorm / (norm + 1e-7))
    return np.moveaxis(out, 0, dim)


@pytest.mark.parametrize("p", [1, 2, 3.5, np.inf])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_renorm_scales_the_slices_over_maxnorm_and_its_gradient(p, dim):
    a = rng.standard_normal((3, 4, 2)) * rng.uniform(0.2, 2.0, (3, 1, 1))  # some slices over, some under
    got = t(a).renorm(p, dim, 1.5).detach().numpy()
    np.testing.assert_allclose(got, loop_renorm(a, p, dim, 1.5), rtol=1e-13)
    assert gradcheck(lambda x: tinyattn.renorm(x, p, dim, 1.5), (t(a),))


def test_renorm_in_place_counts_a_version_and_records_the_gradient():
    a = rng.standard_normal((4, 3)) * 2
    x = tinyattn.tensor(a)
    v = x._version
    assert x.renorm_(2, 0, 1.0) is x and x._version == v + 1
    np.testing.assert_allclose(x.numpy(), loop_renorm(a, 2, 0, 1.0), rtol=1e-13)
    assert gradcheck(lambda y: (y * 1).renorm_(2, 1, 1.0), (t(a),))
    for call, err, words in [(lambda: t([1.0, 2.0]).renorm(2, 0, 1), RuntimeError, "at least 2 dimensions"),
                             (lambda: t(a).renorm(0, 0, 1), RuntimeError, "non-positive-norm"),
                             (lambda: t(a).renorm(2, 0, -1), RuntimeError, "maxnorm to be >= 0 but got -1"),
                             (lambda: tinyattn.ones(2, 2, dtype=tinyattn.int64).renorm(2, 0, 1), RuntimeError, "Got Long"),
                             (lambda: t(a).renorm(2, 2, 1), IndexError, "out of range")]:
        with pytest.raises(err, match=words):
            call()


@pytest.mark.parametrize("bins,lo,hi", [(10, -2.0, 2.0), (7, 0.0, 1.0), (100, 0, 0), (3, -0.5, 3.0)])
def test_histc_counts_as_np_histogram(bins, lo, hi):
    a = rng.standard_normal(200)
    got = tinyattn.histc(tinyattn.tensor(a), bins, lo, hi)
    rng_ = (a.min(), a.max()) if lo == hi else (lo, hi)
    want, _ = np.histogram(a, bins, range=rng_)
    np.testing.assert_array_equal(got.numpy(), want)
    assert got.dtype == tinyattn.float64 and not got.requires_grad
    assert tinyattn.tensor(a, dtype=tinyattn.float32).histc(bins, lo, hi).dtype == tinyattn.float32


def test_histc_edges_one_point_ranges_and_refusals():
    x = tinyattn.tensor([1.0, 2.0, 1.0, 4.0, 5.0, 0.0, -1.0, 7.0])
    np.testing.assert_array_equal(x.histc(4, 0, 4).numpy(), [1, 2, 1, 1])  # 4 (== max) in the last bin, 5, 7, -1 out
    np.testing.assert_array_equal(tinyattn.tensor([2.0, 2.0]).histc(4).numpy(), [0, 0, 2, 0])  # range [1, 3]
    np.testing.assert_array_equal(tinyattn.tensor([1.0, np.nan, 3.0]).histc(2, 0, 4).numpy(), [1, 1])
    for call, err, words in [(lambda: tinyattn.tensor([1, 2]).histc(3), NotImplementedError, "Long"),
                             (lambda: x.histc(0), RuntimeError, "bins must be > 0, but got 0"),
                             (lambda: x.histc(3, 5, 1), RuntimeError, "max must be larger than min"),
                             (lambda: tinyattn.tensor([1.0, np.inf]).histc(2), RuntimeError, "not finite")]:
        with pytest.raises(err, match=words):
            call()


def test_unique_consecutive_as_a_groupby_loop():
    a = rng.integers(0, 3, 40)
    runs = [(k, len(list(g))) for k, g in itertools.groupby(a.tolist())]
    out, inv, counts = tinyattn.unique_consecutive(tinyattn.tensor(a), return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(out.numpy(), [k for k, _ in runs])
    np.testing.assert_array_equal(counts.numpy(), [n for _, n in runs])
    np.testing.assert_array_equal(out.numpy()[inv.numpy()], a)  # the inverse rebuilds the input
    m = rng.integers(0, 2, (6, 3))[[0, 0, 1, 2, 2, 2]]  # repeated rows
    rows = [(k, len(list(g))) for k, g in itertools.groupby(map(tuple, m.tolist()))]
    out, counts = tinyattn.tensor(m).unique_consecutive(return_counts=True, dim=0)
    np.testing.assert_array_equal(out.numpy(), [k for k, _ in rows])
    np.testing.assert_array_equal(counts.numpy(), [n for _, n in rows])
    out, inv = tinyattn.tensor(m.T).unique_consecutive(return_inverse=True, dim=1)
    np.testing.assert_array_equal(out.numpy().T[inv.numpy()], m)
    nan = tinyattn.tensor([1.0, np.nan, np.nan]).unique_consecutive()
    assert nan.shape == (3,)  # NaNs never equal each other
    with pytest.raises(RuntimeError, match="0 sized dimensions"):
        tinyattn.zeros(2, 0).unique_consecutive(dim=0)


@pytest.mark.parametrize("r", [1, 2, 3, 5])
@pytest.mark.parametrize("repl", [False, True])
def test_combinations_as_itertools_with_its_gradient(r, repl):
    a = rng.standard_normal(4)
    pick = itertools.combinations_with_replacement if repl else itertools.combinations
    want = np.array(list(pick(a.tolist(), r))).reshape(-1, r)
    got = tinyattn.combinations(t(a), r, with_replacement=repl)
    np.testing.assert_array_equal(got.detach().numpy(), want)
    if want.size:
        assert gradcheck(lambda x: tinyattn.combinations(x, r, repl), (t(a),))
    with pytest.raises(RuntimeError, match="Expect a 1D vector, but got shape"):
        tinyattn.combinations(t(np.zeros((2, 2))), r)
    with pytest.raises(RuntimeError, match="non-negative number, but got -1"):
        tinyattn.combinations(t(a), -1)


def test_trapz_is_trapezoid():
    y, x = rng.standard_normal((3, 5)), np.sort(rng.standard_normal(5))
    np.testing.assert_allclose(tinyattn.trapz(tinyattn.tensor(y), tinyattn.tensor(x)).numpy(), np.trapezoid(y, x),
                               rtol=1e-13)
    np.testing.assert_allclose(tinyattn.trapz(tinyattn.tensor(y), dx=0.5, dim=0).numpy(), np.trapezoid(y, dx=0.5, axis=0),
                               rtol=1e-13)
    with pytest.raises(TypeError, match="dx="):
        tinyattn.trapz(tinyattn.tensor(y), 2.0)
