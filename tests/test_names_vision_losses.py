"""PixelShuffle/PixelUnshuffle, InstanceNorm and the margin losses without PyTorch: values from NumPy's
formulas (pixel shuffle against an index loop), every gradient by finite differences in float64."""
import numpy as np
import pytest

import tinyattn
import tinyattn.nn.functional as F
from tinyattn import gradcheck, nn

rng = np.random.default_rng(17)
V, W = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
Y = np.array([1.0, -1.0, 1.0, -1.0])


def t(a):
    return tinyattn.tensor(a, dtype=tinyattn.float64, requires_grad=True)


def test_pixel_shuffle_moves_channel_blocks_into_pixels_and_unshuffle_undoes_it():
    x = rng.standard_normal((2, 8, 3, 2))
    y = F.pixel_shuffle(t(x), 2).numpy()
    assert y.shape == (2, 2, 6, 4)
    for c, h, w, i, j in np.ndindex(2, 3, 2, 2, 2):  # out[c, h r + i, w r + j] = in[c r^2 + i r + j, h, w]
        assert np.array_equal(y[:, c, 2 * h + i, 2 * w + j], x[:, c * 4 + i * 2 + j, h, w])
    np.testing.assert_array_equal(F.pixel_unshuffle(tinyattn.tensor(y), 2).numpy(), x)
    assert gradcheck(lambda a: F.pixel_shuffle(a, 2), (t(x),))
    assert nn.PixelUnshuffle(3)(tinyattn.ones(1, 6, 6)).shape == (9, 2, 2)


def test_instance_norm_normalizes_each_example_and_channel():
    x = rng.standard_normal((2, 3, 4, 2)) * 3 + 1
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    mean, var = x.mean((2, 3), keepdims=True), x.var((2, 3), keepdims=True)
    want = (x - mean) / np.sqrt(var + 1e-5) * w[:, None, None] + b[:, None, None]
    np.testing.assert_allclose(F.instance_norm(t(x), weight=t(w), bias=t(b)).numpy(), want, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), (t(x), t(w), t(b)))
    m = nn.InstanceNorm2d(3, track_running_stats=True).double()
    m(tinyattn.tensor(x))
    np.testing.assert_allclose(m.running_mean.numpy(), 0.1 * x.mean((2, 3)).mean(0), rtol=1e-12)
    np.testing.assert_allclose(m.running_var.numpy(), 0.9 + 0.1 * x.var((2, 3), ddof=1).mean(0), rtol=1e-12)
    m.eval()
    np.testing.assert_allclose(m(tinyattn.tensor(x)).numpy(), (x - m.running_mean.numpy()[:, None, None])
                               / np.sqrt(m.running_var.numpy()[:, None, None] + 1e-5), rtol=1e-12)
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(3)(tinyattn.ones(2, 4, 5))


