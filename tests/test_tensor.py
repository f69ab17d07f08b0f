"""The engine: every op's backward against finite differences, broadcasting, graph mechanics, errors."""
import numpy as np
import pytest

import tinyattn as ta
from tinyattn.gradcheck import gradcheck
from tinyattn.tensor import Function, Tensor, unbroadcast

rng = np.random.default_rng(1234)


def t64(*shape, low=None):
    """A float64 leaf that requires grad; ``low`` keeps values positive (log, sqrt)."""
    x = rng.standard_normal(shape)
    if low is not None:
        x = low + np.abs(x)
    return ta.tensor(x, requires_grad=True)


BROADCAST_PAIRS = [((2, 3, 4), (4,)), ((2, 1, 4), (1, 3, 1)), ((), (2, 3)), ((3, 1), (3, 4)), ((2, 3), (2, 3))]


@pytest.mark.parametrize("sa,sb", BROADCAST_PAIRS)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow"])
def test_binary_ops_broadcast_gradcheck(op, sa, sb):
    a = t64(*sa, low=0.5) if op == "pow" else t64(*sa)
    b = t64(*sb, low=0.5) if op == "div" else t64(*sb)
    fn = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "div": lambda a, b: a / b, "pow": lambda a, b: a ** b}[op]
    assert gradcheck(fn, [a, b])
    out = fn(a, b)
    assert out.shape == np.broadcast_shapes(sa, sb)


@pytest.mark.parametrize("op", ["radd", "rsub", "rmul", "rdiv", "rpow", "neg", "scalar_pow"])
def test_reflected_and_scalar_forms(op):
    a = t64(2, 3, low=0.5)
    fn = {"radd": lambda a: 2.0 + a, "rsub": lambda a: 2.0 - a, "rmul": lambda a: 3.0 * a,
          "rdiv": lambda a: 1.0 / a, "rpow": lambda a: 2.0 ** a, "neg": lambda a: -a,
          "scalar_pow": lambda a: a ** 3}[op]
    assert gradcheck(fn, [a])


def test_numpy_array_on_the_left_defers_to_tensor():
    a = t64(3)
    out = np.ones(3) * a
    assert isinstance(out, Tensor)
    assert gradcheck(lambda a: np.arange(3.0) - a, [a])


MATMUL_SHAPES = [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((4,), (4, 5)),
                 ((3, 4), (4,)), ((4,), (4,)), ((2, 1, 3, 4), (5, 4, 2)), ((4,), (2, 4, 3)), ((3, 4), (2, 4, 5))]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_gradcheck(sa, sb):
    a, b = t64(*sa), t64(*sb)
    out = a @ b
    assert out.shape == np.matmul(a.numpy(), b.numpy()).shape
    np.testing.assert_allclose(out.numpy(), a.numpy() @ b.numpy())
    assert gradcheck(lambda a, b: ta.matmul(a, b), [a, b])


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "tanh", "sigmoid", "relu", "abs"])
def test_unary_gradcheck(name):
    positive = name in ("log", "sqrt")
    a = t64(2, 3, 4, low=0.2) if positive else t64(2, 3, 4)
    if name in ("relu", "abs"):  # keep away from the kink at 0, where the derivative jumps
        a.data[a.data.abs() < 0.05] = 0.3
    assert gradcheck(lambda a: getattr(a, name)(), [a])
    assert gradcheck(lambda a: getattr(ta, name)(a) if hasattr(ta, name) else getattr(a, name)(), [a])


def test_sigmoid_does_not_overflow():
    x = ta.tensor([-1000.0, 0.0, 1000.0])
    np.testing.assert_allclose(x.sigmoid().numpy(), [0.0, 0.5, 1.0])


@pytest.mark.parametrize("dim,keepdim", [(None, False), (0, False), (-1, True), ((0, 2), False), (1, True)])
@pytest.mark.parametrize("name", ["sum", "mean", "var", "amax", "amin"])
def test_reductions_gradcheck(name, dim, keepdim):
    a = t64(2, 3, 4)
    assert gradcheck(lambda a: getattr(a, name)(dim=dim, keepdim=keepdim), [a])
    ref = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min,
           "var": lambda x, axis, keepdims: np.var(x, axis=axis, keepdims=keepdims, ddof=1)}[name]
    np.testing.assert_allclose(getattr(a, name)(dim=dim, keepdim=keepdim).numpy(),
                               ref(a.numpy(), axis=dim, keepdims=keepdim), rtol=1e-12)


