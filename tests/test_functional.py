"""tinyattn.nn.functional: values against NumPy references, gradients by finite differences, clear errors."""
import math

import numpy as np
import pytest

import tinyattn
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck


def t64(*shape, scale=1.0, requires_grad=True):
    """A float64 tensor from the seeded generator (for gradchecks)."""
    data = tinyattn.get_rng().standard_normal(shape) * scale
    return tinyattn.tensor(data, requires_grad=requires_grad)


def np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ---------------------------------------------------------------- softmax / log_softmax
@pytest.mark.parametrize("shape,dim", [((2, 3, 4), -1), ((2, 3, 4), 0), ((3, 1, 5), 1), ((3, 5), 0), ((5,), 0)])
def test_softmax_values_and_gradcheck(shape, dim):
    x = t64(*shape)
    np.testing.assert_allclose(F.softmax(x, dim=dim).numpy(), np_softmax(x.numpy(), dim), rtol=1e-12, atol=1e-15)
    assert gradcheck(lambda a: F.softmax(a, dim=dim), [x])
    assert gradcheck(lambda a: F.log_softmax(a, dim=dim), [x])


def test_softmax_of_broadcast_sum_sends_gradient_to_both_inputs():
    a, b = t64(3, 1), t64(1, 4)
    assert gradcheck(lambda a, b: F.softmax(a + b, dim=-1), [a, b])
    assert gradcheck(lambda a, b: F.log_softmax(a * b, dim=0), [a, b])


def test_softmax_default_dim_is_last():
    x = t64(2, 3)
    np.testing.assert_allclose(F.softmax(x).numpy(), np_softmax(x.numpy(), -1))


def test_softmax_huge_logits_float32_finite_and_correct():
    x = tinyattn.tensor(np.array([[1e4, 1e4 - 1.0, 1e4 - 2.0], [-1e4, 0.0, 1e4]], dtype=np.float32))
    y = F.softmax(x, dim=-1)
    assert y.dtype == np.float32
    assert np.isfinite(y.numpy()).all()
    expected0 = np_softmax(np.array([0.0, -1.0, -2.0]), 0)
    np.testing.assert_allclose(y.numpy()[0], expected0, rtol=1e-6)
    np.testing.assert_allclose(y.numpy()[1], [0.0, 0.0, 1.0], atol=1e-7)
    ls = F.log_softmax(x, dim=-1)
    assert np.isfinite(ls.numpy()).all()
    np.testing.assert_allclose(ls.numpy()[0], np.log(expected0), rtol=1e-5)
    np.testing.assert_allclose(ls.numpy()[1], [-2e4, -1e4, 0.0], rtol=1e-6)


def test_log_softmax_consistent_with_softmax():
    x = t64(4, 7, scale=5.0)
    np.testing.assert_allclose(np.exp(F.log_softmax(x, dim=-1).numpy()), F.softmax(x, dim=-1).numpy(), rtol=1e-12)


def test_softmax_fully_masked_row_raises():
    x = tinyattn.tensor(np.array([[0.0, 1.0], [-np.inf, -np.inf]]))
    with pytest.raises(ValueError, match="-inf"):
        F.softmax(x, dim=-1)


# ---------------------------------------------------------------- relu / gelu
def test_relu_values_and_gradcheck():
    x = tinyattn.tensor(np.array([[-2.0, -0.5, 0.3], [1.5, -1.0, 2.0]]), requires_grad=True)
    np.testing.assert_array_equal(F.relu(x).numpy(), np.maximum(x.numpy(), 0))
    assert gradcheck(F.relu, [x])  # no element near the kink at 0


def test_gelu_tanh_matches_formula_and_gradcheck():
    x = t64(3, 5, scale=2.0)
    xd = x.numpy()
    ref = 0.5 * xd * (1 + np.tanh(math.sqrt(2 / math.pi) * (xd + 0.044715 * xd ** 3)))
    np.testing.assert_allclose(F.gelu(x, approximate="tanh").numpy(), ref, rtol=1e-12)
    assert gradcheck(lambda a: F.gelu(a, approximate="tanh"), [x])


def test_gelu_default_is_exact_erf_form_with_gradcheck():
    x = t64(4, 6, scale=2.5)
    ref = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.numpy().ravel()]).reshape(x.shape)
    np.testing.assert_allclose(F.gelu(x).numpy(), ref, rtol=1e-14, atol=1e-300)  # PyTorch's default: exact
    np.testing.assert_array_equal(F.gelu(x).numpy(), F.gelu(x, approximate="none").numpy())
    assert gradcheck(F.gelu, [x])
    # the tanh form is a close approximation of the exact one, but a different function
    gap = np.max(np.abs(F.gelu(x, approximate="tanh").numpy() - ref))
    assert 1e-6 < gap < 1e-3


