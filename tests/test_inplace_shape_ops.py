"""squeeze_, unsqueeze_, t_, transpose_, swapdims_/swapaxes_: PyTorch's in-place view ops. Self is seen with
another shape (same memory, no value written); its history gets the view op on top; the write is counted."""
import numpy as np
import pytest

import tinyattn as torch


def test_each_op_changes_self_and_returns_it_sharing_memory():
    x = torch.zeros(2, 1, 3)
    before = x[0]  # a view taken before: it must keep seeing x's memory
    assert x.squeeze_() is x and x.shape == (2, 3)
    assert x.unsqueeze_(0) is x and x.shape == (1, 2, 3)
    assert x.squeeze_(0).shape == (2, 3) and x.t_().shape == (3, 2) and not x.is_contiguous()
    assert x.transpose_(0, 1).shape == (2, 3) and x.swapdims_(0, 1).shape == (3, 2)
    assert x.swapaxes_(1, 0).shape == (2, 3) and x._version == 7  # every call counted, as PyTorch's
    x[0, 2] = 5.0
    assert before.tolist() == [[0.0, 0.0, 5.0]]  # (x[0] of the original (2, 1, 3) tensor: its row 0)


def test_the_gradient_goes_through_a_chain_of_them_by_finite_differences():
    rng = np.random.default_rng(0)
    up = torch.tensor(rng.standard_normal((2, 3)))

    def f(w):
        x = w * 2.0  # a non-leaf: in-place ops on it are recorded
        x.unsqueeze_(0)  # (1, 2, 3)
        x.transpose_(1, 2)  # (1, 3, 2)
        x.squeeze_(0)  # (3, 2)
        x.t_()  # (2, 3)
        return (x * x * up).sum()

    w = torch.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    assert torch.gradcheck(f, (w,))
    f(w).backward()
    np.testing.assert_allclose(w.grad.numpy(), 8.0 * w.detach().numpy() * up.numpy(), rtol=1e-12)


def test_a_view_stays_a_view_of_its_base_and_the_gradient_reaches_the_base():
    w = torch.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = w * 1.0
    v = y[1]
    v.unsqueeze_(0)
    assert v.shape == (1, 3) and v._base is y and y._version == 1
    (v * 3.0).sum().backward()
    assert w.grad.tolist() == [[0.0, 0.0, 0.0], [3.0, 3.0, 3.0]]


def test_pytorchs_refusals_and_dim_errors():
    leaf = torch.zeros(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        leaf.unsqueeze_(0)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        leaf[0].unsqueeze_(0)
    with pytest.raises(RuntimeError, match="Output 0 of Split is a view and is being modified inplace"):
        (leaf * 1.0).split(1)[0].squeeze_(0)
    with torch.no_grad():  # outside the graph a leaf may change its shape, as PyTorch's
        leaf.unsqueeze_(0)
    assert leaf.shape == (1, 2, 3) and leaf.is_leaf and leaf.requires_grad
    with pytest.raises(RuntimeError, match=r"t_\(\) expects a tensor with <= 2 dimensions, but self is 3D"):
        torch.zeros(2, 1, 3).t_()
    with pytest.raises(IndexError, match="out of range"):
        torch.zeros(2, 1).squeeze_(5)
    x = torch.zeros(2, 1)
    with pytest.raises(IndexError, match="out of range"):
        x.transpose_(0, 4)
    assert x.shape == (2, 1) and x._version == 0  # a refused call changes nothing
