"""The shape helpers and reductions that tutorial code calls by PyTorch's names: t, narrow,
index_select, flip, roll, outer, logsumexp, norm, NumPy's axis=/keepdims=, var's unbiased,
histogram and where(condition)."""
import math

import numpy as np
import pytest

import tinyattn as torch
from tinyattn.gradcheck import gradcheck

rng = np.random.default_rng(23)


def f64(*shape):
    return torch.tensor(rng.standard_normal(shape), requires_grad=True)


def test_t_view_as_swapaxes_and_narrow():
    m = torch.arange(6).view(2, 3)
    assert m.t().tolist() == [[0, 3], [1, 4], [2, 5]] and torch.t(m).shape == (3, 2)
    assert torch.arange(3).t().tolist() == [0, 1, 2]  # a vector is its own transpose
    with pytest.raises(ValueError, match=r"t\(\) expects a tensor with at most 2 dims, got shape \(2, 2, 2\)"):
        torch.zeros(2, 2, 2).t()
    assert m.view_as(torch.zeros(3, 2)).tolist() == [[0, 1], [2, 3], [4, 5]]
    assert m.swapaxes(0, 1).tolist() == m.t().tolist() and torch.swapdims(m, 0, 1).shape == (3, 2)
    assert torch.ones(1, 3).expand_as(m).shape == (2, 3) and m.reshape_as(torch.zeros(6)).shape == (6,)
    assert m.narrow(1, 1, 2).tolist() == [[1, 2], [4, 5]] and torch.narrow(m, 0, -1, 1).tolist() == [[3, 4, 5]]
    with pytest.raises(IndexError, match="narrow: start=2, length=2 leaves dim 1"):
        m.narrow(1, 2, 2)
    x = f64(4, 5)
    assert gradcheck(lambda x: x.narrow(0, 1, 2).t(), [x])


def test_index_select_flip_roll_and_outer():
    m = torch.arange(12).view(3, 4)
    assert m.index_select(1, torch.tensor([3, 0])).tolist() == [[3, 0], [7, 4], [11, 8]]
    assert torch.index_select(m, 0, torch.tensor([2])).tolist() == [[8, 9, 10, 11]]
    with pytest.raises(TypeError, match="index_select: index must be a 1-D integer tensor"):
        m.index_select(0, torch.tensor([[0]]))
    assert m.flip(0).tolist() == [[8, 9, 10, 11], [4, 5, 6, 7], [0, 1, 2, 3]]
    assert torch.flip(m, dims=(0, 1))[0].tolist() == [11, 10, 9, 8] and m.flip([1]).tolist() == m.flip(1).tolist()
    flipped = m.flip(1)
    flipped[0, 0] = 100  # the flip is a copy, as in PyTorch: m is untouched
    assert m[0, 0].item() == 0
    assert torch.roll(torch.arange(5), 2).tolist() == [3, 4, 0, 1, 2]
    assert m.roll(1, 1)[0].tolist() == [3, 0, 1, 2] and m.roll((1, -1), (0, 1))[0].tolist() == [9, 10, 11, 8]
    assert m.roll(1).view(-1).tolist() == [11] + list(range(11))  # no dims: over the flattened tensor
    with pytest.raises(ValueError, match="roll: shifts=.* and dims=.* must have the same length"):
        m.roll((1, 2), 0)
    u, v = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0, 5.0])
    assert torch.outer(u, v).tolist() == [[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]]
    with pytest.raises(ValueError, match=r"outer expects two 1-D tensors, got shapes \(2, 1\) and \(3,\)"):
        u.view(2, 1).outer(v)
    x, a, b = f64(3, 4), f64(3), f64(4)
    assert gradcheck(lambda x: x.flip(0, 1), [x]) and gradcheck(lambda x: x.roll((1, 2), (0, 1)), [x])
    assert gradcheck(lambda x: x.roll(5), [x]) and gradcheck(lambda a, b: torch.outer(a, b), [a, b])
    assert gradcheck(lambda x: x.index_select(1, torch.tensor([0, 0, 2])), [x])


def test_logsumexp_is_stable_and_its_gradient_is_softmax():
    x = torch.tensor([[1000.0, 1000.0], [-1000.0, 0.0]], dtype=torch.float64)
    out = torch.logsumexp(x, dim=1)
    np.testing.assert_allclose(out.numpy(), [1000 + math.log(2), math.log1p(math.exp(-1000))])
    assert x.logsumexp(1, keepdim=True).shape == (2, 1) and x.logsumexp((0, 1)).shape == ()
    neg_inf = torch.tensor([-math.inf, -math.inf]).logsumexp(0)
    assert neg_inf.item() == -math.inf  # a sum of nothing: log 0
    y = f64(3, 5)
    assert gradcheck(lambda y: y.logsumexp(-1), [y]) and gradcheck(lambda y: torch.logsumexp(y, (0, 1)), [y])
    g = torch.tensor(rng.standard_normal(3))
    y.grad = None
    y.logsumexp(1).backward(g)
    np.testing.assert_allclose(y.grad.numpy(), (y.softmax(1) * g.view(3, 1)).numpy(), rtol=1e-12)