def test_var_correction_matches_pytorch_meaning():
    a = t64(5, 6)
    np.testing.assert_allclose(a.var(dim=1, correction=0).numpy(), np.var(a.numpy(), axis=1))
    np.testing.assert_allclose(a.var().numpy(), np.var(a.numpy(), ddof=1))
    with pytest.raises(ValueError, match="degrees of freedom"):
        ta.tensor([1.0]).var()


def test_max_min_whole_tensor_and_ties_split_gradient():
    a = t64(3, 4)
    assert gradcheck(lambda a: a.max(), [a])
    assert gradcheck(lambda a: a.min(), [a])
    tied = ta.tensor(np.array([1.0, 3.0, 3.0]), requires_grad=True)
    tied.amax().backward()
    np.testing.assert_allclose(tied.grad.numpy(), [0.0, 0.5, 0.5])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_and_log_softmax_gradcheck(dim):
    a = t64(2, 3, 5)
    assert gradcheck(lambda a: a.softmax(dim), [a])
    assert gradcheck(lambda a: ta.log_softmax(a, dim=dim), [a])
    np.testing.assert_allclose(a.softmax(dim).numpy().sum(axis=dim), 1.0)
    np.testing.assert_allclose(np.exp(a.log_softmax(dim).numpy()), a.softmax(dim).numpy(), rtol=1e-12)


def test_softmax_is_stable_for_huge_logits_in_float32():
    x = ta.tensor([[1e4, 0.0, -1e4], [1e4, 1e4, 0.0]])
    assert x.dtype == np.float32
    y, ly = x.softmax(-1), x.log_softmax(-1)
    assert np.isfinite(y.numpy()).all() and np.isfinite(ly.numpy()).all()
    np.testing.assert_allclose(y.numpy(), [[1, 0, 0], [0.5, 0.5, 0]], atol=1e-7)


def test_softmax_of_a_fully_masked_row_raises_naming_the_row():
    x = ta.tensor(np.array([[0.0, 1.0], [-np.inf, -np.inf]]))
    with pytest.raises(ValueError, match=r"row\(s\) \[\(1,\)\]"):
        x.softmax(-1)


SHAPE_OPS = {
    "reshape": lambda a: a.reshape(4, 6),
    "reshape_tuple_-1": lambda a: a.reshape((-1, 3)),
    "view": lambda a: a.view(2, 12),
    "transpose": lambda a: a.transpose(0, 2),
    "transpose_neg": lambda a: a.transpose(-2, -1),
    "permute": lambda a: a.permute(2, 0, 1),
    "T": lambda a: a.T,
    "unsqueeze": lambda a: a.unsqueeze(1),
    "unsqueeze_end": lambda a: a.unsqueeze(-1),
    "squeeze": lambda a: a.unsqueeze(0).squeeze(0),
    "squeeze_all": lambda a: a.reshape(1, 2, 1, 12).squeeze(),
    "expand": lambda a: a[:, :1, :].expand(2, 3, 4),
    "expand_lead": lambda a: a.expand(5, 2, 3, 4),
    "expand_-1": lambda a: a[:, :1].expand(-1, 5, -1),
    "repeat_interleave": lambda a: a.repeat_interleave(2, dim=1),
    "repeat_interleave_flat": lambda a: a.repeat_interleave(3),
    "flatten": lambda a: a.flatten(1),
    "flatten_all": lambda a: a.flatten(),
    "contiguous": lambda a: a.transpose(0, 1).contiguous(),
    "double_transpose_view": lambda a: a.transpose(1, 2).contiguous().view(2, -1),
}


@pytest.mark.parametrize("name", list(SHAPE_OPS))
def test_shape_ops_gradcheck(name):
    a = t64(2, 3, 4)
    assert gradcheck(SHAPE_OPS[name], [a])


