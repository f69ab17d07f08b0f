"""Rules an outside differential fuzzer (session 19) found broken, each now PyTorch's: expected values are
hand-computed from the rule's definition, gradients checked by finite differences (gradcheck).

- cosine_similarity broadcasts x1 and x2 BEFORE taking the norms (the norm of a broadcast vector is longer);
- tensor_split reads a 0-d int64 tensor as a number of parts and negative indices as slice bounds;
  hsplit/vsplit refuse a number of parts that does not divide the dim, and too few dims;
- nanmean takes dtype= (the one-tensor op table's rule, as mean's)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck


# ---- cosine_similarity: broadcast first ------------------------------------------------------------------------

def test_cosine_similarity_broadcasts_before_the_norms():
    x1 = torch.tensor([[2.0], [0.5]], dtype=torch.float64)       # (2, 1): along dim 1 it is [2, 2] and [0.5, 0.5]
    x2 = torch.tensor([[2.0, 0.5]], dtype=torch.float64)         # (1, 2)
    out = F.cosine_similarity(x1, x2, dim=1)
    want = (2 * 2 + 2 * 0.5) / (math.sqrt(8) * math.sqrt(4.25))  # the same for both rows (a vector's scale cancels)
    np.testing.assert_allclose(out.numpy(), [want, want], rtol=1e-14)
    assert (out.numpy() <= 1).all()  # (before: 5 / (2 * sqrt(4.25)) = 1.21, a cosine above 1)


def test_cosine_similarity_gradient_through_broadcasting():
    x1 = torch.tensor([[0.3, -1.2, 0.8]], dtype=torch.float64, requires_grad=True)
    x2 = torch.tensor([[1.0], [-0.4]], dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda a, b: F.cosine_similarity(a, b, dim=0, eps=1e-8), [x1, x2])
    assert gradcheck(lambda a, b: torch.cosine_similarity(a, b, dim=1), [x1, x2])


def test_cosine_similarity_refuses_shapes_that_do_not_broadcast():
    with pytest.raises(ValueError, match=r"x1 of shape \(3,\) and x2 of shape \(2, 2\) do not broadcast"):
        F.cosine_similarity(torch.ones(3), torch.ones(2, 2), dim=0)


# ---- tensor_split, hsplit, vsplit ------------------------------------------------------------------------------

def _sizes(parts):
    return [tuple(p.shape) for p in parts]


def test_tensor_split_reads_a_0d_tensor_as_a_number_of_parts():
    x = torch.arange(5.0)
    assert [p.tolist() for p in torch.tensor_split(x, torch.tensor(3))] == [[0.0, 1.0], [2.0, 3.0], [4.0]]
    assert [p.tolist() for p in x.tensor_split(torch.tensor([1, 3]))] == [[0.0], [1.0, 2.0], [3.0, 4.0]]


def test_tensor_split_negative_indices_count_from_the_end():
    x = torch.arange(5.0)
    assert [p.tolist() for p in torch.tensor_split(x, [1, -2])] == [[0.0], [1.0, 2.0], [3.0, 4.0]]
    # slice bounds: -7 is before the start (0), 9 past the end (5), a bound below the previous one is empty
    assert _sizes(torch.tensor_split(x, [4, 1, -7, 9])) == [(4,), (0,), (0,), (5,), (0,)]
    m = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
    first, last = torch.tensor_split(m, [-1], dim=-2)
    assert first.tolist() == [[1.0, 2.0]] and last.tolist() == [[3.0, 4.0]]
    (first * 2 + last * 3).sum().backward()
    assert m.grad.tolist() == [[2.0, 2.0], [3.0, 3.0]]


@pytest.mark.parametrize("ios, msg", [
    (torch.tensor([1.0]), "to have dtype of long, but got Float"),
    (torch.tensor([1], dtype=torch.int32), "to have dtype of long, but got Int"),
    (torch.tensor([[1]]), "zero-dimensional or one-dimensional tensor, but got a tensor with 2 dims"),
    (torch.tensor(0), "number of sections must be larger than 0, got 0"),
])
def test_tensor_split_refuses_other_index_tensors(ios, msg):
    with pytest.raises(RuntimeError, match=msg):
        torch.tensor_split(torch.ones(3), ios)


def test_hsplit_and_vsplit_need_parts_that_divide_the_dim():
    x = torch.ones(4, 3)
    assert _sizes(torch.vsplit(x, 2)) == [(2, 3), (2, 3)]
    assert _sizes(torch.hsplit(x, [1])) == [(4, 1), (4, 2)]
    with pytest.raises(RuntimeError, match="split along dimension 1, but the size of the dimension 3 is not "
                                           "divisible by the split_size 2"):
        torch.hsplit(x, 2)
    with pytest.raises(RuntimeError, match="the split_size 0"):
        torch.hsplit(torch.ones(3), 0)
    with pytest.raises(RuntimeError, match="vsplit requires a tensor with at least 2 dimension, but got a tensor "
                                           "with 1 dimensions"):
        torch.vsplit(torch.ones(4), 2)
    with pytest.raises(RuntimeError, match="hsplit requires a tensor with at least 1 dimension"):
        torch.tensor(1.0).hsplit(1)


# ---- nanmean(dtype=) ------------------------------------------------------------------------------------------

def test_nanmean_computes_in_the_given_dtype():
    x = torch.tensor([[1.0, math.nan], [2.0, 5.0]], dtype=torch.float32)
    out = torch.nanmean(x, 1, dtype=torch.float64)
    assert out.dtype == torch.float64 and out.tolist() == [1.0, 3.5]
    half = x.nanmean(0, keepdim=True, dtype=torch.float16)
    assert half.dtype == torch.float16 and half.tolist() == [[1.5, 5.0]]
    third = torch.tensor([0.1, math.nan, 0.2, 0.3], dtype=torch.float32).nanmean(dtype=torch.float64)
    assert third.item() == pytest.approx((np.float32(0.1) + np.float32(0.2) + np.float32(0.3)) / 3, rel=1e-15)


def test_nanmean_refuses_an_integer_dtype_and_passes_gradients():
    with pytest.raises(RuntimeError, match=r"nanmean\(\): could not infer output dtype. Optional dtype must be "
                                           "either a floating point or complex dtype. Got: Long"):
        torch.nanmean(torch.tensor([1.0, 2.0]), dtype=torch.int64)
    x = torch.tensor([0.5, math.nan, -1.5, 2.0], dtype=torch.float32, requires_grad=True)
    x.nanmean(dtype=torch.float64).backward()
    assert x.grad.dtype == torch.float32
    np.testing.assert_allclose(x.grad.numpy(), [1 / 3, 0.0, 1 / 3, 1 / 3], rtol=1e-6)


# ---- gcd, lcm, ldexp: the promotion rule of every binary op (a 0-d tensor does not widen a tensor with dims) ----

@pytest.mark.parametrize("op, want", [("gcd", [1, 2, 1]), ("lcm", [6, 2, 2])])
def test_gcd_and_lcm_with_a_0d_tensor_keep_the_tensors_dtype(op, want):
    for own, zero in ((torch.uint8, torch.int8), (torch.int32, torch.int64), (torch.int16, torch.int64)):
        out = getattr(torch, op)(torch.tensor([3, 2, 1], dtype=own), torch.tensor(2, dtype=zero))
        assert out.dtype == own and out.tolist() == want
    both = torch.gcd(torch.tensor([4, 6], dtype=torch.int8), torch.tensor([6, 4], dtype=torch.int16))
    assert both.dtype == torch.int16 and both.tolist() == [2, 2]  # (two tensors with dims: the wider)


def test_ldexp_of_floats_with_a_0d_tensor_keeps_the_tensors_dtype():
    out = torch.ldexp(torch.tensor([3.0, 2.0, 1.0], dtype=torch.float16), torch.tensor(2.0, dtype=torch.float32))
    assert out.dtype == torch.float16 and out.tolist() == [12.0, 8.0, 4.0]


# ---- scatter_reduce / index_reduce 'mean' of small integer types ------------------------------------------------

def test_integer_mean_reductions_of_uint8_and_int8():
    u = torch.tensor([4, 5], dtype=torch.uint8)
    src = torch.tensor([3, 8], dtype=torch.uint8)
    at0 = torch.tensor([0, 0])
    assert u.scatter_reduce(0, at0, src, "mean").tolist() == [5, 5]  # (4 + 3 + 8) // 3
    out = u.index_reduce(0, at0, src, "mean", include_self=False)
    assert out.dtype == torch.uint8 and out.tolist() == [5, 5]  # (3 + 8) // 2
    i8 = torch.tensor([-4, 5], dtype=torch.int8).scatter_reduce(0, at0, torch.tensor([3, -8], dtype=torch.int8), "mean")
    assert i8.dtype == torch.int8 and i8.tolist() == [-3, 5]  # floor(-9 / 3)


# ---- hinge_embedding_loss at an infinite distance ---------------------------------------------------------------

def test_hinge_embedding_loss_of_an_infinite_distance_is_inf_not_nan():
    x = torch.tensor([-math.inf, 1.0, math.inf, 0.3], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([-1.0, -1.0, 1.0, -1.0], dtype=torch.float64)
    out = F.hinge_embedding_loss(x, y, margin=0.5, reduction="none")
    np.testing.assert_allclose(out.detach().numpy(), [math.inf, 0.0, math.inf, 0.2], rtol=1e-15)  # max(0, 0.5 - x), x
    out.sum().backward()
    assert x.grad.tolist() == [-1.0, 0.0, 1.0, -1.0]
    finite = torch.tensor([0.2, 1.3, 0.7], dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda a: F.hinge_embedding_loss(a, torch.tensor([-1.0, 1.0, -1.0], dtype=torch.float64),
                                                      margin=1.0), [finite])


# ---- x[index] = value: the value's leading size-1 dims are dropped (PyTorch's copy_to) -------------------------

def test_setitem_drops_the_values_leading_unit_dims():
    b = torch.zeros(3)
    b[0] = torch.tensor([2.0])  # a (1,) loss written into one slot: losses[i] = loss
    b[2] = torch.tensor([[5.0]])
    assert b.tolist() == [2.0, 0.0, 5.0]
    m = torch.zeros(2, 3)
    m[m > -1] = torch.tensor([[1.0]])  # a mask write of a (1, 1) value
    m[torch.tensor([1])] = torch.tensor([[[4.0]]])
    assert m.tolist() == [[1.0, 1.0, 1.0], [4.0, 4.0, 4.0]]
    with pytest.raises(ValueError):
        b[0] = torch.tensor([1.0, 2.0])  # (a value of two elements into one slot is still refused)


def test_setitem_of_a_unit_value_passes_its_gradient():
    def f(v):
        c = torch.zeros(2, 2, dtype=torch.float64)
        c[c > -1] = v
        c[0, 1] = v * 3
        return c

    v = torch.tensor([[0.7]], dtype=torch.float64, requires_grad=True)
    assert f(v).tolist() == [[0.7, 0.7 * 3], [0.7, 0.7]]
    f(v).sum().backward()
    assert v.grad.shape == (1, 1) and v.grad.item() == pytest.approx(3.0 + 3.0, rel=1e-15)
    assert gradcheck(f, [v])


# ---- addcmul / addcdiv compute in the result's dtype --------------------------------------------------------------

def test_addcdiv_and_addcmul_compute_in_the_result_dtype():
    x = torch.tensor([0.0, 2.0], dtype=torch.float64)
    out = torch.addcdiv(x, torch.tensor(-1.0, dtype=torch.float16), torch.tensor([1, 3]), value=1e-8)
    np.testing.assert_allclose(out.numpy(), [-1e-8, 2.0 - 1e-8 / 3], rtol=1e-15)  # (float16: 1e-8 * q was 0)
    big = torch.tensor([300.0], dtype=torch.float16)
    out = torch.addcmul(x, big, big, value=1e-3)  # 300 * 300 = 90000 overflows float16 (max 65504), not float64
    np.testing.assert_allclose(out.numpy(), [90.0, 92.0], rtol=1e-15)
    assert out.dtype == torch.float64


def test_addcdiv_gradients_through_the_cast():
    x = torch.tensor([0.3, -1.1], dtype=torch.float64, requires_grad=True)
    t1 = torch.tensor([1.5, 0.4], dtype=torch.float32, requires_grad=True)
    t2 = torch.tensor([0.8, -2.0], dtype=torch.float64, requires_grad=True)
    out = torch.addcdiv(x, t1, t2, value=0.5)
    out.sum().backward()
    assert t1.grad.dtype == torch.float32
    np.testing.assert_allclose(t1.grad.numpy(), [0.5 / 0.8, 0.5 / -2.0], rtol=1e-6)
    t1v = t1.detach().numpy().astype(np.float64)
    np.testing.assert_allclose(t2.grad.numpy(), -0.5 * t1v / np.array([0.8, -2.0]) ** 2, rtol=1e-12)


# ---- split / chunk of an empty dim ------------------------------------------------------------------------------

def test_split_and_chunk_of_an_empty_dim_give_empty_pieces():
    assert _sizes(torch.zeros(0).split(2)) == [(0,)]  # max(ceil(0 / 2), 1) pieces
    assert _sizes(torch.zeros(0).chunk(2)) == [(0,), (0,)]  # ``chunks`` pieces: a, b = x.chunk(2) unpacks
    assert _sizes(torch.zeros(3, 0).chunk(4, 1)) == [(3, 0)] * 4
    q, k, v = torch.zeros(0, 6).chunk(3, dim=0)  # (an empty batch)
    assert q.shape == k.shape == v.shape == (0, 6)
    assert _sizes(torch.zeros(5).chunk(4)) == [(2,), (2,), (1,)]  # (non-empty dims: fewer pieces, unchanged)


# ---- float16 with a Python number or a 0-d tensor: read in float32, the result rounded to float16 ---------------

def _f16(values):
    return [float(np.float16(v)) for v in values]


def test_float16_arithmetic_reads_a_number_in_float32():
    x = torch.tensor([0.0, 0.042, 3.0, -2.0], dtype=torch.float16)
    xs = x.numpy().astype(np.float32)
    # 1e5 is inf in float16: x / 1e5 was x / inf = 0, x * 1e5 was 0 * inf = NaN
    assert (x / 1e5).tolist() == _f16(xs / np.float32(1e5))
    assert (x / 1e5).tolist()[2] == pytest.approx(3e-5, rel=1e-3)
    out = x * 1e5
    assert out.dtype == torch.float16 and out.tolist() == [0.0, 4200.0, math.inf, -math.inf]
    assert (x * 1e-8).tolist() == _f16(xs * np.float32(1e-8))  # 3e-8: a float16 subnormal, not 0
    assert (x * torch.tensor(1e5, dtype=torch.float64)).tolist() == [0.0, 4200.0, math.inf, -math.inf]
    assert (1e5 * x).tolist() == [0.0, 4200.0, math.inf, -math.inf]


def test_float16_in_place_with_a_number_too():
    w = torch.tensor([0.042, 3.0], dtype=torch.float16)
    w /= 1e5
    assert w.dtype == torch.float16 and w.tolist() == _f16(np.float32([0.042, 3.0]) / np.float32(1e5))
    assert w.tolist()[1] > 0


def test_float16_sums_and_a_leading_0d_tensor_round_the_number_first():
    x = torch.tensor([3.0, -2.0], dtype=torch.float16)
    assert (x + 65519.0).tolist() == [65504.0 + 0, 65504.0]  # 65519 is 65504 in float16; 65504 + 3 rounds to 65504
    assert (x % 0.1).tolist() == _f16(np.fmod(np.float16([3.0, -2.0]), np.float16(0.1)) % np.float16(0.1))
    assert (torch.tensor(1e5) * x).tolist() == [math.inf, -math.inf]  # mul(1e5 as float16 = inf, x)
    recip = (1 / x.numpy()).astype(np.float16)  # 1e5 / x is 1e5 times x's float16 reciprocal, as PyTorch's
    assert (1e5 / x).tolist() == _f16(np.float32(1e5) * recip.astype(np.float32)) == [33312.0, -49984.0]


def test_float16_operands_with_dims_are_still_float16():
    big = torch.tensor([70000]) + torch.tensor([0.5], dtype=torch.float16)  # (an int tensor with dims is cast first)
    assert big.dtype == torch.float16 and big.tolist() == [math.inf]
    assert (torch.tensor([1, 2]) * torch.tensor(0.1, dtype=torch.float16)).tolist() == _f16([0.1, 0.2])


# ---- non-finite values stay where they are: unique, diag_embed, adaptive average pooling -------------------------

def test_unique_counts_each_nan_as_its_own_value():
    x = torch.tensor([math.nan, 1.0, math.nan, 1.0, 0.5])
    values, inverse, counts = torch.unique(x, return_inverse=True, return_counts=True)
    assert values.shape == (4,) and values.tolist()[:2] == [0.5, 1.0] and np.isnan(values.numpy()[2:]).all()
    assert inverse.tolist() == [2, 1, 3, 1, 0] and counts.tolist() == [1, 2, 1, 1]  # (nan != nan)


def test_diag_embed_puts_an_infinity_on_the_diagonal_only():
    x = torch.tensor([[math.inf, 2.0], [-math.inf, 0.5]], dtype=torch.float64)
    out = torch.diag_embed(x)
    assert out.tolist() == [[[math.inf, 0.0], [0.0, 2.0]], [[-math.inf, 0.0], [0.0, 0.5]]]  # (0 off it, not NaN)
    shifted = torch.diag_embed(x, -1, 0, 2)  # diagonal -1 of dims 0 and 2: out[i + 1, b, i] = x[b, i]
    assert shifted.shape == (3, 2, 3) and shifted[1, 0, 0].item() == math.inf and shifted[2, 1, 1].item() == 0.5
    assert np.isfinite(shifted.numpy()).sum() == 3 * 2 * 3 - 2


def test_diag_embed_checks_its_dims_and_passes_gradients():
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 1, 1"):
        torch.diag_embed(torch.ones(2, 3), 0, 1, 1)
    with pytest.raises(IndexError, match="out of range"):
        torch.diag_embed(torch.ones(2, 3), 0, 0, 3)
    y = torch.tensor([[1.0, -2.0, 0.5]], dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda t: torch.diag_embed(t, 1) * torch.arange(16.0, dtype=torch.float64).reshape(4, 4), [y])


def test_adaptive_average_pooling_keeps_a_nan_in_its_own_bins():
    row = [-1.0, 0.5, 2.0, 1.0, 3.0]
    x = torch.tensor([[row, [-math.inf, 0.5, 1.0, math.nan, 3.0]]], dtype=torch.float64)
    out = F.adaptive_avg_pool1d(x, 3).numpy()  # bins [0, 2), [1, 4), [3, 5)
    np.testing.assert_allclose(out[0, 0], [(-1.0 + 0.5) / 2, (0.5 + 2.0 + 1.0) / 3, (1.0 + 3.0) / 2], rtol=1e-15)
    assert out[0, 1, 0] == -math.inf and np.isnan(out[0, 1, 1:]).all()
    up = F.interpolate(x, size=7, mode="area").numpy()[0, 1]  # bins [0,1) [0,2) [1,3) [2,3) [3,4) [3,5) [4,5)
    assert up[0] == up[1] == -math.inf and up[2] == 0.75 and up[3] == 1.0 and np.isnan(up[4:6]).all() and up[6] == 3.0


def test_adaptive_average_pooling_gradient():
    y = torch.tensor(np.linspace(-1, 2, 2 * 3 * 5).reshape(1, 2, 3, 5), dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda t: F.adaptive_avg_pool2d(t, (2, 3)), [y])
    assert F.adaptive_avg_pool2d(y, 1).flatten().tolist() == pytest.approx(
        y.detach().numpy().mean(axis=(2, 3)).ravel().tolist(), rel=1e-14)


def test_quantile_of_a_whole_rank_reads_an_infinity_as_it_is():
    x = torch.tensor([[0.0, -1.0, math.inf], [1.0, 2.0, 3.0]], dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no inf - inf computed behind it)
        assert torch.quantile(x, 1.0, dim=1, interpolation="nearest").tolist() == [math.inf, 3.0]
        got = torch.nanquantile(x, torch.tensor([0.0, 0.6, 1.0], dtype=torch.float64), dim=1, interpolation="higher")
    assert got.tolist() == [[-1.0, 1.0], [math.inf, 3.0], [math.inf, 3.0]]
    assert torch.quantile(x, 0.4, dim=1, interpolation="lower").tolist() == [-1.0, 1.0]
    assert math.isnan(torch.quantile(x, 1.0, dim=1).tolist()[0])  # (linear: lerp(0, inf, 1) is NaN, as PyTorch's)
    torch.quantile(x, torch.tensor([0.3, 0.9], dtype=torch.float64), dim=1, interpolation="nearest").sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]  # ranks 1 and 2 of each row: -1 -> 0, 0 -> inf


def test_threshold_passes_the_gradient_of_a_nan_it_keeps():
    x = torch.tensor([-0.7, 0.5, math.nan, 1.3], dtype=torch.float64, requires_grad=True)
    out = F.threshold(x, 0.5, 2.0)
    assert out.tolist()[:2] == [2.0, 2.0] and math.isnan(out.tolist()[2]) and out.tolist()[3] == 1.3
    (out * torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 3.0, 4.0]  # (the NaN is the output, so d out / d x = 1 there)


# ---- squeeze of a tuple of dims, repeat_interleave with counts ----------------------------------------------------

def test_squeeze_takes_a_tuple_of_dims():
    x = torch.ones(1, 2, 1)
    assert x.squeeze((0, 2)).shape == (2,) and torch.squeeze(x, (0,)).shape == (2, 1)
    assert x.squeeze((0, 1)).shape == (2, 1) and x.squeeze([-1]).shape == (1, 2) and x.squeeze(()).shape == (1, 2, 1)
    assert torch.ones(()).squeeze((0,)).shape == ()
    with pytest.raises(ValueError, match="names a dim more than once"):
        x.squeeze((0, 0))
    with pytest.raises(IndexError, match="out of range"):
        x.squeeze((0, 3))
    y = torch.tensor([[[1.0], [2.0], [3.0]]], dtype=torch.float64, requires_grad=True)
    (y.squeeze((0, -1)) * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    assert y.grad.tolist() == [[[1.0], [2.0], [3.0]]]


def test_repeat_interleave_with_counts():
    x = torch.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], dtype=torch.float64, requires_grad=True)
    out = x.repeat_interleave(torch.tensor([1, 0, 2]), dim=1)
    assert out.tolist() == [[0.0, 2.0, 2.0], [3.0, 5.0, 5.0]]
    (out * torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64)).sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 5.0], [1.0, 0.0, 5.0]]  # the repeated entry gets both of its gradients
    assert x.repeat_interleave(torch.tensor(2), dim=0).shape == (4, 3)  # (one count for every row)
    assert x.repeat_interleave(torch.tensor([2]), dim=0).shape == (4, 3)
    assert x.repeat_interleave(0, dim=1).shape == (2, 0) and x.repeat_interleave(0).shape == (0,)
    assert torch.repeat_interleave(torch.tensor([1, 2, 0, 1])).tolist() == [0, 1, 1, 3]  # each index, count times
    assert torch.repeat_interleave(x, 2, dim=0, output_size=4).shape == (4, 3)


@pytest.mark.parametrize("repeats, exc, msg", [
    (torch.tensor([1, 2]), RuntimeError, "repeats must have the same size as input along dim"),
    (torch.tensor([1, -1, 0]), RuntimeError, "repeats can not be negative"),
    (torch.tensor([1.0, 2.0, 1.0]), NotImplementedError, "not implemented for 'Float'"),
    (torch.tensor([[1, 2, 1]]), RuntimeError, "repeats must be 0-dim or 1-dim tensor"),
])
def test_repeat_interleave_checks_its_counts(repeats, exc, msg):
    with pytest.raises(exc, match=msg):
        torch.ones(2, 3).repeat_interleave(repeats, dim=1)
