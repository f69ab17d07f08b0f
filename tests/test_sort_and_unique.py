"""sort, argsort, unique, all/any over a dim, and nelement: the PyTorch surface minGPT's demo uses."""
import numpy as np
import pytest

import tinyattn as torch
from tinyattn.gradcheck import gradcheck

rng = np.random.default_rng(11)


def test_sort_values_indices_and_ties_in_both_directions():
    x = torch.tensor([3.0, 1.0, 2.0, 1.0, 3.0])
    v, i = torch.sort(x)
    assert v.tolist() == [1.0, 1.0, 2.0, 3.0, 3.0] and i.tolist() == [1, 3, 2, 0, 4]
    v, i = x.sort(descending=True)  # equal values keep their first order, as PyTorch's stable sort
    assert v.tolist() == [3.0, 3.0, 2.0, 1.0, 1.0] and i.tolist() == [0, 4, 2, 1, 3]
    assert x.argsort(descending=True).tolist() == [0, 4, 2, 1, 3] and i.dtype == torch.int64
    assert torch.sort(x, stable=True).indices.tolist() == [1, 3, 2, 0, 4]
    # along a dim of a 2-D tensor, and NaN counted as the largest value
    m = torch.tensor([[2.0, float("nan"), -1.0], [0.0, 5.0, 4.0]])
    v, i = m.sort(dim=1)
    assert i.tolist() == [[2, 0, 1], [0, 2, 1]] and v[1].tolist() == [0.0, 4.0, 5.0]
    assert torch.argsort(m, dim=0).tolist() == [[1, 1, 0], [0, 0, 1]]
    # minGPT's sort task: integer sequences sorted
    seq = torch.tensor([[2, 0, 1, 1], [1, 1, 0, 2]])
    assert torch.sort(seq)[0].tolist() == [[0, 1, 1, 2], [0, 1, 1, 2]]


def test_sorted_values_send_each_gradient_back_to_its_entry():
    x = torch.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    assert gradcheck(lambda a: a.sort(dim=1).values, [x])
    assert gradcheck(lambda a: torch.sort(a, dim=0, descending=True)[0], [x])
    g = rng.standard_normal((3, 5))
    v, i = x.sort(dim=1)
    v.backward(torch.tensor(g))
    expected = np.zeros((3, 5))
    np.put_along_axis(expected, i.numpy(), g, axis=1)  # out[r, k] = x[r, i[r, k]], so dx[r, i[r, k]] = g[r, k]
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_unique_values_inverse_counts_and_dim():
    x = torch.tensor([[2, 0], [1, 1]])
    assert x.unique().tolist() == [0, 1, 2] and torch.unique(x).dtype == torch.int64
    u, inv, cnt = torch.unique(x, return_inverse=True, return_counts=True)
    assert inv.tolist() == [[2, 0], [1, 1]] and cnt.tolist() == [1, 2, 1]
    assert (u[inv] == x).all()  # the inverse rebuilds the input
    rows = torch.tensor([[1, 2], [0, 5], [1, 2]])
    u, inv = rows.unique(dim=0, return_inverse=True)
    assert u.tolist() == [[0, 5], [1, 2]] and inv.tolist() == [1, 0, 1]
    # minGPT's demo keeps a sequence only when few of its tokens repeat
    assert torch.tensor([3, 3, 3, 1]).unique().nelement() == 2


def test_all_and_any_over_a_dim_return_bool_tensors():
    x = torch.tensor([[1, 0], [1, 1]])
    assert x.all(1).tolist() == [False, True] and x.any(0).tolist() == [True, True]
    assert torch.all(x, dim=0, keepdim=True).shape == (1, 2) and torch.any(x == 0, 1).tolist() == [True, False]
    whole = (x == x).all()
    assert isinstance(whole, torch.Tensor) and whole.shape == () and whole.dtype == torch.bool
    assert whole.item() is True and bool(x.any()) and not torch.tensor([0.0, 0.0]).any()
    assert torch.tensor(2.0).all(0).item() is True  # a 0-d tensor takes dim 0, as in PyTorch
    with pytest.raises(IndexError, match=r"all: dim=2 is out of range for a tensor with 2 dims"):
        x.all(2)


def test_nelement_and_numel_count_the_elements():
    x = torch.zeros(2, 3, 4)
    assert x.nelement() == x.numel() == torch.numel(x) == 24 and torch.zeros(0, 3).nelement() == 0
