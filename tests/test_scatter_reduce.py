"""scatter_reduce (sum, prod, mean, amax, amin, with and without self), scatter_add and scatter(reduce=):
values derived by a loop over the index, gradients by finite differences (float64, every element), ties and
zeros by hand, and the errors PyTorch raises."""
import numpy as np
import pytest

import tinyattn as torch
from tinyattn import gradcheck

RNG = np.random.default_rng(11)
REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def loop_reference(a, dim, index, src, reduce, include_self):
    """The definition, one index entry at a time: each position collects self (if included) and its sources."""
    groups = {pos: ([a[pos]] if include_self else []) for pos in np.ndindex(a.shape)}
    for pos in np.ndindex(index.shape):
        target = list(pos)
        target[dim] = index[pos]
        groups[tuple(target)].append(src[pos])
    combine = {"sum": sum, "prod": np.prod, "mean": np.mean, "amax": max, "amin": min}[reduce]
    return np.array([combine(groups[p]) if groups[p] else a[p] for p in np.ndindex(a.shape)]).reshape(a.shape)


def case(dim):
    """self (3, 4); index (2, 4) for dim 0, (3, 4) for dim 1, with repeats; src (4, 5), larger than index (allowed)."""
    a = RNG.uniform(0.5, 2.0, (3, 4)) * RNG.choice([-1, 1], (3, 4))
    index = RNG.integers(0, a.shape[dim], (3, 4) if dim == 1 else (2, 4))  # (every dim but dim fits in self's)
    src = RNG.uniform(0.5, 2.0, (4, 5)) * RNG.choice([-1, 1], (4, 5))
    return a, index, src


@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1])
def test_values_match_the_definition_and_gradients_match_finite_differences(reduce, include_self, dim):
    a, index, src = case(dim)
    got = torch.tensor(a).scatter_reduce(dim, torch.tensor(index), torch.tensor(src), reduce, include_self=include_self)
    np.testing.assert_allclose(got.numpy(), loop_reference(a, dim, index, src, reduce, include_self), rtol=1e-14)
    x = torch.tensor(a, requires_grad=True)
    s = torch.tensor(src, requires_grad=True)
    # (random distinct values: no ties for amax/amin, no zeros for prod, so the function is smooth here)
    assert gradcheck(lambda x, s: x.scatter_reduce(dim, torch.tensor(index), s, reduce, include_self=include_self),
                     [x, s])


def test_ties_share_the_gradient_and_self_counts_as_a_tie_even_when_left_out():
    """amax over {5 (self), 5, 5, 1}: three values equal the max. With include_self=False self gets no
    gradient, yet it still counts among the ties (PyTorch's rule, measured): each source gets g / 3."""
    x = torch.tensor([5.0, 0.0], requires_grad=True)
    s = torch.tensor([5.0, 5.0, 1.0], requires_grad=True)
    out = x.scatter_reduce(0, torch.tensor([0, 0, 1]), s, "amax", include_self=False)
    out.backward(torch.tensor([6.0, 1.0]))
    assert out.tolist() == [5.0, 1.0]
    assert x.grad.tolist() == [0.0, 0.0] and s.grad.tolist() == [2.0, 2.0, 1.0]
    x.grad = s.grad = None
    x.scatter_reduce(0, torch.tensor([0, 0, 1]), s, "amax").backward(torch.tensor([6.0, 1.0]))
    assert x.grad.tolist() == [2.0, 0.0] and s.grad.tolist() == [2.0, 2.0, 1.0]  # 0 < 1: the source wins


def test_prod_gradient_at_zeros_is_the_product_of_the_others():
    x = torch.tensor([0.0, 2.0], requires_grad=True)
    s = torch.tensor([3.0, 0.0, 4.0], requires_grad=True)
    out = x.scatter_reduce(0, torch.tensor([0, 1, 1]), s, "prod")
    out.backward(torch.ones(2))
    assert out.tolist() == [0.0, 0.0]
    # position 0: 0 * 3, d/dself = 3, d/ds0 = 0; position 1: 2 * 0 * 4, d/ds1 = 2 * 4, d/dself = d/ds2 = 0
    assert x.grad.tolist() == [3.0, 0.0] and s.grad.tolist() == [0.0, 8.0, 0.0]
    x.grad = s.grad = None
    two_zeros = torch.tensor([3.0, 0.0, 0.0], requires_grad=True)
    x.scatter_reduce(0, torch.tensor([0, 1, 1]), two_zeros, "prod", include_self=False).backward(torch.ones(2))
    assert two_zeros.grad.tolist() == [1.0, 0.0, 0.0]  # two zeros in one product: every derivative there is 0