def test_gelu_exact_gradcheck_across_erf_pieces():
    # x / sqrt(2) in each of the erf's three pieces (|z| <= 0.47, 0.47..4, > 4), both signs
    x = tinyattn.tensor(np.array([-7.3, -5.9, -3.1, -1.2, -0.4, 0.05, 0.6, 0.7, 2.2, 5.0, 6.1, 9.0]), requires_grad=True)
    assert gradcheck(F.gelu, [x])
    assert F.gelu(tinyattn.tensor(np.array([-40.0]))).item() == 0.0  # -x Phi(-x) underflows cleanly, no NaN


def test_gelu_float32_is_the_exact_value_rounded():
    x64 = np.random.default_rng(5).standard_normal(50_000) * 3  # several blocks of the vectorized erf
    ref = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x64])
    got = F.gelu(tinyattn.tensor(x64.astype(np.float32))).numpy()
    assert got.dtype == np.float32
    # the float32 input is itself x64 rounded, so allow for that (|d gelu / dx| <= 1.13) and a few ulp of output
    assert np.all(np.abs(got - ref) <= 1.2 * np.abs(x64) * 2 ** -24 + 4 * np.spacing(np.abs(ref).astype(np.float32)))


def test_gelu_keeps_float32_and_rejects_bad_mode():
    x = tinyattn.randn(4)
    assert F.gelu(x).dtype == np.float32
    assert F.gelu(x, approximate="tanh").dtype == np.float32
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(x, approximate="fast")


# ---------------------------------------------------------------- dropout
def test_dropout_train_zeroes_and_scales():
    x = tinyattn.ones(200, 100)
    y = F.dropout(x, p=0.25, training=True).numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)  # survivors scaled by 1/(1-p)
    assert abs(kept.mean() - 0.75) < 0.01  # 20,000 draws: std of the mean ~0.003
    assert abs(y.mean() - 1.0) < 0.02  # inverted dropout keeps the expectation


def test_dropout_eval_and_p0_are_identity():
    x = tinyattn.randn(3, 4)
    np.testing.assert_array_equal(F.dropout(x, 0.5, training=False).numpy(), x.numpy())
    np.testing.assert_array_equal(F.dropout(x, 0.0, training=True).numpy(), x.numpy())


def test_dropout_deterministic_under_seed():
    x = tinyattn.ones(6, 7)
    tinyattn.manual_seed(3)
    a = F.dropout(x, 0.5).numpy()
    tinyattn.manual_seed(3)
    b = F.dropout(x, 0.5).numpy()
    c = F.dropout(x, 0.5).numpy()  # generator moved on: a different mask
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_dropout_gradcheck_with_a_fixed_mask():
    x = t64(4, 5)

    def fn(a):
        tinyattn.manual_seed(11)  # the same mask for every evaluation
        return F.dropout(a, 0.4, training=True)

    out = fn(x).numpy()
    assert (out == 0).any() and (out != 0).any()
    assert gradcheck(fn, [x])


@pytest.mark.parametrize("p", [-0.1, 1.0, 1.5])
def test_dropout_rejects_p_outside_unit_interval(p):
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        F.dropout(tinyattn.randn(2), p=p)


def test_dropout_rejects_non_number_p():
    with pytest.raises(TypeError, match=r"dropout: p must be a probability in \[0, 1\), got p='0.5' \(str\)"):
        F.dropout(tinyattn.randn(2), p="0.5")
    with pytest.raises(ValueError, match=r"dropout: p must be a probability in \[0, 1\), got p=1.0$"):
        F.dropout(tinyattn.randn(2), p=1.0)


# ---------------------------------------------------------------- linear
def test_linear_matches_numpy_on_batched_input():
    x, w, b = t64(2, 3, 4), t64(5, 4), t64(5)
    np.testing.assert_allclose(F.linear(x, w, b).numpy(), x.numpy() @ w.numpy().T + b.numpy(), rtol=1e-12)
    np.testing.assert_allclose(F.linear(x, w).numpy(), x.numpy() @ w.numpy().T, rtol=1e-12)
    v = t64(4)
    np.testing.assert_allclose(F.linear(v, w, b).numpy(), w.numpy() @ v.numpy() + b.numpy(), rtol=1e-12)


def test_linear_gradcheck_with_and_without_bias():
    x, w, b = t64(2, 3, 4), t64(5, 4), t64(5)
    assert gradcheck(F.linear, [x, w, b])
    assert gradcheck(lambda x, w: F.linear(x, w), [x, w])


