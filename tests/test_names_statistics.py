"""quantile, nanquantile, nanmedian, mode, logcumsumexp, rot90, masked_scatter(_) and nan_to_num_ without
PyTorch: values against NumPy (np.quantile's five methods, np.nanquantile, np.rot90) or a plain loop
(mode, masked_scatter), gradients by finite differences in float64 over every element, the in-place forms
against their out-of-place ones and the version counter, bad input refused at the surface."""
import collections
import warnings

import numpy as np
import pytest

import tinyattn
from tinyattn import gradcheck

rng = np.random.default_rng(43)
MODES = ["linear", "lower", "higher", "midpoint", "nearest"]


def t(a, rg=True):
    return tinyattn.tensor(np.asarray(a, dtype=np.float64), dtype=tinyattn.float64, requires_grad=rg)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape,dim", [((7,), None), ((3, 5), 1), ((4, 3, 2), 0), ((2, 6), -1), ((3, 4), None)])
def test_quantile_matches_numpy_for_every_method_and_q(mode, shape, dim):
    a = rng.standard_normal(shape)
    q = np.array([0.0, 0.1, 0.25, 0.5, 0.6, 0.9, 1.0])
    got = t(a).quantile(tinyattn.tensor(q), dim=dim, interpolation=mode).detach().numpy()
    want = np.quantile(a, q, axis=dim, method=mode)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    for qs in (0.3, 0.75):  # a float q: no q dim
        got = tinyattn.quantile(t(a), qs, dim, keepdim=True, interpolation=mode).detach().numpy()
        np.testing.assert_allclose(got, np.quantile(a, qs, axis=dim, method=mode, keepdims=True), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("mode", MODES)
def test_quantile_gradient_by_finite_differences(mode):
    a = rng.standard_normal((3, 5))  # distinct values: the sort's gradient is smooth there
    q = tinyattn.tensor([0.2, 0.5, 0.85], dtype=tinyattn.float64)
    assert gradcheck(lambda x: x.quantile(q, dim=1, interpolation=mode), (t(a),))
    assert gradcheck(lambda x: tinyattn.nanquantile(x, 0.3, interpolation=mode), (t(a),))


def test_nanquantile_skips_nans_and_quantile_is_nan_where_a_nan_is():
    a = rng.standard_normal((4, 6))
    a[0, 1] = a[2, 3] = a[2, 5] = np.nan
    a[3] = np.nan  # a row of only NaNs
    q = np.array([0.1, 0.5, 0.9])
    for mode in MODES:
        got = t(a).nanquantile(tinyattn.tensor(q), 1, interpolation=mode).detach().numpy()
        with warnings.catch_warnings():  # (NumPy warns of the all-NaN row)
            warnings.simplefilter("ignore", RuntimeWarning)
            want = np.nanquantile(a, q, axis=1, method=mode)
        np.testing.assert_allclose(got, want, rtol=1e-13)
    got = t(a).quantile(0.5, 1).detach().numpy()
    assert np.isnan(got[[0, 2, 3]]).all() and got[1] == np.quantile(a[1], 0.5)
    b = np.array([2.0, np.nan, 1.0, 5.0])
    assert gradcheck(lambda x: x.nanquantile(tinyattn.tensor([0.4, 0.7], dtype=tinyattn.float64)), (t(b),))


def test_quantile_keepdim_shapes_and_a_zero_dim_input():
    x = t(rng.standard_normal((2, 3, 4)))
    q2 = tinyattn.tensor([0.2, 0.8], dtype=tinyattn.float64)
    assert x.quantile(0.5).shape == () and x.quantile(0.5, keepdim=True).shape == (1, 1, 1)
    assert x.quantile(q2, 1, keepdim=True).shape == (2, 2, 1, 4) and x.quantile(q2).shape == (2,)
    assert t(3.0).quantile(0.5, dim=0).item() == 3.0


@pytest.mark.parametrize("call,err,words", [
    (lambda: tinyattn.tensor([1, 2, 3]).quantile(0.5), RuntimeError, "float or double"),
    (lambda: t([1.0, 2.0]).quantile(1.5), RuntimeError, "range [0, 1] but got 1.5"),
    (lambda: t([1.0, 2.0]).quantile(tinyattn.tensor([0.5, 2.0], dtype=tinyattn.float64)), RuntimeError, "q values"),
    (lambda: t([1.0, 2.0]).quantile(tinyattn.tensor([0.5])), RuntimeError, "same dtype"),
    (lambda: t([1.0, 2.0]).quantile(tinyattn.tensor([[0.5]], dtype=tinyattn.float64)), RuntimeError, "scalar or 1D"),
    (lambda: t([1.0, 2.0]).quantile(0.5, interpolation="cubic"), RuntimeError, "but got cubic"),
    (lambda: t(np.zeros(0)).nanquantile(0.5), RuntimeError, "non-empty"),
    (lambda: t([1.0, 2.0]).quantile([0.5]), TypeError, "got list"),
    (lambda: t([1.0, 2.0]).quantile(0.5, dim=3), IndexError, "out of range"),
])
def test_quantile_refuses_bad_input(call, err, words):
    with pytest.raises(err, match=__import__("re").escape(words)):
        call()


def lower_nanmedian(row):
    real = np.sort(row[~np.isnan(row)], kind="stable")
    return real[(real.size - 1) // 2] if real.size else np.nan


def test_nanmedian_is_the_lower_median_of_the_non_nans():
    a = rng.standard_normal((5, 6))
    a[0, [1, 4]] = a[3, 2] = np.nan
    a[4] = np.nan
    out = t(a).nanmedian(1)
    want = np.array([lower_nanmedian(r) for r in a])
    np.testing.assert_array_equal(out.values.detach().numpy(), want)
    picked = np.take_along_axis(a, out.indices.numpy()[:, None], 1)[:, 0]
    np.testing.assert_array_equal(picked, want)  # the index points at the value
    assert out.indices.numpy()[4] == 0  # a row of only NaNs: NaN, at index 0
    assert tinyattn.nanmedian(t(a)).item() == lower_nanmedian(a.ravel())
    assert tinyattn.nanmedian(tinyattn.tensor([3, 1, 2, 2])).item() == 2  # integers: the median
    good = rng.standard_normal((3, 4))
    good[1, 2] = np.nan
    assert gradcheck(lambda x: x.nanmedian(dim=0, keepdim=True).values, (t(good),))


def test_nanmedian_over_every_element_shares_the_gradient_among_equal_entries():
    x = t([3.0, 1.0, np.nan, 1.0, 3.0])
    x.nanmedian().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0.5, 0, 0.5, 0])
    x = t([np.nan, np.nan])
    x.nanmedian().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.5, 0.5])
    with pytest.raises(IndexError, match="non-zero size"):
        t(np.zeros((0, 3))).nanmedian(0)


