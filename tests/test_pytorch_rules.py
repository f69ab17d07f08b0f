"""PyTorch's indexing and dtype promotion rules, its gradients at ties and zeros, and its edge cases.

Each expectation is derived by hand from PyTorch's rule (stated in the test), not copied from a run.
"""
import math

import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck

rng = np.random.default_rng(14)


def x234():
    return torch.tensor(np.arange(24.0).reshape(2, 3, 4))  # x[i, j, k] = 12 i + 4 j + k


# ---------------------------------------------------------------------------- indexing
def test_an_int_is_a_select_before_array_indices_are_placed():
    # PyTorch: x[0] removes dim 0 first; then [:, [1, 2]] on (3, 4) indexes the last dim -> (3, 2).
    # (NumPy counts the 0 as an array index separated from [1, 2] by the slice and gives (2, 3).)
    y = x234()[0, :, [1, 2]]
    assert y.shape == (3, 2)
    np.testing.assert_array_equal(y.numpy(), [[1, 2], [5, 6], [9, 10]])


def test_an_int_before_an_ellipsis_and_an_array():
    # x[0] -> (3, 4); [..., [1, 2]] picks columns 1 and 2 -> (3, 2)
    y = x234()[0, ..., [1, 2]]
    assert y.shape == (3, 2)
    np.testing.assert_array_equal(y.numpy(), [[1, 2], [5, 6], [9, 10]])


def test_an_int_and_none_before_an_array():
    # x[0] -> (3, 4); None makes (1, 3, 4); [1, 2] then indexes the dim of size 3 -> (1, 2, 4)
    y = x234()[0, None, [1, 2]]
    assert y.shape == (1, 2, 4)
    np.testing.assert_array_equal(y.numpy()[0], [[4, 5, 6, 7], [8, 9, 10, 11]])


def test_separated_arrays_go_first_and_adjacent_ones_stay_in_place():
    x = x234()
    a = x[[0, 1], :, [1, 2]]  # two arrays separated by a slice: their (2,) goes first -> (2, 3)
    assert a.shape == (2, 3)
    np.testing.assert_array_equal(a.numpy(), [[1, 5, 9], [14, 18, 22]])
    b = x[:, [0, 2], [1, 3]]  # adjacent: their (2,) stands where they stood -> (2, 2)
    np.testing.assert_array_equal(b.numpy(), [[1, 11], [13, 23]])
    c = x[1, [0, 2], 1:3]  # x[1] -> (3, 4), then rows 0 and 2, columns 1..2
    np.testing.assert_array_equal(c.numpy(), [[13, 14], [21, 22]])


def test_the_pytorch_index_gradient_lands_on_the_picked_entries():
    x = torch.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    assert gradcheck(lambda t: t[0, :, [1, 2, 1]], [x])
    y = x[0, :, [1, 2, 1]]
    y.backward(torch.ones(3, 3))
    want = np.zeros((2, 3, 4))
    want[0, :, 1], want[0, :, 2] = 2, 1  # column 1 was picked twice
    np.testing.assert_array_equal(np.asarray(x.grad), want)


def test_arrays_separated_by_none_or_an_ellipsis_go_first():
    # Two array indices with anything between them (a slice, None, ...) are "separated": their
    # broadcast shape (2,) goes first, then the dims the other entries leave, in order.
    x = x234()
    a = x[[0, 1], None, [1, 2]]  # picks x[0, 1, :] and x[1, 2, :]; None adds a dim of size 1 -> (2, 1, 4)
    assert a.shape == (2, 1, 4)
    np.testing.assert_array_equal(a.numpy()[:, 0], [[4, 5, 6, 7], [20, 21, 22, 23]])
    b = x[[0, 1], ..., [1, 2]]  # the ellipsis stands for dim 1: x[0, :, 1] and x[1, :, 2] -> (2, 3)
    np.testing.assert_array_equal(b.numpy(), [[1, 5, 9], [14, 18, 22]])
    c = x[:, [0, 1], None, [1, 2]]  # separated by None: (2,) first, then dim 0 (2) and the new 1 -> (2, 2, 1)
    assert c.shape == (2, 2, 1)
    np.testing.assert_array_equal(c.numpy()[..., 0], [[1, 13], [6, 18]])  # c[k, i] = x[i, [0, 1][k], [1, 2][k]]


