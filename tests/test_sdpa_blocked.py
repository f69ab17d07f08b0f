"""scaled_dot_product_attention's blocked path (a block of matrices and query rows at a time, for big
score arrays, skipping the keys a causal mask hides) gives the numbers and gradients of the plain path."""
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


def _plan(q, k, v, keep=None):
    return sdpa._block_plan(q.numpy(), k.numpy(), v.numpy(), keep)


# (block elements, (matrices, rows) per block) for q (2, 3, 37, 8), k and v (2, 3, 40, 8):
BLOCKINGS = [(2 * 37 * 40, (2, 37)),  # whole matrices, two at a time: 3 heads make a full pair and a partial one
             (16 * 40, (1, 16)),  # one matrix, 16 of its 37 query rows at a time: the last row block is partial
             (4 * 37 * 40, (3, 37))]  # room for 4 matrices: a batch entry's 3 heads whole (a view), not 4


def _shape_of(plan, q):
    """(matrices, rows) of the plan's first block."""
    b, rows, _ = plan[0]
    return int(np.prod(np.empty(q.shape[:-2])[b].shape)), rows.stop - rows.start


@pytest.mark.parametrize("block_elements, block_shape", BLOCKINGS)
@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"scale": 0.3},
                                {"attn_mask": np.random.default_rng(3).random((2, 1, 1, 40)) > 0.3},
                                {"attn_mask": np.random.default_rng(4).random((2, 3, 37, 40)) > 0.3},
                                {"attn_mask": np.tril(np.ones((37, 40), bool), 3)}])
def test_blocked_path_equals_plain_path(monkeypatch, kw, block_elements, block_shape):
    q, k, v = _qkv(2, 3, 37, 40, 8)
    assert _plan(q, k, v) is None  # this size runs plain by default
    monkeypatch.setattr(sdpa, "_BLOCK_ELEMENTS", block_elements)
    assert _shape_of(_plan(q, k, v), q) == block_shape  # ...and blocked when told to
    plain_out, plain_grads = _run(monkeypatch, 1 << 40, q, k, v, **kw)
    blk_out, blk_grads = _run(monkeypatch, block_elements, q, k, v, **kw)
    np.testing.assert_allclose(blk_out, plain_out, rtol=1e-12, atol=1e-14)
    for a, b in zip(blk_grads, plain_grads):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)


def test_a_causal_mask_skips_the_keys_no_row_of_a_block_sees(monkeypatch):
    monkeypatch.setattr(sdpa, "_BLOCK_ELEMENTS", 32 * 128)
    q, k, v = _qkv(1, 2, 128, 128, 4)
    causal = np.tri(128, 128, dtype=bool)
    plan = _plan(q, k, v, causal)
    assert [(r.start, r.stop, n) for _, r, n in plan[:4]] == [(0, 32, 32), (32, 64, 64), (64, 96, 96), (96, 128, 128)]
    assert [n for _, _, n in _plan(q, k, v, np.tri(128, 128, 5, dtype=bool))[:2]] == [37, 69]  # sees 5 ahead
    assert {n for _, _, n in _plan(q, k, v)} == {128}  # no mask: every key
    # a mask that differs between the matrices of the batch: every key, for every block
    assert {n for _, _, n in _plan(q, k, v, np.broadcast_to(causal, (2, 128, 128)).copy())} == {128}
    # ...and the numbers are those of the plain path, including the gradients of the keys never computed
    plain_out, plain_grads = _run(monkeypatch, 1 << 40, q, k, v, is_causal=True)
    blk_out, blk_grads = _run(monkeypatch, 32 * 128, q, k, v, is_causal=True)
    np.testing.assert_allclose(blk_out, plain_out, rtol=1e-12, atol=1e-14)
    for a, b in zip(blk_grads, plain_grads):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)


def test_blocked_path_gradcheck(monkeypatch):
    monkeypatch.setattr(sdpa, "_BLOCK_ELEMENTS", 1)  # the smallest blocks: 16 rows
    q, k, v = _qkv(1, 2, 35, 6, 4, seed=1)
    assert _shape_of(_plan(q, k, v), q) == (1, 16)
    assert gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True), [q, k, v])


