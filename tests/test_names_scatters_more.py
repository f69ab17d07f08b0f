"""select_scatter, slice_scatter, diagonal_scatter, frexp, ldexp, gcd, lcm, vander and chain_matmul without
PyTorch: values against NumPy (a copy written by indexing, np.frexp, np.ldexp, np.gcd, math.lcm, np.vander,
np.linalg.multi_dot), gradients by finite differences in float64 over every element, bad input refused."""
import math

import numpy as np
import pytest

import tinyattn
from tinyattn import gradcheck

rng = np.random.default_rng(45)


def t(a, rg=True):
    return tinyattn.tensor(np.asarray(a, dtype=np.float64), dtype=tinyattn.float64, requires_grad=rg)


@pytest.mark.parametrize("dim,index", [(0, 1), (1, -1), (2, 0), (-2, 2)])
def test_select_scatter_writes_a_copy_and_its_gradients(dim, index):
    a = rng.standard_normal((3, 4, 2))
    src = rng.standard_normal(np.take(a, 0, axis=dim).shape)
    want = a.copy()
    np.moveaxis(want, dim, 0)[index] = src
    got = tinyattn.select_scatter(t(a), t(src), dim, index)
    np.testing.assert_array_equal(got.detach().numpy(), want)
    assert gradcheck(lambda x, s: x.select_scatter(s, dim, index), (t(a), t(src)))


@pytest.mark.parametrize("dim,start,end,step", [(0, None, None, 1), (1, 1, 3, 1), (1, 0, None, 2), (2, -1, None, 1),
                                                (0, 5, None, 1)])
def test_slice_scatter_writes_a_copy_and_its_gradients(dim, start, end, step):
    a = rng.standard_normal((3, 4, 2))
    place = (slice(None),) * dim + (slice(start, end, step),)
    src = rng.standard_normal(a[place].shape)
    want = a.copy()
    want[place] = src
    got = tinyattn.slice_scatter(t(a), t(src), dim, start, end, step)
    np.testing.assert_array_equal(got.detach().numpy(), want)
    assert gradcheck(lambda x, s: x.slice_scatter(s, dim, start, end, step), (t(a), t(src)))


@pytest.mark.parametrize("offset,d1,d2", [(0, 0, 1), (1, 0, 1), (-1, 0, 1), (0, 1, 2), (1, 2, 0), (-2, 0, 2)])
def test_diagonal_scatter_writes_the_diagonal_and_its_gradients(offset, d1, d2):
    a = rng.standard_normal((3, 4, 5))
    diag = np.diagonal(a, offset, d1, d2)
    src = rng.standard_normal(diag.shape)
    want = a.copy()
    idx = np.arange(diag.shape[-1])
    rows, cols = idx + max(-offset, 0), idx + max(offset, 0)
    for o in np.ndindex(*diag.shape[:-1]):  # a plain loop over the other dims
        for k in idx:
            at = list(o)
            at.insert(min(d1, d2), rows[k] if d1 < d2 else cols[k])
            at.insert(max(d1, d2), cols[k] if d1 < d2 else rows[k])
            want[tuple(at)] = src[o + (k,)]
    got = tinyattn.diagonal_scatter(t(a), t(src), offset, d1, d2)
    np.testing.assert_array_equal(got.detach().numpy(), want)
    np.testing.assert_array_equal(np.diagonal(got.detach().numpy(), offset, d1, d2), src)
    assert gradcheck(lambda x, s: x.diagonal_scatter(s, offset, d1, d2), (t(a), t(src)))


def test_the_scatters_cast_src_and_refuse_a_wrong_shape():
    a = tinyattn.zeros(3, 4, dtype=tinyattn.int64)
    out = a.select_scatter(tinyattn.tensor([1.7, 2.2, 3.0, 4.9]), 0, 1)
    assert out.dtype == tinyattn.int64 and out[1].tolist() == [1, 2, 3, 4]
    with pytest.raises(RuntimeError, match=r"src size = \[3\], slice size = \[4\]"):
        a.select_scatter(tinyattn.ones(3, dtype=tinyattn.int64), 0, 1)
    with pytest.raises(IndexError, match="index 5 out of range"):
        a.select_scatter(tinyattn.ones(4, dtype=tinyattn.int64), 0, 5)
    with pytest.raises(RuntimeError, match="slice step must be positive"):
        a.slice_scatter(a, step=0)
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        tinyattn.select_scatter(a, 2.0, 0, 0)


