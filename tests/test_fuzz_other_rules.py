"""The op-surface fuzzer's last "other" findings, each now PyTorch's rule (tests/oracle/test_fuzz_other_rules_torch.py
checks the same against torch). Expected values come from the rule's own definition: kl_div is
xlogy(t, t) - t x (so inf - inf = NaN at an infinite target), a half-integer power beyond +-0.5 is C's pow
(Python's math.pow), add/sub take a bool alpha only for bool results, addcmul casts value to the result's dtype
(an integer result truncates it, as int() does), lerp wants float tensors of one dtype."""
from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck

INF, NAN = math.inf, math.nan


# ---- kl_div: an infinite target -------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [torch.float32, torch.float64])
def test_kl_div_of_an_infinite_target_is_inf_minus_inf(dt):
    x = torch.tensor([0.2, 0.0, -1.0, 0.3], dtype=dt, requires_grad=True)
    t = torch.tensor([INF, INF, INF, 0.5], dtype=dt, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # inf - inf and 0 * inf are NaN silently, no NumPy RuntimeWarning
        out = F.kl_div(x, t, reduction="none")
        out.sum().backward()
    tn, xn = t.detach().numpy().astype(np.float64), x.detach().numpy().astype(np.float64)
    with np.errstate(all="ignore"):
        want = tn * np.log(tn) - tn * xn  # xlogy(t, t) - t x: inf - 0.2 inf, inf - 0 inf, inf + inf
    np.testing.assert_allclose(out.numpy(), want.astype(out.numpy().dtype), rtol=1e-6, equal_nan=True)
    assert np.isnan(out.numpy()[:2]).all() and out.numpy()[2] == INF
    assert x.grad.tolist()[:3] == [-INF] * 3  # d/dx = -t
    g = t.grad.numpy()
    assert np.isnan(g[:3]).all()  # d/dt = log t + t / t - x: inf/inf is NaN, as xlogy's own gradient
    assert g[3] == pytest.approx(math.log(0.5) + 1 - 0.3, abs=1e-6)  # (float32: terms of ~1 cancel to ~0.007)
    for red in ("sum", "batchmean", "mean"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # ('mean''s own warning)
            assert math.isnan(F.kl_div(x, t, reduction=red).item())


def test_kl_div_finite_values_and_gradients_are_unchanged():
    x = torch.tensor([[-0.3, -1.2, -2.0], [0.1, -0.5, -4.0]], dtype=torch.float64, requires_grad=True)
    t = torch.tensor([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]], dtype=torch.float64, requires_grad=True)
    want = (t.detach().numpy() * (np.log(t.detach().numpy()) - x.detach().numpy())).sum()
    assert F.kl_div(x, t, reduction="sum").item() == pytest.approx(want, rel=1e-14)
    assert gradcheck(lambda a, b: F.kl_div(a, b, reduction="sum"), [x, t])


# ---- (-inf) ** p ---------------------------------------------------------------------------------------------

HALF = [1.5, -1.5, 2.5, -2.5, 3.5, -3.5]


@pytest.mark.parametrize("dt", [torch.float32, torch.float64])
@pytest.mark.parametrize("p", HALF)
def test_minus_inf_to_a_half_integer_beyond_a_half_is_cs_pow(dt, p):
    a = torch.tensor([-INF, -0.0, INF, 4.0], dtype=dt, requires_grad=True)
    out = a ** p
    want = [math.pow(v, p) if v != 0 or p > 0 else INF for v in (-INF, 0.0, INF, 4.0)]  # (-0.0 ** -p: +inf)
    assert out.tolist() == pytest.approx(want, rel=1e-6)
    assert [math.copysign(1, v) for v in out.tolist()] == [math.copysign(1, v) for v in want]  # +0, never -0
    out.sum().backward()
    grad = a.grad.tolist()
    if p == 1.5:  # 1.5 x^0.5, and x^0.5 is PyTorch's sqrt: NaN at -inf
        assert math.isnan(grad[0])
    else:
        assert grad[0] == p * math.pow(-INF, p - 1)
    assert grad[3] == pytest.approx(p * 4.0 ** (p - 1), rel=1e-6)


@pytest.mark.parametrize("p", [0.5, -0.5])
def test_minus_inf_to_plus_minus_a_half_is_sqrt_nan(p):
    assert math.isnan((torch.tensor([-INF]) ** p).item())


@pytest.mark.parametrize("p", [2.0, 3.0, -1.0, -2.0, 0.0, 4.0, -3.0])
def test_minus_inf_to_an_integer_power(p):
    assert (torch.tensor([-INF], dtype=torch.float64) ** p).item() == math.pow(-INF, p)


# ---- alpha= and value= -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [torch.int64, torch.float32])
@pytest.mark.parametrize("alpha", [True, False])
def test_a_bool_alpha_only_for_bool_results(dt, alpha):
    x, y = torch.tensor([1, 0, 2], dtype=dt), torch.tensor([1, 1, 0], dtype=dt)
    for call in (lambda: torch.add(x, y, alpha=alpha), lambda: torch.sub(x, y, alpha=alpha),
                 lambda: x.add(y, alpha=alpha), lambda: x.clone().add_(y, alpha=alpha),
                 lambda: x.clone().sub_(y, alpha=alpha), lambda: torch.add(x, torch.tensor([True]), alpha=alpha)):
        with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results"):
            call()
    b = torch.tensor([True, False, False])
    assert torch.add(b, torch.tensor([False, True, False]), alpha=alpha).tolist() == [True, alpha, False]


@pytest.mark.parametrize("value", [2.7, -2.7, 0.5, -0.5, 2.0, True])
def test_addcmul_casts_value_to_an_integer_result(value):
    x, y = torch.tensor([1, 0, 2]), torch.tensor([1, 1, 3])
    want = [a + int(value) * b * b for a, b in zip([1, 0, 2], [1, 1, 3])]
    assert torch.addcmul(x, y, y, value=value).tolist() == want
    assert torch.addcmul(x, y, y, value=value).dtype == torch.int64
    assert x.clone().addcmul_(y, y, value=value).tolist() == want
    xf = x.float()  # a float result keeps value as it is
    assert torch.addcmul(xf, y, y, value=value).tolist() == pytest.approx([a + value * b * b for a, b in
                                                                            zip([1, 0, 2], [1, 1, 3])])


def test_addcmul_refuses_bool_results_and_bool_self_of_an_int_result():
    b = torch.tensor([True, False])
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        torch.addcmul(b, b, b)
    with pytest.raises(RuntimeError, match="result type Long can't be cast to the desired output type Bool"):
        b.clone().addcmul_(torch.tensor([1, 2]), torch.tensor([1, 2]))


def test_lerp_wants_float_tensors_of_one_dtype():
    f32, f64 = torch.ones(2), torch.ones(2, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="expected dtype float32 for `end` but got dtype float64"):
        torch.lerp(f32, f64, 0.5)
    with pytest.raises(RuntimeError, match="for `end`"):
        f32.lerp(torch.ones(2, dtype=torch.int64), 0.5)
    for dt, name in ((torch.int32, "Int"), (torch.int64, "Long"), (torch.bool, "Bool"), (torch.uint8, "Byte")):
        with pytest.raises(NotImplementedError, match=f"not implemented for '{name}'"):
            torch.lerp(torch.ones(2, dtype=dt), torch.ones(2, dtype=dt), 1)
    assert torch.lerp(f32, torch.zeros(2), 0.25).tolist() == [0.75, 0.75]


# ---- histc's message prints numbers as PyTorch's C++ does ------------------------------------------------

@pytest.mark.parametrize("data, kw, shown", [
    ([NAN, 1.0], {}, "[-nan, -nan]"),  # the data's NaN range: its sign set, as PyTorch's min/max leave it
    ([1.0, INF], {}, "[1, inf]"),
    ([-INF, 2.0], {}, "[-inf, 2]"),
    ([1.0], {"min": NAN, "max": 1.0}, "[nan, 1]"),  # a NaN argument keeps its own sign
    ([1.0], {"min": -NAN, "max": 3.25}, "[-nan, 3.25]"),
    ([1.0], {"min": 1e-7, "max": INF}, "[1e-07, inf]"),
    ([1.0], {"min": 123456789.0, "max": INF}, "[1.23457e+08, inf]"),  # 6 significant digits
])
def test_histc_range_message_prints_cs_way(data, kw, shown):
    with pytest.raises(RuntimeError, match=f"torch.histc: range of {re.escape(shown)} is not finite"):
        torch.tensor(data).histc(bins=3, **kw)
