"""nn/more_losses.py without PyTorch: values from NumPy's own formulas, every gradient by finite
differences in float64, the clamped BCE at p = 0 and 1, the modules and the errors."""
import numpy as np
import pytest

import tinyattn
import tinyattn.nn.functional as F
from tinyattn import gradcheck, nn

rng = np.random.default_rng(0)
P = rng.uniform(0.05, 0.95, (3, 4))
Y = rng.uniform(0.0, 1.0, (3, 4))
Z = rng.standard_normal((3, 4)) * 3
D = rng.standard_normal((3, 4))


def t(a):
    return tinyattn.tensor(a, dtype=tinyattn.float64, requires_grad=True)


def test_bce_is_the_textbook_formula_and_its_gradients_are_finite_differences():
    got = F.binary_cross_entropy(t(P), t(Y), reduction="none").numpy()
    np.testing.assert_allclose(got, -(Y * np.log(P) + (1 - Y) * np.log(1 - P)), rtol=1e-14)
    w = rng.uniform(0.5, 2.0, 4)
    assert gradcheck(lambda p, y: F.binary_cross_entropy(p, y, weight=tinyattn.tensor(w)), (t(P), t(Y)))


def test_bce_clamps_each_log_at_minus_100():
    got = F.binary_cross_entropy(tinyattn.tensor([0.0, 1.0, 0.0]), tinyattn.tensor([1.0, 0.0, 0.0]),
                                 reduction="none").numpy()
    assert got.tolist() == [100.0, 100.0, 0.0]


def test_bce_with_logits_equals_bce_of_the_sigmoid_and_is_stable_for_large_logits():
    sig = 1 / (1 + np.exp(-Z))
    got = F.binary_cross_entropy_with_logits(t(Z), t(Y), reduction="none").numpy()
    np.testing.assert_allclose(got, -(Y * np.log(sig) + (1 - Y) * np.log(1 - sig)), rtol=1e-12)
    big = F.binary_cross_entropy_with_logits(tinyattn.tensor([-800.0, 800.0]), tinyattn.tensor([1.0, 0.0]),
                                             reduction="none").numpy()
    assert big.tolist() == [800.0, 800.0]  # log(1 + e^800) = 800 without overflow


def test_pos_weight_multiplies_the_positive_term():
    pw = np.array([2.0, 0.5, 1.0, 3.0])
    sig = 1 / (1 + np.exp(-Z))
    got = F.binary_cross_entropy_with_logits(t(Z), t(Y), pos_weight=tinyattn.tensor(pw), reduction="none").numpy()
    np.testing.assert_allclose(got, -(pw * Y * np.log(sig) + (1 - Y) * np.log(1 - sig)), rtol=1e-12)
    assert gradcheck(lambda z, y: F.binary_cross_entropy_with_logits(
        z, y, weight=tinyattn.tensor(Y[0]), pos_weight=tinyattn.tensor(pw)), (t(Z), t(Y)))


@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0])
def test_smooth_l1_is_a_square_inside_beta_and_a_line_outside(beta):
    a = np.abs(D)
    want = a if beta == 0 else np.where(a < beta, 0.5 * D * D / beta, a - 0.5 * beta)
    np.testing.assert_allclose(F.smooth_l1_loss(t(D), t(np.zeros_like(D)), reduction="none", beta=beta).numpy(),
                               want, rtol=1e-15)
    assert gradcheck(lambda x, y: F.smooth_l1_loss(x, y, beta=beta), (t(D), t(Y)))


def test_huber_is_delta_times_smooth_l1():
    for delta in (0.5, 2.0):
        h = F.huber_loss(t(D), t(Y), delta=delta, reduction="none").numpy()
        s = F.smooth_l1_loss(t(D), t(Y), beta=delta, reduction="none").numpy()
        np.testing.assert_allclose(h, delta * s, rtol=1e-14)
        assert gradcheck(lambda x, y: F.huber_loss(x, y, delta=delta, weight=tinyattn.tensor(P)), (t(D), t(Y)))


def test_cosine_similarity_and_pairwise_distance():
    a, b = rng.standard_normal((2, 5, 3))
    cos = F.cosine_similarity(t(a), t(b)).numpy()
    np.testing.assert_allclose(cos, (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1), rtol=1e-14)
    assert F.cosine_similarity(tinyattn.zeros(3), tinyattn.ones(3), dim=0).item() == 0.0  # eps, not 0 / 0
    assert gradcheck(lambda x, y: F.cosine_similarity(x, y, dim=0), (t(a), t(b)))
    d = F.pairwise_distance(t(a), t(b), p=3.0, keepdim=True).numpy()
    np.testing.assert_allclose(d, (np.abs(a - b + 1e-6) ** 3).sum(-1, keepdims=True) ** (1 / 3), rtol=1e-14)
    assert gradcheck(lambda x, y: F.pairwise_distance(x, y), (t(a), t(b)))