def test_integer_mean_rounds_down_and_bool_sum_is_or_and_uint8_wraps():
    assert torch.tensor([-7, 2]).scatter_reduce(0, torch.tensor([0]), torch.tensor([-2]), "mean").tolist() == [-5, 2]
    assert torch.tensor([True, False]).scatter_reduce(0, torch.tensor([1]), torch.tensor([True]), "sum").tolist() == [
        True, True]
    u8 = torch.tensor([3, 4], dtype=torch.uint8)
    assert u8.scatter_reduce(0, torch.tensor([1, 1]), torch.tensor([200, 100], dtype=torch.uint8), "sum").tolist() == [
        3, (4 + 200 + 100) % 256]
    assert torch.tensor([7, 2]).scatter_reduce(0, torch.tensor([0, 0]), torch.tensor([2, 4]), "amax",
                                               include_self=False).tolist() == [4, 2]


def test_in_place_forms_and_the_function_agree_with_the_method():
    a, index, src = case(1)
    want = torch.tensor(a).scatter_reduce(1, torch.tensor(index), torch.tensor(src), "amax")
    assert np.array_equal(torch.scatter_reduce(torch.tensor(a), 1, torch.tensor(index), torch.tensor(src),
                                               reduce="amax").numpy(), want.numpy())
    x = torch.tensor(a, requires_grad=True)
    y = x * 1
    y.scatter_reduce_(1, torch.tensor(index), torch.tensor(src), "amax")
    assert np.array_equal(y.detach().numpy(), want.numpy())
    y.sum().backward()
    assert np.array_equal(x.grad.numpy(), (a == want.numpy()).astype(float))  # self's gradient where it stayed the max


def test_scatter_with_reduce_combines_and_has_no_derivative():
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    index = torch.tensor([0, 0, 1, 1, 1])
    s = torch.tensor([5.0, 2.0, 7.0, 1.0, 9.0])
    out = x.scatter(0, index, s, reduce="add")
    assert out.tolist() == [8.0, 19.0, 3.0, 4.0]
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        out.sum().backward()
    assert x.detach().scatter(0, index, 2.0, reduce="multiply").tolist() == [4.0, 16.0, 3.0, 4.0]
    assert torch.scatter(x.detach(), 0, index, value=3.0, reduce="add").tolist() == [7.0, 11.0, 3.0, 4.0]
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
        x.detach().scatter(0, index, s, reduce="sum")


def test_bad_arguments_raise_as_pytorch_does():
    x = torch.zeros(4)
    index = torch.tensor([0, 1])
    with pytest.raises(RuntimeError, match="must be either sum, prod, mean, amax or amin, got add"):
        x.scatter_reduce(0, index, torch.ones(2), "add")
    with pytest.raises(TypeError, match="argument 'src' must be a Tensor, not float"):
        x.scatter_reduce(0, index, 2.0, "sum")
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        torch.zeros(3, dtype=torch.float64).scatter_reduce(0, index, torch.ones(2), "sum")
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        torch.zeros(3, dtype=torch.float64).scatter_add(0, index, torch.ones(2))  # one rule for every combining scatter
    with pytest.raises(IndexError, match="out of range"):
        x.scatter_reduce(0, torch.tensor([5]), torch.ones(1), "sum")
    out = x.scatter_reduce(0, index, torch.ones(2, requires_grad=True), "max")  # 'max' computes, as in PyTorch ...
    assert out.tolist() == [1.0, 1.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="Expected 'reduce' to be one of"):  # ... but has no gradient
        out.sum().backward()
