"""Making and converting tensors: requires_grad, casts, one-element tensors as numbers, split/chunk, devices, seeds."""
import numpy as np
import pytest

import tinyattn as torch


def test_requires_grad_assignment_is_checked_like_requires_grad_():
    t = torch.tensor([1, 2])
    with pytest.raises(TypeError, match=r"requires_grad=True needs floating-point data, got dtype int64"):
        t.requires_grad = True
    f = torch.ones(2)
    f.requires_grad = True
    assert f.requires_grad and (f * 2).requires_grad


def test_casting_to_int_leaves_the_graph():
    x = torch.ones(2, requires_grad=True)
    i = x.to(np.int64)
    assert i.dtype == np.int64 and not i.requires_grad
    assert x.to(np.float64).requires_grad  # a float cast stays differentiable


def test_one_element_tensors_work_as_python_numbers_and_indices():
    loss = torch.tensor(0.25)
    assert float(loss) == 0.25 and f"{loss:.3f}" == "0.250"
    data = torch.arange(10)
    i = torch.tensor(3)
    assert data[i:i + 2].tolist() == [3, 4] and int(i) == 3 and list(range(i)) == [0, 1, 2]
    with pytest.raises(TypeError, match=r"only an integer tensor with one element can be used as an index"):
        [1, 2][torch.tensor(1.0)]


def test_max_and_min_along_a_dim_return_values_and_indices():
    x = torch.tensor(np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]))
    values, indices = x.max(dim=-1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert x.min(1).values.tolist() == [1.0, 0.0] and x.min(1).indices.tolist() == [0, 1]
    assert x.max().item() == 7.0


def test_split_and_chunk_are_differentiable_slices():
    x = torch.tensor(np.arange(12.0).reshape(2, 6), requires_grad=True)
    q, k, v = x.split(2, dim=1)
    assert [t.shape for t in (q, k, v)] == [(2, 2)] * 3
    assert [t.shape[1] for t in x.split([1, 5], dim=-1)] == [1, 5]
    assert [t.shape[0] for t in torch.ones(5).chunk(2)] == [3, 2]
    (q * 1 + v * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 1, 0, 0, 3, 3]] * 2)
    with pytest.raises(ValueError, match=r"add up to dim 1's size 6"):
        x.split([2, 2], dim=1)


def test_clear_errors_for_non_numbers_ragged_lists_bad_shapes_and_scalar_cat():
    with pytest.raises(TypeError, match=r"cannot make a tensor from NoneType"):
        torch.tensor(None)
    with pytest.raises(TypeError, match=r"cannot make a tensor from str"):
        torch.tensor("abc")
    with pytest.raises(ValueError, match=r"ragged list"):
        torch.tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match=r"a shape needs ints, got \(2\.5,\)"):
        torch.zeros(2.5)
    with pytest.raises(TypeError, match=r"a shape needs ints, got \(2, 3\.0\)"):
        torch.ones(6).view(2, 3.0)
    with pytest.raises(ValueError, match=r"sizes >= 0, got \(-1, 2\)"):
        torch.ones(-1, 2)
    with pytest.raises(ValueError, match=r"cat: a 0-d tensor"):
        torch.cat([torch.tensor(1.0), torch.tensor(2.0)])


def test_masked_fill_of_an_int_tensor_with_minus_inf_says_why():
    with pytest.raises(TypeError, match=r"a int64 tensor can not hold -inf"):
        torch.tensor([1, 2]).masked_fill(torch.tensor([True, False]), float("-inf"))
    assert torch.tensor([1, 2]).masked_fill(torch.tensor([True, False]), 0).tolist() == [0, 2]


def test_device_cpu_is_accepted_and_other_devices_refused():
    x = torch.zeros(2, 3, device="cpu")
    assert x.to("cpu") is x and x.cpu() is x and x.device == "cpu"
    assert torch.arange(4, device="cpu").tolist() == [0, 1, 2, 3]
    with pytest.raises(AssertionError, match=r"Torch not compiled with CUDA enabled \(device='cuda'"):
        torch.randn(2, device="cuda")


def test_negative_seeds_are_seeds():
    torch.manual_seed(-1)
    a = torch.randn(3).numpy()
    torch.manual_seed(-1)
    assert np.array_equal(a, torch.randn(3).numpy())
