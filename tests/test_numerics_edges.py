"""Numerics at the edges: LayerNorm on near-constant and huge rows, sigmoid's far tail, logsigmoid,
division's gradient at extreme magnitudes, one NaN rule for every attention path, and clear errors.

Each expectation is the exact value (computed in float64 or in closed form from the very inputs
given) or what PyTorch returns; gradients are gradchecked in float64 over every element.
"""
import math
import re
from fractions import Fraction

import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn import gradcheck

FLOATS = [np.float32, np.float64]


def _t(a, dtype=np.float64, grad=False):
    return tinyattn.tensor(np.asarray(a, dtype=dtype), requires_grad=grad)


def _layer_norm_exact(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """LayerNorm over the last dim of the very values in x, exactly (Fractions), rounded once at the end.

    Scaled by s = max |x - mean| so that no square leaves the float range (rows of 1e30 or 1e200 too):
    (x - mean) / sqrt(var + eps) = u / sqrt(mean(u^2) + eps / s^2) with u = (x - mean) / s.
    """
    out = np.empty(x.shape, dtype=np.float64)
    for idx in np.ndindex(x.shape[:-1]):
        row = [Fraction(float(v)) for v in x[idx]]
        mean = sum(row) / len(row)
        c = [v - mean for v in row]
        s = max(abs(v) for v in c) or Fraction(1)
        m2 = float(sum(v * v for v in c) / (len(row) * s * s))
        out[idx] = [float(v / s) / math.sqrt(m2 + float(Fraction(eps) / (s * s))) for v in c]
    return out


# ---------------------------------------------------------------------------------------- LayerNorm
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("value", [1e4 + 0.3, 3.3, -7.1e5, 1e30])
def test_layer_norm_of_a_constant_row_is_exactly_zero(dtype, value):
    # torch.nn.functional.layer_norm gives exactly 0 for these (before: 0.295 at 1e4 + 0.3 in float32).
    x = np.full((3, 768), value, dtype=dtype)
    y = F.layer_norm(_t(x, dtype), (768,)).numpy()
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, np.zeros_like(x))


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm_of_a_nearly_constant_row_matches_the_exact_value(dtype):
    rng = np.random.default_rng(0)
    ulp = np.spacing(dtype(1e4))
    # 1e4 plus 0..3 units in the last place: the spread is all in the last bits, where a mean that is
    # off by one unit shifts every output by about 0.3 (eps = 1e-5 dominates the tiny variance).
    x = (dtype(1e4) + ulp * rng.integers(0, 4, size=(4, 768))).astype(dtype)
    y = F.layer_norm(_t(x, dtype), (768,)).numpy()
    np.testing.assert_allclose(y, _layer_norm_exact(x), rtol=0, atol=2e-6 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("dtype, scale", [(np.float32, 1e30), (np.float32, 1e19), (np.float64, 1e200)])
def test_layer_norm_of_huge_rows_is_of_order_one_not_silently_zero(dtype, scale):
    # Before: the squares overflowed to inf, 1/sqrt(inf) = 0, and every output was silently 0.
    x = (scale * np.random.default_rng(1).standard_normal((2, 768))).astype(dtype)
    w = np.random.default_rng(2).standard_normal(768).astype(dtype)
    b = np.random.default_rng(3).standard_normal(768).astype(dtype)
    y = F.layer_norm(_t(x, dtype), (768,), _t(w, dtype), _t(b, dtype)).numpy()
    expected = _layer_norm_exact(x) * w + b
    assert np.abs(y).max() > 0.5 and np.isfinite(y).all()
    np.testing.assert_allclose(y, expected, rtol=1e-4 if dtype == np.float32 else 1e-10, atol=1e-5)


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm_nan_or_inf_in_a_row_gives_nan_there_as_pytorch(dtype):
    x = np.random.default_rng(4).standard_normal((3, 16)).astype(dtype)
    x[1, 5] = np.nan
    x[2, 0] = np.inf
    y = F.layer_norm(_t(x, dtype), (16,)).numpy()
    assert np.isnan(y[1]).all() and np.isnan(y[2]).all()       # never zeros that look like an answer
    np.testing.assert_allclose(y[0], _layer_norm_exact(x[:1])[0], rtol=1e-5)


def test_layer_norm_gradcheck_on_nearly_constant_and_ordinary_rows():
    rng = np.random.default_rng(5)
    near = 3.3 + 1e-3 * rng.standard_normal((2, 3, 8))          # variance 1e-6, below eps: the hard case
    ordinary = rng.standard_normal((2, 3, 8))
    w, b = _t(rng.standard_normal(8), grad=True), _t(rng.standard_normal(8), grad=True)
    for x in (near, ordinary):
        assert gradcheck(lambda a, w, b: F.layer_norm(a, (8,), w, b), [_t(x, grad=True), w, b])


def test_layer_norm_gradient_of_a_huge_row_is_finite_and_matches_the_scaled_one():
    # d LN(x) / dx at x = s z is (d LN / dx at z) / s: LayerNorm is scale-invariant (eps aside).
    z = np.random.default_rng(6).standard_normal((2, 64))
    R = np.random.default_rng(7).standard_normal((2, 64))
    grads = []
    for s, dtype in ((1.0, np.float64), (1e30, np.float32)):
        x = _t(s * z, dtype, grad=True)
        F.layer_norm(x, (64,), eps=1e-12).backward(tinyattn.tensor(R.astype(dtype)))
        grads.append(np.asarray(x.grad, dtype=np.float64) * s)
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-3, atol=1e-4)


