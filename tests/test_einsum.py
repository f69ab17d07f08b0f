"""torch.einsum: the attention products written as equations, their gradients, and clear errors."""
import numpy as np
import pytest

import tinyattn as torch
from tinyattn.gradcheck import gradcheck

rng = np.random.default_rng(17)


def f64(*shape):
    return torch.tensor(rng.standard_normal(shape), requires_grad=True)


def test_attention_scores_and_the_weighted_sum_as_equations():
    q, k, v = f64(2, 3, 5, 4), f64(2, 3, 6, 4), f64(2, 3, 6, 4)  # (B, H, T, d)
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k)  # (B, H, Tq, Tk) = q @ k^T
    np.testing.assert_allclose(scores.numpy(), (q @ k.transpose(-2, -1)).numpy(), rtol=1e-12)
    w = scores.softmax(-1)
    out = torch.einsum("bhqk,bhkd->bhqd", w, v)
    np.testing.assert_allclose(out.numpy(), (w @ v).numpy(), rtol=1e-12)
    assert gradcheck(lambda q, k, v: torch.einsum("bhqk,bhkd->bhqd",
                                                  torch.einsum("bhqd,bhkd->bhqk", q, k).softmax(-1), v), [q, k, v])


def test_sums_traces_of_letters_outer_products_and_the_implicit_output():
    a, b = f64(3, 4), f64(4, 5)
    A, B = a.numpy(), b.numpy()
    np.testing.assert_allclose(torch.einsum("ij,jk", a, b).numpy(), A @ B, rtol=1e-12)  # implicit: 'ik'
    np.testing.assert_allclose(torch.einsum("ij->j", a).numpy(), A.sum(0), rtol=1e-12)
    np.testing.assert_allclose(torch.einsum("ij->", a).item(), A.sum(), rtol=1e-12)
    np.testing.assert_allclose(torch.einsum("ij->ji", a).numpy(), A.T)
    u, w = f64(3), f64(4)
    np.testing.assert_allclose(torch.einsum("i,j->ij", u, w).numpy(), np.outer(u.numpy(), w.numpy()), rtol=1e-12)
    np.testing.assert_allclose(torch.einsum("ij,ij->", a, a).item(), (A * A).sum(), rtol=1e-12)
    np.testing.assert_allclose(torch.einsum("ij,jk", [a, b]).numpy(), A @ B, rtol=1e-12)  # operands as a list
    np.testing.assert_allclose(torch.einsum("i j , j k -> i k", a, b).numpy(), A @ B, rtol=1e-12)  # spaces
    for eq, ops in [("ij->j", [a]), ("ij->", [a]), ("i,j->ij", [u, w]), ("ij,ij->", [a, a]),
                    ("ij,jk,kl->il", [a, b, f64(5, 2)]), ("ij,j->i", [a, w])]:
        assert gradcheck(lambda *t, eq=eq: torch.einsum(eq, *t), ops), eq


def test_the_ellipsis_stands_for_the_leading_dims():
    x, W = f64(2, 3, 4), f64(4, 5)
    y = torch.einsum("...i,ij->...j", x, W)
    assert y.shape == (2, 3, 5)
    np.testing.assert_allclose(y.numpy(), (x @ W).numpy(), rtol=1e-12)
    assert torch.einsum("...ij->...ji", x).shape == (2, 4, 3)
    assert torch.einsum("...j,j", x, f64(4)).shape == (2, 3)  # implicit output keeps the '...' dims first
    assert gradcheck(lambda x, W: torch.einsum("...i,ij->...j", x, W), [x, W])


def test_float32_stays_float32_and_ints_promote():
    a = torch.ones(2, 3)
    assert torch.einsum("ij,jk->ik", a, torch.ones(3, 2)).dtype == torch.float32
    assert torch.einsum("i,i->", torch.tensor([1, 2]), torch.tensor([3, 4])).item() == 11


def test_bad_equations_say_what_is_wrong():
    a = torch.ones(2, 3)
    with pytest.raises(ValueError, match="names 2 operand"):
        torch.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match=r"operand 0 has shape \(2, 3\) \(2 dims\) but 'ijk' gives it 3 letter"):
        torch.einsum("ijk->i", a)
    with pytest.raises(ValueError, match="letter 'j' is size 3 in one operand and 4 in operand 1"):
        torch.einsum("ij,jk->ik", a, torch.ones(4, 2))
    with pytest.raises(ValueError, match=r"letter 'i' is repeated in operand 0 \(a diagonal\), but its dims have sizes 2 and 3"):
        torch.einsum("ii->i", torch.ones(2, 3))
    with pytest.raises(ValueError, match="must use each letter of the operands at most once"):
        torch.einsum("ij->iz", a)
    with pytest.raises(ValueError, match="is not an equation"):
        torch.einsum("i1->i", a)
    with pytest.raises(TypeError, match="the first argument is the equation"):
        torch.einsum(a, a)