def test_setitem_follows_the_same_rule():
    x = torch.zeros(2, 3, 4)
    x[0, :, [1, 2]] = torch.tensor(np.arange(6.0).reshape(3, 2))  # the (3, 2) PyTorch shape
    np.testing.assert_array_equal(x.numpy()[0, :, 1:3], np.arange(6.0).reshape(3, 2))
    assert x.numpy().sum() == 15


# ---------------------------------------------------------------------------- dtype promotion
def test_a_0d_tensor_of_the_same_category_does_not_widen():
    f32 = torch.ones(2)
    assert (f32 * torch.tensor(np.float64(2.0))).dtype == np.float32  # float with a 0-d float: dims win
    i32 = torch.tensor(np.array([1, 2], dtype=np.int32))
    assert (i32 + torch.tensor(np.int64(3))).dtype == np.int32


def test_a_0d_tensor_or_number_of_a_higher_category_decides():
    i32 = torch.tensor(np.array([1, 2], dtype=np.int32))
    assert (i32 + torch.tensor(np.float64(0.5))).dtype == np.float64  # a 0-d float64 over int dims
    assert (i32 + 0.5).dtype == np.float32  # a Python float: the default float dtype
    assert (torch.tensor([True, False]) + 1).dtype == np.int64  # a Python int over bool: int64
    assert (torch.tensor([True, False]) & True).dtype == bool


def test_a_python_int_keeps_the_int_dtype():
    i32 = torch.tensor(np.array([1, 2], dtype=np.int32))
    for y in (i32 + 1, 1 + i32, i32 * 3, i32 - 1):
        assert y.dtype == np.int32
    np.testing.assert_array_equal((i32 * 3).numpy(), [3, 6])
    assert (i32 / 2).dtype == np.float32  # int / int is a true division, in the default dtype


def test_tensors_with_dims_promote_int_with_float_to_the_float():
    f32, i64 = torch.ones(2), torch.tensor([1, 2])
    assert (f32 + i64).dtype == np.float32  # NumPy alone would give float64
    assert torch.where(torch.tensor([True, False]), f32, i64).dtype == np.float32
    assert torch.cat([f32, i64]).dtype == np.float32
    assert torch.stack([f32, i64]).dtype == np.float32
    np.testing.assert_array_equal(torch.cat([f32, i64]).numpy(), [1, 1, 1, 2])
    assert (torch.ones(2, dtype=np.float64) + f32).dtype == np.float64


def test_the_gradient_crosses_a_promotion():
    w = torch.tensor(np.float64(3.0), requires_grad=True)  # 0-d float64, used with float32 dims
    x = torch.tensor(np.array([1.0, 2.0], dtype=np.float32))
    y = x * w
    assert y.dtype == np.float32
    y.sum().backward()
    assert np.asarray(w.grad).dtype == np.float64 and float(np.asarray(w.grad)) == 3.0


def test_full_infers_its_dtype_from_the_value():
    assert torch.full((2,), 7).dtype == np.int64
    assert torch.full((2,), True).dtype == bool
    assert torch.full((2,), 0.5).dtype == np.float32
    assert torch.full((2,), 7, dtype=np.float64).dtype == np.float64
    np.testing.assert_array_equal(torch.full((2, 1), 7).numpy(), [[7], [7]])


# ---------------------------------------------------------------------------- gradients at ties and zeros
def test_max_along_a_dim_sends_the_whole_gradient_to_the_returned_index():
    x = torch.tensor(np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]), requires_grad=True)
    values, indices = x.max(dim=1)
    np.testing.assert_array_equal(indices.numpy(), [1, 0])  # the first of the ties
    values.backward(torch.tensor(np.array([1.0, 10.0])))
    np.testing.assert_array_equal(np.asarray(x.grad), [[0, 1, 0], [10, 0, 0]])
    x.grad = None
    x.min(dim=1, keepdim=True).values.sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [[1, 0, 0], [0, 0, 1]])


def test_max_over_all_elements_splits_the_gradient_among_ties():
    # Without dim, PyTorch returns no index and shares the gradient evenly among the maxima.
    x = torch.tensor(np.array([[1.0, 3.0, 3.0]]), requires_grad=True)
    x.max().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [[0, 0.5, 0.5]])


def test_max_along_a_dim_gradchecks():
    x = torch.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    assert gradcheck(lambda t: t.max(dim=1).values, [x])
    assert gradcheck(lambda t: t.min(dim=0, keepdim=True).values, [x])


