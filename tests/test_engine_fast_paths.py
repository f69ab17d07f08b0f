"""Issue 43: the per-op fast paths (same-dtype float arithmetic, 2-D matmul, int dims, one-item indices,
reshape's -1, saved-array checks) give what the general path gives. Each case below either goes through a
fast path or is one that must fall back (int + float, mixed float widths, a scalar, a batched matmul,
np.int64 and bool dims, a view whose base was written, no_grad); expected values come from NumPy or
are written out by hand.
"""
import numpy as np
import pytest

import tinyattn as torch
from tinyattn.compat.args import _infer_shape, _norm_dim, _shape_arg
from tinyattn.compat.indexing import _pytorch_index_steps


def leaf(values, dtype=torch.float64):
    return torch.tensor(values, dtype=dtype, requires_grad=True)


# --- arithmetic: the same-dtype float case and the cases that promote --------------------------------
@pytest.mark.parametrize("left, right, expected", [
    (np.float32, np.float32, np.float32),  # the fast path
    (np.float64, np.float32, np.float64),  # mixed float widths promote
    (np.int64, np.float32, np.float32),  # int + float is float
    (np.int32, np.int64, np.int64),  # neither is float: the promotion table
])
def test_binary_ops_give_numpys_values_in_pytorchs_dtype_in_both_orders(left, right, expected):
    x, y = np.array([[1, 2], [3, 4]], dtype=left), np.array([5, 7], dtype=right)
    a, b = torch.tensor(x), torch.tensor(y)
    for got, want in [(a + b, x + y), (b - a, y - x), (a * b, x * y), (b.__rsub__(a), x - y)]:
        assert got.dtype == expected
        np.testing.assert_array_equal(got.numpy(), want.astype(expected))


def test_reversed_same_dtype_sub_keeps_the_operand_order_and_gradients():
    a, b = leaf([1.0, 2.0]), leaf([10.0, 20.0])
    out = b.__rsub__(a)  # a - b, reached through the reversed fast path
    assert out.tolist() == [-9.0, -18.0]
    out.sum().backward()
    assert a.grad.tolist() == [1.0, 1.0] and b.grad.tolist() == [-1.0, -1.0]