def test_margin_losses_are_their_formulas_with_finite_difference_gradients():
    np.testing.assert_allclose(F.margin_ranking_loss(t(V[:, 0]), t(W[:, 0]), tinyattn.tensor(Y), 0.3,
                                                     reduction="none").numpy(),
                               np.maximum(0, -Y * (V[:, 0] - W[:, 0]) + 0.3), rtol=1e-14)
    s = np.sign(W)
    np.testing.assert_allclose(F.hinge_embedding_loss(t(V), tinyattn.tensor(s), 0.5, reduction="none").numpy(),
                               np.where(s == 1, V, np.maximum(0, 0.5 - V)), rtol=1e-14)
    np.testing.assert_allclose(F.soft_margin_loss(t(V), tinyattn.tensor(s)).item(), np.log1p(np.exp(-s * V)).mean(),
                               rtol=1e-14)
    cos = (V * W).sum(1) / np.sqrt(((V * V).sum(1) + 1e-12) * ((W * W).sum(1) + 1e-12))
    np.testing.assert_allclose(F.cosine_embedding_loss(t(V), t(W), tinyattn.tensor(Y), -0.2, reduction="none").numpy(),
                               np.where(Y == 1, 1 - cos, np.maximum(0, cos + 0.2)), rtol=1e-13)
    d = (lambda a, b: np.sqrt(((a - b + 1e-6) ** 2).sum(-1)))
    np.testing.assert_allclose(F.triplet_margin_loss(t(V), t(W), t(V[::-1]), margin=2.0, reduction="none").numpy(),
                               np.maximum(0, 2.0 + d(V, W) - d(V, V[::-1])), rtol=1e-13)
    lab = (W > 0).astype(float)
    want = -(lab * np.log(1 / (1 + np.exp(-V))) + (1 - lab) * np.log(1 / (1 + np.exp(V)))).mean(1)
    np.testing.assert_allclose(F.multilabel_soft_margin_loss(t(V), tinyattn.tensor(lab), reduction="none").numpy(),
                               want, rtol=1e-13)
    assert gradcheck(lambda a, b: F.cosine_embedding_loss(a, b, tinyattn.tensor(Y), -0.2), (t(V), t(W)))
    assert gradcheck(lambda a, b: F.triplet_margin_loss(a, b, b.flip(0), swap=True, p=3), (t(V), t(W)))
    assert gradcheck(lambda a: F.multilabel_soft_margin_loss(a, tinyattn.tensor(lab)), (t(V),))
    assert gradcheck(lambda a: F.soft_margin_loss(a, tinyattn.tensor(s)), (t(V),))
    assert nn.TripletMarginLoss(margin=2.0)(t(V), t(W), t(V[::-1])).item() == \
        F.triplet_margin_loss(t(V), t(W), t(V[::-1]), margin=2.0).item()


def test_bilinear_is_x1_w_x2_plus_b_and_batchnorm3d_normalizes_channels():
    x1, x2, w, b = rng.standard_normal((4, 2)), rng.standard_normal((4, 3)), rng.standard_normal((5, 2, 3)), rng.standard_normal(5)
    np.testing.assert_allclose(F.bilinear(t(x1), t(x2), t(w), t(b)).numpy(),
                               np.einsum("bi,oij,bj->bo", x1, w, x2) + b, rtol=1e-13)
    assert gradcheck(F.bilinear, (t(x1), t(x2), t(w), t(b)))
    m = nn.Bilinear(2, 3, 5, bias=False)
    assert m.weight.shape == (5, 2, 3) and m.bias is None and m(t(x1).float(), t(x2).float()).shape == (4, 5)
    with pytest.raises(RuntimeError, match="input1 size does not match weight size"):
        F.bilinear(t(x2), t(x2), t(w))
    x = rng.standard_normal((2, 3, 2, 3, 2))
    y = nn.BatchNorm3d(3).double()(tinyattn.tensor(x)).numpy()
    want = (x - x.mean((0, 2, 3, 4), keepdims=True)) / np.sqrt(x.var((0, 2, 3, 4), keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="expected 5D input"):
        nn.BatchNorm3d(3)(tinyattn.ones(2, 3, 4))


@pytest.mark.parametrize("name,args,ref", [("leaky_relu_", (0.2,), lambda v: np.where(v > 0, v, 0.2 * v)),
                                           ("elu_", (0.5,), lambda v: np.where(v > 0, v, 0.5 * np.expm1(v))),
                                           ("hardtanh_", (-0.5, 0.7), lambda v: np.clip(v, -0.5, 0.7)),
                                           ("threshold_", (0.1, -3.0), lambda v: np.where(v > 0.1, v, -3.0)),
                                           ("relu_", (), lambda v: np.maximum(v, 0))])
def test_in_place_functional_activations_write_into_their_input(name, args, ref):
    y = t(V) * 1
    assert getattr(F, name)(y, *args) is y
    np.testing.assert_allclose(y.detach().numpy(), ref(V), rtol=1e-15)
    assert gradcheck(lambda a: getattr(F, name)(a * 1, *args), (t(V),))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        getattr(F, name)(t(V), *args)
