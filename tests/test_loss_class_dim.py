"""cross_entropy and nll_loss read PyTorch's K-dimensional form: scores (N, C, d1, ..., dk) with
targets (N, d1, ..., dk) -- BERT's ``criterion(logits_lm.transpose(1, 2), masked_tokens)``, a
seq2seq's ``criterion(out.permute(0, 2, 1), trg)``. The classes-last form ((B, T, C) with (B, T))
stays; when targets fit both readings PyTorch's (classes at dim 1) is taken.

Expected values come from NumPy: -log softmax over the class axis at each target."""
import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn import gradcheck

RNG = np.random.default_rng(11)


def _reference(scores: np.ndarray, target: np.ndarray, class_axis: int) -> np.ndarray:
    """Per-position loss -log softmax(scores)[target], classes along class_axis."""
    z = np.moveaxis(scores, class_axis, -1)
    logp = z - z.max(-1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(-1, keepdims=True))
    return -np.take_along_axis(logp, target[..., None], -1)[..., 0]


@pytest.mark.parametrize("shape", [(6, 29, 5), (2, 4, 3, 2), (3, 5, 1)])
def test_classes_at_dim_1_with_targets_of_the_other_dims(shape):
    x = RNG.standard_normal(shape)
    t = RNG.integers(0, shape[1], (shape[0], *shape[2:]))
    want = _reference(x, t, 1)
    got = F.cross_entropy(tinyattn.tensor(x), tinyattn.tensor(t), reduction="none")
    assert got.shape == t.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-13, atol=1e-15)
    assert F.cross_entropy(tinyattn.tensor(x), t).item() == pytest.approx(want.mean(), rel=1e-13)
    logp = tinyattn.tensor(x).log_softmax(1)
    np.testing.assert_allclose(F.nll_loss(logp, t, reduction="none").numpy(), want, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(nn.CrossEntropyLoss(reduction="sum")(tinyattn.tensor(x), t).item(), want.sum(),
                               rtol=1e-13)


def test_ambiguous_shapes_take_pytorchs_reading():
    x = RNG.standard_normal((2, 3, 3))  # targets (2, 3) fit (N, C, d) and (B, T, C): dim 1 wins
    t = RNG.integers(0, 3, (2, 3))
    np.testing.assert_allclose(F.cross_entropy(tinyattn.tensor(x), t, reduction="none").numpy(),
                               _reference(x, t, 1), rtol=1e-13)


def test_classes_last_still_works_where_only_it_fits():
    x = RNG.standard_normal((2, 4, 7))
    t = RNG.integers(0, 7, (2, 4))
    np.testing.assert_allclose(F.cross_entropy(tinyattn.tensor(x), t, reduction="none").numpy(),
                               _reference(x, t, 2), rtol=1e-13)


def test_weight_smoothing_and_ignore_index_in_the_k_dim_form():
    x = RNG.standard_normal((3, 4, 5))
    t = RNG.integers(0, 4, (3, 5))
    t[0, 1] = -100
    w = RNG.random(4) + 0.5
    keep = t != -100
    safe = np.where(keep, t, 0)
    per = _reference(x, safe, 1) * w[safe] * keep
    got = F.cross_entropy(tinyattn.tensor(x), t, weight=tinyattn.tensor(w))
    assert got.item() == pytest.approx(per.sum() / (w[safe] * keep).sum(), rel=1e-13)
    # label smoothing e: (1 - e) * nll + e * mean over classes of -log p
    z = np.moveaxis(x, 1, -1)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    e = 0.2
    tt = RNG.integers(0, 4, (3, 5))
    smooth = (1 - e) * _reference(x, tt, 1) + e * (-logp.mean(-1))
    np.testing.assert_allclose(F.cross_entropy(tinyattn.tensor(x), tt, label_smoothing=e, reduction="none").numpy(),
                               smooth, rtol=1e-13)


def test_gradients_by_finite_differences():
    t = RNG.integers(0, 4, (2, 3))
    x = tinyattn.tensor(RNG.standard_normal((2, 4, 3)), requires_grad=True)
    assert gradcheck(lambda z: F.cross_entropy(z, t), (x,))
    assert gradcheck(lambda z: F.nll_loss(z.log_softmax(1), t, reduction="sum"), (x,))


def test_targets_fitting_neither_form_are_refused():
    with pytest.raises(ValueError, match="targets must have shape"):
        F.cross_entropy(tinyattn.randn(2, 4, 3), RNG.integers(0, 3, (4, 3)))
