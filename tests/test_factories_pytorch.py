"""The factories tutorial code reaches for: empty, from_numpy, linspace, eye, meshgrid, normal, nonzero."""
import numpy as np
import pytest

import tinyattn as torch
from tinyattn.gradcheck import gradcheck


def test_empty_is_a_zero_tensor_of_the_shape_and_dtype():
    e = torch.empty(2, 3)
    assert e.shape == (2, 3) and e.dtype == np.float32 and not e.numpy().any()
    assert torch.empty((4,), dtype=torch.long).dtype == np.int64
    assert torch.empty(2, requires_grad=True).requires_grad


def test_from_numpy_shares_memory_both_ways_and_keeps_dtype():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = torch.from_numpy(a)
    assert t.dtype == np.int32 and t.shape == (2, 3)
    a[0, 0] = 7
    assert t[0, 0].item() == 7
    t.numpy()[1, 2] = -1
    assert a[1, 2] == -1
    assert torch.from_numpy(np.zeros(2)).dtype == np.float64  # float64 stays float64 (no default-dtype cast)
    with pytest.raises(TypeError, match="numpy.ndarray, got list"):
        torch.from_numpy([1, 2])


def test_linspace_and_eye():
    assert torch.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert torch.linspace(-1, 1, 3).dtype == np.float32 and torch.linspace(2, 3, 0).shape == (0,)
    assert torch.eye(2).tolist() == [[1, 0], [0, 1]] and torch.eye(2, 3).tolist() == [[1, 0, 0], [0, 1, 0]]
    assert torch.eye(3, dtype=torch.float64).dtype == np.float64
    with pytest.raises(ValueError, match="steps"):
        torch.linspace(0, 1, -2)
    with pytest.raises(ValueError, match=">= 0"):
        torch.eye(-1)


def test_meshgrid_ij_and_xy():
    x, y = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([10.0, 20.0])
    gi, gj = torch.meshgrid(x, y, indexing="ij")
    assert gi.shape == gj.shape == (3, 2)
    assert gi.tolist() == [[1, 1], [2, 2], [3, 3]] and gj.tolist() == [[10, 20], [10, 20], [10, 20]]
    gx, gy = torch.meshgrid([x, y], indexing="xy")  # a list works too
    assert gx.shape == gy.shape == (2, 3)
    assert gx.tolist() == [[1, 2, 3], [1, 2, 3]] and gy.tolist() == [[10, 10, 10], [20, 20, 20]]
    a, b, c = torch.meshgrid(torch.arange(2), torch.arange(3), torch.arange(4), indexing="xy")
    assert a.shape == (3, 2, 4) and c[1, 1].tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="indexing"):
        torch.meshgrid(x, y, indexing="yx")
    with pytest.raises(ValueError, match="1-D"):
        torch.meshgrid(torch.zeros(2, 2))


def test_meshgrid_is_differentiable():
    x = torch.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    y = torch.tensor(np.array([1.5, 3.0]), requires_grad=True)
    assert gradcheck(lambda a, b: (lambda g: g[0] * g[1].exp())(torch.meshgrid(a, b, indexing="xy")), [x, y])


def test_normal_numbers_and_tensors_follow_the_seed():
    torch.manual_seed(3)
    a = torch.normal(2.0, 3.0, size=(4000,))
    torch.manual_seed(3)
    b = torch.normal(2.0, 3.0, size=(4000,))
    assert np.array_equal(a.numpy(), b.numpy()) and a.dtype == np.float32
    assert abs(a.numpy().mean() - 2.0) < 0.3 and abs(a.numpy().std() - 3.0) < 0.3  # ~7 standard errors of margin
    m = torch.tensor(np.array([0.0, 100.0]))
    s = torch.tensor(np.array([0.0, 0.0]))
    out = torch.normal(m, s)  # std 0: exactly the means, in the tensors' dtype
    assert out.dtype == np.float64 and out.tolist() == [0.0, 100.0]
    with pytest.raises(ValueError, match="std must be >= 0"):
        torch.normal(0.0, -1.0, size=(2,))
    with pytest.raises(ValueError, match="only with a number"):
        torch.normal(m, 1.0, size=(2,))


def test_nonzero_rows_and_as_tuple():
    x = torch.tensor([[0, 3, 0], [4, 0, 5]])
    assert torch.nonzero(x).tolist() == [[0, 1], [1, 0], [1, 2]] and torch.nonzero(x).dtype == np.int64
    rows, cols = x.nonzero(as_tuple=True)
    assert rows.tolist() == [0, 1, 1] and cols.tolist() == [1, 0, 2]
    assert x[x.nonzero(as_tuple=True)].tolist() == [3, 4, 5]
    assert torch.nonzero(torch.tensor([0.0, 2.0, 0.0]) == 0).tolist() == [[0], [2]]  # annotated-transformer's use
    assert torch.nonzero(torch.zeros(2, 2)).shape == (0, 2)
