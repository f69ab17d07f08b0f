"""scaled_dot_product_attention's blocked path (a block of query rows at a time, for long sequences)
gives the numbers and gradients of the plain path."""
import numpy as np
import pytest

import tinyattn
import tinyattn.nn.functional as F
import tinyattn.nn.sdpa as sdpa
from tinyattn.gradcheck import gradcheck


def _qkv(B, H, T, S, d, seed=0):
    rng = np.random.default_rng(seed)
    return [tinyattn.tensor(rng.standard_normal(shape), requires_grad=True)
            for shape in ((B, H, T, d), (B, H, S, d), (B, H, S, d))]


def _run(monkeypatch, block_elements, q, k, v, **kw):
    monkeypatch.setattr(sdpa, "_BLOCK_ELEMENTS", block_elements)
    for t in (q, k, v):
        t.grad = None
    out = F.scaled_dot_product_attention(q, k, v, **kw)
    g = np.random.default_rng(9).standard_normal(out.shape)
    out.backward(g)
    return out.numpy().copy(), [np.asarray(t.grad).copy() for t in (q, k, v)]


@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"scale": 0.3},
                                {"attn_mask": np.random.default_rng(3).random((2, 1, 1, 40)) > 0.3},
                                {"attn_mask": np.tril(np.ones((37, 40), bool), 3)}])
def test_blocked_path_equals_plain_path(monkeypatch, kw):
    q, k, v = _qkv(2, 3, 37, 40, 8)  # 37 query rows: the last block is a partial one
    assert sdpa._block_rows(q.numpy(), k.numpy(), v.numpy(), None) is None  # this size runs plain by default
    monkeypatch.setattr(sdpa, "_BLOCK_ELEMENTS", 2 * 3 * 40 * 16)
    assert sdpa._block_rows(q.numpy(), k.numpy(), v.numpy(), None) == 16  # ...and blocked (3 blocks) when told to
    plain_out, plain_grads = _run(monkeypatch, 1 << 40, q, k, v, **kw)
    blk_out, blk_grads = _run(monkeypatch, 2 * 3 * 40 * 16, q, k, v, **kw)
    np.testing.assert_allclose(blk_out, plain_out, rtol=1e-12, atol=1e-14)
    for a, b in zip(blk_grads, plain_grads):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)


def test_blocked_path_gradcheck(monkeypatch):
    monkeypatch.setattr(sdpa, "_BLOCK_ELEMENTS", 1)  # the smallest blocks: 16 rows
    q, k, v = _qkv(1, 2, 35, 6, 4, seed=1)
    assert sdpa._block_rows(q.numpy(), k.numpy(), v.numpy(), None) == 16
    assert gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True), [q, k, v])


def test_dropout_and_float_masks_take_the_plain_path(monkeypatch):
    monkeypatch.setattr(sdpa, "_BLOCK_ELEMENTS", 1)
    q, k, v = _qkv(1, 1, 40, 40, 4)
    bias = tinyattn.tensor(np.random.default_rng(2).standard_normal((40, 40)), requires_grad=True)
    assert gradcheck(lambda a, b, c, m: F.scaled_dot_product_attention(a, b, c, attn_mask=m), [q, k, v, bias])