def loop_mode(row):
    counts = collections.Counter(row.tolist())
    top = max(counts.values())
    value = min(v for v, c in counts.items() if c == top)
    return value, max(i for i, v in enumerate(row.tolist()) if v == value)


@pytest.mark.parametrize("shape,dim", [((6, 9), 1), ((9, 4), 0), ((3, 5, 7), -1), ((12,), 0)])
def test_mode_counts_like_a_loop_smallest_value_on_ties_last_index(shape, dim):
    a = rng.integers(-2, 3, shape)
    out = tinyattn.tensor(a).mode(dim)
    rows = np.moveaxis(a, dim, -1).reshape(-1, a.shape[dim])
    want = np.array([loop_mode(r) for r in rows])
    np.testing.assert_array_equal(out.values.numpy().reshape(-1), want[:, 0])
    np.testing.assert_array_equal(out.indices.numpy().reshape(-1), want[:, 1])
    assert out.values.dtype == tinyattn.int64 and out.indices.dtype == tinyattn.int64


def test_mode_gradient_goes_to_the_reported_index_and_bad_dims_are_refused():
    # distinct values (every count 1: the mode is the smallest) keep the answer still under a small nudge
    assert gradcheck(lambda x: x.mode(1, keepdim=True).values, (t(rng.standard_normal((4, 5))),))
    a = rng.integers(0, 3, (4, 5)).astype(np.float64)  # repeats: the gradient goes to the reported index
    x = t(a)
    out = tinyattn.mode(x, 0)
    out.values.sum().backward()
    want = np.zeros_like(a)
    want[out.indices.numpy(), np.arange(5)] = 1
    np.testing.assert_array_equal(x.grad.numpy(), want)
    with pytest.raises(IndexError, match="dim 1 to have non-zero size"):
        tinyattn.zeros(2, 0).mode()


def test_logcumsumexp_values_gradient_and_overflow():
    a = rng.standard_normal((3, 4, 5))
    for d in (0, 1, -1):
        got = tinyattn.logcumsumexp(t(a), d).detach().numpy()
        np.testing.assert_allclose(got, np.log(np.cumsum(np.exp(a), axis=d)), rtol=1e-13, atol=1e-15)
        assert gradcheck(lambda x: x.logcumsumexp(d), (t(a),))
    big = t([1000.0, 1000.0]).logcumsumexp(0).detach().numpy()
    np.testing.assert_allclose(big, [1000.0, 1000.0 + np.log(2.0)], rtol=1e-15)
    with pytest.raises(NotImplementedError, match="Long"):
        tinyattn.tensor([1, 2]).logcumsumexp(0)


@pytest.mark.parametrize("k", [-3, -1, 0, 1, 2, 3, 5])
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (0, 2), (-1, -3)])
def test_rot90_matches_numpy_and_its_gradient(k, dims):
    a = rng.standard_normal((2, 3, 4))
    out = t(a).rot90(k, dims)
    np.testing.assert_array_equal(out.detach().numpy(), np.rot90(a, k, dims))
    assert gradcheck(lambda x: tinyattn.rot90(x, k, dims), (t(a),))