def test_dropout_and_float_masks_take_the_plain_path(monkeypatch):
    monkeypatch.setattr(sdpa, "_BLOCK_ELEMENTS", 1)
    q, k, v = _qkv(1, 1, 40, 40, 4)
    bias = tinyattn.tensor(np.random.default_rng(2).standard_normal((40, 40)), requires_grad=True)
    assert gradcheck(lambda a, b, c, m: F.scaled_dot_product_attention(a, b, c, attn_mask=m), [q, k, v, bias])


def test_blocked_path_without_batch_dims(monkeypatch):
    # q (T, d) with no batch dims: the blocks are row slices only
    rng = np.random.default_rng(5)
    q, k, v = (tinyattn.tensor(rng.standard_normal(shape), requires_grad=True) for shape in ((35, 4), (6, 4), (6, 4)))
    monkeypatch.setattr(sdpa, "_BLOCK_ELEMENTS", 1)
    assert _shape_of(_plan(q, k, v), q) == (1, 16)
    assert gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c), [q, k, v])


def test_default_blocks_at_the_benchmark_shapes():
    # A head of T = 512 fits a block whole, one of T = 2048 does not; at T = 128, 16 matrices share a block
    def shape(B, H, T):
        a = np.empty((B, H, T, 32))
        return _shape_of(sdpa._block_plan(a, a, a, None), a)
    assert shape(4, 8, 512) == (1, 512)
    assert shape(1, 4, 2048) == (1, 128)
    assert shape(8, 8, 128) == (16, 128)


@pytest.mark.parametrize("where", ["q", "k"])
def test_blocked_path_names_a_nan_row_as_the_plain_path_does(monkeypatch, where):
    # A NaN in q spoils one query row; a NaN in k spoils every row that sees that key. Both paths
    # must raise the same error, naming the same rows (the blocked one checks each block's row maxima).
    q, k, v = _qkv(2, 3, 37, 40, 8)
    (q if where == "q" else k).numpy()[1, 2, 5, 3] = np.nan
    messages = []
    for block_elements in (1 << 40, 16 * 40):
        monkeypatch.setattr(sdpa, "_BLOCK_ELEMENTS", block_elements)
        with pytest.raises(ValueError, match="contain NaN") as err:
            F.scaled_dot_product_attention(q, k, v, is_causal=True)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    assert "(1, 2, 5)" in messages[0]


def test_blocked_outputs_do_not_see_masked_keys_to_the_last_bit(monkeypatch):
    # What a query may not see (padding keys, future tokens) must not change its output at all, not
    # even its rounding: no choice of the blocked path may depend on the values of such keys.
    monkeypatch.setattr(sdpa, "_BLOCK_ELEMENTS", 16 * 40)
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((2, 3, 40, 8)).astype(np.float32) for _ in range(3))
    pad = np.ones((2, 1, 1, 40), bool)
    pad[1, ..., 30:] = False  # the second sequence has 30 real tokens
    k2, v2 = k.copy(), v.copy()
    k2[1, :, 30:], v2[1, :, 30:] = 100 * rng.standard_normal((2, 3, 10, 8)).astype(np.float32)  # garbage
    run = lambda kk, vv, **kw: F.scaled_dot_product_attention(*map(tinyattn.tensor, (q, kk, vv)), **kw).numpy()
    assert np.array_equal(run(k, v, attn_mask=pad), run(k2, v2, attn_mask=pad))
    k3, v3 = k.copy(), v.copy()
    k3[:, :, 20:], v3[:, :, 20:] = 100 * rng.standard_normal((2, 2, 3, 20, 8)).astype(np.float32)  # new future
    a, b = run(k, v, is_causal=True), run(k3, v3, is_causal=True)
    assert np.array_equal(a[:, :, :20], b[:, :, :20]) and not np.allclose(a[:, :, 20:], b[:, :, 20:])