def test_shape_ops_match_numpy():
    a = t64(2, 3, 4)
    np.testing.assert_array_equal(a.permute(2, 0, 1).numpy(), a.numpy().transpose(2, 0, 1))
    np.testing.assert_array_equal(a.repeat_interleave(2, dim=1).numpy(), np.repeat(a.numpy(), 2, axis=1))
    np.testing.assert_array_equal(a.T.numpy(), a.numpy().T)
    assert a.flatten(0, 1).shape == (6, 4)
    assert a.size() == (2, 3, 4) and a.size(-1) == 4 and a.dim() == 3 and a.numel() == 24


INDEXES = {
    "int": lambda a: a[1],
    "slice": lambda a: a[:, 1:3],
    "step": lambda a: a[..., ::2],
    "neg": lambda a: a[-1, :, -2],
    "none": lambda a: a[None, 0],
    "int_array_repeats": lambda a: a[np.array([0, 1, 1, 0])],
    "list_repeats": lambda a: a[:, [2, 2, 0]],
    "two_arrays": lambda a: a[np.array([0, 1, 1]), np.array([2, 0, 2])],
    "tensor_index": lambda a: a[ta.tensor(np.array([[1, 1], [0, 1]]))],
    "bool_mask": lambda a: a[a.numpy() > 0],
}


@pytest.mark.parametrize("name", list(INDEXES))
def test_getitem_gradcheck(name):
    a = t64(2, 3, 4)
    assert gradcheck(INDEXES[name], [a])


def test_repeated_indices_accumulate():
    a = ta.tensor(np.zeros(3), requires_grad=True)
    a[np.array([0, 0, 2, 0])].sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 0.0, 1.0])


def test_masked_fill_where_tril_triu_cat_stack_cast():
    a, b = t64(2, 3, 4), t64(3, 4)
    mask = rng.random((3, 4)) > 0.5
    assert gradcheck(lambda a: a.masked_fill(ta.tensor(mask), -7.0), [a])
    np.testing.assert_array_equal(a.masked_fill(mask, -7.0).numpy(), np.where(mask, -7.0, a.numpy()))
    assert gradcheck(lambda a, b: ta.where(mask, a, b), [a, b])
    assert gradcheck(lambda a, b: ta.where(mask, a, 0.0) + b, [a, b])
    assert gradcheck(lambda a: ta.tril(a, diagonal=-1), [a])
    assert gradcheck(lambda a: ta.triu(a, 1), [a])
    np.testing.assert_array_equal(ta.tril(a).numpy(), np.tril(a.numpy()))
    c = t64(2, 2, 4)
    assert gradcheck(lambda a, c: ta.cat([a, c], dim=1), [a, c])
    assert gradcheck(lambda a, b: ta.stack([a[0], b, a[1]], dim=-1), [a, b])
    assert gradcheck(lambda a: a.float().double() * 2, [a], atol=1e-4, rtol=1e-3, eps=1e-3)


def test_masked_fill_with_minus_inf_then_softmax_gives_zero_weight():
    scores = t64(3, 3)
    causal = np.tril(np.ones((3, 3), dtype=bool))
    w = scores.masked_fill(~causal, float("-inf")).softmax(-1)
    assert (w.numpy()[~causal] == 0).all()
    assert gradcheck(lambda s: s.masked_fill(ta.tensor(~causal), float("-inf")).softmax(-1), [scores])


# ---- graph mechanics ------------------------------------------------------------------------
def test_reused_node_gradients_add_up():
    a = ta.tensor(np.array([1.5, -2.0]), requires_grad=True)
    b = a + a
    c = b * b
    c.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 8 * a.numpy())  # c = 4a^2


def test_gradients_accumulate_into_leaves_across_backward_calls():
    a = t64(3)
    (a * 2).sum().backward()
    (a * 3).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full(3, 5.0))


def test_a_chain_of_20000_ops_does_not_recurse():
    x = ta.tensor(np.array(1.0), requires_grad=True)
    y = x
    for _ in range(20000):
        y = y * 1.0001
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 1.0001 ** 20000, rtol=1e-9)


