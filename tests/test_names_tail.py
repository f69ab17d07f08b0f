"""tinyattn/tail_functions.py, compat/census_tail.py, nn/stochastic.py and nn/shape_layers.py without
PyTorch: values from NumPy, every gradient by finite differences in float64, the random draws' rates
and structure under manual_seed, and the errors."""
import math
import warnings

import numpy as np
import pytest

import tinyattn
import tinyattn.nn.functional as F
from tinyattn import gradcheck, nn

rng = np.random.default_rng(4)
A, B, M = rng.standard_normal((4, 3)), rng.standard_normal((5, 3)), rng.standard_normal((3, 2))


def t(a):
    return tinyattn.tensor(a, dtype=tinyattn.float64, requires_grad=True)


def test_var_mean_and_std_mean_are_var_and_mean_together():
    v, m = tinyattn.var_mean(t(A), 1)
    np.testing.assert_allclose(v.numpy(), A.var(1, ddof=1), rtol=1e-14)
    np.testing.assert_allclose(m.numpy(), A.mean(1), rtol=1e-14)
    s, m = tinyattn.std_mean(t(A), 0, False, True)  # (input, dim, unbiased, keepdim)
    np.testing.assert_allclose(s.numpy(), A.std(0, keepdims=True), rtol=1e-14)
    assert m.shape == (1, 3)
    s, _ = tinyattn.std_mean(t(A), correction=0)
    np.testing.assert_allclose(s.item(), A.std(), rtol=1e-14)
    assert gradcheck(lambda x: tinyattn.var_mean(x, 1), (t(A),))


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_cdist_is_every_pairs_norm_with_finite_differences_gradients(p):
    want = (np.abs(A[:, None] - B[None]) ** p).sum(-1) ** (1 / p)  # (4, 5)
    np.testing.assert_allclose(tinyattn.cdist(t(A), t(B), p=p).numpy(), want, rtol=1e-13)
    assert gradcheck(lambda x, y: tinyattn.cdist(x, y, p=p), (t(A), t(B)))


def test_cdist_gradient_is_zero_at_a_zero_distance():
    x = t(A)
    tinyattn.cdist(x, x.detach()).sum().backward()
    want = sum((A[i] - A[j]) / np.linalg.norm(A[i] - A[j]) for i in range(4) for j in range(4) if i != j)
    assert np.isfinite(x.grad.numpy()).all()
    np.testing.assert_allclose(x.grad.numpy().sum(0), want, atol=1e-12)


def test_searchsorted_and_bucketize_follow_numpys_sides():
    seq, vals = np.array([1, 3, 3, 7]), np.array([[3, 0], [8, 5]])
    for right, side in ((False, "left"), (True, "right")):
        got = tinyattn.searchsorted(tinyattn.tensor(seq), tinyattn.tensor(vals), right=right)
        assert got.dtype == tinyattn.int64 and got.tolist() == np.searchsorted(seq, vals, side=side).tolist()
        assert tinyattn.bucketize(tinyattn.tensor(vals), tinyattn.tensor(seq), right=right).tolist() == got.tolist()
    rows = tinyattn.searchsorted(tinyattn.tensor([[1, 3, 5], [2, 4, 6]]), tinyattn.tensor([[3], [3]]), side="right")
    assert rows.tolist() == [[2], [1]]
    assert tinyattn.searchsorted(tinyattn.tensor([1, 3]), tinyattn.tensor([2]), out_int32=True).dtype == tinyattn.int32
    assert tinyattn.searchsorted(tinyattn.tensor([5, 1, 3]), tinyattn.tensor([2, 4]),
                                 sorter=tinyattn.tensor([1, 2, 0])).tolist() == [1, 2]
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        tinyattn.searchsorted(tinyattn.tensor([1]), tinyattn.tensor([1]), side="left", right=True)


def test_diag_both_ways_and_its_gradient():
    np.testing.assert_array_equal(tinyattn.diag(t(A[0]), 1).numpy(), np.diag(A[0], 1))
    np.testing.assert_array_equal(tinyattn.diag(t(A), -1).numpy(), np.diag(A, -1))
    for k in (-2, 0, 1):
        assert gradcheck(lambda x: tinyattn.diag(x, k), (t(A),))
        assert gradcheck(lambda x: x.diag(k), (t(A[0]),))


def test_erfinv_inverts_erf_and_its_gradient():
    x = np.array([-0.999999, -0.9, -0.3, 0.0, 1e-8, 0.5, 0.97, 0.9999999])
    y = tinyattn.erfinv(t(x)).numpy()
    np.testing.assert_allclose([math.erf(v) for v in y], x, rtol=1e-15, atol=1e-16)
    assert tinyattn.erfinv(tinyattn.tensor([1.0, -1.0, 1.5])).tolist()[:2] == [math.inf, -math.inf]
    assert math.isnan(tinyattn.erfinv(tinyattn.tensor([1.5])).item())
    assert tinyattn.erfinv(tinyattn.tensor([0, 1])).dtype == tinyattn.float32
    assert gradcheck(tinyattn.erfinv, (t(x[1:-1]),))


