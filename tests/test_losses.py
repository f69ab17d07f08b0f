"""Loss arguments PyTorch code passes (weight, label_smoothing, reduction), KL divergence, and the loss modules.

Expected values are worked out by hand on logits whose softmax is known: z = log([1, 2, 1])
gives p = [0.25, 0.5, 0.25], so -log p = [2 log 2, log 2, 2 log 2].
"""
import math

import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn import gradcheck

LOG2 = math.log(2.0)
Z = np.log(np.array([[1.0, 2.0, 1.0], [1.0, 2.0, 1.0], [1.0, 2.0, 1.0]]))  # every row: p = [1/4, 1/2, 1/4]


def test_class_weights_scale_rows_and_the_mean_divides_by_their_sum():
    w = tinyattn.tensor([1.0, 2.0, 3.0], dtype=np.float64)
    y = np.array([1, 2, 0])
    # rows: 2 * log 2, 3 * 2 log 2, 1 * 2 log 2  ->  sum 10 log 2, weights 2 + 3 + 1 = 6
    assert F.cross_entropy(tinyattn.tensor(Z), y, weight=w, reduction="sum").item() == pytest.approx(10 * LOG2, rel=1e-14)
    assert F.cross_entropy(tinyattn.tensor(Z), y, weight=w).item() == pytest.approx(10 * LOG2 / 6, rel=1e-14)
    none = F.cross_entropy(tinyattn.tensor(Z), y, weight=w, reduction="none").numpy()
    np.testing.assert_allclose(none, [2 * LOG2, 6 * LOG2, 2 * LOG2], rtol=1e-14)


def test_ignored_rows_leave_the_weighted_mean_and_its_denominator():
    w = tinyattn.tensor([1.0, 2.0, 3.0], dtype=np.float64)
    y = np.array([1, -100, 0])
    assert F.cross_entropy(tinyattn.tensor(Z), y, weight=w).item() == pytest.approx((2 + 2) * LOG2 / 3, rel=1e-14)
    y = np.array([1, 2, 2])
    got = F.cross_entropy(tinyattn.tensor(Z), y, weight=w, ignore_index=2).item()  # a class id can be ignored
    assert got == pytest.approx(LOG2, rel=1e-14)


def test_label_smoothing_mixes_in_the_uniform_target():
    y = np.array([1, 0, 2])
    # target (1 - e) onehot + e/3:  (1 - e)(-log p_t) + (e/3) (2 log 2 + log 2 + 2 log 2)
    e = 0.3
    rows = [(1 - e) * LOG2 + e / 3 * 5 * LOG2, (1 - e) * 2 * LOG2 + e / 3 * 5 * LOG2,
            (1 - e) * 2 * LOG2 + e / 3 * 5 * LOG2]
    got = F.cross_entropy(tinyattn.tensor(Z), y, label_smoothing=e, reduction="none").numpy()
    np.testing.assert_allclose(got, rows, rtol=1e-14)
    assert F.cross_entropy(tinyattn.tensor(Z), y, label_smoothing=e).item() == pytest.approx(sum(rows) / 3, rel=1e-14)
    # e = 1: the target is uniform, whatever the labels
    assert F.cross_entropy(tinyattn.tensor(Z), y, label_smoothing=1.0).item() == pytest.approx(5 * LOG2 / 3, rel=1e-14)


def test_label_smoothing_with_weights_and_ignore():
    w = np.array([1.0, 2.0, 3.0])
    y = np.array([1, -100, 0])
    e = 0.5
    smooth = -(np.log([0.25, 0.5, 0.25]) * w).sum() * e / 3  # sum_c w_c (-log p_c), times e / C
    rows = [(1 - e) * 2 * LOG2 + smooth, (1 - e) * 1 * 2 * LOG2 + smooth]  # rows 0 and 2
    got = F.cross_entropy(tinyattn.tensor(Z), y, weight=tinyattn.tensor(w), label_smoothing=e)
    assert got.item() == pytest.approx(sum(rows) / (2 + 1), rel=1e-14)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_smoothed_cross_entropy_gradcheck(reduction):
    tinyattn.manual_seed(0)
    z = tinyattn.randn(2, 3, 4, dtype=np.float64, requires_grad=True)
    y = np.array([[0, 3, -100], [2, 2, 1]])
    w = tinyattn.tensor([0.5, 1.0, 2.0, 1.5], dtype=np.float64)
    assert gradcheck(lambda a: F.cross_entropy(a, y, weight=w, label_smoothing=0.2, reduction=reduction), [z])
    assert F.cross_entropy(z, y, weight=w, reduction="none").shape == (2, 3)


def test_cross_entropy_argument_errors():
    z = tinyattn.tensor(Z)
    y = np.array([0, 1, 2])
    with pytest.raises(ValueError, match=r"label_smoothing must be a number in \[0, 1\], got 1.5"):
        F.cross_entropy(z, y, label_smoothing=1.5)
    with pytest.raises(ValueError, match=r"weight must be a finite 1-D tensor with one entry per class, shape \(3,\); "
                                         r"got shape \(2,\)"):
        F.cross_entropy(z, y, weight=tinyattn.tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="weights sum to 0"):
        F.cross_entropy(z, y, weight=tinyattn.tensor([0.0, 0.0, 0.0]))


