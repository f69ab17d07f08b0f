"""tinyattn/linalg_eig.py against PyTorch 2.13: matrix_exp (function, linalg name, method; batched, large norms,
empty), linalg.eigh and eigvalsh (both triangles); values and every gradient in float64, dtypes, and the errors'
types and words. Eigenvectors are compared column by column up to sign (LAPACK's choice in both), their
gradients through a sign-blind loss sum(W * V**2)."""
import numpy as np
import pytest
import torch

import tinyattn

rng = np.random.default_rng(21)
M = rng.standard_normal((2, 4, 4))
BIG = np.array([[0.0, 40.0, 1.0], [-40.0, 0.5, 2.0], [3.0, -1.0, -2.0]])  # 1-norm 41: 7 squarings
W = np.cos(np.arange(32.0)).reshape(2, 4, 4)


def grads_of(lib, fn, a, weights):
    t = lib.tensor(a, dtype=lib.float64, requires_grad=True)
    out = fn(lib, t)
    (out * lib.tensor(weights[..., :out.shape[-2], :out.shape[-1]] if out.ndim > 1 else weights[0, 0, :out.shape[-1]])
     ).sum().backward()
    return out.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("name,fn,a", [
    ("matrix_exp", lambda l, a: l.matrix_exp(a), M),
    ("linalg.matrix_exp", lambda l, a: l.linalg.matrix_exp(a), M),
    ("method", lambda l, a: a.matrix_exp(), BIG),
    ("skew gives orthogonal", lambda l, a: l.matrix_exp(a.triu(1) - a.triu(1).mT), M),
    ("1x1", lambda l, a: l.matrix_exp(a[..., :1, :1]), M),
    ("eigvalsh L", lambda l, a: l.linalg.eigvalsh(a), M),
    ("eigvalsh U", lambda l, a: l.linalg.eigvalsh(a, UPLO="U"), M),
    ("eigh values", lambda l, a: l.linalg.eigh(a).eigenvalues, M),
    ("eigh vectors squared", lambda l, a: l.linalg.eigh(a)[1] ** 2, M),
    ("eigh U vectors squared", lambda l, a: l.linalg.eigh(a, "U").eigenvectors ** 2, M),
])
def test_values_and_gradients_match_pytorch(name, fn, a):
    want, gwant = grads_of(torch, fn, a, W)
    got, ggot = grads_of(tinyattn, fn, a, W)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ggot, gwant, rtol=1e-9, atol=1e-11)


def test_eigenvectors_match_up_to_sign_and_the_tuple_names():
    a = M + M.transpose(0, 2, 1)
    want = torch.linalg.eigh(torch.tensor(a))
    got = tinyattn.linalg.eigh(tinyattn.tensor(a))
    assert got._fields == ("eigenvalues", "eigenvectors") and len(got) == 2
    v, w = got.eigenvectors.numpy(), want.eigenvectors.numpy()
    signs = np.sign((v * w).sum(-2, keepdims=True))
    np.testing.assert_allclose(v * signs, w, atol=1e-12)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_dtypes_match(dt):
    for fn in (lambda l, a: l.matrix_exp(a), lambda l, a: l.linalg.eigvalsh(a), lambda l, a: l.linalg.eigh(a)[1]):
        want = fn(torch, torch.tensor(M).to(getattr(torch, dt)))
        got = fn(tinyattn, tinyattn.tensor(M).to(getattr(tinyattn, dt)))
        assert str(got.dtype) == str(want.dtype).split(".")[-1]
    for shape in [(0, 0), (2, 0, 0)]:
        assert tuple(tinyattn.matrix_exp(tinyattn.zeros(*shape)).shape) == tuple(torch.matrix_exp(torch.zeros(*shape)).shape)


@pytest.mark.parametrize("call", [
    lambda l: l.matrix_exp(l.ones(2, 3)), lambda l: l.matrix_exp(l.ones(3)), lambda l: l.matrix_exp(l.tensor(2.0)),
    lambda l: l.matrix_exp(l.ones(2, 2, dtype=l.int64)), lambda l: l.linalg.eigh(l.ones(2, 3)),
    lambda l: l.linalg.eigh(l.ones(3)), lambda l: l.linalg.eigvalsh(l.ones(2, 2, dtype=l.int64)),
    lambda l: l.linalg.eigvalsh(l.ones(2, 2, dtype=l.float16)), lambda l: l.linalg.eigh(l.eye(2), UPLO="X"),
    lambda l: l.linalg.eigvalsh(l.ones(2, 3)),
])
def test_errors_match(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(tinyattn)
    assert str(want.value) in str(got.value)


def test_nan_and_inf_give_all_nan_as_pytorch():
    for bad in (float("nan"), float("inf")):
        a = np.array([[bad, 0.0], [0.0, 1.0]])
        assert np.isnan(tinyattn.matrix_exp(tinyattn.tensor(a)).numpy()).all()
        assert np.isnan(torch.matrix_exp(torch.tensor(a)).numpy()).all()
