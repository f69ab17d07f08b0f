"""The second batch of census-tail names without PyTorch: in-place ops give the same values and
finite-difference gradients as their out-of-place forms, the products and shape helpers match NumPy
(einsum, np.kron, np.tensordot, np.moveaxis, np.tile, np.array_split, ...), with gradchecks in float64."""
import numpy as np
import pytest

import tinyattn
from tinyattn import gradcheck

rng = np.random.default_rng(10)
A, B = rng.uniform(0.5, 2.0, (4, 3)), rng.standard_normal((4, 3))
C3, D3 = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 3, 5))


def t(a):
    return tinyattn.tensor(a, dtype=tinyattn.float64, requires_grad=True)


@pytest.mark.parametrize("name,ref", [("abs_", np.abs), ("neg_", np.negative), ("sqrt_", np.sqrt), ("log_", np.log),
                                      ("sin_", np.sin), ("cos_", np.cos), ("reciprocal_", np.reciprocal),
                                      ("square_", np.square), ("rsqrt_", lambda a: 1 / np.sqrt(a)),
                                      ("floor_", np.floor), ("frac_", lambda a: a - np.trunc(a))])
def test_unary_in_place_ops_write_the_value_and_keep_the_gradient(name, ref):
    x = t(A) * 1
    out = getattr(x, name)()
    assert out is x
    np.testing.assert_allclose(x.detach().numpy(), ref(A), rtol=1e-14)
    assert gradcheck(lambda a: getattr(a * 1, name)(), (t(A),))


def test_optimizer_style_updates_with_addcmul_and_addcdiv():
    m, v, g = np.zeros(3), np.zeros(3), np.array([0.5, -1.0, 2.0])
    mt, vt, p = tinyattn.zeros(3, dtype=tinyattn.float64), tinyattn.zeros(3, dtype=tinyattn.float64), \
        tinyattn.ones(3, dtype=tinyattn.float64)
    gt = tinyattn.tensor(g)
    mt.mul_(0.9).add_(gt, alpha=0.1)
    vt.mul_(0.999).addcmul_(gt, gt, value=0.001)  # Adam's second moment
    p.addcdiv_(mt, vt.sqrt().add_(1e-8), value=-0.01)  # and its step
    m, v = 0.1 * g, 0.001 * g * g
    np.testing.assert_allclose(p.numpy(), 1 - 0.01 * m / (np.sqrt(v) + 1e-8), rtol=1e-14)
    assert gradcheck(lambda a, b: (a * 1).addcmul_(b, b, value=0.3), (t(A), t(B)))
    assert gradcheck(lambda a, b: (b * 1).addcdiv_(b, a, value=-2.0), (t(A), t(B)))
    assert gradcheck(lambda a, b: (a * 1).pow_(b), (t(A), t(B)))
    assert gradcheck(lambda a, b: (a * 1).index_add_(0, tinyattn.tensor([0, 2, 0]), b[:3], alpha=2), (t(A), t(B)))


def test_products_match_numpy_and_their_gradients():
    bias = rng.standard_normal((2, 4, 1))
    got = tinyattn.baddbmm(t(bias), t(C3), t(D3), beta=0.5, alpha=0.25).numpy()
    np.testing.assert_allclose(got, 0.5 * bias + 0.25 * C3 @ D3, rtol=1e-13)
    assert gradcheck(lambda b, c, d: tinyattn.baddbmm(b, c, d, beta=0.5, alpha=0.25), (t(bias), t(C3), t(D3)))
    np.testing.assert_allclose(tinyattn.addbmm(t(bias[0]), t(C3), t(D3)).numpy(), bias[0] + (C3 @ D3).sum(0), rtol=1e-13)
    np.testing.assert_allclose(tinyattn.mv(t(C3[0]), t(D3[0, :, 0])).numpy(), C3[0] @ D3[0, :, 0], rtol=1e-14)
    np.testing.assert_allclose(tinyattn.addr(t(C3[0]), t(C3[0, :, 0]), t(D3[0, 0, :3])).numpy(),
                               C3[0] + np.outer(C3[0, :, 0], D3[0, 0, :3]), rtol=1e-14)
    np.testing.assert_allclose(tinyattn.inner(t(C3), t(D3[0].T)).numpy(), np.inner(C3, D3[0].T), rtol=1e-13)
    np.testing.assert_allclose(tinyattn.kron(t(C3[0]), t(D3[0, :2, :2])).numpy(), np.kron(C3[0], D3[0, :2, :2]),
                               rtol=1e-14)
    assert gradcheck(lambda a, b: tinyattn.kron(a, b), (t(C3[0]), t(D3[0, :2, :2])))
    np.testing.assert_allclose(tinyattn.tensordot(t(C3), t(D3), dims=([0, 2], [0, 1])).numpy(),
                               np.tensordot(C3, D3, axes=([0, 2], [0, 1])), rtol=1e-13)
    assert gradcheck(lambda a, b: tinyattn.tensordot(a, b, dims=([0, 2], [0, 1])), (t(C3), t(D3)))
    np.testing.assert_allclose(tinyattn.dist(t(A), t(B), 3).item(), (np.abs(A - B) ** 3).sum() ** (1 / 3), rtol=1e-14)