def test_kl_div_values_and_reductions():
    p = np.array([[0.5, 0.5, 0.0], [0.25, 0.25, 0.5]])  # a zero entry contributes 0 (0 log 0 = 0)
    q = np.array([[0.25, 0.25, 0.5], [0.25, 0.25, 0.5]])
    x = tinyattn.tensor(np.log(q))  # input: log-probabilities
    rows = [LOG2, 0.0]  # KL(p || q): 0.5 log 2 + 0.5 log 2 + 0 ; and p = q
    assert F.kl_div(x, tinyattn.tensor(p), reduction="sum").item() == pytest.approx(sum(rows), rel=1e-14)
    assert F.kl_div(x, tinyattn.tensor(p), reduction="batchmean").item() == pytest.approx(sum(rows) / 2, rel=1e-14)
    with pytest.warns(UserWarning, match="batchmean"):
        assert F.kl_div(x, tinyattn.tensor(p)).item() == pytest.approx(sum(rows) / 6, rel=1e-14)
    none = F.kl_div(x, tinyattn.tensor(p), reduction="none").numpy()
    np.testing.assert_allclose(none, [[0.5 * LOG2, 0.5 * LOG2, 0.0], [0.0, 0.0, 0.0]], atol=1e-15)
    assert not np.isnan(none).any()
    with np.errstate(divide="ignore"):
        log_p = tinyattn.tensor(np.log(p))
    got = F.kl_div(x, log_p, reduction="batchmean", log_target=True).item()
    assert got == pytest.approx(sum(rows) / 2, rel=1e-14)


def test_kl_div_zero_target_terms_are_zero_even_where_the_input_is_minus_inf():
    with np.errstate(divide="ignore"):
        x = tinyattn.tensor(np.log([[0.0, 0.5, 0.5]]), requires_grad=True)  # log 0 = -inf
    p = tinyattn.tensor([[0.0, 0.25, 0.75]], dtype=np.float64)
    loss = F.kl_div(x, p, reduction="sum")
    want = 0.25 * math.log(0.25 / 0.5) + 0.75 * math.log(0.75 / 0.5)
    assert loss.item() == pytest.approx(want, rel=1e-14)
    loss.backward()
    np.testing.assert_allclose(np.asarray(x.grad), [[0.0, -0.25, -0.75]], rtol=1e-15)  # d/dx of -p x
    with np.errstate(divide="ignore"):
        log_p = tinyattn.tensor(np.log(p.numpy()))
    assert F.kl_div(x, log_p, reduction="sum", log_target=True).item() == pytest.approx(want, rel=1e-14)


def test_kl_div_gradcheck_in_input_and_target():
    tinyattn.manual_seed(1)
    x = tinyattn.randn(3, 4, dtype=np.float64).log_softmax(-1).detach().requires_grad_()
    t = tinyattn.rand(3, 4, dtype=np.float64) + 0.1
    t = (t / t.sum(-1, keepdim=True)).detach().requires_grad_()
    for red in ("sum", "batchmean", "none"):
        assert gradcheck(lambda a, b: F.kl_div(a, b, reduction=red), [x, t])
        assert gradcheck(lambda a, b: F.kl_div(a, b.log(), reduction=red, log_target=True), [x, t])


def test_kl_div_errors():
    x = tinyattn.zeros(2, 3)
    with pytest.raises(ValueError, match=r"input has shape \(2, 3\) but target has shape \(3,\)"):
        F.kl_div(x, tinyattn.zeros(3), reduction="sum")
    with pytest.raises(ValueError, match="reduction must be 'batchmean'"):
        F.kl_div(x, x, reduction="avg")


def test_loss_modules_call_the_functions_with_their_options():
    tinyattn.manual_seed(2)
    z = tinyattn.randn(5, 4, dtype=np.float64)
    y = np.array([0, 1, 2, 3, -1])
    w = tinyattn.tensor([1.0, 2.0, 0.5, 1.0], dtype=np.float64)
    crit = nn.CrossEntropyLoss(weight=w, ignore_index=-1, label_smoothing=0.1, reduction="sum")
    assert crit(z, y).item() == F.cross_entropy(z, y, ignore_index=-1, reduction="sum", weight=w,
                                                label_smoothing=0.1).item()
    assert list(crit.state_dict()) == ["weight"]  # a buffer, as in PyTorch
    assert "label_smoothing=0.1" in repr(crit)
    assert nn.CrossEntropyLoss()(z, y[:4].tolist() + [0]).item() == F.cross_entropy(z, np.array([0, 1, 2, 3, 0])).item()
    a, b = tinyattn.tensor([1.0, 2.0]), tinyattn.tensor([0.0, 4.0])
    assert nn.MSELoss()(a, b).item() == pytest.approx(2.5)  # (1 + 4) / 2
    assert nn.MSELoss(reduction="sum")(a, b).item() == pytest.approx(5.0)
    p = tinyattn.tensor([[0.5, 0.5]], dtype=np.float64)
    assert nn.KLDivLoss(reduction="sum")(tinyattn.tensor(np.log([[0.25, 0.75]])), p).item() == pytest.approx(
        0.5 * math.log(2.0) + 0.5 * math.log(0.5 / 0.75), rel=1e-14)
    assert nn.KLDivLoss(reduction="batchmean", log_target=True)(p.log(), p.log()).item() == 0.0