def test_frexp_as_numpy_and_its_gradient():
    a = np.array([0.0, 1.0, -3.0, 0.1, np.inf, np.nan, 1e-310, 8.0, -0.3])
    m, e = tinyattn.frexp(tinyattn.tensor(a))
    wm, we = np.frexp(a)
    np.testing.assert_array_equal(m.numpy(), wm)
    np.testing.assert_array_equal(e.numpy(), we)
    assert e.dtype == tinyattn.int32 and m.dtype == tinyattn.float64
    assert gradcheck(lambda x: x.frexp().mantissa, (t(rng.uniform(0.6, 7.0, 6) * rng.choice([-1, 1], 6)),))
    with pytest.raises(RuntimeError, match="floating-point"):
        tinyattn.tensor([1, 2]).frexp()


def test_ldexp_as_numpy_its_dtypes_and_gradients():
    a, e = rng.standard_normal(5), rng.integers(-3, 4, 5)
    np.testing.assert_allclose(tinyattn.ldexp(tinyattn.tensor(a), tinyattn.tensor(e)).numpy(), np.ldexp(a, e), rtol=1e-15)
    assert tinyattn.ldexp(tinyattn.tensor([1, 2]), tinyattn.tensor([2, 3])).dtype == tinyattn.float32
    assert tinyattn.tensor([1.0], dtype=tinyattn.float16).ldexp(tinyattn.tensor([1])).dtype == tinyattn.float16
    assert gradcheck(lambda x, y: x.ldexp(y), (t(a), t(rng.standard_normal(5))))
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        tinyattn.ldexp(tinyattn.tensor(a), 2)


def test_gcd_and_lcm_as_numpy_and_math():
    a, b = rng.integers(-30, 30, 40), rng.integers(-30, 30, 40)
    np.testing.assert_array_equal(tinyattn.gcd(tinyattn.tensor(a), tinyattn.tensor(b)).numpy(), np.gcd(a, b))
    got = tinyattn.tensor(a).lcm(tinyattn.tensor(b)).numpy()
    np.testing.assert_array_equal(got, [math.lcm(int(x), int(y)) for x, y in zip(a, b)])
    assert tinyattn.gcd(tinyattn.tensor([4], dtype=tinyattn.int32), tinyattn.tensor([6])).dtype == tinyattn.int64
    with pytest.raises(NotImplementedError, match="gcd_cpu.*Float"):
        tinyattn.gcd(tinyattn.tensor([1.0]), tinyattn.tensor([2.0]))
    with pytest.raises(TypeError, match="must be Tensor"):
        tinyattn.lcm(tinyattn.tensor([4]), 6)


@pytest.mark.parametrize("n,increasing", [(None, False), (4, True), (1, False), (5, False), (0, True)])
def test_vander_as_numpy_and_its_gradient_at_zero_too(n, increasing):
    x = np.array([0.0, 2.0, -1.0, 0.5])
    got = tinyattn.vander(t(x), n, increasing)
    np.testing.assert_array_equal(got.detach().numpy(), np.vander(x, n, increasing))
    if n is None or n > 1:
        assert gradcheck(lambda v: tinyattn.vander(v, n, increasing), (t(x),))
    assert tinyattn.vander(tinyattn.tensor([1, 2], dtype=tinyattn.int32)).dtype == tinyattn.int64
    with pytest.raises(RuntimeError, match="one-dimensional"):
        tinyattn.vander(t(np.zeros((2, 2))))


def test_chain_matmul_as_multi_dot_warns_and_refuses():
    ms = [rng.standard_normal(s) for s in ((2, 3), (3, 4), (4, 2))]
    with pytest.warns(UserWarning, match="deprecated"):
        got = tinyattn.chain_matmul(*(tinyattn.tensor(m) for m in ms))
    np.testing.assert_allclose(got.numpy(), np.linalg.multi_dot(ms), rtol=1e-13)
    with pytest.warns(UserWarning):
        assert gradcheck(lambda a, b, c: tinyattn.chain_matmul(a, b, c), tuple(t(m) for m in ms))
        with pytest.raises(RuntimeError, match="cannot be multiplied"):
            tinyattn.chain_matmul(tinyattn.tensor(ms[0]), tinyattn.tensor(ms[0]))
        with pytest.raises(RuntimeError, match="Expected one or more matrices"):
            tinyattn.chain_matmul()