def test_masked_fill_with_a_0d_value_that_requires_grad_gives_it_a_gradient():
    x = torch.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    v = torch.tensor(np.float64(0.5), requires_grad=True)
    mask = torch.tensor(np.array([[True, False, True], [False, False, True]]))
    y = x.masked_fill(mask, v)
    np.testing.assert_array_equal(y.numpy()[mask.numpy()], [0.5, 0.5, 0.5])
    g = rng.standard_normal((2, 3))
    y.backward(torch.tensor(g))
    assert float(np.asarray(v.grad)) == pytest.approx(g[mask.numpy()].sum())  # dv = sum of g where filled
    np.testing.assert_array_equal(np.asarray(x.grad), np.where(mask.numpy(), 0, g))
    assert gradcheck(lambda a, b: a.masked_fill(mask, b), [x, v])


def test_std_of_a_constant_slice_has_gradient_zero():
    # std = sqrt(var), var = sum((x - mean)^2) / (N - 1). By the chain rule
    #   d std / dx_i = (d var / dx_i) / (2 std) = [2 (x_i - mean) / (N - 1)] / (2 std) = (x_i - mean) / ((N - 1) std),
    # which is 0 / 0 on a constant slice (there std has no derivative: it grows like |h| along x + h v).
    # PyTorch's std_backward first forms grad / (2 std) and sets it to 0 where std == 0, then applies
    # var's backward, 2 (x_i - mean) / (N - 1) times that: so 0, a subgradient, and no NaN.
    x = torch.tensor(np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]]), requires_grad=True)
    s = x.std(dim=1)
    np.testing.assert_allclose(s.numpy(), [0.0, np.std([1, 2, 4], ddof=1)])
    s.sum().backward()
    g = np.asarray(x.grad)
    assert np.isfinite(g).all()
    np.testing.assert_array_equal(g[0], [0, 0, 0])
    row = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(g[1], (row - row.mean()) / (2 * np.std(row, ddof=1)))
    y = torch.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    assert gradcheck(lambda t: t.std(dim=0), [y])


def test_the_exponent_gradient_at_base_zero_is_zero_where_the_exponent_is_not_negative():
    # d(a^b)/db = a^b log(a). At a = 0: 0^b = 0 for b > 0 and 0^0 = 1, so the formula gives 0 * -inf
    # (NaN) and 1 * -inf. PyTorch puts 0 wherever a == 0 and b >= 0 (0^b is constant for b > 0); for
    # b < 0, 0^b = inf and inf * log 0 = -inf is kept.
    y = torch.tensor(np.array([2.0, 0.0, 0.5, -1.5]), requires_grad=True)
    with np.errstate(divide="ignore"):  # 0 ** -1.5 = inf in forward
        (torch.zeros(4, dtype=np.float64) ** y).backward(torch.ones(4, dtype=np.float64))
    np.testing.assert_array_equal(np.asarray(y.grad), [0.0, 0.0, 0.0, -np.inf])
    y.grad = None
    (0.0 ** y[:3]).sum().backward()  # a Python number as the base takes the same path
    np.testing.assert_array_equal(np.asarray(y.grad), [0.0, 0.0, 0.0, 0.0])
    a = torch.tensor(np.array([0.0, 2.0]), requires_grad=True)  # one zero base next to a positive one
    b = torch.tensor(np.array([1.5, 3.0]), requires_grad=True)
    (a ** b).backward(torch.tensor(np.array([1.0, 1.0])))
    np.testing.assert_allclose(np.asarray(b.grad), [0.0, 8 * np.log(2.0)], rtol=1e-15)
    np.testing.assert_allclose(np.asarray(a.grad), [0.0, 12.0])  # b a^(b-1): 1.5 * 0^0.5 = 0, 3 * 2^2 = 12


def test_gelu_of_a_0d_tensor_with_the_exact_form():
    # gelu(x) = x Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2; d/dx = Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
    x = torch.tensor(np.float64(0.5), requires_grad=True)
    y = F.gelu(x, approximate="none")
    assert y.shape == ()
    phi, cdf = math.exp(-0.125) / math.sqrt(2 * math.pi), (1 + math.erf(0.5 / math.sqrt(2))) / 2
    assert y.item() == pytest.approx(0.5 * cdf, rel=1e-14)
    y.backward()
    assert x.grad.shape == () and x.grad.item() == pytest.approx(cdf + 0.5 * phi, rel=1e-12)
    assert gradcheck(lambda t: F.gelu(t, approximate="none"), [torch.tensor(np.float64(-1.3), requires_grad=True)])


