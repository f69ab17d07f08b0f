"""nn/more_losses.py against PyTorch 2.13: BCE (probabilities and logits, weight, pos_weight, the clamped
logs at 0 and 1), smooth L1 / Huber at their kinks, cosine similarity with the eps clamp, pairwise
distance: values, dtypes, the gradient of every input, module reprs and the errors."""
import numpy as np
import pytest
import torch

import tinyattn

P = np.array([[0.0, 0.3, 1.0, 0.5], [0.9, 1e-13, 0.2, 0.7]])
Y = np.array([[1.0, 0.5, 0.0, 0.5], [1.0, 0.0, 0.3, 1.0]])
Z = np.array([[-200.0, -1.0, 0.0, 3.0], [200.0, 0.5, -40.0, 1e-3]])
D = np.array([[0.0, 0.5, 2.0, -1.0], [-0.5, 0.25, -3.0, 1.0]])


def run(lib, fn, arrays, dtype, **kw):
    ts = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in arrays]
    kw = {k: lib.tensor(v, dtype=getattr(lib, dtype)) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    out = getattr(lib.nn.functional, fn)(*ts, **kw)
    out.backward(lib.ones_like(out) * 1.5)
    return out.detach().numpy(), [t.grad.numpy() for t in ts], str(out.dtype).split(".")[-1]


CASES = [("binary_cross_entropy", (P, Y), {}), ("binary_cross_entropy", (P, Y), {"reduction": "none"}),
         ("binary_cross_entropy", (P, Y), {"weight": np.array([1.0, 2.0, 0.5, 3.0]), "reduction": "sum"}),
         ("binary_cross_entropy_with_logits", (Z, Y), {}),
         ("binary_cross_entropy_with_logits", (Z, Y), {"reduction": "none", "pos_weight": np.array([2.0, 0.5, 1., 3.])}),
         ("binary_cross_entropy_with_logits", (Z, Y), {"weight": np.array([[2.0], [0.5]]), "reduction": "sum"}),
         ("smooth_l1_loss", (D, np.zeros_like(D)), {}), ("smooth_l1_loss", (D, Y), {"beta": 0.5, "reduction": "none"}),
         ("smooth_l1_loss", (D, Y), {"beta": 0.0}), ("huber_loss", (D, np.zeros_like(D)), {"delta": 0.5}),
         ("huber_loss", (D, Y), {"delta": 2.0, "reduction": "sum"}),
         ("huber_loss", (D, Y), {"weight": np.array([[1.0, 2.0, 3.0, 4.0], [0.5, 0.0, 1.0, 2.0]])}),
         ("l1_loss", (D, Y), {"reduction": "none"}),
         ("cosine_similarity", (D, Z), {}), ("cosine_similarity", (D, Y), {"dim": 0}),
         ("cosine_similarity", (np.array([[1e-5, 0.0], [3.0, 4.0]]), np.array([[2e-5, 1e-9], [1.0, 0.0]])),
          {"eps": 1e-4}),
         ("pairwise_distance", (D, Y), {}), ("pairwise_distance", (D, Y), {"p": 1.0, "keepdim": True}),
         ("pairwise_distance", (D, Y), {"p": 3.0})]


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-13), ("float32", 2e-5)])
@pytest.mark.parametrize("fn,arrays,kw", CASES)
def test_values_dtypes_and_every_gradient_match_pytorch(fn, arrays, kw, dtype, tol):
    (vt, gt, dt), (va, ga, da) = run(torch, fn, arrays, dtype, **kw), run(tinyattn, fn, arrays, dtype, **kw)
    assert da == dt
    np.testing.assert_allclose(va, vt, rtol=tol, atol=tol)
    for a, t in zip(ga, gt):
        np.testing.assert_allclose(a, t, rtol=tol, atol=tol)


def test_bce_gradients_at_probability_0_and_1_are_pytorchs():
    # there the loss is the clamped 100 but the gradient is (p - y) / max(p (1 - p), 1e-12) and log(1-p) - log p
    (vt, gt, _), (va, ga, _) = [run(lib, "binary_cross_entropy", (P[:1], Y[:1]), "float64", reduction="none")
                                for lib in (torch, tinyattn)]
    np.testing.assert_array_equal(va, vt)
    for a, t in zip(ga, gt):  # +-inf and 1e12-sized entries, equal; the finite ones to rounding
        np.testing.assert_allclose(a, t, rtol=1e-15, atol=0)


def test_cosine_similarity_broadcasts():
    a, b = np.random.default_rng(0).standard_normal((2, 3, 1, 4))
    got = [lib.nn.functional.cosine_similarity(lib.tensor(a), lib.tensor(b[:, 0]), dim=-1).numpy()
           for lib in (torch, tinyattn)]
    assert got[0].shape == got[1].shape == (3, 3)
    np.testing.assert_allclose(got[1], got[0], rtol=1e-6, atol=1e-7)


