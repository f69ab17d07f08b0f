"""matrix_exp, linalg.eigh / eigvalsh and nn.utils' clip_grad_value_, parameters_to_vector, vector_to_parameters,
parametrizations.weight_norm / spectral_norm without PyTorch: values by hand or by NumPy, every gradient by
float64 finite differences (tinyattn.gradcheck). Against PyTorch: tests/oracle/test_names_linalg_eig_torch.py and
tests/oracle/test_names_nn_utils_torch.py."""
import math

import numpy as np
import pytest

import tinyattn as torch
from tinyattn import gradcheck
from tinyattn.nn.utils import clip_grad_value_, parameters_to_vector, vector_to_parameters
from tinyattn.nn.utils.parametrizations import spectral_norm, weight_norm

rng = np.random.default_rng(3)


def leaf(*shape, scale=1.0):
    return torch.tensor(rng.standard_normal(shape) * scale, dtype=torch.float64, requires_grad=True)


# ------------------------------------------------------------------ matrix_exp
def test_matrix_exp_known_values():
    t = 0.7  # exp of [[0, t], [-t, 0]] is the rotation by t; of a diagonal, the exps of the diagonal
    rot = torch.matrix_exp(torch.tensor([[0.0, t], [-t, 0.0]], dtype=torch.float64))._data
    np.testing.assert_allclose(rot, [[math.cos(t), math.sin(t)], [-math.sin(t), math.cos(t)]], rtol=1e-15, atol=1e-16)
    d = torch.tensor(np.diag([1.0, -2.0, 0.0]))
    np.testing.assert_allclose(d.matrix_exp()._data, np.diag(np.exp([1.0, -2.0, 0.0])), rtol=1e-15, atol=1e-16)
    nil = torch.tensor([[0.0, 3.0], [0.0, 0.0]])  # nilpotent: exp = I + N exactly
    np.testing.assert_array_equal(torch.linalg.matrix_exp(nil)._data, [[1.0, 3.0], [0.0, 1.0]])
    # a large norm (7 squarings): the rotation by 50 radians, and det exp(A) = exp(trace A)
    big = torch.matrix_exp(torch.tensor([[0.0, 50.0], [-50.0, 0.0]], dtype=torch.float64))._data
    np.testing.assert_allclose(big, [[math.cos(50), math.sin(50)], [-math.sin(50), math.cos(50)]], atol=1e-13)
    A = rng.standard_normal((3, 3)) * 3
    np.testing.assert_allclose(np.linalg.det(torch.matrix_exp(torch.tensor(A))._data), np.exp(np.trace(A)), rtol=1e-12)


def test_matrix_exp_batched_dtypes_and_empty():
    A = rng.standard_normal((2, 3, 3))
    out = torch.matrix_exp(torch.tensor(A))._data
    for i in range(2):
        np.testing.assert_allclose(out[i], torch.matrix_exp(torch.tensor(A[i]))._data, rtol=1e-15)
    assert torch.matrix_exp(torch.ones(2, 2)).dtype == torch.float32
    assert torch.matrix_exp(torch.zeros(2, 0, 0)).shape == (2, 0, 0)


def test_matrix_exp_gradient_over_every_element():
    assert gradcheck(lambda a: torch.matrix_exp(a), [leaf(2, 3, 3)])
    assert gradcheck(lambda a: torch.matrix_exp(a), [leaf(4, 4, scale=3.0)])  # through squarings


def test_matrix_exp_errors_name_what_came():
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        torch.matrix_exp(torch.ones(3))
    with pytest.raises(RuntimeError, match="2 by 3 matrices"):
        torch.matrix_exp(torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="floating point or complex tensor as input. Got Long"):
        torch.matrix_exp(torch.ones(2, 2, dtype=torch.int64))


