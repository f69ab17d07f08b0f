"""attention, scaled_dot_product_attention, linear_attention: values, gradients, masks, errors."""
import math

import numpy as np
import pytest

import tinyattn
from tinyattn.gradcheck import gradcheck
from tinyattn.masks import causal_mask
from tinyattn.nn.sdpa import attention, linear_attention, scaled_dot_product_attention as sdpa


def _t(rng, *shape, grad=True):
    return tinyattn.tensor(rng.standard_normal(shape), requires_grad=grad)  # float64


def _np_attention(q, k, v, keep=None, bias=None, scale=None):
    """Plain NumPy, no tricks: the definition."""
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    if bias is not None:
        s = s + bias
    if keep is not None:
        s = np.where(keep, s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    return w @ v, w


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def test_functional_reexports_these_functions():
    import tinyattn.nn.functional as F
    from tinyattn.nn import flash, sdpa as sdpa_mod
    assert F.attention is sdpa_mod.attention
    assert F.scaled_dot_product_attention is sdpa_mod.scaled_dot_product_attention
    assert F.linear_attention is sdpa_mod.linear_attention
    assert F.flash_attention is flash.flash_attention


def test_attention_matches_definition_and_masks_exactly(rng):
    q, k, v = _t(rng, 2, 3, 4, 5), _t(rng, 2, 3, 6, 5), _t(rng, 2, 3, 6, 7)
    keep = rng.random((2, 1, 4, 6)) > 0.4
    keep[..., 0] = True  # every row keeps a key
    out, w = attention(q, k, v, mask=keep)
    ref_out, ref_w = _np_attention(q.numpy(), k.numpy(), v.numpy(), keep=keep)
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=0, atol=1e-12)
    np.testing.assert_allclose(w.numpy(), ref_w, rtol=0, atol=1e-12)
    assert out.shape == (2, 3, 4, 7) and w.shape == (2, 3, 4, 6)
    np.testing.assert_allclose(w.numpy().sum(-1), 1.0, atol=1e-12)
    assert np.all(w.numpy()[np.broadcast_to(~keep, w.shape)] == 0.0)  # masked keys get exactly zero weight


def test_attention_accepts_01_masks_and_tensor_masks(rng):
    q, k, v = _t(rng, 3, 4), _t(rng, 3, 4), _t(rng, 3, 2)
    m = np.tril(np.ones((3, 3)))  # float 0/1
    a = attention(q, k, v, mask=m)[0].numpy()
    b = attention(q, k, v, mask=tinyattn.tensor(m.astype(bool)))[0].numpy()
    c = attention(q, k, v, mask=causal_mask(3))[0].numpy()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)


def test_attention_refuses_an_additive_float_mask(rng):
    # PyTorch's other mask convention is additive (0 = attend, -inf = blocked); read as 0/1 it would
    # silently swap attended and blocked keys, so anything but 0/1 is an error naming the value.
    q, k, v = _t(rng, 3, 4), _t(rng, 3, 4), _t(rng, 3, 2)
    additive = np.where(causal_mask(3), 0.0, -np.inf)
    with pytest.raises(ValueError, match=r"mask must be bool or 0/1.*holds -inf.*additive"):
        attention(q, k, v, mask=additive)
    with pytest.raises(ValueError, match=r"holds 0\.5"):
        attention(q, k, v, mask=np.full((3, 3), 0.5))
    with pytest.raises(ValueError, match=r"holds 2"):
        attention(q, k, v, mask=np.full((3, 3), 2))  # ints too: only 0 and 1
    # the additive mask means what it means in PyTorch where PyTorch takes it: sdpa's attn_mask
    ref = _np_attention(q.numpy(), k.numpy(), v.numpy(), keep=causal_mask(3))[0]
    np.testing.assert_allclose(sdpa(q, k, v, attn_mask=additive).numpy(), ref, rtol=0, atol=1e-12)


def test_gradcheck_attention(rng):
    q, k, v = _t(rng, 2, 3, 4), _t(rng, 2, 5, 4), _t(rng, 2, 5, 3)
    keep = rng.random((3, 5)) > 0.3
    keep[:, 0] = True
    assert gradcheck(lambda q, k, v: attention(q, k, v, mask=keep)[0], [q, k, v])
    assert gradcheck(lambda q, k, v: attention(q, k, v, scale=0.7)[1], [q, k, v])  # through the weights too