MODULES = [("BCELoss", ()), ("BCEWithLogitsLoss", ()), ("L1Loss", ()), ("SmoothL1Loss", ()), ("HuberLoss", ()),
           ("CosineSimilarity", ()), ("PairwiseDistance", ())]


@pytest.mark.parametrize("name,args", MODULES)
def test_modules_repr_and_call(name, args):
    mt, ma = getattr(torch.nn, name)(*args), getattr(tinyattn.nn, name)(*args)
    assert repr(ma) == repr(mt)
    a, b = Y, np.clip(P, 0.1, 0.9)
    assert np.allclose(ma(tinyattn.tensor(b), tinyattn.tensor(a)).numpy(), mt(torch.tensor(b), torch.tensor(a)).numpy(),
                       rtol=1e-14, atol=1e-14)


def test_modules_hold_weight_and_pos_weight_as_buffers():
    w = np.array([2.0, 1.0, 0.5, 1.0])
    mt = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(w))
    ma = tinyattn.nn.BCEWithLogitsLoss(pos_weight=tinyattn.tensor(w))
    assert list(ma.state_dict()) == list(mt.state_dict()) == ["pos_weight"]
    assert np.isclose(ma(tinyattn.tensor(Z), tinyattn.tensor(Y)).item(), mt(torch.tensor(Z), torch.tensor(Y)).item(),
                      rtol=1e-14)


ERRORS = [
    ("binary_cross_entropy", (np.ones(3) * 0.5, np.ones((3, 1))), {}, ValueError, "Please ensure they have the same size"),
    ("binary_cross_entropy", (np.array([1.5]), np.array([1.0])), {}, RuntimeError, "between 0 and 1"),
    ("binary_cross_entropy", (np.array([0.5]), np.array([1.5])), {}, RuntimeError, "between 0 and 1"),
    ("binary_cross_entropy", (np.array([0.5]), np.array([1.0])), {"reduction": "x"}, ValueError,
     "x is not a valid value for reduction"),
    ("binary_cross_entropy_with_logits", (np.ones(3), np.ones((3, 1))), {}, ValueError,
     "must be the same as input size"),
    ("smooth_l1_loss", (np.ones(3), np.ones(3)), {"beta": -1.0}, RuntimeError, "negative values for beta"),
    ("huber_loss", (np.ones(3), np.ones(3)), {"delta": 0.0}, RuntimeError, "non-positive values for delta"),
]


@pytest.mark.parametrize("fn,arrays,kw,exc,text", ERRORS)
def test_errors_are_pytorchs(fn, arrays, kw, exc, text):
    for lib in (torch, tinyattn):
        with pytest.raises(exc, match=text):
            getattr(lib.nn.functional, fn)(*[lib.tensor(a) for a in arrays], **kw)


def test_a_weight_that_requires_grad_is_refused_as_in_pytorch():
    for lib in (torch, tinyattn):
        w = lib.ones(3, dtype=lib.float64, requires_grad=True)
        with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'weight'"):
            lib.nn.functional.binary_cross_entropy_with_logits(lib.zeros(3, dtype=lib.float64),
                                                               lib.ones(3, dtype=lib.float64), weight=w)


@pytest.mark.parametrize("var_shape,kw", [((2, 4), {}), ((2,), {"full": True}), ((2, 1), {"reduction": "sum"}),
                                          ((1, 4), {"reduction": "none", "eps": 0.5})])
def test_gaussian_nll_loss_values_and_gradients_of_input_target_and_var(var_shape, kw):
    var = np.abs(np.cos(np.arange(np.prod(var_shape)))).reshape(var_shape) + 0.01  # some below eps=0.5
    got = []
    for lib in (torch, tinyattn):
        x, y, v = (lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in (D[:, :4], Y[:, :4], var))
        out = lib.nn.functional.gaussian_nll_loss(x, y, v, **kw)
        out.backward(lib.ones_like(out))
        got.append([out.detach().numpy(), x.grad.numpy(), y.grad.numpy(), v.grad.numpy()])
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)
    mt, ma = torch.nn.GaussianNLLLoss(full=True), tinyattn.nn.GaussianNLLLoss(full=True)
    assert repr(ma) == repr(mt)


@pytest.mark.parametrize("var,exc,text", [(np.full((2, 3), 1.0), ValueError, "var is of incorrect size"),
                                          (-np.ones((2, 4)), ValueError, "negative entry")])
def test_gaussian_nll_loss_errors(var, exc, text):
    for lib in (torch, tinyattn):
        with pytest.raises(exc, match=text):
            lib.nn.functional.gaussian_nll_loss(lib.tensor(D), lib.tensor(Y), lib.tensor(var))