# ---------------------------------------------------------------------------------------- sigmoid
@pytest.mark.parametrize("dtype, x", [(np.float64, -40.0), (np.float64, -700.0), (np.float32, -20.0),
                                      (np.float32, -80.0), (np.float64, -1.0), (np.float32, 3.0)])
def test_sigmoid_keeps_its_relative_accuracy_in_the_far_tail(dtype, x):
    # torch.sigmoid(-40., float64) = 4.2484e-18 and torch.sigmoid(-20., float32) = 2.0612e-09; before, both were 0.
    exact = math.exp(x) / (1 + math.exp(x)) if x < 0 else 1 / (1 + math.exp(-x))
    y = F.sigmoid(_t([x], dtype)).numpy()
    assert y.dtype == dtype
    np.testing.assert_allclose(y, [exact], rtol=4 * np.finfo(dtype).eps)


@pytest.mark.parametrize("dtype", FLOATS)
def test_sigmoid_saturates_exactly_and_passes_nan(dtype):
    y = F.sigmoid(_t([-1e4, 1e4, 0.0, np.nan], dtype)).numpy()
    assert y[0] == 0.0 and y[1] == 1.0 and y[2] == 0.5 and np.isnan(y[3])


@pytest.mark.parametrize("dtype, x", [(np.float64, 40.0), (np.float64, -40.0), (np.float32, 20.0), (np.float32, -20.0)])
def test_sigmoid_gradient_is_accurate_in_both_tails(dtype, x):
    # s'(x) = e^-|x| / (1 + e^-|x|)^2: 4.2e-18 at x = +-40, not the 0 that s (1 - s) gives at s = 1.
    e = math.exp(-abs(x))
    t = _t([x], dtype, grad=True)
    F.sigmoid(t).backward(tinyattn.tensor(np.ones(1, dtype)))
    np.testing.assert_allclose(np.asarray(t.grad), [e / (1 + e) ** 2], rtol=8 * np.finfo(dtype).eps)


def test_sigmoid_gradcheck():
    x = np.concatenate([np.linspace(-30, 30, 25), [-1e-3, 0.0, 1e-3]]).reshape(4, 7)
    assert gradcheck(F.sigmoid, [_t(x, grad=True)])
    assert gradcheck(lambda a: a.sigmoid() * a, [_t(x, grad=True)])


@pytest.mark.parametrize("dtype", FLOATS)
def test_log_of_sigmoid_is_about_x_far_out_not_minus_inf(dtype):
    x = -30.0 if dtype == np.float32 else -700.0
    assert np.isfinite(F.sigmoid(_t([x], dtype)).log().numpy()).all()