# ------------------------------------------------------------------ eigh / eigvalsh
def test_eigh_reconstructs_and_reads_one_triangle():
    A = rng.standard_normal((2, 4, 4))
    S = np.tril(A) + np.swapaxes(np.tril(A, -1), -1, -2)  # the symmetric matrix the lower triangle means
    L, V = torch.linalg.eigh(torch.tensor(A))
    np.testing.assert_allclose((V._data * L._data[..., None, :]) @ np.swapaxes(V._data, -1, -2), S, atol=1e-12)
    assert (np.diff(L._data, axis=-1) >= 0).all()  # ascending
    np.testing.assert_allclose(torch.linalg.eigvalsh(torch.tensor(A))._data, L._data, rtol=1e-13)
    U = np.triu(A) + np.swapaxes(np.triu(A, 1), -1, -2)
    np.testing.assert_allclose(torch.linalg.eigvalsh(torch.tensor(A), UPLO="U")._data, np.linalg.eigvalsh(U),
                               rtol=1e-13)
    two = torch.linalg.eigvalsh(torch.tensor([[2.0, 1.0], [1.0, 2.0]]))._data  # eigenvalues 1 and 3
    np.testing.assert_allclose(two, [1.0, 3.0], rtol=1e-6)


def test_eigh_gradients_over_every_element():
    x = leaf(2, 4, 4)
    assert gradcheck(lambda a: torch.linalg.eigvalsh(a + a.mT), [x])
    assert gradcheck(lambda a: torch.linalg.eigh(a + a.mT).eigenvalues, [x])
    # eigenvectors: sign-blind functions of them (a column's sign is LAPACK's choice)
    assert gradcheck(lambda a: torch.linalg.eigh(a + a.mT).eigenvectors ** 2, [x])
    assert gradcheck(lambda a: torch.linalg.eigh(a + a.mT, UPLO="U")[1] ** 2, [x])


def test_eigh_gradient_is_symmetric():
    A = leaf(3, 3)
    L, V = torch.linalg.eigh(A)
    (L * torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)).sum().add((V ** 2 * torch.arange(9.0).reshape(3, 3)
                                                                          ).sum()).backward()
    np.testing.assert_allclose(A.grad._data, A.grad._data.T, atol=1e-13)


