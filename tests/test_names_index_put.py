"""index_put / index_put_ / torch.index_put and the in-place gcd_, lcm_, ldexp_ without PyTorch: values against
plain loops over the index tuples' positions, gradients by finite differences in float64 over every element
(and the closed form: a repeated position passes g to each write), the in-place forms returning self, and bad
input refused at the surface (tests/oracle/test_names_index_put_torch.py compares all of it with PyTorch)."""
import itertools
import math

import numpy as np
import pytest

import tinyattn
from tinyattn import gradcheck

rng = np.random.default_rng(71)


def t(a, rg=True):
    return tinyattn.tensor(np.asarray(a, dtype=np.float64), dtype=tinyattn.float64, requires_grad=rg)


def I(*v):  # noqa: E743
    return tinyattn.tensor(list(v))


def loop_index_put(a, rows, cols, vals, accumulate):
    """a with vals written (or added) at (rows[k], cols[k]) one position at a time; cols None: whole rows."""
    out = a.copy()
    for k, r in enumerate(rows):
        place = (r,) if cols is None else (r, cols[k])
        v = vals[k] if np.ndim(vals) and len(vals) == len(rows) else vals
        out[place] = out[place] + v if accumulate else v
    return out


@pytest.mark.parametrize("accumulate", [False, True])
def test_positions_write_as_a_loop_and_gradients(accumulate):
    a = rng.standard_normal((3, 4))
    rows, cols = np.array([0, 2, -1, 1]), np.array([1, 3, 0, -4])  # distinct places, two counted from the end
    if accumulate:
        rows, cols = np.array([0, 0, 2, 2, 1]), np.array([1, 1, 3, 3, 0])  # repeats add up
    v = rng.standard_normal(len(rows))
    got = t(a, False).index_put((tinyattn.tensor(rows), tinyattn.tensor(cols)), t(v, False), accumulate=accumulate)
    np.testing.assert_allclose(got.numpy(), loop_index_put(a, rows, cols, v, accumulate), rtol=1e-15)
    assert gradcheck(lambda x, y: x.index_put((tinyattn.tensor(rows), tinyattn.tensor(cols)), y,
                                              accumulate=accumulate), [t(a), t(v)])


def test_the_gradient_in_closed_form_at_repeated_positions():
    w = np.arange(12.0).reshape(3, 4)
    for accumulate in (False, True):
        a, v = t(np.zeros((3, 4))), t([1.0, 2.0, 3.0])
        out = a.index_put((I(0, 0, 2), I(1, 1, 3)), v, accumulate=accumulate)
        (out * t(w, False)).sum().backward()
        assert v.grad.tolist() == [w[0, 1], w[0, 1], w[2, 3]]  # each write reads g at its place
        want = w.copy()
        if not accumulate:
            want[0, 1] = want[2, 3] = 0.0  # overwritten: self's old values there reach nothing
        assert a.grad.tolist() == want.tolist()


@pytest.mark.parametrize("accumulate", [False, True])
def test_values_broadcast_masks_and_whole_rows(accumulate):
    a = rng.standard_normal((3, 4))
    row = rng.standard_normal(4)
    got = t(a, False).index_put((I(0, 2),), t(row, False), accumulate=accumulate)
    np.testing.assert_allclose(got.numpy(), loop_index_put(a, [0, 2], None, row, accumulate), rtol=1e-15)
    mask = a > 0.3
    got = t(a, False).index_put((tinyattn.tensor(mask),), t(7.0, False), accumulate=accumulate)
    want = np.where(mask, a + 7.0 if accumulate else 7.0, a)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)
    m = tinyattn.tensor(mask)
    assert gradcheck(lambda x, y: x.index_put((m,), y, accumulate=accumulate), [t(a), t(2.0)])
    rows = tinyattn.tensor([True, False, True])
    assert gradcheck(lambda x, y: x.index_put((rows,), y, accumulate=accumulate), [t(a), t(row)])
    assert gradcheck(lambda x, y: tinyattn.index_put(x, [I(1), I(2)], y, accumulate),  # (a list, positionally)
                     [t(a), t(-1.0)])


def test_index_tensors_broadcast_together_and_a_2d_index():
    a = rng.standard_normal((3, 4))
    got = t(a, False).index_put((tinyattn.tensor([[0], [2]]), tinyattn.tensor([1, 3])), t(0.0, False))
    want = a.copy()
    for r, c in itertools.product([0, 2], [1, 3]):
        want[r, c] = 0.0
    np.testing.assert_allclose(got.numpy(), want, rtol=0)


def test_in_place_returns_self_bumps_the_version_and_keeps_the_graph():
    x = tinyattn.arange(12.0).reshape(3, 4)
    v0 = x._version
    assert x.index_put_((I(1), I(2)), tinyattn.tensor(-5.0)) is x
    assert x[1, 2].item() == -5.0 and x._version > v0
    a, v = t(rng.standard_normal((3, 4))), t(rng.standard_normal(4))
    assert gradcheck(lambda p, q: (p * 1).index_put_((I(1),), q, accumulate=True), [a, v])
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        t(np.ones(3)).index_put_((I(1),), t(0.0, False))