@pytest.mark.parametrize("dtype", FLOATS)
def test_logsigmoid_values(dtype):
    xs = np.array([-1000.0, -40.0, -20.0, -1.0, 0.0, 1.0, 30.0, 1000.0])
    # log sigmoid(x) = min(x, 0) - log1p(exp(-|x|)), exact in float64 (torch.nn.functional.logsigmoid agrees)
    exact = np.minimum(xs, 0) - np.log1p(np.exp(-np.abs(xs)))
    y = F.logsigmoid(_t(xs, dtype)).numpy()
    assert y.dtype == dtype and y[0] == -1000.0 and y[-1] == 0.0
    np.testing.assert_allclose(y, exact.astype(dtype), rtol=4 * np.finfo(dtype).eps)
    assert F.logsigmoid(_t([30.0])).numpy()[0] == pytest.approx(-9.357622968840175e-14, rel=1e-12)


@pytest.mark.parametrize("dtype", FLOATS)
def test_logsigmoid_gradient_is_sigmoid_of_minus_x(dtype):
    xs = np.array([-1000.0, -40.0, -1.0, 0.0, 2.0, 40.0])
    t = _t(xs, dtype, grad=True)
    F.logsigmoid(t).backward(tinyattn.tensor(np.ones(6, dtype)))
    exact = np.where(xs >= 0, np.exp(-np.abs(xs)), 1.0) / (1 + np.exp(-np.abs(xs)))   # sigmoid(-x)
    np.testing.assert_allclose(np.asarray(t.grad), exact.astype(dtype), rtol=4 * np.finfo(dtype).eps)
    x = np.linspace(-20, 20, 21).reshape(3, 7)
    assert gradcheck(F.logsigmoid, [_t(x, grad=True)])


def test_logsigmoid_rejects_what_the_other_activations_reject():
    with pytest.raises(TypeError, match="logsigmoid expects a floating-point input, got dtype int64"):
        F.logsigmoid(np.array([1, 2], dtype=np.int64))


# ---------------------------------------------------------------------------------------- a / b
@pytest.mark.parametrize("dtype, a, b", [
    (np.float32, 1e-25, 1e-23),    # b * b = 1e-46 underflows: before, -inf
    (np.float32, 1e30, 1e20),      # b * b = 1e40 overflows:   before, -0
    (np.float64, 1e-168, 1e-170),  # b * b = 1e-340 underflows
    (np.float64, 1e300, 1e160),    # b * b = 1e320 overflows
    (np.float64, 3.0, -4.0),
])
def test_division_gradient_stays_in_range(dtype, a, b):
    ta, tb = _t([a], dtype, grad=True), _t([b], dtype, grad=True)
    (ta / tb).backward(tinyattn.tensor(np.ones(1, dtype)))
    np.testing.assert_allclose(np.asarray(tb.grad), [-a / b / b], rtol=4 * np.finfo(dtype).eps)   # -a / b^2
    np.testing.assert_allclose(np.asarray(ta.grad), [1 / b], rtol=4 * np.finfo(dtype).eps)


def test_division_gradcheck_with_broadcasting():
    rng = np.random.default_rng(8)
    a = _t(rng.standard_normal((3, 4)), grad=True)
    b = _t(rng.uniform(0.5, 2.0, (1, 4)) * rng.choice([-1, 1], (1, 4)), grad=True)
    assert gradcheck(lambda a, b: a / b, [a, b])
    assert gradcheck(lambda b: 2.0 / b, [b])


# ---------------------------------------------------------------------------------------- NaN policy
ROW = re.compile(r"row\(s\) \[(.*?)\]")


def _named_rows(fn) -> str:
    # inf * 0 or inf - inf on the way (in q @ k^T) may warn first; what matters here is the error raised
    with pytest.raises(ValueError, match="NaN or \\+inf") as info, np.errstate(invalid="ignore", over="ignore"):
        fn()
    return ROW.search(str(info.value)).group(1)


