"""PixelShuffle/PixelUnshuffle, InstanceNorm1d/2d/3d and the margin losses (margin ranking, hinge embedding,
soft margin, cosine embedding, triplet, multi-label soft margin) against PyTorch 2.13: values, every
gradient in float64, running statistics, module reprs and errors."""
import numpy as np
import pytest
import torch

import tinyattn

rng = np.random.default_rng(16)
X4 = rng.standard_normal((2, 8, 3, 2))
X3 = rng.standard_normal((2, 3, 5))
V = rng.standard_normal((4, 5))
W = rng.standard_normal((4, 5))
Y = np.array([1.0, -1.0, 1.0, -1.0])


def both(fn, *arrays):
    res = []
    for lib in (torch, tinyattn):
        ts = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        out = fn(lib, *ts)
        out.backward(lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)), dtype=lib.float64))
        res.append([out.detach().numpy()] + [t.grad.numpy() for t in ts])
    return res


CASES = [("pixel_shuffle", lambda l, x: l.nn.functional.pixel_shuffle(x, 2), (X4,)),
         ("pixel_unshuffle", lambda l, x: l.nn.functional.pixel_unshuffle(x.reshape(2, 2, 6, 4), 2), (X4,)),
         ("pixel_shuffle 3d", lambda l, x: l.nn.functional.pixel_shuffle(x[0], 2), (X4,)),
         ("instance_norm", lambda l, x: l.nn.functional.instance_norm(x), (X3,)),
         ("instance_norm affine", lambda l, x, w: l.nn.functional.instance_norm(x, weight=w[0, :3], bias=w[1, :3]), (X4[:, :3], W)),
         ("margin_ranking", lambda l, a, b: l.nn.functional.margin_ranking_loss(a[:, 0], b[:, 0], l.tensor(Y), 0.3,
                                                                                reduction="none"), (V, W)),
         ("hinge_embedding", lambda l, a: l.nn.functional.hinge_embedding_loss(a, l.tensor(np.sign(W)), margin=0.5), (V,)),
         ("soft_margin", lambda l, a: l.nn.functional.soft_margin_loss(a, l.tensor(np.sign(W)), reduction="sum"), (V,)),
         ("cosine_embedding", lambda l, a, b: l.nn.functional.cosine_embedding_loss(a, b, l.tensor(Y), -0.2,
                                                                                    reduction="none"), (V, W)),
         ("triplet", lambda l, a, b: l.nn.functional.triplet_margin_loss(a, b, a.flip(0), margin=2.0), (V, W)),
         ("triplet swap p1", lambda l, a, b: l.nn.functional.triplet_margin_loss(a, b, b.flip(0), p=1, swap=True,
                                                                                 reduction="none"), (V, W)),
         ("multilabel_soft_margin", lambda l, a: l.nn.functional.multilabel_soft_margin_loss(
             a, l.tensor((W > 0).astype(float)), weight=l.tensor(np.linspace(0.5, 2, 5))), (V,))]


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_values_and_every_gradient_match_pytorch(name, fn, arrays):
    want, got = both(fn, *arrays)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)


def test_instance_norm_running_statistics_and_eval_match_pytorch():
    got = []
    for lib in (torch, tinyattn):
        m = lib.nn.InstanceNorm1d(3, affine=True, track_running_stats=True).double()
        m(lib.tensor(X3))
        m(lib.tensor(X3 * 2 + 1))
        m.eval()
        y = m(lib.tensor(X3))
        got.append((m.running_mean.numpy(), m.running_var.numpy(), y.detach().numpy(),
                    m(lib.tensor(X3[0])).detach().numpy(), sorted(m.state_dict())))
    for a, b in zip(got[1][:4], got[0][:4]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)
    assert got[1][4] == got[0][4]