def test_a_scalar_takes_the_tensors_dtype_and_an_int_tensor_times_a_float_becomes_float():
    x = leaf([1.0, 2.0], torch.float32)
    y = x * 2
    assert y.dtype == torch.float32 and y.tolist() == [2.0, 4.0]
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    i = torch.tensor([1, 2], dtype=torch.int64)
    assert (i * 2.5).dtype == torch.get_default_dtype() and (i * 2.5).tolist() == [2.5, 5.0]
    assert (2.5 - i).tolist() == [1.5, 0.5]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_a_float_tensor_with_a_python_number_keeps_its_dtype_in_every_op_and_order(dtype):
    x = np.array([[1.5, -2.0], [4.0, 0.5]], dtype=dtype)
    t = torch.tensor(x)
    for n in (2, 2.5, 3):
        for got, want in [(t + n, x + dtype(n)), (n - t, dtype(n) - x), (t * n, x * dtype(n)), (t / n, x / dtype(n)),
                          (n ** t, dtype(n) ** x), (t // n, x // dtype(n)), (t % n, x % dtype(n))]:
            assert got.dtype == dtype
            np.testing.assert_array_equal(got.numpy(), want)
    zero_d = torch.tensor(dtype(3.0))  # a 0-d tensor with a number: still its own dtype
    assert (zero_d * 2.5).dtype == dtype and (zero_d * 2.5).item() == 7.5


def test_numbers_that_must_take_the_promotion_table():
    f = torch.tensor([1.0, 2.0], dtype=torch.float32)
    assert (f + True).dtype == torch.float32 and (f + True).tolist() == [2.0, 3.0]  # a bool is not an int here
    assert (f ** float("inf")).tolist() == [1.0, float("inf")]  # (not PowConst: a non-finite exponent)
    i = torch.tensor([1, 2], dtype=torch.int32)
    assert (i + 1).dtype == torch.int32 and (i * 2.5).dtype == torch.get_default_dtype()
    assert (torch.tensor([True, False]) + 1).dtype == torch.int64
    u8 = torch.tensor([0, 1], dtype=torch.uint8)
    assert (u8 - 1).tolist() == [255, 0]  # wraps, as PyTorch
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        assert (f * 2.5).dtype == torch.float32  # a float tensor keeps its dtype whatever the default
        assert (i * 2.5).dtype == torch.float64  # an int tensor with a float takes the default
    finally:
        torch.set_default_dtype(previous)


def test_same_dtype_arithmetic_under_no_grad_records_nothing():
    a, b = leaf([1.0]), leaf([2.0])
    with torch.no_grad():
        c = a + b
    assert c.tolist() == [3.0] and c.grad_fn is None and not c.requires_grad


def test_same_dtype_arithmetic_on_a_view_whose_base_was_written_follows_the_write():
    x = leaf([1.0, 2.0, 3.0])
    h = x * 1
    v = h[1:]  # a view of h
    h[1] = 0.0  # written through the base: v's node is rebuilt before the add reads it
    (v + v).sum().backward()  # d/dx: 0 for x[1] (overwritten), 2 for x[2]
    assert x.grad.tolist() == [0.0, 0.0, 2.0]


# --- matmul: 2-D operands skip the batch-dims check; batched ones still get it -----------------------
def test_matmul_of_1d_and_2d_operands_matches_numpy_and_its_gradients():
    rng = np.random.default_rng(0)
    for sa, sb in [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,))]:
        x, y = rng.standard_normal(sa), rng.standard_normal(sb)
        a, b = leaf(x), leaf(y)
        out = a @ b
        np.testing.assert_allclose(out.numpy(), x @ y, rtol=1e-12)
        out.sum().backward()
        x2, y2 = x.reshape(-1, 4), y.reshape(4, -1)  # vectors as a row and a column
        ones = np.ones((x2.shape[0], y2.shape[1]))  # d sum / d (x2 @ y2)
        np.testing.assert_allclose(a.grad.numpy(), (ones @ y2.T).reshape(sa), rtol=1e-12)
        np.testing.assert_allclose(b.grad.numpy(), (x2.T @ ones).reshape(sb), rtol=1e-12)


def test_matmul_still_refuses_batch_dims_that_do_not_broadcast_and_names_both_shapes():
    with pytest.raises(ValueError, match=r"matmul: batch dims of \(2, 3, 4\) and \(5, 4, 2\) do not broadcast"):
        torch.zeros(2, 3, 4) @ torch.zeros(5, 4, 2)
    assert (torch.ones(2, 3, 4) @ torch.ones(4, 2)).shape == (2, 3, 2)  # (3-D @ 2-D broadcasts)
    with pytest.raises(ValueError, match=r"a has shape \(3, 4\) and b has shape \(5, 2\): a's last dim \(4\) "
                                         r"must equal b's second-to-last dim \(5\)"):
        torch.zeros(3, 4) @ torch.zeros(5, 2)
    with pytest.raises(ValueError, match=r"at least 1 dim, got shapes \(\) and \(2,\)"):
        torch.tensor(1.0) @ torch.zeros(2)


# --- dims, shapes and indices --------------------------------------------------------------------------
def test_norm_dim_fast_path_agrees_with_the_rule_for_every_dim_and_type():
    for ndim in range(0, 4):
        n = max(ndim, 1)
        for d in range(-n - 1, n + 1):
            for dim in (d, np.int64(d)):
                if -n <= d < n:
                    got = _norm_dim(dim, ndim, "op")
                    assert got == d % n and type(got) is int
                else:
                    with pytest.raises(IndexError, match=f"op: dim={d} is out of range for a tensor with {ndim} dims"):
                        _norm_dim(dim, ndim, "op")
    assert _norm_dim(True, 2, "op") == 1  # a bool is an int here, as before
    with pytest.raises(TypeError, match="op: dim must be an int, got float"):
        _norm_dim(1.0, 2, "op")


