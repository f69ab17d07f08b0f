"""torch.einsum's broadcasting of size-1 dims and its repeated letters (diagonals, traces), with gradients.

The expectations are written with plain NumPy indexing and sums, worked out from the rule in each test.
"""
import numpy as np
import pytest

import tinyattn as torch
from tinyattn.gradcheck import gradcheck

rng = np.random.default_rng(30)


def f64(*shape):
    return torch.tensor(rng.standard_normal(shape), requires_grad=True)


def test_a_size_1_letter_broadcasts_against_the_other_operand():
    # 'ij,jk->ik' with A (2, 1), B (3, 4): A's j stretches to 3, so out[i, k] = A[i, 0] * sum_j B[j, k]
    a, b = f64(2, 1), f64(3, 4)
    y = torch.einsum("ij,jk->ik", a, b)
    np.testing.assert_allclose(y.numpy(), a.numpy()[:, :1] * b.numpy().sum(0), rtol=1e-12)
    assert gradcheck(lambda a, b: torch.einsum("ij,jk->ik", a, b), [a, b])


def test_size_1_on_both_sides_makes_an_outer_shape():
    # 'ij,ij->ij' with (2, 1) and (1, 3): out[i, j] = a[i, 0] * b[0, j]
    a, b = f64(2, 1), f64(1, 3)
    y = torch.einsum("ij,ij->ij", a, b)
    np.testing.assert_allclose(y.numpy(), a.numpy() * b.numpy(), rtol=1e-12)
    assert gradcheck(lambda a, b: torch.einsum("ij,ij->ij", a, b), [a, b])


def test_the_ellipsis_dims_broadcast_from_the_right():
    # '...ij,...jk' with (2, 1, 2, 3) and (5, 3, 4): the '...' dims (2, 1) and (5,) broadcast to (2, 5)
    a, b = f64(2, 1, 2, 3), f64(5, 3, 4)
    y = torch.einsum("...ij,...jk", a, b)
    assert y.shape == (2, 5, 2, 4)
    np.testing.assert_allclose(y.numpy(), a.numpy() @ b.numpy(), rtol=1e-12)  # matmul broadcasts the same way
    assert gradcheck(lambda a, b: torch.einsum("...ij,...jk", a, b), [a, b])


def test_a_repeated_letter_reads_the_diagonal():
    a = f64(3, 3)
    A = a.numpy()
    np.testing.assert_allclose(torch.einsum("ii->i", a).numpy(), [A[0, 0], A[1, 1], A[2, 2]], rtol=1e-12)
    assert gradcheck(lambda a: torch.einsum("ii->i", a), [a])


def test_a_repeated_letter_with_no_output_is_the_trace():
    a = f64(3, 3)
    A = a.numpy()
    assert torch.einsum("ii", a).shape == ()  # i appears twice: summed, as in PyTorch's implicit output
    np.testing.assert_allclose(torch.einsum("ii", a).item(), A[0, 0] + A[1, 1] + A[2, 2], rtol=1e-12)
    np.testing.assert_allclose(torch.einsum("ii->", a).item(), A[0, 0] + A[1, 1] + A[2, 2], rtol=1e-12)
    a.grad = None
    torch.einsum("ii", a).backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.eye(3))  # d trace / dA = I
    assert gradcheck(lambda a: torch.einsum("ii", a), [a])


def test_a_diagonal_with_other_letters_and_other_operands():
    x = f64(2, 2, 3)  # 'iij->ij': out[i, j] = x[i, i, j]
    np.testing.assert_allclose(torch.einsum("iij->ij", x).numpy(), x.numpy()[[0, 1], [0, 1]], rtol=1e-12)
    y = f64(3, 4, 3)  # 'i...i': the trace over the first and last dims, for each '...' entry
    np.testing.assert_allclose(torch.einsum("i...i", y).numpy(), sum(y.numpy()[i, :, i] for i in range(3)), rtol=1e-12)
    a, v = f64(3, 3), f64(3)  # 'ii,i->': sum_i a[i, i] v[i]
    np.testing.assert_allclose(torch.einsum("ii,i->", a, v).item(), float(np.diag(a.numpy()) @ v.numpy()), rtol=1e-12)
    assert gradcheck(lambda x: torch.einsum("iij->ij", x), [x])
    assert gradcheck(lambda y: torch.einsum("i...i", y), [y])
    assert gradcheck(lambda a, v: torch.einsum("ii,i->", a, v), [a, v])


def test_sizes_that_neither_match_nor_are_1_are_refused():
    with pytest.raises(ValueError, match=r"letter 'j' is size 2 in one operand and 3 in operand 1 .* \(or be 1"):
        torch.einsum("ij,jk->ik", torch.ones(2, 2), torch.ones(3, 4))
    with pytest.raises(ValueError, match="must use each letter of the operands at most once"):
        torch.einsum("ij->ii", torch.ones(2, 2))


def test_operands_of_different_dtypes_are_refused_as_in_matmul():
    with pytest.raises(RuntimeError, match="einsum operands 0 and 1 must have the same dtype, but got Float and Double"):
        torch.einsum("ij,jk->ik", torch.ones(2, 3), torch.ones(3, 4, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="but got Float and Long"):
        torch.einsum("i,i", torch.ones(3), torch.tensor([1, 2, 3]))