def test_linear_gradient_only_for_inputs_that_need_it():
    x, w = t64(3, 4, requires_grad=False), t64(2, 4)
    F.linear(x, w).sum().backward()
    assert x.grad is None
    np.testing.assert_allclose(w.grad.numpy(), np.tile(x.numpy().sum(0), (2, 1)))


def test_linear_errors_name_the_shapes():
    with pytest.raises(ValueError, match=r"x has shape \(2, 3\) but weight has shape \(5, 4\)"):
        F.linear(t64(2, 3), t64(5, 4))
    with pytest.raises(ValueError, match=r"bias must have shape \(out_features,\) = \(5,\), got \(4,\)"):
        F.linear(t64(2, 4), t64(5, 4), t64(4))
    with pytest.raises(ValueError, match="2-D"):
        F.linear(t64(2, 4), t64(4))


# ---------------------------------------------------------------- layer_norm
def np_layer_norm(x, n, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - n, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def test_layer_norm_matches_numpy_and_normalizes():
    x, w, b = t64(2, 3, 6, scale=3.0), t64(6), t64(6)
    np.testing.assert_allclose(F.layer_norm(x, 6, w, b).numpy(), np_layer_norm(x.numpy(), 1, w.numpy(), b.numpy()), rtol=1e-10)
    y = F.layer_norm(x, (6,)).numpy()
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(-1), 1, rtol=1e-4)  # eps=1e-5 shrinks it a hair below 1
    y2 = F.layer_norm(x, (3, 6)).numpy()
    np.testing.assert_allclose(y2, np_layer_norm(x.numpy(), 2), rtol=1e-10)


@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
def test_layer_norm_gradcheck(affine):
    x = t64(2, 3, 5)
    w = t64(5) if affine in ("both", "weight") else None
    b = t64(5) if affine in ("both", "bias") else None
    inputs = [x] + [p for p in (w, b) if p is not None]

    def fn(x, *params):
        it = iter(params)
        return F.layer_norm(x, 5, next(it) if w is not None else None, next(it) if b is not None else None)

    assert gradcheck(fn, inputs)


def test_layer_norm_gradcheck_over_two_dims():
    x, w, b = t64(2, 3, 4), t64(3, 4), t64(3, 4)
    assert gradcheck(lambda x, w, b: F.layer_norm(x, (3, 4), w, b), [x, w, b])


def test_layer_norm_errors():
    with pytest.raises(ValueError, match=r"trailing shape \(8,\).*got shape \(2, 5, 7\)"):
        F.layer_norm(t64(2, 5, 7), 8)
    with pytest.raises(ValueError, match=r"weight must have shape normalized_shape=\(7,\), got \(6,\)"):
        F.layer_norm(t64(2, 7), 7, weight=t64(6))
    with pytest.raises(ValueError, match="eps"):
        F.layer_norm(t64(2, 7), 7, eps=0.0)


def test_layer_norm_constant_row_is_finite():
    x = tinyattn.tensor(np.full((2, 4), 3.0, dtype=np.float32), requires_grad=True)
    y = F.layer_norm(x, 4)
    y.sum().backward()
    assert np.isfinite(y.numpy()).all() and np.isfinite(x.grad.numpy()).all()
    np.testing.assert_array_equal(y.numpy(), 0)