@pytest.mark.parametrize("shape", [(-1,), (4, -1), (-1, 3), (2, -1, 3), (2, 2, 3), (12,), (1, -1, 1)])
def test_infer_shape_gives_numpys_shape(shape):
    assert _infer_shape(shape, (3, 4), "reshape") == np.empty((3, 4)).reshape(shape).shape
    assert torch.zeros(3, 4).reshape(*shape).shape == np.empty((3, 4)).reshape(shape).shape


def test_infer_shape_errors_are_unchanged():
    with pytest.raises(ValueError, match=r"reshape: only one dim can be -1, got \(-1, -1\)"):
        _infer_shape((-1, -1), (3, 4), "reshape")
    with pytest.raises(ValueError, match=r"cannot reshape a tensor of shape \(3, 4\) \(12 elements\) as \(5, -1\)"):
        _infer_shape((5, -1), (3, 4), "reshape")
    with pytest.raises(ValueError, match=r"cannot reshape a tensor of shape \(0, 4\) \(0 elements\) as \(0, -1\)"):
        _infer_shape((0, -1), (0, 4), "reshape")
    with pytest.raises(ValueError, match=r"as \(-2, -6\) \(12 elements\)"):
        _infer_shape((-2, -6), (3, 4), "reshape")
    with pytest.raises(ValueError, match=r"as \(-2, -6\) \(12 elements\)"):  # -1 beside a negative size: 12 // -2
        _infer_shape((-2, -1), (3, 4), "reshape")
    assert _infer_shape((), (1, 1), "reshape") == ()


def test_shape_arg_turns_numpy_ints_into_ints():
    got = _shape_arg((np.int64(2), 3))
    assert got == (2, 3) and all(type(n) is int for n in got)
    assert _shape_arg(([np.int32(4), 1],)) == (4, 1)
    with pytest.raises(TypeError, match="a shape needs ints"):
        _shape_arg((2.0, 3))


@pytest.mark.parametrize("idx, want", [
    (3, lambda x: x[3]), (-1, lambda x: x[-1]), (slice(1, 3), lambda x: x[1:3]), (None, lambda x: x[None]),
    (Ellipsis, lambda x: x), (np.array([0, 2]), lambda x: x[[0, 2]]), (np.array(1), lambda x: x[1]),
    (np.array([True, False, True, False]), lambda x: x[[0, 2]]),
    ((0, np.array([1, 2])), lambda x: x[0][[1, 2]]),
    ((0, slice(None), np.array([1, 2])), lambda x: x[0][:, [1, 2]]),  # PyTorch: (5, 2); NumPy's x[0, :, [1, 2]]: (2, 5)
])
def test_indexing_steps_give_pytorchs_result(idx, want):
    x = np.arange(4 * 5 * 6, dtype=np.float64).reshape(4, 5, 6)
    out = x
    for step in _pytorch_index_steps(idx, x.ndim):
        out = out[step]
    np.testing.assert_array_equal(out, want(x))
    np.testing.assert_array_equal(torch.tensor(x)[idx].numpy(), want(x))


# --- the saved-array check names the op that saved it -----------------------------------------------------
def test_a_write_after_forward_names_the_op_that_saved_the_array():
    x = leaf([1.0, 2.0])
    y = x.exp()  # Exp saves its output
    y.mul_(2)
    with pytest.raises(RuntimeError, match=r"\[float64 tensor of shape \(2,\)\] is at version 1; expected version 0 "
                                           r"instead \(saved by ExpBackward\)"):
        y.sum().backward()