def _qkv(dtype, bad=np.nan):
    rng = np.random.default_rng(9)
    q, k, v = (rng.standard_normal((2, 2, 5, 4)).astype(dtype) for _ in range(3))
    q[1, 0, 3, 2] = bad                     # one bad entry: query row (1, 0, 3)
    return [tinyattn.tensor(a) for a in (q, k, v)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_every_attention_path_raises_naming_the_same_row(dtype, bad):
    q, k, v = _qkv(dtype, bad)
    paths = {
        "F.softmax": lambda: F.softmax(q @ k.transpose(-2, -1), dim=-1),
        "F.attention": lambda: F.attention(q, k, v),
        "sdpa": lambda: F.scaled_dot_product_attention(q, k, v),
        "sdpa causal": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        "flash": lambda: F.flash_attention(q, k, v, block_size=2),
        "flash causal": lambda: F.flash_attention(q, k, v, is_causal=True, block_size=2),
    }
    named = {name: _named_rows(fn) for name, fn in paths.items()}
    assert set(named.values()) == {"(1, 0, 3)"}, named


@pytest.mark.parametrize("backend", ["reference", "sdpa", "flash"])
def test_multi_head_attention_backends_agree_on_a_nan_input(backend):
    tinyattn.manual_seed(0)
    mha = nn.Attention(8, n_heads=2, backend=backend)
    x = np.random.default_rng(10).standard_normal((2, 5, 8)).astype(np.float32)
    x[1, 2, 0] = np.nan                     # position 2 of sequence 1: a NaN key spoils every query row there
    assert _named_rows(lambda: mha(tinyattn.tensor(x))) == "(1, 0, 0), (1, 0, 1), (1, 0, 2), (1, 0, 3), (1, 0, 4)"


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_a_bad_float_mask_entry_is_named_not_a_nan_row(bad):
    q, k, v = _qkv(np.float64, 0.0)
    mask = np.zeros((5, 5))
    mask[2, 4] = bad
    assert _named_rows(lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask)) .startswith("(0, 0, 2)")


def test_a_nan_value_vector_propagates_the_same_way_on_every_path():
    # v does not enter the softmax: a NaN there is NaN in the outputs that read it, on every path alike.
    q, k, v = _qkv(np.float64, 0.0)
    bad_v = v.numpy().copy()
    bad_v[0, 1, 2, 0] = np.nan              # value 2 of batch 0, head 1
    v = tinyattn.tensor(bad_v)
    outs = [F.attention(q, k, v)[0], F.scaled_dot_product_attention(q, k, v), F.flash_attention(q, k, v, block_size=2)]
    nan_where = [np.isnan(o.numpy()) for o in outs]
    assert nan_where[0][0, 1, :, 0].all() and nan_where[0].sum() == 5
    for w in nan_where[1:]:
        np.testing.assert_array_equal(w, nan_where[0])


# ---------------------------------------------------------------------------------------- clear errors
def test_flatten_with_start_after_end_says_so():
    x = tinyattn.zeros(2, 3, 4)
    with pytest.raises(ValueError, match=r"flatten: start_dim 2 comes after end_dim 0"):
        x.flatten(2, 0)
    with pytest.raises(ValueError, match=r"start_dim -1 .*comes after end_dim -2"):
        x.flatten(-1, -2)
    assert x.flatten(1, 1).shape == (2, 3, 4) and x.flatten(-2, -1).shape == (2, 12)


@pytest.mark.parametrize("dtype", FLOATS)
def test_cross_entropy_on_an_empty_batch(dtype):
    logits = tinyattn.tensor(np.zeros((0, 5), dtype), requires_grad=True)
    targets = np.zeros(0, dtype=np.int64)
    # PyTorch: reduction='sum' gives 0 and 'none' an empty tensor; 'mean' gives nan, which we refuse to return.
    total = F.cross_entropy(logits, targets, reduction="sum")
    assert total.item() == 0.0
    total.backward()
    assert np.asarray(logits.grad).shape == (0, 5)
    assert F.cross_entropy(logits, targets, reduction="none").shape == (0,)
    with pytest.raises(ValueError, match=r"empty batch .*logits shape \(0, 5\).*reduction='sum'") as info:
        F.cross_entropy(logits, targets)
    assert "ignore_index" not in str(info.value)
    with pytest.raises(ValueError, match="every target equals ignore_index"):   # the other case keeps its message
        F.cross_entropy(tinyattn.zeros(2, 5), np.array([-100, -100]))