# ---------------------------------------------------------------- cross_entropy
def np_cross_entropy(z, t, ignore=-100, reduction="mean"):
    C = z.shape[-1]
    z2, t2 = z.reshape(-1, C), t.reshape(-1)
    logp = z2 - z2.max(1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
    losses = np.array([0.0 if ti == ignore else -logp[i, ti] for i, ti in enumerate(t2)])
    if reduction == "none":
        return losses.reshape(t.shape)
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / (t2 != ignore).sum()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_values_2d_and_3d(reduction):
    z2 = t64(5, 4)
    t2 = np.array([0, 3, 1, 1, 2])
    np.testing.assert_allclose(F.cross_entropy(z2, t2, reduction=reduction).numpy(),
                               np_cross_entropy(z2.numpy(), t2, reduction=reduction), rtol=1e-12)
    z3 = t64(2, 3, 4)
    t3 = np.array([[0, -100, 3], [2, 2, -100]])
    np.testing.assert_allclose(F.cross_entropy(z3, t3, reduction=reduction).numpy(),
                               np_cross_entropy(z3.numpy(), t3, reduction=reduction), rtol=1e-12)


def test_cross_entropy_mean_ignores_ignored_targets():
    z = t64(4, 3)
    full = F.cross_entropy(z, np.array([0, 1, 2, 1]), reduction="none").numpy()
    got = F.cross_entropy(z, np.array([0, -100, 2, -100])).item()
    assert got == pytest.approx((full[0] + full[2]) / 2, rel=1e-12)  # mean over the 2 scored, not 4
    got7 = F.cross_entropy(z, np.array([0, 7, 2, 7]), ignore_index=7).item()
    assert got7 == pytest.approx(got, rel=1e-12)


def test_cross_entropy_ignore_index_that_is_a_class_id():
    # padding id 0 as ignore_index: every target is in range, yet the 0s must still be skipped
    z = t64(4, 3)
    full = F.cross_entropy(z, np.array([0, 1, 2, 1]), reduction="none").numpy()
    got = F.cross_entropy(z, np.array([0, 1, 0, 2]), ignore_index=0).item()
    assert got == pytest.approx((full[1] + F.cross_entropy(z[3:], np.array([2])).item()) / 2, rel=1e-12)
    with pytest.raises(ValueError, match=r"target holds id 5 at position \(2,\), outside \[0, 2\] \(C=3\), "
                                         r"and is not ignore_index=-100"):
        F.cross_entropy(z, np.array([0, -100, 5, 1]))  # an ignored target does not hide a bad one


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_gradcheck_with_ignore_index(reduction):
    z = t64(2, 3, 4)
    t = np.array([[0, -100, 3], [2, 1, -100]])
    assert gradcheck(lambda z: F.cross_entropy(z, t, reduction=reduction), [z])
    z.grad = None
    F.cross_entropy(z, t, reduction=reduction).sum().backward()
    np.testing.assert_array_equal(z.grad.numpy()[0, 1], 0)  # ignored positions get no gradient
    np.testing.assert_array_equal(z.grad.numpy()[1, 2], 0)


def test_cross_entropy_accepts_tensor_targets_and_gradient_rows_sum_to_zero():
    z = t64(3, 5)
    t = tinyattn.tensor(np.array([4, 0, 2]))
    F.cross_entropy(z, t).backward()
    np.testing.assert_allclose(z.grad.numpy().sum(-1), 0, atol=1e-15)  # softmax - onehot sums to 0 per row
    np.testing.assert_allclose(z.grad.numpy(), (np_softmax(z.numpy(), -1) - np.eye(5)[[4, 0, 2]]) / 3, rtol=1e-12)


def test_cross_entropy_huge_logits_float32():
    z = tinyattn.tensor(np.array([[1e4, 0.0, -1e4], [0.0, 1e4, 1e4]], dtype=np.float32), requires_grad=True)
    loss = F.cross_entropy(z, np.array([0, 0]))
    loss.backward()
    assert loss.dtype == np.float32
    assert loss.item() == pytest.approx((0.0 + 1e4 + math.log(2)) / 2, rel=1e-6)
    assert np.isfinite(z.grad.numpy()).all()


def test_cross_entropy_sum_over_all_ignored_is_zero():
    z = t64(2, 3)
    loss = F.cross_entropy(z, np.array([-100, -100]), reduction="sum")
    loss.backward()
    assert loss.item() == 0.0
    np.testing.assert_array_equal(z.grad.numpy(), 0)


def test_cross_entropy_errors():
    z = t64(2, 3, 4)
    with pytest.raises(ValueError, match=r"targets must have shape \(2, 3\).*got \(6,\)"):
        F.cross_entropy(z, np.zeros(6, dtype=np.int64))
    with pytest.raises(TypeError, match="cross_entropy: target must be integer ids.*float64"):
        F.cross_entropy(z, np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"target holds id 4 at position \(1, 2\), outside \[0, 3\] \(C=4\)"):
        F.cross_entropy(z, np.array([[0, 1, 2], [3, 0, 4]]))
    with pytest.raises(ValueError, match="target holds id -1"):
        F.cross_entropy(z, np.array([[0, 1, 2], [3, 0, -1]]))
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(z, np.zeros((2, 3), dtype=np.int64), reduction="avg")
    with pytest.raises(ValueError, match="every target equals ignore_index=-100"):
        F.cross_entropy(z, np.full((2, 3), -100))
    bad = tinyattn.tensor(np.array([[0.0, 1.0], [np.nan, 0.0]]))
    with pytest.raises(ValueError, match="row 1"):
        F.cross_entropy(bad, np.array([0, 1]))


def test_functional_reexports_attention():
    for name in ("attention", "scaled_dot_product_attention", "flash_attention", "linear_attention"):
        assert callable(getattr(F, name))
