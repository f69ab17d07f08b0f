"""nn/activations.py against PyTorch 2.13: values, dtypes and gradients on a grid that includes every
kink (float64 to 1e-15 and float32 to 2 ulp-scale), module reprs, and the GLU error."""
import numpy as np
import pytest
import torch

import tinyattn

X = np.array([-25., -4., -3., -2.5, -1., -0.5, 0., 0.25, 0.5, 1., 2.9, 3., 3.5, 6., 7., 25.])
CASES = [("hardtanh", {}), ("hardtanh", {"min_val": -2., "max_val": 3.}), ("relu6", {}), ("hardsigmoid", {}),
         ("hardswish", {}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {}),
         ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {"alpha": 2.0}), ("mish", {}), ("softsign", {}),
         ("tanhshrink", {}), ("softshrink", {}), ("hardshrink", {"lambd": 1.0}),
         ("threshold", {"threshold": 0.5, "value": -1.0})]


@pytest.mark.parametrize("dtype,tol", [("float64", 2e-15), ("float32", 4e-7)])
@pytest.mark.parametrize("fn,kw", CASES)
def test_pointwise_same_as_pytorch(fn, kw, dtype, tol):
    got = []
    for lib in (torch, tinyattn):
        t = lib.tensor(X, dtype=getattr(lib, dtype), requires_grad=True)
        y = getattr(lib.nn.functional, fn)(t, **kw)
        y.backward(lib.ones_like(y) * 1.5)
        got.append((y.detach().numpy(), t.grad.numpy(), str(y.dtype).split(".")[-1]))
    (yt, gt, dt), (ya, ga, da) = got
    assert dt == da
    np.testing.assert_allclose(ya, yt, rtol=tol, atol=tol)
    np.testing.assert_allclose(ga, gt, rtol=tol, atol=tol)


MODULES = [("Hardtanh", ()), ("ReLU6", ()), ("ReLU6", (True,)), ("Hardsigmoid", ()), ("Hardswish", ()),
           ("LeakyReLU", (0.2, True)), ("LeakyReLU", ()), ("ELU", ()), ("ELU", (0.5,)), ("SELU", ()), ("CELU", ()),
           ("Mish", ()), ("Softsign", ()), ("Tanhshrink", ()), ("Softshrink", ()), ("Hardshrink", (1.0,)),
           ("Threshold", (0.1, 20.)), ("GLU", ()), ("Softmin", (1,)), ("PReLU", ()), ("PReLU", (3, 0.1)),
           ("Softplus", ()), ("Softplus", (2., 10.)), ("LogSigmoid", ())]


@pytest.mark.parametrize("name,args", MODULES)
def test_module_repr_and_parameters(name, args):
    mt, ma = getattr(torch.nn, name)(*args), getattr(tinyattn.nn, name)(*args)
    assert repr(ma) == repr(mt)
    assert [(k, tuple(p.shape), p.tolist()) for k, p in ma.named_parameters()] == \
           [(k, tuple(p.shape), p.tolist()) for k, p in mt.named_parameters()]


def test_glu_softmin_prelu_values_and_gradients():
    z = np.random.default_rng(0).standard_normal((2, 4, 3))
    w = np.array([0.1, 0.2, 0.3, 0.4])
    got = []
    for lib in (torch, tinyattn):
        F = lib.nn.functional
        t, wt = lib.tensor(z, requires_grad=True), lib.tensor(w, requires_grad=True)
        y = F.glu(t, 1).sum() + (F.softmin(t, dim=2) ** 2).sum() + (F.prelu(t, wt) ** 2).sum() + F.glu(t[..., :2]).sum()
        y.backward()
        got.append((y.item(), t.grad.numpy(), wt.grad.numpy()))
    assert got[1][0] == pytest.approx(got[0][0], rel=1e-14)
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(got[1][2], got[0][2], rtol=1e-13, atol=1e-15)
    for lib in (torch, tinyattn):
        with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 3"):
            lib.nn.functional.glu(lib.randn(2, 3), 1)