def test_eigh_errors():
    with pytest.raises(NotImplementedError, match="linalg_eigh_cpu\" not implemented for 'Long'"):
        torch.linalg.eigvalsh(torch.ones(2, 2, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="UPLO argument to be 'L' or 'U', but got X"):
        torch.linalg.eigh(torch.eye(2), UPLO="X")
    with pytest.raises(RuntimeError, match="linalg.eigh: A must be batches of square matrices"):
        torch.linalg.eigvalsh(torch.ones(2, 3))


# ------------------------------------------------------------------ nn.utils
def test_clip_grad_value_clamps_in_place_and_skips_missing_grads():
    a, b = torch.nn.Parameter(torch.zeros(3)), torch.nn.Parameter(torch.zeros(2))
    a.grad = torch.tensor([-3.0, 0.2, 5.0])
    g = a.grad
    assert clip_grad_value_([a, b], 1.0) is None
    assert a.grad is g and b.grad is None
    np.testing.assert_array_equal(a.grad._data, np.array([-1.0, 0.2, 1.0], dtype=np.float32))
    clip_grad_value_(a, -0.5)
    np.testing.assert_array_equal(a.grad._data, [-0.5] * 3)


def test_parameters_to_vector_and_back():
    layer = torch.nn.Linear(3, 2).double()
    vec = parameters_to_vector(layer.parameters())
    np.testing.assert_array_equal(vec._data, np.concatenate([layer.weight._data.ravel(), layer.bias._data]))
    assert gradcheck(lambda w, b: parameters_to_vector([w, b]), [leaf(2, 3), leaf(2)])
    vector_to_parameters(torch.arange(9.0, dtype=torch.float64), layer.parameters())
    np.testing.assert_array_equal(layer.weight._data, [[0, 1, 2], [3, 4, 5]])
    np.testing.assert_array_equal(layer.bias._data, [6, 7])
    assert layer.weight.requires_grad and layer.weight.grad_fn is None
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        vector_to_parameters([1.0], layer.parameters())


@pytest.mark.parametrize("dim,g_shape", [(0, (3, 1)), (1, (1, 4)), (None, ()), (-1, ())])
def test_weight_norm_keeps_the_weight_and_splits_it(dim, g_shape):
    layer = torch.nn.Linear(4, 3).double()
    w0 = layer.weight._data.copy()
    weight_norm(layer, dim=dim)
    g, v = layer.parametrizations.weight.original0, layer.parametrizations.weight.original1
    assert tuple(g.shape) == g_shape and v.shape == (3, 4)
    np.testing.assert_allclose(layer.weight._data, w0, rtol=1e-14)
    axes = None if dim in (None, -1) else tuple(d for d in range(2) if d != dim)
    np.testing.assert_allclose(g._data, np.sqrt((w0 ** 2).sum(axis=axes, keepdims=axes is not None)), rtol=1e-14)
    assert gradcheck(lambda g, v: layer.weight, [g, v])


def test_spectral_norm_divides_by_the_largest_singular_value():
    layer = torch.nn.Linear(5, 4).double()
    spectral_norm(layer, n_power_iterations=30)
    W = layer.parametrizations.weight.original._data
    sigma = np.linalg.svd(W, compute_uv=False)[0]
    np.testing.assert_allclose(layer.weight._data, W / sigma, rtol=1e-6)
    assert np.linalg.svd(layer.weight._data, compute_uv=False)[0] == pytest.approx(1.0, rel=1e-6)
    layer.eval()  # no power iteration in eval: u and v are constants, so finite differences see the same function
    assert gradcheck(lambda w: layer.weight, [layer.parametrizations.weight.original])
    u = layer.parametrizations.weight[0]._u._data.copy()
    layer.weight
    np.testing.assert_array_equal(layer.parametrizations.weight[0]._u._data, u)  # eval: not updated
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        spectral_norm(torch.nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'nope'"):
        spectral_norm(torch.nn.Linear(2, 2), name="nope")


def test_the_deprecated_hook_weight_norm():
    layer = torch.nn.Linear(4, 3).double()
    w0 = layer.weight._data.copy()
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        torch.nn.utils.weight_norm(layer)
    assert [n for n, _ in layer.named_parameters()] == ["bias", "weight_g", "weight_v"]
    np.testing.assert_allclose(layer.weight_g._data, np.linalg.norm(w0, axis=1, keepdims=True), rtol=1e-14)
    x = torch.tensor(rng.standard_normal((2, 4)))
    np.testing.assert_allclose(layer(x)._data, x._data @ w0.T + layer.bias._data, rtol=1e-13)
    assert gradcheck(lambda g, v: layer(x), [layer.weight_g, layer.weight_v])
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"), pytest.warns(FutureWarning):
        torch.nn.utils.weight_norm(layer)
    torch.nn.utils.remove_weight_norm(layer)
    assert [n for n, _ in layer.named_parameters()] == ["bias", "weight"]
    np.testing.assert_allclose(layer.weight._data, w0, rtol=1e-14)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        torch.nn.utils.remove_weight_norm(layer)


def test_complex_matrices_are_refused_with_a_clear_error():
    z = torch.tensor(np.eye(2) + 1j * np.ones((2, 2)))
    for fn in (torch.matrix_exp, torch.linalg.eigvalsh, torch.linalg.eigh):
        with pytest.raises(NotImplementedError, match="of a complex matrix is not implemented in tinyattn"):
            fn(z)


def test_the_hook_spectral_norm():
    layer = torch.nn.Linear(5, 4).double()
    W = layer.weight._data.copy()
    torch.nn.utils.spectral_norm(layer, n_power_iterations=50)
    assert [n for n, _ in layer.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in layer.named_buffers()] == ["weight_u", "weight_v"]
    x = torch.tensor(rng.standard_normal((2, 5)))
    layer(x)  # training: 50 power-iteration steps, then W / sigma
    np.testing.assert_allclose(layer.weight._data, W / np.linalg.svd(W, compute_uv=False)[0], rtol=1e-8)
    layer.eval()  # no iteration in eval: finite differences see one function of weight_orig
    assert gradcheck(lambda w: layer(x), [layer.weight_orig])
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        torch.nn.utils.spectral_norm(layer)
    torch.nn.utils.remove_spectral_norm(layer)
    assert [n for n, _ in layer.named_parameters()] == ["bias", "weight"] and not list(layer.named_buffers())
    np.testing.assert_allclose(layer.weight._data, W / np.linalg.svd(W, compute_uv=False)[0], rtol=1e-8)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        torch.nn.utils.spectral_norm(torch.nn.Linear(2, 2), n_power_iterations=0)