def test_non_leaf_grad_is_not_kept_unless_retained():
    a = t64(3)
    b = a * 2
    c = a * 3
    c.retain_grad()
    (b + c).sum().backward()
    assert b.grad is None
    np.testing.assert_allclose(c.grad.numpy(), np.ones(3))
    assert a.is_leaf and not b.is_leaf


def test_no_grad_records_nothing():
    a = t64(3)
    with ta.no_grad():
        b = a * 2
    assert not b.requires_grad and b.is_leaf
    d = a.detach() * 2
    assert not d.requires_grad


def test_backward_with_explicit_gradient_contracts():
    a = t64(2, 3)
    g = rng.standard_normal((2, 3))
    (a * 3).backward(g)
    np.testing.assert_allclose(a.grad.numpy(), 3 * g)


def test_backward_never_stores_or_writes_into_the_callers_gradient():
    # the explicit gradient is used without a copy; it must still never become (or alias) a .grad
    for make in (lambda a: a, lambda a: a.reshape(6), lambda a: a.transpose(0, 1)):  # leaf itself, a view op
        a = t64(2, 3)
        out = make(a)
        g = rng.standard_normal(out.shape)
        g_before = g.copy()
        out.backward(g)
        out2 = make(a)
        out2.backward(g)  # the second backward adds into a.grad.numpy() in place
        assert not np.shares_memory(a.grad.numpy(), g)
        np.testing.assert_array_equal(g, g_before)
        np.testing.assert_allclose(a.grad.numpy().reshape(-1), 2 * np.ravel(g_before.T if out.shape == (3, 2) else g_before))


@pytest.mark.parametrize("f", [
    lambda A, B: (A + B) + A * 3.0,
    lambda A, B: A * 3.0 + (A + B),
    lambda A, B: ((A + B) + A * 3.0) * B,
    lambda A, B: (B * 2.0 + (A + B)) + (A + B) * A,
    lambda A, B: A * B + (A + B) + (B + A) + A * A,  # caught adding into a shared array in place
])
def test_nodes_used_many_times_with_shared_gradients(f):
    # Add's backward hands the SAME array to both of its inputs. The engine sums a node's gradients in
    # place only into sums it made itself; adding into a shared array would change the other input's too.
    a, b = t64(3), t64(3)
    assert gradcheck(lambda a, b: f(a * 1.0, b * 1.0), [a, b])


def test_a_scalar_node_used_three_times_keeps_every_gradient():
    # 0-d + 0-d gives a NumPy scalar, which can not be added into in place: the third use must still count
    a = t64()
    assert gradcheck(lambda a: (lambda b: b * 2.0 + b * 3.0 + b * 4.0)(a * 1.0), [a])
    a.grad = None
    b = a * 1.0
    (b * 2.0 + b * 3.0 + b * 4.0).backward()
    assert a.grad.numpy() == pytest.approx(9.0)


def test_float32_and_float64_gradients_into_one_node_sum_in_float64():
    a = ta.tensor(np.array([1.0, 2.0], dtype=np.float32), requires_grad=True)
    b = a * 1.0
    third = 1 / 3
    (b * 3.0 + b * 4.0 + (b.double() * ta.tensor(np.array([third, third])))).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 7 + third, rtol=1e-7)


@pytest.mark.parametrize("T", [1, 5, 8, 9, 37])  # below, at and above the 8 slices of a last piece
def test_unbind_slices_and_gradients_match_indexing_bit_for_bit(T):
    x = t64(3, T, 4)
    w = rng.standard_normal((T, 3, 4))
    parts = x.unbind(1)
    assert len(parts) == T and all(p.shape == (3, 4) for p in parts)
    for t, p in enumerate(parts):
        np.testing.assert_array_equal(p.numpy(), x.numpy()[:, t])
    # an RNN-like use: every step read once and reused (the gradient of x, step by step)
    loss = sum((p * w[t] + p * p).sum() for t, p in enumerate(parts))
    loss.backward()
    by_unbind = x.grad.numpy().copy()
    x.grad = None
    sum((x[:, t] * w[t] + x[:, t] * x[:, t]).sum() for t in range(T)).backward()
    np.testing.assert_array_equal(by_unbind, x.grad.numpy())  # the same numbers, not just close ones
    assert gradcheck(lambda x: ta.stack([p * w[t] for t, p in enumerate(x.unbind(1))], 0), [x])