def test_cosine_similarity_clamps_small_norms_in_value_only():
    # the norm 1e-5 counts as eps = 1e-4 in the value, but its gradient is the unclamped norm's
    a, b = t(np.array([1e-5, 0.0])), t(np.array([2e-5, 0.0]))
    c = F.cosine_similarity(a, b, dim=0, eps=1e-4)
    c.backward()
    np.testing.assert_allclose(c.item(), 2e-10 / 1e-8, rtol=1e-12)
    np.testing.assert_allclose(a.grad.numpy(), [2e-5 / 1e-8 - 2e-10 / 1e-12, 0.0], rtol=1e-12)


def test_modules_call_their_functions_with_their_options():
    x, y = tinyattn.tensor(Z), tinyattn.tensor(Y)
    pw = tinyattn.tensor([2.0, 1.0, 1.0, 1.0])
    m = nn.BCEWithLogitsLoss(pos_weight=pw, reduction="sum")
    assert list(m.state_dict()) == ["pos_weight"] and repr(m) == "BCEWithLogitsLoss()"
    assert m(x, y).item() == F.binary_cross_entropy_with_logits(x, y, pos_weight=pw, reduction="sum").item()
    assert nn.BCELoss()(tinyattn.tensor(P), y).item() == F.binary_cross_entropy(tinyattn.tensor(P), y).item()
    assert nn.L1Loss(reduction="none")(x, y).shape == (3, 4)
    assert nn.SmoothL1Loss(beta=0.5)(x, y).item() == F.smooth_l1_loss(x, y, beta=0.5).item()
    assert nn.HuberLoss(delta=2.0)(x, y).item() == F.huber_loss(x, y, delta=2.0).item()
    assert nn.L1Loss(size_average=False)(x, y).item() == F.l1_loss(x, y, reduction="sum").item()
    assert nn.CosineSimilarity(dim=0)(x, y).shape == (4,) and nn.PairwiseDistance(keepdim=True)(x, y).shape == (3, 1)


def test_errors_name_what_was_expected():
    with pytest.raises(ValueError, match="same size"):
        F.binary_cross_entropy(tinyattn.ones(3) * 0.5, tinyattn.ones(3, 1))
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(tinyattn.tensor([1.5]), tinyattn.tensor([1.0]))
    with pytest.raises(RuntimeError, match="floating dtype"):
        F.binary_cross_entropy_with_logits(tinyattn.zeros(3), tinyattn.tensor([1, 0, 1]))
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'pos_weight'"):
        F.binary_cross_entropy_with_logits(tinyattn.zeros(3), tinyattn.ones(3),
                                           pos_weight=tinyattn.ones(3, requires_grad=True))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        nn.BCELoss(reduction="avg")
    with pytest.raises(RuntimeError, match="negative values for beta"):
        F.smooth_l1_loss(tinyattn.zeros(3), tinyattn.ones(3), beta=-1.0)
    with pytest.raises(ValueError, match="must match"):
        F.huber_loss(tinyattn.zeros(3), tinyattn.ones(3, 1))


def test_gaussian_nll_loss_is_the_normal_negative_log_likelihood():
    var = rng.uniform(0.1, 2.0, (3, 4))
    got = F.gaussian_nll_loss(t(D), t(Y), t(var), full=True, reduction="none").numpy()
    np.testing.assert_allclose(got, 0.5 * (np.log(2 * np.pi * var) + (D - Y) ** 2 / var), rtol=1e-14)
    shared = F.gaussian_nll_loss(t(D), t(Y), t(var[:, 0]), reduction="none").numpy()  # (3,): one var per row
    np.testing.assert_allclose(shared, 0.5 * (np.log(var[:, :1]) + (D - Y) ** 2 / var[:, :1]), rtol=1e-14)
    assert gradcheck(lambda x, y, v: F.gaussian_nll_loss(x, y, v), (t(D), t(Y), t(var)))
    tiny = t(np.full((3, 4), 1e-8))
    F.gaussian_nll_loss(t(D), t(Y), tiny, eps=1e-3).backward()
    # the value uses max(var, eps); the gradient is that of the formula at var = eps, passed through the clamp
    np.testing.assert_allclose(tiny.grad.numpy(), (0.5 / 1e-3 - 0.5 * (D - Y) ** 2 / 1e-6) / 12, rtol=1e-12)
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(t(D), t(Y), t(np.ones((2, 4))))
    assert nn.GaussianNLLLoss()(t(D), t(Y), 1.0).item() == F.gaussian_nll_loss(t(D), t(Y), 1.0).item()