def test_norms():
    v = torch.tensor([3.0, -4.0])
    assert v.norm().item() == 5.0 and torch.norm(v, p=1).item() == 7.0 and v.norm(math.inf).item() == 4.0
    assert v.norm(p=3).item() == pytest.approx((27 + 64) ** (1 / 3))
    m = torch.tensor([[3.0, 4.0], [0.0, 0.0]], dtype=torch.float64, requires_grad=True)
    n = m.norm(dim=1)
    assert n.tolist() == [5.0, 0.0]
    n.sum().backward()
    np.testing.assert_allclose(m.grad.numpy(), [[0.6, 0.8], [0.0, 0.0]], rtol=1e-15)  # 0, not NaN, at zero
    assert v.norm(p=-1).item() == pytest.approx(1 / (1 / 3 + 1 / 4))  # (sum |v|^-1)^-1, as PyTorch computes
    with pytest.raises(TypeError, match="norm: p must be a number or 'fro'"):
        v.norm(p="nuc")
    x = f64(3, 4)
    for p in (2, 1, 3, math.inf):
        assert gradcheck(lambda x, p=p: x.norm(p, dim=1), [x])


def test_reductions_take_numpys_keepdims_and_vars_unbiased():
    P = torch.tensor([[1.0, 3.0], [2.0, 6.0]])
    assert P.sum(1, keepdims=True).tolist() == [[4.0], [8.0]]  # makemore's P / P.sum(1, keepdims=True)
    assert torch.sum(P, 0, keepdims=True).shape == (1, 2) and P.mean(axis=0, keepdims=True).tolist() == [[1.5, 4.5]]
    assert P.max(1, keepdims=True).values.tolist() == [[3.0], [6.0]] and P.amax(axis=1).tolist() == [3.0, 6.0]
    assert P.argmax(1, keepdims=True).shape == (2, 1) and torch.all(P > 0, axis=1).tolist() == [True, True]
    with pytest.raises(TypeError, match=r"sum\(\) got both keepdim=True and keepdims=False"):
        P.sum(0, keepdim=True, keepdims=False)
    x = torch.tensor([1.0, 2.0, 4.0, 5.0])  # mean 3, squared deviations sum to 10
    assert x.var(unbiased=True).item() == pytest.approx(10 / 3) and x.var(unbiased=False).item() == 2.5
    assert x.var(0, False).item() == 2.5  # PyTorch's second positional argument is unbiased, not keepdim
    assert x.var(False).item() == 2.5 and x.std(0, True).item() == pytest.approx(math.sqrt(10 / 3))
    assert torch.var(x.view(2, 2), 0, keepdim=True, unbiased=False).tolist() == [[2.25, 2.25]]
    assert x.var(correction=0).item() == 2.5 and torch.std(x, correction=2).item() == pytest.approx(math.sqrt(5))
    with pytest.raises(TypeError, match="pass correction= or unbiased=, not both"):
        x.var(unbiased=True, correction=1)
    with pytest.raises(TypeError, match="unbiased must be a bool, got 1"):
        x.var(0, 1)


def test_histogram_and_where_with_the_condition_alone():
    hist, edges = torch.histogram(torch.tensor([0.0, 0.1, 0.5, 0.9, 1.0]), bins=2)
    assert hist.tolist() == [2.0, 3.0] and edges.tolist() == [0.0, 0.5, 1.0]  # the last bin holds its right edge
    h = torch.histogram(torch.tensor([0.0, 0.1, 0.5, 0.9, 1.0]), bins=2, density=True)
    assert h.hist.tolist() == pytest.approx([0.8, 1.2])  # counts / (5 * width 0.5)
    assert torch.histogram(torch.tensor([1.0, 2.0]), torch.tensor([0.0, 1.5, 3.0])).hist.tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="histogram expects a floating-point tensor"):
        torch.histogram(torch.tensor([1, 2]))
    rows, cols = torch.where(torch.tensor([[True, False], [False, True]]))
    assert rows.tolist() == [0, 1] and cols.tolist() == [0, 1]
    assert torch.where(torch.tensor([3, 9, 2]) != 9)[0].tolist() == [0, 2]
    with pytest.raises(TypeError, match="give both input and other"):
        torch.where(torch.tensor([True]), 1.0)
    assert torch.concat([torch.ones(1), torch.zeros(1)]).tolist() == [1.0, 0.0]
    assert torch.mm(torch.ones(2, 3), torch.ones(3, 1)).tolist() == [[3.0], [3.0]]
    with pytest.raises(ValueError, match="mm expects two 2-D tensors"):
        torch.mm(torch.ones(3), torch.ones(3, 1))


def test_bad_arguments_name_themselves():
    x = torch.randn(3, 4)
    with pytest.raises(TypeError, match=r"roll: shifts must be ints, got 1.5"):
        x.roll(1.5, 0)
    with pytest.raises(TypeError, match=r"narrow: start must be an int >= -3, got start=1.0 \(float\)"):
        x.narrow(0, 1.0, 1)
    with pytest.raises(ValueError, match=r"narrow: length must be an int >= 0, got length=-1"):
        x.narrow(0, 0, -1)
    with pytest.raises(ValueError, match=r"histogram: bins must be a positive int, got bins=-1"):
        torch.histogram(x, bins=-1)
    with pytest.raises(ValueError, match=r"histogram: range must be \(min, max\) with min < max, got \(1, 0\)"):
        torch.histogram(x, bins=3, range=(1, 0))
    with pytest.raises(TypeError, match=r"round: decimals must be an int"):
        torch.round(x, decimals=1.5)
    assert torch.round(torch.tensor([1234.0]), decimals=-2).tolist() == [1200.0]
    w = torch.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"x\[\.\.\.\] = value on a tensor of shape \(3,\) and dtype float32"):
        torch.zeros(3)[0] = w  # two values into one entry, inside the graph
