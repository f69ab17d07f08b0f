"""The pointwise activations of nn/activations.py: values against NumPy written from each definition,
gradients by finite differences (float64, every element, away from the kinks), PyTorch's slope AT the
kinks (stated in the docstrings; measured on torch 2.13), the modules' reprs, and errors."""
import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn import gradcheck

X = np.array([-25.0, -4.0, -2.5, -1.0, -0.5, -0.1, 0.25, 0.7, 1.0, 2.9, 3.5, 6.5, 25.0])
SIG = 1 / (1 + np.exp(-X))
SP = np.log1p(np.exp(X))
A, S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
REFERENCE = {
    "hardtanh": (lambda t: F.hardtanh(t, -2.0, 3.0), np.clip(X, -2, 3)),
    "relu6": (F.relu6, np.clip(X, 0, 6)),
    "hardsigmoid": (F.hardsigmoid, np.clip(X / 6 + 0.5, 0, 1)),
    "hardswish": (F.hardswish, X * np.clip(X + 3, 0, 6) / 6),
    "leaky_relu": (lambda t: F.leaky_relu(t, 0.2), np.where(X > 0, X, 0.2 * X)),
    "elu": (lambda t: F.elu(t, 0.5), np.where(X > 0, X, 0.5 * (np.exp(X) - 1))),
    "selu": (F.selu, S * np.where(X > 0, X, A * (np.exp(X) - 1))),
    "celu": (lambda t: F.celu(t, 2.0), np.maximum(X, 0) + np.minimum(0, 2 * (np.exp(X / 2) - 1))),
    "mish": (F.mish, X * np.tanh(SP)),
    "softsign": (F.softsign, X / (1 + np.abs(X))),
    "tanhshrink": (F.tanhshrink, X - np.tanh(X)),
    "softshrink": (lambda t: F.softshrink(t, 0.4), np.sign(X) * np.maximum(np.abs(X) - 0.4, 0)),
    "hardshrink": (lambda t: F.hardshrink(t, 1.5), np.where(np.abs(X) > 1.5, X, 0)),
    "threshold": (lambda t: F.threshold(t, 0.5, -7.0), np.where(X > 0.5, X, -7.0)),
}


@pytest.mark.parametrize("name", list(REFERENCE))
def test_values_and_gradients(name):
    fn, want = REFERENCE[name]
    np.testing.assert_allclose(fn(tinyattn.tensor(X)).numpy(), want, rtol=1e-13, atol=1e-15)
    x = tinyattn.tensor(X, requires_grad=True)  # no point of X sits on a kink, so differences are valid
    assert gradcheck(fn, (x,))
    assert fn(tinyattn.tensor(X, dtype=tinyattn.float32)).dtype == tinyattn.float32


def _grad(fn, values):
    x = tinyattn.tensor(np.array(values), requires_grad=True)
    fn(x).sum().backward()
    return x.grad.numpy().tolist()


def test_slopes_at_the_kinks_are_pytorchs():
    assert _grad(F.hardtanh, [-1.0, 1.0]) == [0.0, 0.0]
    assert _grad(F.relu6, [0.0, 6.0]) == [0.0, 0.0]
    assert _grad(F.hardswish, [-3.0, 3.0]) == [0.0, 1.0]
    assert _grad(F.softshrink, [-0.5, 0.5]) == [0.0, 0.0]
    assert _grad(F.leaky_relu, [0.0]) == [0.01]
    assert _grad(F.elu, [0.0]) == [1.0]
    hs = _grad(F.hardsigmoid, [-3.0, 0.0, 3.0])
    assert hs[0] == hs[2] == 0.0 and hs[1] == float(np.float32(1) / np.float32(6))  # single-precision 1/6


def test_glu_softmin_prelu():
    z = np.random.default_rng(0).standard_normal((2, 4, 3))
    a, b = z[:, :2], z[:, 2:]
    np.testing.assert_allclose(F.glu(tinyattn.tensor(z), 1).numpy(), a / (1 + np.exp(-b)), rtol=1e-14)
    e = np.exp(-z)
    np.testing.assert_allclose(F.softmin(tinyattn.tensor(z), 2).numpy(), e / e.sum(2, keepdims=True), rtol=1e-14)
    w = np.array([0.1, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(F.prelu(tinyattn.tensor(z), tinyattn.tensor(w)).numpy(),
                               np.where(z > 0, z, z * w[None, :, None]), rtol=1e-15)
    zt, wt = tinyattn.tensor(z, requires_grad=True), tinyattn.tensor(w, requires_grad=True)
    assert gradcheck(lambda p, q: F.prelu(p, q), (zt, wt))
    assert gradcheck(lambda p: F.glu(p, 1), (zt,))
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is size 3"):
        F.glu(tinyattn.randn(2, 3), 1)


def test_modules_and_their_reprs():
    x = tinyattn.tensor(X)
    assert repr(nn.LeakyReLU(0.2, inplace=True)) == "LeakyReLU(negative_slope=0.2, inplace=True)"
    assert repr(nn.ReLU6()) == "ReLU6()" and repr(nn.Hardswish()) == "Hardswish()"
    assert repr(nn.Hardtanh()) == "Hardtanh(min_val=-1.0, max_val=1.0)"
    assert repr(nn.Softshrink()) == "Softshrink(0.5)" and repr(nn.ELU(0.5)) == "ELU(alpha=0.5)"
    assert repr(nn.Threshold(0.1, 20.0)) == "Threshold(threshold=0.1, value=20.0)"
    assert repr(nn.PReLU(3)) == "PReLU(num_parameters=3)" and repr(nn.Softplus()) == "Softplus(beta=1.0, threshold=20.0)"
    np.testing.assert_array_equal(nn.LeakyReLU(0.2)(x).numpy(), F.leaky_relu(x, 0.2).numpy())
    np.testing.assert_array_equal(nn.Hardswish()(x).numpy(), F.hardswish(x).numpy())
    np.testing.assert_array_equal(nn.GLU(0)(x[:12]).numpy(), F.glu(x[:12], 0).numpy())
    np.testing.assert_array_equal(nn.LogSigmoid()(x).numpy(), F.logsigmoid(x).numpy())
    p = nn.PReLU()
    assert [k for k, _ in p.named_parameters()] == ["weight"] and p.weight.tolist() == [0.25]
    with pytest.raises(TypeError, match="unexpected keyword argument 'slope'"):
        nn.LeakyReLU(slope=0.1)
    with pytest.raises(TypeError, match="floating-point"):
        F.hardswish(tinyattn.tensor([1, 2]))