@pytest.mark.parametrize("make", [lambda nn: nn.PixelShuffle(3), lambda nn: nn.PixelUnshuffle(2), lambda nn: nn.InstanceNorm1d(4),
                                  lambda nn: nn.InstanceNorm2d(3, affine=True), lambda nn: nn.InstanceNorm3d(2, track_running_stats=True),
                                  lambda nn: nn.MarginRankingLoss(0.5), lambda nn: nn.TripletMarginLoss(), lambda nn: nn.CosineEmbeddingLoss(),
                                  lambda nn: nn.HingeEmbeddingLoss(), lambda nn: nn.SoftMarginLoss(), lambda nn: nn.MultiLabelSoftMarginLoss()])
def test_modules_repr(make):
    assert repr(make(tinyattn.nn)) == repr(make(torch.nn))


ERRORS = [(lambda l: l.nn.functional.pixel_shuffle(l.ones(1, 3, 2, 2), 2), RuntimeError, "divisible by the square of"),
          (lambda l: l.nn.functional.pixel_unshuffle(l.ones(1, 1, 3, 4), 2), RuntimeError,
           "expects height to be divisible by downscale_factor"),
          (lambda l: l.nn.InstanceNorm1d(3, affine=True)(l.ones(2, 4, 5)), ValueError, "to match num_features"),
          (lambda l: l.nn.InstanceNorm1d(3)(l.ones(5)), ValueError, "expected 2D or 3D input")]


@pytest.mark.parametrize("call,exc,text", ERRORS)
def test_errors_are_pytorchs(call, exc, text):
    for lib in (torch, tinyattn):
        with pytest.raises(exc, match=text):
            call(lib)


def test_bilinear_and_batchnorm3d_match_pytorch():
    x1, x2, w, b = rng.standard_normal((4, 2)), rng.standard_normal((4, 3)), rng.standard_normal((5, 2, 3)), rng.standard_normal(5)
    got = []
    for lib in (torch, tinyattn):
        ts = [lib.tensor(a, requires_grad=True) for a in (x1, x2, w, b)]
        out = lib.nn.functional.bilinear(*ts)
        out.backward(lib.tensor(np.cos(np.arange(20.0)).reshape(4, 5)))
        bn = lib.nn.BatchNorm3d(3).double()
        y = bn(lib.tensor(rng_fixed))
        got.append([out.detach().numpy()] + [t.grad.numpy() for t in ts] + [y.detach().numpy(), bn.running_var.numpy()])
        m = lib.nn.Bilinear(2, 3, 5)
        assert np.abs(m.weight.detach().numpy()).max() <= 1 / np.sqrt(2) and tuple(m.bias.shape) == (5,)
    for a, c in zip(*got):
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-12)
    assert repr(tinyattn.nn.Bilinear(2, 3, 5, bias=False)) == repr(torch.nn.Bilinear(2, 3, 5, bias=False))
    assert repr(tinyattn.nn.BatchNorm3d(4)) == repr(torch.nn.BatchNorm3d(4))


rng_fixed = np.random.default_rng(18).standard_normal((2, 3, 2, 3, 2))


@pytest.mark.parametrize("name,args", [("relu_", ()), ("leaky_relu_", (0.2,)), ("elu_", (0.5,)), ("celu_", (2.0,)),
                                       ("selu_", ()), ("hardtanh_", (-0.5, 0.7)), ("threshold_", (0.1, -3.0))])
def test_in_place_functional_activations_match_pytorch(name, args):
    got = []
    for lib in (torch, tinyattn):
        a = lib.tensor(V, requires_grad=True)
        y = a * 1
        out = getattr(lib.nn.functional, name)(y, *args)
        assert out is y
        (y * lib.tensor(W)).sum().backward()
        got.append((y.detach().numpy(), a.grad.numpy()))
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            getattr(lib.nn.functional, name)(lib.ones(2, requires_grad=True), *args)
    for x, z in zip(*got):
        np.testing.assert_allclose(x, z, rtol=1e-14, atol=1e-15)