def test_the_mean_of_nothing_is_nan():
    assert np.isnan(torch.zeros(0).mean().item())
    m = torch.zeros(0, 3).mean(dim=0)
    assert m.shape == (3,) and np.isnan(m.numpy()).all()
    assert torch.zeros(2, 0).mean(dim=0).shape == (0,)


# ---------------------------------------------------------------------------- edge cases
def test_matmul_with_inner_dim_zero_has_zero_gradients():
    a = torch.zeros(3, 0, requires_grad=True, dtype=np.float64)
    b = torch.zeros(0, 4, requires_grad=True, dtype=np.float64)
    y = a @ b  # a sum over nothing: zeros (3, 4)
    np.testing.assert_array_equal(y.numpy(), np.zeros((3, 4)))
    y.backward(torch.ones(3, 4, dtype=np.float64))
    assert np.asarray(a.grad).shape == (3, 0) and np.asarray(b.grad).shape == (0, 4)
    x = torch.zeros(2, 5, 0, requires_grad=True, dtype=np.float64)
    (x @ b).sum().backward()
    assert np.asarray(x.grad).shape == (2, 5, 0)


def test_0d_tensors_take_dim_0_and_minus_1():
    s = torch.tensor(np.float64(2.0), requires_grad=True)
    for y in (s.squeeze(0), s.squeeze(-1), s.transpose(0, 0), s.transpose(0, -1)):
        assert y.shape == () and y.item() == 2.0
    with pytest.raises(IndexError, match="dim=1 is out of range"):
        s.squeeze(1)


def test_sum_over_no_dims_reduces_all_and_a_repeated_dim_is_refused():
    x = torch.tensor(np.arange(6.0).reshape(2, 3))
    assert x.sum(dim=()).item() == 15.0  # PyTorch: dim=() means every dim
    assert x.mean(dim=[]).item() == 2.5
    with pytest.raises(ValueError, match=r"sum: dim=\(0, 0\) names a dim more than once"):
        x.sum(dim=(0, 0))
    with pytest.raises(ValueError, match="more than once"):
        x.sum(dim=(1, -1))


def test_empty_tensors_flatten_and_softmax():
    z = torch.zeros(0, 3, 4)
    assert z.flatten(1).shape == (0, 12) and z.flatten().shape == (0,)
    e = torch.zeros(2, 0, requires_grad=True)
    for y in (e.softmax(dim=-1), e.log_softmax(dim=1), F.softmax(e, dim=-1)):
        assert y.shape == (2, 0)
    e.softmax(-1).sum().backward()
    assert np.asarray(e.grad).shape == (2, 0)


def test_bad_factory_arguments_get_clear_errors():
    with pytest.raises(ValueError, match=r"sizes >= 0, got \(-1,\)"):
        torch.full((-1,), 0.0)
    with pytest.raises(TypeError, match=r"full\(\): argument 'size' must be tuple of ints, not float"):
        torch.full(2.5, 0.0)  # (PyTorch's rule: full's size is a tuple, never a bare number)
    with pytest.raises(TypeError, match=r"a shape needs ints, got \(2.5,\)"):
        torch.full((2.5,), 0.0)
    with pytest.raises(ValueError, match="arange: step must not be 0, got step=0"):
        torch.arange(0, 10, 0)
    with pytest.raises(TypeError, match="arange: end must be a number"):
        torch.arange(0, "10")


def test_invert_needs_bools_or_ints_and_comparisons_name_the_shapes():
    with pytest.raises(TypeError, match="~x needs a bool .* got dtype float32"):
        ~torch.ones(2)
    np.testing.assert_array_equal((~torch.tensor([True, False])).numpy(), [False, True])
    np.testing.assert_array_equal((~torch.tensor([0, 5])).numpy(), [-1, -6])  # bitwise not on ints
    with pytest.raises(ValueError, match=r"equal: shapes \(2,\) and \(3,\) do not broadcast"):
        torch.ones(2) == torch.ones(3)
    with pytest.raises(ValueError, match=r"less: shapes \(2, 3\) and \(2,\) do not broadcast"):
        torch.ones(2, 3) < torch.ones(2)


def test_attention_with_d_k_zero_is_refused():
    q = torch.zeros(1, 3, 0)
    with pytest.raises(ValueError, match=r"q has shape \(1, 3, 0\): .* d_k = 0"):
        F.scaled_dot_product_attention(q, q, torch.ones(1, 3, 2))
    with pytest.raises(ValueError, match="d_k = 0"):
        F.attention(q, q, torch.ones(1, 3, 2))