@pytest.mark.parametrize("call,words", [
    (lambda x: x.rot90(1, [0]), "rotation dims == 2"), (lambda x: x.rot90(1, [1, -1]), "to be different"),
    (lambda x: x[0].rot90(), "total dims >= 2"),
])
def test_rot90_refuses_bad_dims(call, words):
    with pytest.raises(RuntimeError, match=words):
        call(t(np.zeros((2, 3))))


def loop_masked_scatter(a, m, s):
    out, k = a.copy().reshape(-1), 0
    for i, hit in enumerate(m.reshape(-1)):
        if hit:
            out[i], k = s.reshape(-1)[k], k + 1
    return out.reshape(a.shape)


def test_masked_scatter_fills_masked_places_in_order_with_gradients():
    a, s = rng.standard_normal((3, 4)), rng.standard_normal((2, 7))
    m = rng.random((3, 4)) < 0.5
    out = t(a).masked_scatter(tinyattn.tensor(m), t(s))
    np.testing.assert_array_equal(out.detach().numpy(), loop_masked_scatter(a, m, s))
    assert gradcheck(lambda x, y: x.masked_scatter(tinyattn.tensor(m), y), (t(a), t(s)))
    row = rng.random((1, 4)) < 0.5  # broadcast over the rows
    out = tinyattn.masked_scatter(t(a), tinyattn.tensor(row), t(s))
    np.testing.assert_array_equal(out.detach().numpy(), loop_masked_scatter(a, np.broadcast_to(row, a.shape), s))
    assert gradcheck(lambda x: (x * 1).masked_scatter_(tinyattn.tensor(m), t(s, False)), (t(a),))


def test_masked_scatter_in_place_writes_counts_and_refuses_bad_input():
    a, s = rng.standard_normal((3, 4)), rng.standard_normal(12)
    m = rng.random((3, 4)) < 0.5
    x = tinyattn.tensor(a)
    v = x._version
    assert x.masked_scatter_(tinyattn.tensor(m), tinyattn.tensor(s)) is x and x._version == v + 1
    np.testing.assert_array_equal(x.numpy(), loop_masked_scatter(a, m, s))
    with pytest.raises(RuntimeError, match="boolean masks, but got mask with dtype Long"):
        x.masked_scatter(tinyattn.tensor(m.astype(np.int64)), tinyattn.tensor(s))
    with pytest.raises(RuntimeError, match="same dtypes but gotDouble and Float"):
        x.masked_scatter(tinyattn.tensor(m), tinyattn.tensor(s, dtype=tinyattn.float32))
    with pytest.raises(RuntimeError, match="at least as many"):
        x.masked_scatter(tinyattn.ones(3, 4, dtype=tinyattn.bool), tinyattn.tensor(s[:5]))
    with pytest.raises(RuntimeError, match="must broadcast to self's shape"):
        tinyattn.zeros(4, dtype=tinyattn.float64).masked_scatter_(tinyattn.ones(2, 4, dtype=tinyattn.bool),
                                                                  tinyattn.tensor(s))


def test_nan_to_num_in_place_matches_out_of_place_and_keeps_the_gradient():
    a = np.array([np.nan, np.inf, -np.inf, 1.5, -2.0])
    x = tinyattn.tensor(a)
    v = x._version
    assert x.nan_to_num_(nan=7.0, posinf=9.0) is x and x._version == v + 1
    np.testing.assert_array_equal(x.numpy(), np.nan_to_num(a, nan=7.0, posinf=9.0, neginf=np.finfo(np.float64).min))
    assert tinyattn.nan_to_num_(tinyattn.tensor([np.nan])).item() == 0.0
    leaf = t(a)
    y = leaf * 2
    y.nan_to_num_(posinf=5.0).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), [0, 0, 0, 2, 2])
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf.nan_to_num_()


def test_median_over_every_element_shares_the_gradient_among_equal_entries():
    """median() without dim picks the lower median; where several entries equal it, d median / d x_i is
    1/m for each of the m (a step of all m moves the median by the step, and the order among them is
    arbitrary), and a NaN median shares it among the NaNs (PyTorch's rule)."""
    for values, want_value, want_grad in (([1.0, 2.0, 2.0, 3.0], 2.0, [0, 0.5, 0.5, 0]),
                                          ([[1.0, 2.0], [2.0, 2.0]], 2.0, [[0, 1 / 3], [1 / 3, 1 / 3]]),
                                          ([4.0, 1.0, 3.0], 3.0, [0, 0, 1]),
                                          ([1.0, float("nan"), 2.0, float("nan")], float("nan"), [0, 0.5, 0, 0.5])):
        x = tinyattn.tensor(values, dtype=tinyattn.float64, requires_grad=True)
        m = x.median()
        m.backward()
        np.testing.assert_equal(m.item(), want_value)
        np.testing.assert_allclose(x.grad.numpy(), want_grad, rtol=1e-15)
    x = tinyattn.tensor(np.random.default_rng(4).standard_normal(7), requires_grad=True)  # distinct values
    assert gradcheck(lambda t: t.median(), [x])
