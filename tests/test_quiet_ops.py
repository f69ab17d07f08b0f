"""Ops that meet log 0, 0 / 0, sqrt(-1) or exp overflow give inf/NaN silently, as PyTorch does, forward and backward.

pytest's config turns warnings into errors, so each call here would fail if NumPy's RuntimeWarning escaped.
Expected values are NumPy's own (computed under np.errstate) and the derivatives' closed forms.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn.functional as F

INF, NAN = float("inf"), float("nan")
X = np.array([0.0, -1.0, 2.0, INF, -INF, NAN], dtype=np.float32)


def _np(fn):
    with np.errstate(all="ignore"):
        return fn(X.astype(np.float64)).astype(np.float32)


@pytest.mark.parametrize("name, op, ref", [
    ("log", lambda x: x.log(), np.log),
    ("sqrt", lambda x: x.sqrt(), np.sqrt),
    ("rsqrt", lambda x: x.rsqrt(), lambda a: 1 / np.sqrt(a)),
    ("div by 0", lambda x: x / 0.0, lambda a: a / 0.0),
    ("1 / x", lambda x: 1.0 / x, lambda a: 1.0 / a),
    ("pow -0.5", lambda x: x ** -0.5, lambda a: 1 / np.sqrt(a)),  # (NaN at -inf, as PyTorch's: not C's pow, 0)
    ("exp", lambda x: (x * 1000).exp(), lambda a: np.exp(a * 1000)),
    ("log1p", lambda x: (x - 1).log1p(), lambda a: np.log1p(a - 1)),
    ("sin", lambda x: x.sin(), np.sin),
    ("cos", lambda x: x.cos(), np.cos),
    ("pow tensor", lambda x: torch.pow(x, torch.tensor(-1.5)), lambda a: a ** -1.5),
])
def test_forward_and_backward_are_silent_and_give_numpys_values(name, op, ref):
    x = torch.tensor(X, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = op(x)
        y.backward(torch.ones(X.shape))
    np.testing.assert_allclose(y.detach().numpy(), _np(ref), rtol=1e-6)  # (float32 of the float64 answer)
    assert x.grad.shape == x.shape


def test_the_backward_walk_is_silent_and_its_gradients_are_the_limits():
    x = torch.tensor([0.0, 4.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x.sqrt() + x.log()).sum().backward()  # d/dx = 1 / (2 sqrt x) + 1 / x
    np.testing.assert_array_equal(x.grad.numpy(), np.array([INF, 0.25 + 0.25], dtype=np.float32))


def test_numpys_error_state_is_the_callers_again_after_ops_and_backward():
    before = np.geterr()
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    (x.log() / x).sum().backward()
    assert np.geterr() == before
    with pytest.warns(RuntimeWarning):  # the learner's own NumPy code still warns
        np.log(np.zeros(1))


def test_in_place_division_and_casting_nan_to_int_are_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = torch.tensor([1.0, 0.0, -1.0])
        a /= 0.0
        ints = torch.tensor([NAN, 1.5]).to(torch.int32)
    np.testing.assert_array_equal(a.numpy(), np.array([INF, NAN, -INF], dtype=np.float32))
    assert ints.dtype == torch.int32 and ints.tolist()[1] == 1


def test_softplus_at_inf_has_gradient_one():
    # above beta * x > threshold softplus is x itself: value inf, slope 1 (it was NaN: 0 * exp(NaN))
    for dtype in (torch.float32, torch.float64):
        x = torch.tensor([INF, 30.0, 1.0], dtype=dtype, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            y = F.softplus(x, beta=2.0)
            y.backward(torch.ones(3, dtype=dtype))
        s = 1 / (1 + np.exp(-2.0))  # sigmoid(beta x) at x = 1
        np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0, s], rtol=1e-6)
        assert y.tolist()[:2] == [INF, 30.0]


@pytest.mark.parametrize("fn, args", [(F.softshrink, (0.5,)), (F.hardshrink, (0.5,)), (F.threshold, (0.4, 5.0))])
def test_shrinks_and_threshold_keep_nan(fn, args):
    # NaN compares False with every bound: a NaN input must come out NaN, not the fill (0 or `value`)
    x = torch.tensor([NAN, 1.0, 0.2, -0.7, INF, -INF])
    y = fn(x, *args).numpy()
    assert np.isnan(y[0])
    a = np.array([1.0, 0.2, -0.7, INF, -INF], dtype=np.float32)
    if fn is F.softshrink:
        want = np.where(a > 0.5, a - 0.5, np.where(a < -0.5, a + 0.5, 0.0))
    elif fn is F.hardshrink:
        want = np.where(np.abs(a) > 0.5, a, 0.0)
    else:
        want = np.where(a > 0.4, a, 5.0)
    np.testing.assert_array_equal(y[1:], want.astype(np.float32))


def test_negative_zero_to_negative_half_integer_powers():
    # ** -0.5 is 1 / sqrt(x) (PyTorch's rsqrt): 1 / -0.0 = -inf; the other negative half-integers follow C99's pow:
    # pow(-0, y) for y < 0 not an odd integer is +inf (x ** -1.5 gave -inf: sqrt(-0.0) * -0.0 = -0.0)
    x = torch.tensor([-0.0, 0.0], dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (x ** -0.5).tolist() == [-INF, INF] == _np_rsqrt_of_zeros()
        for p in (-1.5, -2.5, -3.5):
            assert (x ** p).tolist() == [INF, INF], p


def _np_rsqrt_of_zeros():
    with np.errstate(divide="ignore"):
        return (1 / np.sqrt(np.array([-0.0, 0.0]))).tolist()


def test_no_backward_of_the_op_surface_fuzz_warns():
    # seeds 0-2999 of tests/surface_fuzz.py: every op family, dtype and edge shape, NaN/inf in a fifth of them;
    # the backward walk runs under one np.errstate, so no NumPy RuntimeWarning can escape a derivative
    import pathlib
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import surface_fuzz as sf
    warned, ran = [], 0
    for seed in range(3000):
        out = sf.run(sf.generate(seed), torch, backward_warnings=True)
        ran += "backward_warned" in out
        if "RuntimeWarning" in out.get("backward_warned", []):
            warned.append(seed)
    assert ran > 500 and not warned, (ran, warned[:10])
