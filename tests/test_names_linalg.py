"""tinyattn/linalg.py without PyTorch: values against NumPy's linalg, every gradient by finite
differences in float64 (cholesky through A = M M^T + 3 I, so that the input stays symmetric)."""
import numpy as np
import pytest

import tinyattn
from tinyattn import gradcheck, linalg

rng = np.random.default_rng(14)
M = rng.standard_normal((2, 3, 3))
SPD = M @ M.transpose(0, 2, 1) + 3 * np.eye(3)
RHS = rng.standard_normal((2, 3, 2))


def t(a):
    return tinyattn.tensor(a, dtype=tinyattn.float64, requires_grad=True)


def test_values_are_numpys():
    np.testing.assert_allclose(linalg.inv(t(M)).numpy(), np.linalg.inv(M), rtol=1e-12)
    np.testing.assert_allclose(linalg.det(t(M)).numpy(), np.linalg.det(M), rtol=1e-12)
    sign, logabs = linalg.slogdet(t(M))
    np.testing.assert_allclose(sign.numpy() * np.exp(logabs.numpy()), np.linalg.det(M), rtol=1e-12)
    np.testing.assert_allclose(linalg.solve(t(M), t(RHS)).numpy(), np.linalg.solve(M, RHS), rtol=1e-12)
    low = linalg.cholesky(t(SPD)).numpy()
    np.testing.assert_allclose(low @ low.transpose(0, 2, 1), SPD, rtol=1e-12)
    assert np.allclose(np.triu(low, 1), 0)
    np.testing.assert_allclose(tinyattn.cholesky_inverse(tinyattn.tensor(low)).numpy(), np.linalg.inv(SPD), rtol=1e-12)
    np.testing.assert_allclose(linalg.norm(t(M)).item(), np.linalg.norm(M.ravel()), rtol=1e-14)
    np.testing.assert_allclose(linalg.matrix_norm(t(M)).numpy(), np.linalg.norm(M, "fro", axis=(1, 2)), rtol=1e-14)
    assert np.isnan(tinyattn.logdet(tinyattn.tensor([[-2.0, 0.0], [0.0, 3.0]])).item())


def test_gradients_are_finite_differences():
    assert gradcheck(lambda a: linalg.inv(a), (t(M),))
    assert gradcheck(lambda a: linalg.det(a), (t(M),))
    assert gradcheck(lambda a: linalg.slogdet(a)[1], (t(M),))
    assert gradcheck(lambda a, b: linalg.solve(a, b), (t(M), t(RHS)))
    assert gradcheck(lambda a, b: linalg.solve(a, b[..., 0]), (t(M), t(RHS)))
    assert gradcheck(lambda m: linalg.cholesky(m @ m.mT + 3 * tinyattn.eye(3, dtype=tinyattn.float64)), (t(M),))
    assert gradcheck(lambda m: linalg.vector_norm(m, 3, dim=-1), (t(M),))


def test_errors():
    with pytest.raises(linalg.LinAlgError, match="singular"):
        linalg.inv(tinyattn.zeros(2, 2))
    with pytest.raises(linalg.LinAlgError, match="positive-definite"):
        linalg.cholesky(tinyattn.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(RuntimeError, match="square matrices"):
        linalg.det(tinyattn.ones(2, 3))
    with pytest.raises(NotImplementedError, match="ord='fro' is"):
        linalg.matrix_norm(tinyattn.ones(2, 2), ord=2)