def test_unbind_other_dims_and_errors():
    x = ta.tensor(np.arange(24.0).reshape(2, 3, 4))
    np.testing.assert_array_equal(x.unbind()[1].numpy(), x.numpy()[1])
    np.testing.assert_array_equal(x.unbind(-1)[3].numpy(), x.numpy()[..., 3])
    with pytest.raises(ValueError, match="at least 1 dim"):
        ta.tensor(1.0).unbind()
    with pytest.raises(IndexError, match="unbind"):
        x.unbind(3)


def test_unbroadcast_sums_exactly_the_stretched_axes():
    g = np.ones((5, 2, 3, 4))
    assert unbroadcast(g, (3, 1)).shape == (3, 1)
    np.testing.assert_array_equal(unbroadcast(g, (3, 1)), np.full((3, 1), 40.0))
    np.testing.assert_array_equal(unbroadcast(g, ()), np.array(120.0))
    assert unbroadcast(g, (5, 2, 3, 4)) is g


def test_engine_names_an_op_whose_backward_returns_the_wrong_shape():
    class BadShape(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g[..., :1].repeat(3, axis=-1)  # (2, 3) instead of (2, 4)

    a = t64(2, 4)
    with pytest.raises(RuntimeError, match=r"BadShape.backward returned a gradient of shape \(2, 3\).*\(2, 4\)"):
        BadShape.apply(a).sum().backward()


# ---- dtypes, seeds ---------------------------------------------------------------------------
def test_dtype_rules():
    assert ta.tensor([1.0, 2.0]).dtype == np.float32
    assert ta.tensor(1.5).dtype == np.float32
    assert ta.tensor(np.zeros(2)).dtype == np.float64
    assert ta.tensor(np.zeros(2, dtype=np.float32)).dtype == np.float32
    assert ta.tensor([1, 2]).dtype == np.int64
    x32 = ta.randn(3)
    assert (x32 * 0.5 + 1).dtype == np.float32 and x32.exp().dtype == np.float32
    assert ta.arange(5).dtype == np.int64 and ta.arange(0.0, 1.0, 0.25).dtype == np.float32
    ta.set_default_dtype(ta.float64)
    try:
        assert ta.tensor([1.0]).dtype == np.float64 and ta.zeros(2).dtype == np.float64
        assert ta.get_default_dtype() is np.float64
    finally:
        ta.set_default_dtype(ta.float32)
    assert ta.get_default_dtype() is np.float32


def test_manual_seed_reproduces_randn_and_rand():
    ta.manual_seed(7)
    a, b = ta.randn(4, 3), ta.rand(2)
    ta.manual_seed(7)
    np.testing.assert_array_equal(a.numpy(), ta.randn(4, 3).numpy())
    np.testing.assert_array_equal(b.numpy(), ta.rand(2).numpy())
    assert not np.array_equal(a.numpy(), ta.randn(4, 3).numpy())


def test_factories_and_comparisons():
    assert ta.zeros(2, 3).shape == (2, 3) and ta.ones((2,)).numpy().sum() == 2
    assert ta.full((2, 2), 3.0).numpy().sum() == 12
    z = ta.zeros_like(ta.tensor(np.ones((2, 2))))
    assert z.dtype == np.float64 and ta.ones_like(z).numpy().sum() == 4
    x = ta.tensor([1.0, 2.0, 3.0])
    m = x > 1.5
    assert m.dtype == bool and not m.requires_grad and m.numpy().tolist() == [False, True, True]
    assert (x == 2).numpy().tolist() == [False, True, False]
    assert ta.tensor(3.0).item() == 3.0


# ---- errors a learner meets --------------------------------------------------------------------
def test_error_matmul_inner_dim_mismatch_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 5\).*\(3\).*\(4\)"):
        ta.randn(2, 3) @ ta.randn(4, 5)


def test_error_backward_on_non_scalar_without_gradient():
    with pytest.raises(ValueError, match=r"scalar output, got shape \(2, 3\)"):
        (t64(2, 3) * 2).backward()


def test_error_requires_grad_on_integer_data():
    with pytest.raises(TypeError, match="int64"):
        ta.tensor([1, 2, 3], requires_grad=True)


