"""put(_) and index_reduce(_) without PyTorch: values against plain loops over the flat positions / the
indexed slices, gradients by finite differences in float64 over every element, the in-place forms'
version counter, and bad input refused at the surface."""
import numpy as np
import pytest

import tinyattn
from tinyattn import gradcheck

rng = np.random.default_rng(46)


def t(a, rg=True):
    return tinyattn.tensor(np.asarray(a, dtype=np.float64), dtype=tinyattn.float64, requires_grad=rg)


def loop_put(a, index, src, accumulate):
    out = a.copy().reshape(-1)
    for i, v in zip(index.reshape(-1), src.reshape(-1)):
        out[i] = out[i] + v if accumulate else v
    return out.reshape(a.shape)


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_writes_flat_positions_as_a_loop_and_its_gradients(accumulate):
    a = rng.standard_normal((3, 4))
    # distinct places without accumulate (which of two writes to one place lands is not defined), some counted
    # from the end; repeats with it
    index = (rng.choice(12, (2, 3), replace=False) - 12 * rng.integers(0, 2, (2, 3)) if not accumulate
             else rng.integers(-12, 12, (2, 3)))
    src = rng.standard_normal(6)
    got = tinyattn.put(t(a), tinyattn.tensor(index), t(src), accumulate=accumulate)
    np.testing.assert_allclose(got.detach().numpy(), loop_put(a, index, src, accumulate), rtol=1e-15)
    assert gradcheck(lambda x, s: x.put(tinyattn.tensor(index), s, accumulate), (t(a), t(src)))
    y = tinyattn.tensor(a)
    v = y._version
    assert y.put_(tinyattn.tensor(index), tinyattn.tensor(src), accumulate) is y and y._version == v + 1
    np.testing.assert_allclose(y.numpy(), loop_put(a, index, src, accumulate), rtol=1e-15)
    assert gradcheck(lambda x, s: (x * 1).put_(tinyattn.tensor(index), s, accumulate), (t(a), t(src)))


@pytest.mark.parametrize("call,err,words", [
    (lambda x: x.put(tinyattn.tensor([12]), t([1.0])), IndexError, "index 12 on a tensor of 12 elements"),
    (lambda x: x.put(tinyattn.tensor([1], dtype=tinyattn.int32), t([1.0])), RuntimeError, "long tensor for index"),
    (lambda x: x.put(tinyattn.tensor([1]), tinyattn.tensor([1.0])), RuntimeError, "same dtype"),
    (lambda x: x.put(tinyattn.tensor([1, 2]), t([1.0])), IndexError, "same number of elements"),
])
def test_put_refuses_bad_input(call, err, words):
    with pytest.raises(err, match=words):
        call(t(np.zeros((3, 4))))


def loop_index_reduce(a, dim, index, src, reduce, include_self):
    out = np.moveaxis(a.copy(), dim, 0)
    s = np.moveaxis(src, dim, 0)
    fn = {"prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}[reduce]
    for j in range(out.shape[0]):
        parts = [s[i] for i in range(len(index)) if index[i] == j]
        if parts:
            out[j] = fn(np.stack(([out[j]] if include_self else []) + parts), axis=0)
    return np.moveaxis(out, 0, dim)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_reduce_as_a_loop_and_its_gradients(reduce, include_self, dim):
    a = rng.standard_normal((3, 4, 2))
    n = 5
    index = rng.integers(0, a.shape[dim], n)
    shape = list(a.shape)
    shape[dim] = n
    src = rng.standard_normal(shape)  # distinct values: amax/amin have no ties
    got = t(a).index_reduce(dim, tinyattn.tensor(index), t(src), reduce, include_self=include_self)
    want = loop_index_reduce(a, dim % 3, index, src, reduce, include_self)
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-13)
    assert gradcheck(lambda x, s: tinyattn.index_reduce(x, dim, tinyattn.tensor(index), s, reduce,
                                                        include_self=include_self), (t(a), t(src)))
    y = tinyattn.tensor(a)
    v = y._version
    assert y.index_reduce_(dim, tinyattn.tensor(index), tinyattn.tensor(src), reduce, include_self=include_self) is y
    assert y._version == v + 1
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-13)


def test_index_reduce_integer_mean_rounds_down_and_bad_input_is_refused():
    out = tinyattn.ones(3, dtype=tinyattn.int64).index_reduce(0, tinyattn.tensor([0, 0, 1]), tinyattn.tensor([3, 4, 5]),
                                                               "mean")
    assert out.tolist() == [8 // 3, 6 // 2, 1]
    x, s = t(np.ones((3, 2))), t(np.ones((3, 2)))
    for call, err, words in [(lambda: x.index_reduce(0, tinyattn.tensor([0, 1, 2]), s, "sum"), RuntimeError, "but got sum"),
                             (lambda: x.index_reduce(0, tinyattn.tensor([0, 1]), s, "prod"), RuntimeError, "Number of indices"),
                             (lambda: x.index_reduce(0, tinyattn.tensor([0, 3, 1]), s, "amax"), IndexError, "out of range"),
                             (lambda: x.index_reduce(0, tinyattn.tensor([[0, 1, 2]]), s, "amax"), IndexError, "a vector"),
                             (lambda: x.index_reduce(0, tinyattn.tensor([0, 1, 2]), tinyattn.ones(3, 2), "amax"),
                              RuntimeError, "same scalar type"),
                             (lambda: x.index_reduce(0, tinyattn.tensor([0, 1, 2]), t(np.ones((3, 3))), "amax"),
                              RuntimeError, "excluding the specified dimension")]:
        with pytest.raises(err, match=words):
            call()