@pytest.mark.parametrize("kind", ["none", "bool", "float", "causal"])
def test_sdpa_equals_reference(rng, kind):
    q, k, v = _t(rng, 2, 2, 5, 4), _t(rng, 2, 2, 7, 4), _t(rng, 2, 2, 7, 3)
    keep = bias = None
    kw = {}
    if kind == "bool":
        keep = rng.random((2, 1, 5, 7)) > 0.5
        keep[..., 3] = True
        kw["attn_mask"] = keep
    elif kind == "float":
        bias = rng.standard_normal((5, 7))
        bias[1, 2:] = -np.inf  # a float mask may hold -inf
        kw["attn_mask"] = bias
    elif kind == "causal":
        keep = np.tril(np.ones((5, 7), dtype=bool))  # PyTorch's is_causal: top-left
        kw["is_causal"] = True
    out = sdpa(q, k, v, **kw)
    ref, _ = _np_attention(q.numpy(), k.numpy(), v.numpy(), keep=keep, bias=bias)
    np.testing.assert_allclose(out.numpy(), ref, rtol=0, atol=1e-12)


def test_sdpa_is_causal_is_top_left_like_pytorch(rng):
    q, k, v = _t(rng, 3, 4), _t(rng, 6, 4), _t(rng, 6, 2)
    top_left = sdpa(q, k, v, is_causal=True).numpy()
    np.testing.assert_array_equal(top_left, sdpa(q, k, v, attn_mask=np.tri(3, 6, dtype=bool)).numpy())
    # query 0 sees only key 0, so its output is exactly value 0
    np.testing.assert_allclose(top_left[0], v.numpy()[0], rtol=0, atol=1e-15)
    bottom_right = sdpa(q, k, v, attn_mask=causal_mask(3, 6)).numpy()
    assert np.abs(top_left - bottom_right).max() > 1e-3


@pytest.mark.parametrize("kind", ["bool", "float", "causal", "gqa"])
def test_gradcheck_sdpa(rng, kind):
    q = _t(rng, 1, 4, 3, 2)
    h_kv = 2 if kind == "gqa" else 4
    k, v = _t(rng, 1, h_kv, 5, 2), _t(rng, 1, h_kv, 5, 3)
    kw = {"enable_gqa": True} if kind == "gqa" else {}
    if kind == "bool":
        keep = rng.random((1, 4, 3, 5)) > 0.4
        keep[..., 0] = True
        kw["attn_mask"] = keep
    elif kind == "float":
        kw["attn_mask"] = rng.standard_normal((3, 5))
    elif kind == "causal":
        kw["is_causal"] = True
    assert gradcheck(lambda q, k, v: sdpa(q, k, v, **kw), [q, k, v])


def test_gradcheck_sdpa_learnable_float_mask(rng):
    q, k, v = _t(rng, 2, 3, 2), _t(rng, 2, 4, 2), _t(rng, 2, 4, 2)
    bias = _t(rng, 3, 4)  # e.g. a learned relative-position bias, broadcast over the batch
    assert gradcheck(lambda q, k, v, b: sdpa(q, k, v, attn_mask=b), [q, k, v, bias])


def test_sdpa_gqa_equals_repeated_heads(rng):
    q, k, v = _t(rng, 2, 6, 3, 4), _t(rng, 2, 2, 5, 4), _t(rng, 2, 2, 5, 4)
    out = sdpa(q, k, v, enable_gqa=True).numpy()
    k_rep, v_rep = np.repeat(k.numpy(), 3, axis=1), np.repeat(v.numpy(), 3, axis=1)  # heads 0,0,0,1,1,1
    np.testing.assert_allclose(out, _np_attention(q.numpy(), k_rep, v_rep)[0], rtol=0, atol=1e-12)


def test_sdpa_dropout_drops_weights_and_scales_survivors(rng):
    q, k, v = _t(rng, 2, 4, 3), _t(rng, 2, 5, 3), _t(rng, 2, 5, 3)
    p = 0.4
    tinyattn.manual_seed(7)
    out = sdpa(q, k, v, dropout_p=p).numpy()
    tinyattn.manual_seed(7)
    keep = tinyattn.get_rng().random((2, 4, 5)) >= p  # the same draws the op makes
    _, w = _np_attention(q.numpy(), k.numpy(), v.numpy())
    np.testing.assert_allclose(out, (w * keep / (1 - p)) @ v.numpy(), rtol=0, atol=1e-12)
    assert 0 < keep.mean() < 1

    def seeded(q, k, v):
        tinyattn.manual_seed(3)  # the same dropout mask on every call, so finite differences make sense
        return sdpa(q, k, v, dropout_p=p)
    assert gradcheck(seeded, [q, k, v])


def test_sdpa_keeps_float32(rng):
    q = tinyattn.tensor(rng.standard_normal((2, 2, 4, 8)).astype(np.float32), requires_grad=True)
    k = tinyattn.tensor(rng.standard_normal((2, 2, 4, 8)).astype(np.float32), requires_grad=True)
    v = tinyattn.tensor(rng.standard_normal((2, 2, 4, 8)).astype(np.float32), requires_grad=True)
    out = sdpa(q, k, v, attn_mask=causal_mask(4))
    out.sum().backward()
    assert out.dtype == np.float32 and q.grad.numpy().dtype == np.float32 and k.grad.numpy().dtype == np.float32
    ref, _ = _np_attention(q.numpy().astype(np.float64), k.numpy().astype(np.float64), v.numpy().astype(np.float64),
                           keep=causal_mask(4))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-6)


