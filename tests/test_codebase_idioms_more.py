"""More idioms met while running public teaching code on tinyattn (torch-free; expected values from NumPy).

- einsum over operands of two dtypes: a minimal selective-scan (state-space) model computes
  ``exp(einsum('bld,dn->bldn', delta, A))`` with ``A`` cast by ``.float()`` while the rest of the model may be
  float64. PyTorch multiplies the operands left to right, two at a time: a step that sums out a letter the two
  share is a matrix product (one dtype, as matmul), any other step is a broadcast product and promotes.
- ``torch.nn.utils.parametrize``: a small LoRA library adds ``W + B @ A`` to every Linear it does not edit with
  ``register_parametrization``, collects the ``parametrizations.weight.0.*`` parameters by name for the
  optimizer, and merges with ``remove_parametrizations(..., leave_parametrized=True)``.
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


# ------------------------------------------------------------------------------------------------------------
# torch.nn.utils.parametrize: a small LoRA library registers `W + scale * B @ A` on every Linear's weight with
# register_parametrization, trains only A and B, then merges with remove_parametrizations.
# ------------------------------------------------------------------------------------------------------------
import copy  # noqa: E402
import pickle  # noqa: E402

from tinyattn.nn.utils import parametrize  # noqa: E402


class Scaled(torch.nn.Module):
    """W -> s * W with a learned s; right_inverse divides it back out."""

    def __init__(self, s):
        super().__init__()
        self.s = torch.nn.Parameter(torch.tensor(s, dtype=torch.float64))
        self.calls = 0

    def forward(self, w):
        self.calls += 1
        return self.s * w

    def right_inverse(self, w):
        return w / self.s


class PlusOne(torch.nn.Module):
    """W -> W + 1, with no right_inverse (the original is stored as it is)."""

    def forward(self, w):
        return w + 1


def _linear64(rng, n_in=3, n_out=2):
    lin = torch.nn.Linear(n_in, n_out).double()
    with torch.no_grad():
        lin.weight.copy_(torch.tensor(rng.standard_normal((n_out, n_in))))
    return lin


def test_register_parametrization_moves_the_parameter_and_reads_it_through_the_function():
    rng = np.random.default_rng(0)
    lin, other = _linear64(rng), torch.nn.Linear(3, 2)
    w = lin.weight
    w0 = w.detach().numpy().copy()
    opt = torch.optim.SGD([w], lr=0.1)  # made before: it must still hold the tensor that is learned
    p = Scaled(3.0)
    parametrize.register_parametrization(lin, "weight", p)
    assert type(lin).__name__ == "ParametrizedLinear" and isinstance(lin, torch.nn.Linear)
    assert type(other) is torch.nn.Linear  # only this instance changed class
    assert lin.parametrizations.weight.original is w
    # registering keeps what lin.weight reads: the original is stored as right_inverse(W) = W / 3
    np.testing.assert_allclose(w.detach().numpy(), w0 / 3.0, rtol=1e-15)
    np.testing.assert_allclose(lin.weight.detach().numpy(), w0, rtol=1e-15)
    assert [n for n, _ in lin.named_parameters()] == ["bias", "parametrizations.weight.original",
                                                      "parametrizations.weight.0.s"]
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original", "parametrizations.weight.0.s"]
    assert parametrize.is_parametrized(lin) and parametrize.is_parametrized(lin, "weight")
    assert not parametrize.is_parametrized(lin, "bias") and not parametrize.is_parametrized(other)
    assert parametrize.type_before_parametrizations(lin) is torch.nn.Linear
    # the layer's own forward reads self.weight: gradients reach the original and s
    x, g = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    (lin(torch.tensor(x)) * torch.tensor(g)).sum().backward()
    dW = g.T @ x  # d/dW of sum(g * (x W^T + b))
    np.testing.assert_allclose(w.grad.numpy(), 3.0 * dW, rtol=1e-12)
    np.testing.assert_allclose(p.s.grad.numpy(), (dW * w0 / 3.0).sum(), rtol=1e-12)
    opt.step()
    np.testing.assert_allclose(lin.weight.detach().numpy(), 3.0 * (w0 / 3.0 - 0.1 * 3.0 * dW), rtol=1e-12)


def test_parametrizations_chain_and_assignment_goes_through_right_inverse():
    rng = np.random.default_rng(1)
    lin = _linear64(rng)
    w0 = lin.weight.detach().numpy().copy()
    parametrize.register_parametrization(lin, "weight", Scaled(2.0))
    np.testing.assert_allclose(lin.weight.detach().numpy(), w0, rtol=1e-15)  # (the original is W / 2)
    # a second one applies after the first, and its right_inverse is not run on the original
    parametrize.register_parametrization(lin, "weight", Scaled(5.0))
    np.testing.assert_allclose(lin.weight.detach().numpy(), 5.0 * w0, rtol=1e-15)
    assert len(lin.parametrizations.weight) == 2
    lin.weight = torch.tensor(np.full((2, 3), 20.0))  # stored as right_inverse: 20 / 5 / 2
    np.testing.assert_allclose(lin.parametrizations.weight.original.detach().numpy(), 2.0)
    np.testing.assert_allclose(lin.weight.detach().numpy(), 20.0)

    lin2 = _linear64(rng)
    parametrize.register_parametrization(lin2, "weight", PlusOne())
    with pytest.raises(RuntimeError, match="PlusOne does not implement right_inverse"):
        lin2.weight = torch.zeros(2, 3, dtype=torch.float64)


class NormTimesDirection(torch.nn.Module):
    """Weight normalisation: W = g * V / ||V|| (rows); right_inverse splits W into (g, V)."""

    def forward(self, g, v):
        return g * v / (v * v).sum(1, keepdim=True).sqrt()

    def right_inverse(self, w):
        return (w * w).sum(1, keepdim=True).sqrt(), w


def test_right_inverse_of_several_tensors_gives_original0_original1():
    rng = np.random.default_rng(2)
    lin = _linear64(rng)
    w0 = lin.weight.detach().numpy().copy()
    parametrize.register_parametrization(lin, "weight", NormTimesDirection())
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    np.testing.assert_allclose(lin.parametrizations.weight.original0.detach().numpy(),
                               np.linalg.norm(w0, axis=1, keepdims=True), rtol=1e-14)
    np.testing.assert_allclose(lin.weight.detach().numpy(), w0, rtol=1e-14)
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        parametrize.remove_parametrizations(lin, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(lin, "weight")
    assert type(lin) is torch.nn.Linear and isinstance(lin.weight, torch.nn.Parameter)
    np.testing.assert_allclose(lin.weight.detach().numpy(), w0, rtol=1e-14)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations_keeps_the_same_parameter_object(leave):
    rng = np.random.default_rng(3)
    lin = _linear64(rng)
    w = lin.weight
    w0 = w.detach().numpy().copy()
    parametrize.register_parametrization(lin, "weight", PlusOne())
    parametrize.remove_parametrizations(lin, "weight", leave_parametrized=leave)
    assert lin.weight is w and type(lin) is torch.nn.Linear and not hasattr(lin, "parametrizations")
    np.testing.assert_array_equal(w.detach().numpy(), w0 + 1 if leave else w0)
    assert [n for n, _ in lin.named_parameters()] == ["bias", "weight"]  # PyTorch's order after a removal
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(lin, "weight")


def test_parametrization_may_not_change_shape_or_dtype_unless_unsafe():
    class Half(torch.nn.Module):
        def forward(self, w):
            return w[:1]

    class ToFloat32(torch.nn.Module):
        def forward(self, w):
            return w.float()

    rng = np.random.default_rng(4)
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(_linear64(rng), "weight", Half())
    with pytest.raises(ValueError, match="may not change the dtype"):
        parametrize.register_parametrization(_linear64(rng), "weight", ToFloat32())
    lin = parametrize.register_parametrization(_linear64(rng), "weight", Half(), unsafe=True)
    assert lin.weight.shape == (1, 3)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element with name 'w'"):
        parametrize.register_parametrization(_linear64(rng), "w", Scaled(1.0))


def test_cached_computes_each_parametrized_tensor_once_per_block():
    rng = np.random.default_rng(5)
    lin, p = _linear64(rng), Scaled(2.0)
    parametrize.register_parametrization(lin, "weight", p)
    p.calls = 0
    x = torch.tensor(rng.standard_normal((2, 3)))
    with parametrize.cached():
        a, b = lin(x), lin(x)
        assert p.calls == 1
    lin(x)
    assert p.calls == 2  # out of the block: computed at every read again
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_parametrized_module_deepcopies_but_refuses_pickle():
    rng = np.random.default_rng(6)
    lin = parametrize.register_parametrization(_linear64(rng), "weight", Scaled(2.0))
    twin = copy.deepcopy(lin)
    assert type(twin).__name__ == "ParametrizedLinear"
    assert twin.parametrizations.weight.original is not lin.parametrizations.weight.original
    np.testing.assert_array_equal(twin.weight.detach().numpy(), lin.weight.detach().numpy())
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(lin)
