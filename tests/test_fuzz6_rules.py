"""Rules an outside differential fuzzer (programs over indexing, reductions, losses, factories and gradients at
inf/NaN, run on tinyattn and on PyTorch 2.13) found tinyattn answering differently without a word, each fixed at
its rule. Expectations are hand-computed from the rule or checked by float64 finite differences; the same cases
run against PyTorch in tests/oracle/test_fuzz6_rules_torch.py.

- smooth_l1_loss / huber_loss: the gradient at an infinite difference is sign(d) (times delta), not NaN;
- bilinear: x1 . W is contracted first, then . x2 (where an inf meets a 0 decides between inf and NaN);
- maximum / minimum: where a NaN makes neither side win, both get the whole gradient;
- prod / cumprod: PyTorch's choice of formula (made once for the whole tensor) where a 0 is present;
- arange / linspace of an integer dtype from fractional bounds: truncated as PyTorch's kernels truncate;
- norm with p < 0: a slice holding a 0 has norm 0 and passes gradient 0 to all of its entries.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck

INF, NAN = math.inf, math.nan


def grad_of(fn, *values, weights=None):
    leaves = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    out = fn(*leaves)
    w = torch.ones(out.shape, dtype=torch.float64) if weights is None else torch.tensor(weights, dtype=torch.float64)
    (out * w).sum().backward()
    return out, [leaf.grad.numpy() for leaf in leaves]


# ---- smooth_l1_loss / huber_loss at an infinite difference ----------------------------------------------------

@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_smooth_l1_gradient_at_an_infinite_difference_is_its_sign(beta):
    out, (gx, gt) = grad_of(lambda x, t: F.smooth_l1_loss(x, t, reduction="none", beta=beta),
                            [1.0, -INF, 2.0, 0.0, 0.25], [INF, 0.0, -INF, 0.0, 0.0])
    assert out.numpy().tolist()[:3] == [INF, INF, INF]
    # d = -inf, -inf, +inf, 0, 0.25: the linear part's slope sign(d); 0 and d / beta inside
    np.testing.assert_array_equal(gx, [-1.0, -1.0, 1.0, 0.0, 0.25 / beta])
    np.testing.assert_array_equal(gt, -gx)


def test_huber_gradient_at_an_infinite_difference_is_delta_times_its_sign():
    _, (gx, gt) = grad_of(lambda x, t: F.huber_loss(x, t, reduction="none", delta=0.5),
                          [2.0, -INF, 0.1], [INF, 3.0, 0.0])
    np.testing.assert_array_equal(gx, [-0.5, -0.5, 0.1])
    np.testing.assert_array_equal(gt, -gx)


@pytest.mark.parametrize("fn", [lambda x, t: F.smooth_l1_loss(x, t, beta=0.7, reduction="sum"),
                                lambda x, t: F.huber_loss(x, t, delta=0.7, reduction="mean")])
def test_smooth_l1_and_huber_finite_gradients_match_finite_differences(fn):
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.normal(size=(3, 4)) * 2, requires_grad=True)
    t = torch.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    assert gradcheck(fn, (x, t))


def test_smooth_l1_values_are_the_two_pieces():
    x = torch.tensor([0.0, 0.3, -0.9, 1.0, 3.0], dtype=torch.float64)
    np.testing.assert_allclose(F.smooth_l1_loss(x, torch.zeros(5, dtype=torch.float64), reduction="none", beta=1.0).numpy(),
                               [0.0, 0.045, 0.405, 0.5, 2.5], rtol=1e-15)
    np.testing.assert_allclose(F.huber_loss(x, torch.zeros(5, dtype=torch.float64), reduction="none", delta=2.0).numpy(),
                               [0.0, 0.045, 0.405, 0.5, 4.0], rtol=1e-15)


# ---- bilinear: (x1 . W) . x2 -----------------------------------------------------------------------------------

def test_bilinear_contracts_x1_with_the_weight_first():
    w = torch.tensor([[[2.0, 0.0, 0.5], [0.0, -1.0, 1.0]]], dtype=torch.float64)
    # row 0: x1 W = [2, -2, 2.5], finite, then . [-inf, 1, 0] = -inf (a three-way sum would meet 0 * -inf = NaN)
    # row 1: x1 W = [-inf * 2 + 0, -inf * 0 + 0, ...] holds NaN, so the score is NaN
    x1 = torch.tensor([[1.0, 2.0], [-INF, 0.0]], dtype=torch.float64)
    x2 = torch.tensor([[-INF, 1.0, 0.0], [2.0, -1.0, -1.0]], dtype=torch.float64)
    out = F.bilinear(x1, x2, w).numpy()
    assert out[0, 0] == -INF and math.isnan(out[1, 0])


def test_bilinear_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    x1 = torch.tensor(rng.normal(size=(2, 3)), requires_grad=True)
    x2 = torch.tensor(rng.normal(size=(2, 4)), requires_grad=True)
    w = torch.tensor(rng.normal(size=(5, 3, 4)), requires_grad=True)
    b = torch.tensor(rng.normal(size=(5,)), requires_grad=True)
    assert gradcheck(lambda a, c, ww, bb: F.bilinear(a, c, ww, bb), (x1, x2, w, b))


# ---- maximum / minimum at NaN ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_give_both_sides_the_gradient_at_a_nan(name):
    _, (ga, gb) = grad_of(getattr(torch, name), [NAN, 2.0, NAN, 1.0, 3.0], [0.0, NAN, NAN, 1.0, 2.0],
                          weights=[1.0, 10.0, 100.0, 1000.0, 10000.0])
    # NaN on either side: neither loses, both get g; a tie: half each; otherwise the winner
    win_a = 10000.0 if name == "maximum" else 0.0
    np.testing.assert_array_equal(ga, [1.0, 10.0, 100.0, 500.0, win_a])
    np.testing.assert_array_equal(gb, [1.0, 10.0, 100.0, 500.0, 10000.0 - win_a])


def test_fmax_still_gives_the_gradient_to_the_number_not_the_nan():
    _, (ga, gb) = grad_of(torch.fmax, [NAN, 2.0], [0.0, NAN])
    np.testing.assert_array_equal(ga, [0.0, 1.0])
    np.testing.assert_array_equal(gb, [1.0, 0.0])


# ---- prod / cumprod: PyTorch's formula choice -------------------------------------------------------------------

def test_prod_of_everything_with_two_zeros_passes_zero_even_next_to_an_inf():
    _, (g,) = grad_of(lambda x: x.prod(), [[-INF, 0.0, INF], [-1.0, 0.0, 1.0]])
    np.testing.assert_array_equal(g, np.zeros((2, 3)))


def test_prod_of_everything_with_one_zero_passes_the_product_of_the_others_to_it():
    _, (g,) = grad_of(lambda x: x.prod(), [2.0, 0.0, -3.0])
    np.testing.assert_array_equal(g, [0.0, -6.0, 0.0])


def test_prod_along_a_dim_uses_the_products_of_the_others_everywhere_once_any_slice_holds_a_zero():
    # row 1 has no 0, but row 0 has: every row takes the products of the others, so [nan, -1] gets [-1, nan]
    # (prod / x would give nan / nan = NaN to both)
    _, (g,) = grad_of(lambda x: x.prod(1), [[0.0, -INF], [NAN, -1.0]])
    assert g[0, 0] == -INF and g[0, 1] == 0.0
    assert g[1, 0] == -1.0 and math.isnan(g[1, 1])


def test_prod_without_zeros_divides():
    _, (g,) = grad_of(lambda x: x.prod(1), [[NAN, -1.0], [2.0, 4.0]])
    assert np.isnan(g[0]).all()  # NaN / NaN and NaN / -1
    np.testing.assert_array_equal(g[1], [4.0, 2.0])


def test_cumprod_ignores_the_outputs_after_a_zero_for_the_entries_before_it():
    # [1, 0, inf]: y = [1, 0, NaN]; entry 0 gets g0 + g1 * 0 from y0, y1 only, y2 holds the 0 at position 1
    _, (g,) = grad_of(lambda x: x.cumprod(0), [1.0, 0.0, INF], weights=[3.0, 5.0, 7.0])
    assert g[0] == 3.0
    assert g[1] == INF  # g1 * 1 + g2 * 1 * inf
    assert g[2] == 0.0  # after the first 0


def test_cumprod_entries_after_the_first_zero_get_zero_even_against_an_inf():
    _, (g,) = grad_of(lambda x: x.cumprod(0), [0.0, -INF, -INF, -INF])
    assert math.isnan(g[0])  # at the 0: 1 + (-inf) + inf * ... = NaN
    np.testing.assert_array_equal(g[1:], [0.0, 0.0, 0.0])


def test_cumprod_at_the_first_zero_sums_only_up_to_the_second_zero():
    # [0, 1, 0, inf]: at z = 0, g0 * 1 + g1 * a1 + g2 * a1 a2 count, up to the second 0; y3 (where a3 = inf would
    # give 0 * inf = NaN) does not
    _, (g,) = grad_of(lambda x: x.cumprod(0), [0.0, 1.0, 0.0, INF], weights=[3.0, 5.0, 7.0, 11.0])
    np.testing.assert_array_equal(g, [8.0, 0.0, 0.0, 0.0])
    # [0, inf, 0, 1]: the term at the second 0 is g2 * inf * 0 = NaN, and it counts
    _, (g,) = grad_of(lambda x: x.cumprod(0), [0.0, INF, 0.0, 1.0])
    assert math.isnan(g[0]) and g[1:].tolist() == [0.0, 0.0, 0.0]
    _, (g,) = grad_of(lambda x: x.cumprod(0), [0.0, 0.0, 0.0, -INF])
    np.testing.assert_array_equal(g, [1.0, 0.0, 0.0, 0.0])


@pytest.mark.parametrize("values", [[[2.0, 0.0, 3.0, -1.5], [0.0, 0.0, 1.5, 2.0]], [[0.5, 2.0, 0.0, 0.0], [1.0, -2.0, 3.0, 0.5]]])
def test_prod_and_cumprod_with_zeros_match_finite_differences(values):
    x = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    for dim in (0, 1):
        assert gradcheck(lambda a: a.cumprod(dim), (x,))
        assert gradcheck(lambda a: a.prod(dim), (x,))
    assert gradcheck(lambda a: a[0].prod(), (x,))


# ---- arange / linspace of an integer dtype ----------------------------------------------------------------------

@pytest.mark.parametrize("args, expected", [((2.5,), [0, 1]), ((0.5,), []), ((0, 3, 1.5), [0, 1, 2]),
                                            ((-1.5, 1), [-1, 0]), ((0, -2.5, -1), [0, -1])])
def test_arange_long_truncates_each_bound_first(args, expected):
    out = torch.arange(*args, dtype=torch.int64)
    assert out.dtype == torch.int64 and out.tolist() == expected


@pytest.mark.parametrize("args, expected", [((2.5,), [0, 1, 2]), ((0, 2, 0.5), [0, 0, 0, 0]),
                                            ((0.3, 2.7, 0.9), [0, 0, 0]), ((-1.5, 1), [-1, 0, 1])])
def test_arange_int32_counts_from_the_fractional_bounds_and_steps_by_the_truncated_step(args, expected):
    assert torch.arange(*args, dtype=torch.int32).tolist() == expected


@pytest.mark.parametrize("args, dtype, expected", [((-3, 3), torch.uint8, [253, 254, 255, 0, 1, 2]),
                                                   ((250, 260, 3), torch.uint8, [250, 253, 0, 3]),
                                                   ((126, 130), torch.int8, [126, 127, -128, -127])])
def test_arange_of_integer_bounds_wraps_as_a_cast(args, dtype, expected):
    # PyTorch counts in a wider type and casts (NumPy's arange refuses -3 for uint8 with an OverflowError)
    out = torch.arange(*args, dtype=dtype)
    assert out.dtype == dtype and out.tolist() == expected


def test_arange_of_a_fractional_step_truncated_to_zero_raises():
    with pytest.raises(ValueError, match="step"):
        torch.arange(0, 2, 0.5, dtype=torch.int64)


@pytest.mark.parametrize("args", [(-0.5,), (5, 0), (0, 5, -1)])
def test_arange_bounds_against_the_step_sign_raise(args):
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        torch.arange(*args)


def test_arange_floats_unchanged():
    assert torch.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert torch.arange(5).tolist() == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("args, expected", [((-3, 3, 5), [-3, -1, 0, 1, 3]), ((0.5, -2, 5), [0, 0, -1, -1, -2]),
                                            ((-1.5, 0.5, 4), [-1, 0, 0, 0]), ((2.7, -2.7, 3), [2, 0, -2]),
                                            ((-1.5, 1.5, 1), [-1]), ((1, 10, 4), [1, 4, 7, 10])])
@pytest.mark.parametrize("dt", [torch.int64, torch.int32])
def test_integer_linspace_truncates_as_pytorch(args, expected, dt):
    out = torch.linspace(*args, dtype=dt)
    assert out.dtype == dt and out.tolist() == expected


def test_integer_linspace_rounds_each_point_once():
    # step = -4/6 in float64; the point 3 from e = -1 is -1 + 3 * (4/6), which rounded once (a fused multiply-add,
    # as PyTorch's kernel) is just below 1 (0.99999999999999989): truncated, 0
    assert torch.linspace(3, -1.5, 7, dtype=torch.int64).tolist() == [3, 2, 1, 0, 0, 0, -1]


def test_uint8_linspace_refuses_negative_bounds():
    with pytest.raises(ValueError, match="uint8"):
        torch.linspace(-1, 3, 3, dtype=torch.uint8)


# ---- norm with p < 0 --------------------------------------------------------------------------------------------

def test_negative_p_norm_of_a_slice_with_a_zero_is_zero_with_zero_gradient():
    out, (g,) = grad_of(lambda x: torch.norm(x, p=-1, dim=1), [[0.0, -1.0, 2.0], [1.0, -2.0, 4.0]])
    assert out.numpy()[0] == 0.0
    np.testing.assert_allclose(out.numpy()[1], 1 / (1 + 0.5 + 0.25), rtol=1e-15)
    np.testing.assert_array_equal(g[0], [0.0, 0.0, 0.0])
    assert np.isfinite(g[1]).all()


def test_negative_p_norm_gradient_matches_finite_differences():
    x = torch.tensor([[0.5, -1.0, 2.0], [1.0, -2.0, 4.0]], dtype=torch.float64, requires_grad=True)
    for p in (-1, -2.5):
        assert gradcheck(lambda a: torch.norm(a, p=p, dim=1), (x,))
        assert gradcheck(lambda a: torch.norm(a, p=p), (x,))


# ---- a 0-d integer tensor as an index is an int ------------------------------------------------------------------

def test_a_zero_d_integer_tensor_index_selects_a_view():
    x = torch.arange(6).reshape(2, 3)
    v = x[torch.tensor(1)]
    v[0] = 100  # a select is a view: the write reaches x
    assert x.tolist() == [[0, 1, 2], [100, 4, 5]]


@pytest.mark.parametrize("index, expected", [
    ((torch.tensor(1), 2), [20, 21, 22, 23]), ((1, torch.tensor(2)), [20, 21, 22, 23]),
    ((torch.tensor(1), 2, slice(1, None)), [21, 22, 23]), ((torch.tensor(1), slice(None), 0), [12, 16, 20]),
    ((torch.tensor(0), slice(None), torch.tensor([1, 2])), [[1, 2], [5, 6], [9, 10]]),
    ((torch.tensor(1), Ellipsis, torch.tensor(2)), [14, 18, 22])])
def test_a_zero_d_integer_tensor_mixed_with_ints_and_arrays(index, expected):
    # on shape (2, 3, 4) with x[i, j, k] = 12 i + 4 j + k; a 0-d tensor reads as an int (selected away first)
    assert torch.arange(24).reshape(2, 3, 4)[index].tolist() == expected


def test_writes_and_gradients_through_a_zero_d_tensor_index():
    x = torch.tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
    y = x * 1.0
    v = torch.tensor(0.5, requires_grad=True)
    y[torch.tensor(1), 2] *= v  # y[1, 2, :] scaled
    (y * y).sum().backward()
    expect = 2 * np.arange(24.0).reshape(2, 3, 4)
    expect[1, 2] *= 0.25  # d(v x)^2/dx = 2 v^2 x
    np.testing.assert_allclose(x.grad.numpy(), expect, rtol=1e-15)
    np.testing.assert_allclose(v.grad.item(), 2 * 0.5 * (np.arange(20.0, 24.0) ** 2).sum(), rtol=1e-15)


# ---- F.embedding takes PyTorch's options (nn.Embedding's rules, now in one place) ---------------------------------

@pytest.mark.parametrize("padding_idx, row", [(0, 0), (-4, 0), (2, 2), (-1, 3)])
def test_functional_embedding_padding_idx_stops_the_gradient_at_that_row(padding_idx, row):
    w = torch.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
    ids = torch.tensor([[0, 2], [3, 0]])
    out = F.embedding(ids, w, padding_idx=padding_idx)
    np.testing.assert_array_equal(out.detach().numpy(), np.arange(12.0).reshape(4, 3)[[[0, 2], [3, 0]]])
    out.sum().backward()
    counts = np.array([2.0, 0.0, 1.0, 1.0])  # how often each row was looked up
    counts[row] = 0.0
    np.testing.assert_array_equal(w.grad.numpy(), np.repeat(counts[:, None], 3, axis=1))


def test_functional_embedding_padding_idx_out_of_range_raises():
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(torch.tensor([0]), torch.zeros(4, 3), padding_idx=4)


def test_functional_embedding_max_norm_renorms_the_rows_looked_up_in_place():
    w = torch.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    out = F.embedding(torch.tensor([0, 1]), w, max_norm=1.0)
    scale = 1.0 / (5.0 + 1e-7)  # PyTorch's factor max_norm / (norm + 1e-7)
    np.testing.assert_allclose(w.numpy(), [[3.0 * scale, 4.0 * scale], [0.3, 0.4], [6.0, 8.0]], rtol=1e-6)
    np.testing.assert_allclose(out.numpy(), w.numpy()[:2], rtol=0)


def test_embedding_module_and_function_agree():
    torch.manual_seed(0)
    emb = torch.nn.Embedding(5, 3, padding_idx=1, max_norm=0.5)
    ids = torch.tensor([1, 4, 4, 0])
    w0 = emb.weight.detach().clone()
    out = emb(ids)
    ref = F.embedding(ids, w0.requires_grad_(), padding_idx=1, max_norm=0.5)
    np.testing.assert_array_equal(out.detach().numpy(), ref.detach().numpy())
    np.testing.assert_array_equal(emb.weight.detach().numpy(), w0.detach().numpy())


# ---- names tutorials use that raised: diff(prepend=, append=), torch.special.expit / logit / xlogy ------------------

def test_diff_joins_prepend_and_append_first():
    x = torch.tensor([[1.0, 3.0, 6.0], [2.0, 2.0, 5.0]], requires_grad=True)
    p = torch.zeros(2, 1, requires_grad=True)
    out = torch.diff(x, dim=1, prepend=p, append=torch.ones(2, 2))
    assert out.tolist() == [[1.0, 2.0, 3.0, -5.0, 0.0], [2.0, 0.0, 3.0, -4.0, 0.0]]
    (out * torch.tensor([[1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0]])).sum().backward()
    assert x.grad.tolist() == [[-1.0, -1.0, -1.0], [-1.0, -1.0, -1.0]]  # w[i] - w[i + 1] at each x
    assert p.grad.tolist() == [[-1.0], [-6.0]]
    assert x.diff(n=2, dim=0, prepend=x[:1]).tolist() == [[1.0, -1.0, -1.0]]


@pytest.mark.parametrize("kw, err", [({"prepend": torch.zeros(1)}, RuntimeError), ({"append": 2.0}, TypeError)])
def test_diff_refuses_a_prepend_of_another_ndim_or_a_number(kw, err):
    with pytest.raises(err, match="diff"):
        torch.diff(torch.ones(2, 3), **kw)


def test_special_aliases_are_the_same_ops():
    x = torch.tensor([0.0, 2.0], dtype=torch.float64)
    np.testing.assert_allclose(torch.special.expit(x).numpy(), 1 / (1 + np.exp(-x.numpy())), rtol=1e-15)
    np.testing.assert_allclose(torch.special.logit(torch.tensor([0.25, 0.0], dtype=torch.float64), eps=0.1).numpy(),
                               [math.log(1 / 3), math.log(0.1 / 0.9)], rtol=1e-15)
    assert torch.special.xlogy(torch.tensor([0.0, 2.0]), torch.tensor([0.0, 3.0])).tolist() == pytest.approx([0.0, 2 * math.log(3)])
    assert gradcheck(lambda a: torch.special.expit(a) * torch.special.logit(a.sigmoid()),
                     (torch.tensor([0.3, -1.2], dtype=torch.float64, requires_grad=True),))
