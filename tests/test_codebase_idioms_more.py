"""More idioms met while running public teaching code on tinyattn (torch-free; expected values from NumPy).

- einsum over operands of two dtypes: a minimal selective-scan (state-space) model computes
  ``exp(einsum('bld,dn->bldn', delta, A))`` with ``A`` cast by ``.float()`` while the rest of the model may be
  float64. PyTorch multiplies the operands left to right, two at a time: a step that sums out a letter the two
  share is a matrix product (one dtype, as matmul), any other step is a broadcast product and promotes.
"""
import numpy as np
import pytest

import tinyattn as torch


def test_einsum_broadcast_product_of_two_dtypes_promotes_and_each_gradient_keeps_its_dtype():
    rng = np.random.default_rng(0)
    d, a, w = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5)), rng.standard_normal((2, 3, 4, 5))
    x = torch.tensor(d, requires_grad=True)                       # float64
    y = torch.tensor(a, dtype=torch.float32, requires_grad=True)  # float32
    z = torch.einsum("bld,dn->bldn", x, y)
    assert z.dtype == torch.float64
    a32 = a.astype(np.float32).astype(np.float64)  # y's values, exactly, in float64
    np.testing.assert_allclose(z.detach().numpy(), d[..., None] * a32, rtol=1e-15)
    (z * torch.tensor(w)).sum().backward()
    assert x.grad.dtype == torch.float64 and y.grad.dtype == torch.float32
    np.testing.assert_allclose(x.grad.numpy(), (w * a32).sum(-1), rtol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), (w * d[..., None]).sum((0, 1)), rtol=1e-5)
    # an int operand with a float one, no letter summed: the float dtype
    got = torch.einsum("i,j->ij", torch.tensor([1, 2]), torch.tensor([0.5, 1.5]))
    assert got.dtype == torch.float32 and got.tolist() == [[0.5, 1.5], [1.0, 3.0]]


@pytest.mark.parametrize("eq,shapes", [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,ij->i", [(2, 3), (2, 3)]),
                                       ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]), ("i,i->", [(3,), (3,)])])
def test_einsum_that_sums_a_shared_letter_is_a_matrix_product_and_refuses_two_dtypes(eq, shapes):
    a = torch.ones(*shapes[0], dtype=torch.float64)
    b = torch.ones(*shapes[1], dtype=torch.float32)
    with pytest.raises(RuntimeError, match="einsum operands 0 and 1 must have the same dtype, but got Double and Float"):
        torch.einsum(eq, a, b)


def test_einsum_three_operands_are_taken_two_at_a_time():
    f32 = lambda *s: torch.ones(*s, dtype=torch.float32)
    f64 = lambda *s: torch.ones(*s, dtype=torch.float64)
    # 'ij,kl' first (no letter summed yet: j and l are still needed): a broadcast product, float64; then
    # summing j and l against the float64 third operand is a matrix product of one dtype
    got = torch.einsum("ij,kl,jl->ik", f32(2, 3), f64(4, 5), f64(3, 5))
    assert got.dtype == torch.float64 and got.tolist() == [[15.0] * 4] * 2
    with pytest.raises(RuntimeError, match="einsum operands 0-1 and 2 must have the same dtype, but got Double and Float"):
        torch.einsum("ij,kl,jl->ik", f64(2, 3), f64(4, 5), f32(3, 5))
    with pytest.raises(RuntimeError, match="einsum operands 0 and 1 must have the same dtype"):
        torch.einsum("ij,jk,kl->il", f64(2, 3), f32(3, 4), f32(4, 5))  # j is summed at the first step
    assert torch.einsum("ij,jk,ik->ijk", f32(2, 3), f32(3, 4), f64(2, 4)).dtype == torch.float64


def test_einsum_letters_one_operand_sums_alone_count_bools_as_int64():
    a = torch.tensor([[True, False, True], [True, True, True]])
    b = torch.tensor([True, True, False, True])
    got = torch.einsum("ij,k->i", a, b)  # each operand's own sum first (torch.sum of bools: int64), then a product
    assert got.dtype == torch.int64 and got.tolist() == [2 * 3, 3 * 3]
    assert torch.einsum("ij,ij->ij", a, a).dtype == torch.bool  # nothing summed: a product of bools stays bool
    u8 = torch.tensor([[1, 2], [3, 4]], dtype=torch.uint8)
    assert torch.einsum("ij,jk->ik", u8, u8).dtype == torch.uint8  # a matrix product keeps its dtype