def test_shape_helpers_match_numpy():
    np.testing.assert_array_equal(tinyattn.movedim(t(C3), (0, 1), (2, 0)).numpy(), np.moveaxis(C3, (0, 1), (2, 0)))
    np.testing.assert_array_equal(tinyattn.tile(t(C3), (2,)).numpy(), np.tile(C3, (2,)))
    np.testing.assert_array_equal(t(C3[0, 0]).tile((2, 3)).numpy(), np.tile(C3[0, 0], (2, 3)))
    idx = np.array([[[2], [0], [1], [1]]])
    np.testing.assert_array_equal(tinyattn.take_along_dim(t(C3), tinyattn.tensor(idx), 2).numpy(),
                                  np.take_along_axis(C3, np.broadcast_to(idx, (2, 4, 1)), 2))
    assert gradcheck(lambda c: tinyattn.take_along_dim(c, tinyattn.tensor(idx), 2), (t(C3),))
    for parts in (3, [1, 3]):
        got = [p.numpy() for p in tinyattn.tensor_split(t(C3), parts, 1)]
        want = np.array_split(C3, parts, 1)
        assert all(np.array_equal(g, w) for g, w in zip(got, want)) and len(got) == len(want)
    np.testing.assert_array_equal(tinyattn.diag_embed(t(C3[0]), 1).numpy(),
                                  np.stack([np.diag(r, 1) for r in C3[0]]))
    assert gradcheck(lambda c: tinyattn.diag_embed(c, -1), (t(C3),))
    bd = tinyattn.block_diag(t(A[:2]), t(B[0]), t(np.array(5.0))).numpy()
    assert bd.shape == (4, 7) and np.array_equal(bd[:2, :3], A[:2]) and np.array_equal(bd[2, 3:6], B[0]) and bd[3, 6] == 5
    assert bd[:2, 3:].sum() == 0 and bd[2:, :3].sum() == 0
    assert gradcheck(lambda a, b: tinyattn.block_diag(a, b), (t(A[:2]), t(B)))
    assert [x.shape for x in tinyattn.broadcast_tensors(t(A[:, :1]), t(B[0]))] == [(4, 3), (4, 3)]
    assert tinyattn.atleast_3d(t(A[0])).shape == (1, 3, 1) and tinyattn.broadcast_to(t(A[0]), (2, 3)).shape == (2, 3)
    np.testing.assert_allclose(tinyattn.logit(t(np.array([0.25, 0.5])), 0.3).numpy(), [np.log(0.3 / 0.7), 0.0],
                               atol=1e-15)
    assert gradcheck(lambda a: tinyattn.logit(a / 3), (t(A),))
    nan = tinyattn.tensor([[1.0, np.nan, 3.0], [np.nan, np.nan, 2.0]])
    assert tinyattn.nanmean(nan, 1).tolist() == [2.0, 2.0]
    assert tinyattn.isin(tinyattn.tensor([1, 2, 3]), tinyattn.tensor([3, 1])).tolist() == [True, False, True]
    np.testing.assert_allclose(tinyattn.logspace(0, 3, 4, dtype=tinyattn.float64).numpy(), [1, 10, 100, 1000])
    assert tinyattn.argwhere(tinyattn.tensor([[0, 1], [2, 0]])).tolist() == [[0, 1], [1, 0]]
    x = tinyattn.zeros(3, 3)
    assert x.fill_diagonal_(2.0).numpy().trace() == 6.0 and x.sum().item() == 6.0


def test_random_fills_follow_manual_seed():
    tinyattn.manual_seed(3)
    a = tinyattn.zeros(5000, dtype=tinyattn.float64).exponential_(2.0)
    tinyattn.manual_seed(3)
    b = tinyattn.zeros(5000, dtype=tinyattn.float64).exponential_(2.0)
    assert a.tolist() == b.tolist() and abs(a.mean().item() - 0.5) < 0.03
    r = tinyattn.zeros(5000, dtype=tinyattn.int64).random_(3, 6)
    assert set(r.tolist()) == {3, 4, 5}
    with pytest.raises(RuntimeError, match="lambda > 0.0"):
        tinyattn.ones(2).exponential_(0.0)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        tinyattn.tensor([4, 9]).sqrt_()