def test_stacks_cartesian_prod_addmm_take_and_reshapes():
    assert tinyattn.hstack([t(A[0]), t(A[1])]).shape == (6,) and tinyattn.hstack([t(A), t(A)]).shape == (4, 6)
    np.testing.assert_array_equal(tinyattn.vstack([t(A), t(A[0])]).numpy(), np.vstack([A, A[0]]))
    np.testing.assert_array_equal(tinyattn.dstack([t(A), t(A)]).numpy(), np.dstack([A, A]))
    np.testing.assert_array_equal(tinyattn.dstack([t(A[0]), t(A[1])]).numpy(), np.dstack([A[0], A[1]]))
    np.testing.assert_array_equal(tinyattn.column_stack([t(A[:, 0]), t(A)]).numpy(), np.column_stack([A[:, 0], A]))
    assert gradcheck(lambda x, y: tinyattn.vstack([x, y]), (t(A), t(B)))
    prod = tinyattn.cartesian_prod(tinyattn.tensor([1, 2]), tinyattn.tensor([3, 4, 5]))
    assert prod.tolist() == [[a, b] for a in (1, 2) for b in (3, 4, 5)]
    assert gradcheck(lambda x, y: tinyattn.cartesian_prod(x, y), (t(A[0]), t(B[0])))
    c = rng.standard_normal((4, 2))
    np.testing.assert_allclose(tinyattn.addmm(t(c), t(A), t(M), beta=0.5, alpha=2.0).numpy(), 0.5 * c + 2 * A @ M,
                               rtol=1e-14)
    assert gradcheck(lambda c, a, m: tinyattn.addmm(c, a, m, beta=0.5, alpha=-2.0), (t(c), t(A), t(M)))
    nan = tinyattn.tensor([math.nan])
    assert np.isfinite(tinyattn.addmm(nan, t(A), t(M), beta=0).detach().numpy()).all()  # beta = 0 does not read input
    idx = tinyattn.tensor([[0, 11], [-1, 5]])
    np.testing.assert_array_equal(tinyattn.take(t(A), idx).numpy(), np.take(A, [[0, 11], [-1, 5]]))
    assert gradcheck(lambda x: tinyattn.take(x, idx), (t(A),))
    assert tinyattn.unflatten(t(A), 0, (2, -1)).shape == (2, 2, 3) and t(A).ravel().shape == (12,)
    assert nn.Unflatten(1, (1, 3))(t(A)).shape == (4, 1, 3)
    with pytest.raises(RuntimeError, match="don't multiply up"):
        t(A).unflatten(1, (2, 2))
    np.testing.assert_array_equal(tinyattn.absolute(t(A)).numpy(), np.abs(A))
    assert t(A).H.shape == (3, 4) and t(A).get_device() == -1


def test_in_place_lerp_and_clamps():
    x = tinyattn.tensor([0.0, 2.0, 4.0])
    x.lerp_(tinyattn.tensor([4.0, 4.0, 4.0]), 0.5)
    assert x.tolist() == [2.0, 3.0, 4.0]
    assert x.clamp_max_(2.5).tolist() == [2.0, 2.5, 2.5] and x.clamp_min_(2.25).tolist() == [2.25, 2.5, 2.5]
    w = t(A)
    y = w * 1
    assert gradcheck(lambda a, b: (a * 1).lerp_(b, 0.3), (t(A), t(B[:4])))
    assert y.lerp_(t(B[:4]), 0.3).requires_grad


def test_range_and_hann_window():
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        r = tinyattn.range(1, 2, 0.25)
    assert r.dtype == tinyattn.float32 and r.tolist() == [1.0, 1.25, 1.5, 1.75, 2.0]  # end included
    n = np.arange(6)
    np.testing.assert_allclose(tinyattn.hann_window(6, dtype=tinyattn.float64).numpy(), np.sin(np.pi * n / 6) ** 2,
                               atol=1e-15)
    np.testing.assert_allclose(tinyattn.hann_window(6, False, dtype=tinyattn.float64).numpy(), np.hanning(6), atol=1e-15)
    assert tinyattn.hann_window(1).tolist() == [1.0] and tinyattn.hann_window(0).shape == (0,)
    tinyattn.set_num_threads(3)
    assert tinyattn.get_num_threads() == 3