def test_error_view_to_impossible_shape():
    with pytest.raises(ValueError, match=r"shape \(2, 3\) \(6 elements\) as \(4, 2\) \(8 elements\)"):
        ta.randn(2, 3).view(4, 2)
    with pytest.raises(ValueError, match="only one dim can be -1"):
        ta.randn(2, 3).view(-1, -1)


def test_error_broadcast_mismatch_is_named():
    with pytest.raises(ValueError, match=r"add: shapes \(2, 3\) and \(4,\) do not broadcast"):
        ta.randn(2, 3) + ta.randn(4)


def test_error_masked_fill_needs_bool_mask_that_broadcasts():
    x = ta.randn(2, 3)
    with pytest.raises(TypeError, match="bool mask"):
        x.masked_fill(np.ones((2, 3)), 0.0)
    with pytest.raises(ValueError, match=r"mask of shape \(4,\)"):
        x.masked_fill(np.ones(4, dtype=bool), 0.0)


def test_error_bad_dim_and_permute():
    with pytest.raises(IndexError, match="dim=3 is out of range"):
        ta.randn(2, 3).sum(dim=3)
    with pytest.raises(ValueError, match="not a permutation"):
        ta.randn(2, 3).permute(0, 0)
    with pytest.raises(ValueError, match="expand"):
        ta.randn(2, 3).expand(4, 3)
    with pytest.raises(ValueError, match="cat"):
        ta.cat([ta.randn(2, 3), ta.randn(2, 4)], dim=0)
    with pytest.raises(ValueError, match="stack"):
        ta.stack([ta.randn(2, 3), ta.randn(3, 2)])


def test_error_backward_without_graph():
    with pytest.raises(RuntimeError, match="does not require grad"):
        ta.randn(3).sum().backward()


# ---- PyTorch parity found by a cross-check against torch 2.13 (expected values computed here) ----
def test_int_float_promotion_follows_pytorch():
    assert (ta.arange(3) / 2).dtype == np.float32  # NumPy alone would give float64
    np.testing.assert_array_equal((ta.arange(3) / 2).numpy(), [0.0, 0.5, 1.0])
    assert (ta.arange(3) * 0.5).dtype == np.float32
    assert (ta.tensor([1, 2]) + ta.tensor(np.zeros(2))).dtype == np.float64
    assert (ta.arange(4) + 1).dtype == np.int64 and (ta.arange(4) * ta.arange(4)).dtype == np.int64  # ints stay ints


def test_pow_zero_exponent_at_zero_has_zero_gradient():
    a = ta.tensor(np.array([0.0, 2.0, -1.5]), requires_grad=True)
    (a ** 0).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.0, 0.0, 0.0])
    b = ta.tensor(np.array([0.0, 2.0]), requires_grad=True)
    (b ** 1).sum().backward()
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 1.0])


def test_max_min_along_a_dim_return_values_and_indices_like_pytorch():
    a = t64(3, 4)
    values, indices = a.max(dim=1)
    np.testing.assert_array_equal(values.numpy(), a.numpy().max(axis=1))
    np.testing.assert_array_equal(indices.numpy(), a.numpy().argmax(axis=1))
    out = a.min(dim=0, keepdim=True)
    assert out.values.shape == (1, 4) and out.indices.shape == (1, 4)
    np.testing.assert_array_equal(out.indices.numpy()[0], a.numpy().argmin(axis=0))
    assert gradcheck(lambda a: a.max(dim=1).values, [a])
    np.testing.assert_allclose(a.std(dim=1).numpy(), np.std(a.numpy(), axis=1, ddof=1))
    assert gradcheck(lambda a: a.std(dim=0), [a])


def test_softmax_of_a_row_with_nan_or_inf_raises_instead_of_returning_nan():
    for bad in (np.nan, np.inf):
        x = ta.tensor(np.array([[0.0, 1.0], [bad, 0.0]]))
        with pytest.raises(ValueError, match=r"row\(s\) \[\(1,\)\].*NaN or \+inf"):
            x.softmax(-1)
        with pytest.raises(ValueError, match="NaN or"):
            x.log_softmax(-1)