def _phi(x):
    return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))


@pytest.mark.parametrize("causal", [False, True])
def test_linear_attention_matches_quadratic_form(rng, causal):
    q, k, v = _t(rng, 2, 5, 3), _t(rng, 2, 5, 3), _t(rng, 2, 5, 4)
    a = _phi(q.numpy()) @ np.swapaxes(_phi(k.numpy()), -1, -2)  # (2, T, S): the kernel instead of exp(q.k)
    if causal:
        a = a * np.tril(np.ones((5, 5)))
    ref = (a / a.sum(-1, keepdims=True)) @ v.numpy()
    np.testing.assert_allclose(linear_attention(q, k, v, causal=causal).numpy(), ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
def test_gradcheck_linear_attention(rng, causal):
    q, k, v = _t(rng, 2, 4, 3), _t(rng, 2, 4, 3), _t(rng, 2, 4, 2)
    assert gradcheck(lambda q, k, v: linear_attention(q, k, v, causal=causal), [q, k, v])


def test_linear_attention_does_not_overflow():
    x = tinyattn.tensor(np.array([[800.0, -800.0]]), requires_grad=True)  # exp(800) = inf in float64
    out = linear_attention(x, x, x)
    out.sum().backward()
    assert np.isfinite(out.numpy()).all() and np.isfinite(x.grad.numpy()).all()


def test_errors_name_the_shapes(rng):
    q, k, v = _t(rng, 2, 4, 8, 16), _t(rng, 2, 4, 8, 15), _t(rng, 2, 4, 8, 16)
    msg = r"q has shape \(2, 4, 8, 16\) but k has shape \(2, 4, 8, 15\): last dims must match"
    for fn in (attention, sdpa, linear_attention):
        with pytest.raises(ValueError, match=msg):
            fn(q, k, v)
    k = _t(rng, 2, 4, 8, 16)
    v = _t(rng, 2, 4, 9, 16)
    with pytest.raises(ValueError, match=r"k has shape \(2, 4, 8, 16\) but v has shape \(2, 4, 9, 16\)"):
        sdpa(q, k, v)
    v = _t(rng, 2, 4, 8, 16)
    with pytest.raises(ValueError, match=r"mask has shape \(3, 8\).*\(2, 4, 8, 8\)"):
        attention(q, k, v, mask=np.ones((3, 8), dtype=bool))
    with pytest.raises(ValueError, match=r"attn_mask has shape \(2, 1, 8, 7\).*\(2, 4, 8, 8\)"):
        sdpa(q, k, v, attn_mask=np.ones((2, 1, 8, 7), dtype=bool))
    with pytest.raises(TypeError, match="int64"):
        sdpa(q, k, v, attn_mask=np.ones((8, 8), dtype=np.int64))
    with pytest.raises(ValueError, match="not both"):
        sdpa(q, k, v, attn_mask=np.ones((8, 8), dtype=bool), is_causal=True)
    with pytest.raises(ValueError, match="dropout_p"):
        sdpa(q, k, v, dropout_p=1.0)
    with pytest.raises(ValueError, match=r"q has 4 heads, k 3"):
        sdpa(q, _t(rng, 2, 3, 8, 16), _t(rng, 2, 3, 8, 16), enable_gqa=True)
    with pytest.raises(ValueError, match="leading"):
        sdpa(q, _t(rng, 2, 3, 8, 16), _t(rng, 2, 3, 8, 16))


def test_fully_masked_rows_raise_instead_of_nan(rng):
    q, k, v = _t(rng, 2, 2, 4, 3), _t(rng, 2, 2, 5, 3), _t(rng, 2, 2, 5, 3)
    keep = np.ones((2, 2, 4, 5), dtype=bool)
    keep[0, 1, 3] = False
    with pytest.raises(ValueError, match=r"attention rows \[\(0, 1, 3\)\] have every key masked"):
        attention(q, k, v, mask=keep)
    with pytest.raises(ValueError, match=r"\[\(0, 1, 3\)\]"):
        sdpa(q, k, v, attn_mask=keep)
    bias = np.zeros((4, 5))
    bias[2] = -np.inf  # row 2 dead for every batch and head
    with pytest.raises(ValueError, match=r"\[\(0, 0, 2\), \(0, 1, 2\), \(1, 0, 2\), \(1, 1, 2\)\]"):
        sdpa(q, k, v, attn_mask=bias)