def test_bernoulli_draws_at_the_probability_and_repeats_under_a_seed():
    p = np.linspace(0, 1, 5)
    tinyattn.manual_seed(0)
    a = tinyattn.bernoulli(tinyattn.tensor(p).expand(20000, 5))
    tinyattn.manual_seed(0)
    b = tinyattn.bernoulli(tinyattn.tensor(p).expand(20000, 5))
    assert a.tolist() == b.tolist() and a.dtype == tinyattn.float64  # the probabilities' dtype
    np.testing.assert_allclose(a.numpy().mean(0), p, atol=0.02)
    assert a.numpy()[:, 0].max() == 0 and a.numpy()[:, -1].min() == 1
    g = tinyattn.Generator().manual_seed(1)
    x = tinyattn.zeros(10000).bernoulli_(0.25, generator=g)
    assert abs(x.numpy().mean() - 0.25) < 0.02 and set(x.tolist()) == {0.0, 1.0}
    q = t(p)
    tinyattn.bernoulli(q).sum().backward()
    assert q.grad.tolist() == [0.0] * 5  # the draw carries no gradient, as PyTorch's
    with pytest.raises(RuntimeError, match="p_in >= 0"):
        tinyattn.ones(2).bernoulli(1.5)


@pytest.mark.parametrize("fn,shape,channel_rows", [(F.dropout1d, (6, 8, 5), 48), (F.dropout1d, (8, 5), 8),
                                                   (F.dropout2d, (6, 8, 3, 3), 48), (F.dropout3d, (6, 8, 2, 2, 2), 48),
                                                   (F.dropout3d, (8, 2, 2, 2), 8)])
def test_channel_dropout_drops_whole_channels_at_rate_p(fn, shape, channel_rows):
    tinyattn.manual_seed(1)
    x = t(np.ones(shape))
    y = fn(x, 0.25)
    rows = y.detach().numpy().reshape(channel_rows, -1)
    assert (rows.min(1) == rows.max(1)).all() and set(np.unique(rows)) <= {0.0, 1 / 0.75}
    assert gradcheck(lambda x: (tinyattn.manual_seed(5), fn(x, 0.25))[1], (t(rng.standard_normal(shape)),))  # one mask
    mask = rows[:, 0]
    y.backward(tinyattn.ones(*shape, dtype=tinyattn.float64))
    np.testing.assert_array_equal(x.grad.numpy().reshape(channel_rows, -1)[:, 0], mask)
    assert fn(x, 0.25, training=False) is x or fn(x, 0.25, training=False).shape == x.shape
    z = tinyattn.ones(*shape)
    out = fn(z, 1.0, inplace=True)
    assert out is z and z.sum().item() == 0.0


def test_channel_dropout_rules_and_modules():
    with pytest.raises(RuntimeError, match="Expected 2D or 3D input"):
        F.dropout1d(tinyattn.ones(3))
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout2d(1.5)
    with pytest.warns(UserWarning, match="3D input to dropout2d"):
        F.dropout2d(tinyattn.ones(2, 3, 4))
    m = nn.Dropout1d(0.5)
    assert repr(m) == "Dropout1d(p=0.5, inplace=False)"
    m.eval()
    x = tinyattn.randn(2, 3, 4)
    assert m(x) is x
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.Dropout3d()(tinyattn.ones(1, 2, 2, 2, 2))  # the dims PyTorch expects: no warning


def test_gumbel_softmax_sums_to_one_and_hard_is_straight_through():
    tinyattn.manual_seed(2)
    logits = t(rng.standard_normal((4, 6)))
    soft = F.gumbel_softmax(logits, tau=0.7)
    np.testing.assert_allclose(soft.detach().numpy().sum(-1), 1.0, rtol=1e-14)
    hard = F.gumbel_softmax(logits, hard=True, dim=0)
    assert (hard.detach().numpy().sum(0) == 1).all() and set(np.unique(hard.detach().numpy())) == {0.0, 1.0}
    (hard * tinyattn.arange(6.0, dtype=tinyattn.float64)).sum().backward()
    np.testing.assert_allclose(logits.grad.numpy().sum(0), 0, atol=1e-12)  # a softmax's gradient along dim 0


@pytest.mark.parametrize("cls,args,mode", [(nn.ZeroPad2d, ((1, 2, 0, 1),), "constant"), (nn.ZeroPad1d, (2,), "constant"),
                                           (nn.ConstantPad1d, (1, 0.5), "constant"), (nn.ReflectionPad1d, (2,), "reflect"),
                                           (nn.ReflectionPad2d, (1,), "reflect"), (nn.ReplicationPad2d, ((1, 0, 2, 1),), "edge"),
                                           (nn.CircularPad1d, (1,), "wrap"), (nn.ZeroPad3d, (1,), "constant")])
def test_padding_modules_are_numpys_pad_with_their_gradients(cls, args, mode):
    nd = int(cls.__name__[-2])
    x = rng.standard_normal((2, 3, 4, 4, 4)[: 2 + nd])
    m = cls(*args)
    p = m.padding
    widths = [(0, 0)] * 2 + [(p[2 * i], p[2 * i + 1]) for i in reversed(range(nd))]
    kw = {"constant_values": getattr(m, "value", 0.0)} if mode == "constant" else {}
    np.testing.assert_array_equal(m(t(x)).numpy(), np.pad(x, widths, mode=mode, **kw))
    assert gradcheck(m, (t(x),))