@pytest.mark.parametrize("call, exc, match", [
    (lambda x: x.index_put((I(1),), tinyattn.tensor(0)), RuntimeError, "dtypes match, got Float for the destination"),
    (lambda x: x.index_put((I(3),), tinyattn.tensor(0.0)), IndexError, "index 3 is out of bounds for dimension 0"),
    (lambda x: x.index_put((I(0), I(-5)), tinyattn.tensor(0.0)), IndexError, "index -5 is out of bounds for dim"),
    (lambda x: x.index_put((tinyattn.tensor([1.0]),), tinyattn.tensor(0.0)), IndexError, "long, int, byte or bool"),
    (lambda x: x.index_put((I(0), I(0), I(0)), tinyattn.tensor(0.0)), IndexError, "too many indices"),
    (lambda x: x.index_put((I(0, 1),), tinyattn.tensor([1.0, 2.0, 3.0])), RuntimeError,
     r"value tensor of shape \[3\] cannot be broadcast to indexing result of shape \[2, 4\]"),
    (lambda x: x.index_put(I(0), tinyattn.tensor(0.0)), TypeError, "must be tuple of Tensors, not Tensor"),
    (lambda x: x.index_put((I(0),), 1.0), TypeError, "'values' .* must be Tensor, not float"),
    (lambda x: x.index_put((None, I(0)), tinyattn.tensor(0.0)), TypeError, "expected Tensor as element 0"),
    (lambda x: x.index_put((tinyattn.tensor([True, False]),), tinyattn.tensor(0.0)), IndexError,
     r"shape of the mask \[2\] at index 0 does not match"),
    (lambda x: x.index_put((I(0, 1), I(0, 1, 2)), tinyattn.tensor(0.0)), IndexError, "could not be broadcast"),
    (lambda x: x.index_put((tinyattn.tensor([1, 0, 1], dtype=tinyattn.uint8),), tinyattn.tensor(0.0)),
     RuntimeError, "only supports boolean masks"),
    (lambda x: x.index_put((), tinyattn.tensor(0.0)), RuntimeError, "at least one index tensor"),
    (lambda x: x.index_put((tinyattn.tensor(True),), tinyattn.tensor(0.0)), IndexError, "0-d bool mask"),
])
def test_bad_input_is_refused_naming_what_came(call, exc, match):
    with pytest.raises(exc, match=match):
        call(tinyattn.arange(12.0).reshape(3, 4))


def test_int_self_and_an_empty_index():
    assert tinyattn.arange(4).index_put((I(1),), tinyattn.tensor(7)).tolist() == [0, 7, 2, 3]
    x = tinyattn.arange(6.0).reshape(2, 3)
    assert x.index_put((tinyattn.tensor([], dtype=tinyattn.int64),), tinyattn.tensor(1.0)).tolist() == x.tolist()


# ---- gcd_, lcm_, ldexp_ ------------------------------------------------------------------------------------

def test_gcd_lcm_in_place_write_self_in_its_dtype():
    a, b = [12, 18, 0, -4], [8, 27, 5, 6]
    x = tinyattn.tensor(a, dtype=tinyattn.int32)
    assert x.gcd_(tinyattn.tensor(b)) is x and x.dtype == tinyattn.int32
    assert x.tolist() == [math.gcd(p, q) for p, q in zip(a, b)]
    y = tinyattn.tensor(a)
    assert y.lcm_(tinyattn.tensor(b, dtype=tinyattn.int32)).tolist() == [math.lcm(p, q) for p, q in zip(a, b)]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        tinyattn.tensor(a).gcd_(tinyattn.tensor([1.0, 2.0, 3.0, 4.0]))
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        tinyattn.tensor([True]).lcm_(tinyattn.tensor([True]))
    with pytest.raises(TypeError, match=r"gcd_\(\): argument 'other' \(position 1\) must be Tensor, not int"):
        tinyattn.tensor(a).gcd_(3)


def test_ldexp_in_place_values_gradients_and_refusals():
    x = tinyattn.tensor([1.0, -2.0, 3.0])
    assert x.ldexp_(tinyattn.tensor([1, 2, -3])) is x
    assert x.tolist() == [math.ldexp(1.0, 1), math.ldexp(-2.0, 2), math.ldexp(3.0, -3)] and x.dtype == tinyattn.float32
    assert gradcheck(lambda a, e: (a * 1).ldexp_(e), [t([1.0, 2.0, 3.0]), t([0.5, 1.0, 2.0])])
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        tinyattn.tensor([1, 2]).ldexp_(tinyattn.tensor([1, 2]))
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        tinyattn.tensor([1.0]).ldexp_(2)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        t([1.0]).ldexp_(tinyattn.tensor([1]))
