"""`.data` and `.grad` as Tensors, the in-place methods, and the PyTorch idioms that use them.
Expected values are worked out by hand in the comments."""
import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
from tinyattn.gradcheck import gradcheck


# ---------------------------------------------------------------- .data and .grad are Tensors
def test_data_is_a_tensor_without_grad_sharing_memory():
    p = nn.Parameter(np.array([1.0, 2.0]))
    d = p.data
    assert isinstance(d, ta.Tensor) and not d.requires_grad and d.is_leaf
    assert np.shares_memory(d.numpy(), p.numpy())
    d.mul_(0.5)
    np.testing.assert_array_equal(p.numpy(), [0.5, 1.0])


def test_grad_is_a_tensor_without_grad_and_numpy_gives_the_array():
    x = ta.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert isinstance(x.grad, ta.Tensor) and not x.grad.requires_grad
    assert isinstance(x.grad.numpy(), np.ndarray) and x.grad.dtype == x.dtype
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])  # d/dx x^2 = 2x


def test_grad_setter_accepts_a_tensor_or_none_only():
    p = nn.Parameter(np.zeros(2))
    p.grad = ta.tensor(np.array([1.0, -1.0]))
    np.testing.assert_array_equal(p.grad.numpy(), [1.0, -1.0])
    p.grad = None
    assert p.grad is None
    with pytest.raises(TypeError, match="Tensor or None, got ndarray"):
        p.grad = np.zeros(2)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        p.grad = ta.tensor(np.zeros(3))


def test_grad_accumulates_into_the_same_tensor():
    # Two passes of d/dx 3x = 3: the .grad Tensor is kept and added into (references to it see both).
    x = ta.tensor([1.0], requires_grad=True)
    (3 * x).sum().backward()
    g = x.grad
    (3 * x).sum().backward()
    assert x.grad is g and float(g) == 6.0


# ---------------------------------------------------------------- in-place methods
def test_arithmetic_in_place_methods():
    t = ta.tensor([1.0, 2.0, 3.0])
    t.add_(ta.tensor([1.0, 1.0, 1.0]), alpha=2)   # [3, 4, 5]
    t.sub_(1.0)                                   # [2, 3, 4]
    t.mul_(ta.tensor([1.0, 0.5, 2.0]))            # [2, 1.5, 8]
    t.div_(2.0)                                   # [1, 0.75, 4]
    t.clamp_(min=0.8, max=3.0)                    # [1, 0.8, 3]
    np.testing.assert_allclose(t.numpy(), [1.0, 0.8, 3.0])
    assert t.dtype == np.float32  # float32 stays float32 with Python numbers
    t.fill_(7)
    np.testing.assert_array_equal(t.numpy(), [7, 7, 7])
    t.copy_(ta.tensor([1.0, 2.0, 3.0]))
    t.zero_()
    np.testing.assert_array_equal(t.numpy(), [0, 0, 0])


def test_in_place_methods_return_self_and_broadcast():
    t = ta.zeros(2, 3)
    assert t.add_(ta.tensor([1.0, 2.0, 3.0])) is t   # (3,) broadcast over the rows
    np.testing.assert_array_equal(t.numpy(), [[1, 2, 3], [1, 2, 3]])
    with pytest.raises(ValueError, match=r"add_ on a tensor of shape \(2, 3\)"):
        t.add_(ta.ones(4))


def test_masked_fill_in_place():
    # where the mask is True: 9; the (3,) mask broadcasts over both rows
    t = ta.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    out = t.masked_fill_(ta.tensor([True, False, True]), 9.0)
    assert out is t
    np.testing.assert_array_equal(t.numpy(), [[9, 2, 9], [9, 5, 9]])
    t.masked_fill_(np.array([[False, False, False], [False, True, False]]), ta.tensor(-1.0))
    np.testing.assert_array_equal(t.numpy(), [[9, 2, 9], [9, -1, 9]])
    with pytest.raises(TypeError, match="bool mask"):
        t.masked_fill_(ta.tensor([1, 0, 1]), 0.0)
    with pytest.raises(ValueError, match="does not broadcast"):
        t.masked_fill_(ta.ones(4).bool(), 0.0)


def test_index_fill_in_place():
    # columns 0 and 2 (dim 1) of a (2, 3) tensor, then row 1 (dim 0), then the last column by a negative index
    t = ta.zeros(2, 3)
    t.index_fill_(1, ta.tensor([0, 2]), 5.0)
    np.testing.assert_array_equal(t.numpy(), [[5, 0, 5], [5, 0, 5]])
    t.index_fill_(0, ta.tensor([1]), -1.0)
    np.testing.assert_array_equal(t.numpy(), [[5, 0, 5], [-1, -1, -1]])
    t.index_fill_(1, [-1], 2.0)
    np.testing.assert_array_equal(t.numpy(), [[5, 0, 2], [-1, -1, 2]])
    with pytest.raises(IndexError, match="out of range for dim 1 of size 3"):
        t.index_fill_(1, [3], 0.0)
    with pytest.raises(TypeError, match="1-D tensor of ints"):
        t.index_fill_(1, [0.5], 0.0)


def test_scatter_in_place_dim0_and_dim1():
    # dim=0: self[index[i][j]][j] = src[i][j]
    #   index [[1, 0, 2]], src [[10, 20, 30]]: (1,0) <- 10, (0,1) <- 20, (2,2) <- 30
    t = ta.zeros(3, 3)
    t.scatter_(0, ta.tensor([[1, 0, 2]]), ta.tensor([[10.0, 20.0, 30.0]]))
    np.testing.assert_array_equal(t.numpy(), [[0, 20, 0], [10, 0, 0], [0, 0, 30]])
    # dim=1: self[i][index[i][j]] = src[i][j]; src is larger than index: only src[:2, :1] is read
    u = ta.zeros(2, 4)
    u.scatter_(1, ta.tensor([[3], [1]]), ta.tensor([[7.0, 8.0], [9.0, 6.0], [5.0, 5.0]]))
    np.testing.assert_array_equal(u.numpy(), [[0, 0, 0, 7], [0, 9, 0, 0]])
    # a number as the source; the one-hot idiom: zeros.scatter_(1, target.unsqueeze(1), 1)
    target = ta.tensor([2, 0])
    onehot = ta.zeros(2, 3).scatter_(1, target.unsqueeze(1), 1.0)
    np.testing.assert_array_equal(onehot.numpy(), [[0, 0, 1], [1, 0, 0]])
    with pytest.raises(IndexError, match="scatter_: index holds 3"):
        ta.zeros(2, 3).scatter_(1, ta.tensor([[3], [0]]), 1.0)
    with pytest.raises(ValueError, match="scatter_: index of shape"):
        ta.zeros(2, 3).scatter_(1, ta.tensor([[0, 1], [0, 1]]), ta.ones(2, 1))


def test_scatter_is_the_inverse_of_gather():
    x = ta.tensor(np.arange(12.0).reshape(3, 4))
    idx = ta.tensor([[3, 0], [1, 2], [0, 3]])
    back = ta.zeros(3, 4).scatter_(1, idx, x.gather(1, idx))
    want = np.zeros((3, 4))
    for i in range(3):
        for j in range(2):
            want[i, idx.numpy()[i, j]] = x.numpy()[i, idx.numpy()[i, j]]
    np.testing.assert_array_equal(back.numpy(), want)


def test_in_place_on_a_leaf_that_requires_grad_is_refused_unless_no_grad():
    p = nn.Parameter(np.ones(2))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        p.mul_(2.0)
    with pytest.raises(RuntimeError, match="in-place operation"):
        p[0] = 3.0
    with ta.no_grad():
        p.mul_(2.0)
        p[0] = 3.0
    np.testing.assert_array_equal(p.numpy(), [3.0, 2.0])
    h = p * 1.0  # a non-leaf: written in place, as PyTorch (h gets a new node; p's gradient through it is 0)
    h.zero_()
    (h + p).sum().backward()
    np.testing.assert_array_equal(p.grad.numpy(), [1.0, 1.0])
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place"):
        p[0:1].mul_(2.0)


def test_in_place_into_an_int_tensor_refuses_a_float_result():
    t = ta.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        t.div_(2)  # PyTorch's words: the int tensor can not hold 0.5
    t.mul_(3)
    np.testing.assert_array_equal(t.numpy(), [3, 6])


def test_augmented_assignment_writes_in_place_inside_the_graph_too():
    t = ta.tensor([1.0, 2.0])
    before = t
    t += 1.0
    t *= ta.tensor([2.0, 3.0])
    assert t is before
    np.testing.assert_array_equal(t.numpy(), [4.0, 9.0])
    # in the graph too, as PyTorch: the case h = w * 2; alias = h; h *= 3 (torch: alias [6, 12], w.grad [6, 6])
    w = ta.tensor([1.0, 2.0], requires_grad=True)
    h = w * 2
    alias = h
    h *= 3
    assert h is alias and alias.tolist() == [6.0, 12.0] and h.grad_fn.name() == "MulBackward"
    h.sum().backward()
    assert w.grad.tolist() == [6.0, 6.0]
    x = ta.tensor([1.0], requires_grad=True)
    h = x * 2.0
    h += 1.0  # d/dx (2x + 1) = 2
    h -= x  # d/dx (2x + 1 - x) = 1
    h /= 2.0  # 1/2
    h.sum().backward()
    assert float(x.grad) == 0.5
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x += 1.0


# ---------------------------------------------------------------- idioms from PyTorch teaching code
def test_d2l_grad_clipping_idiom():
    # d2l: `param.grad[:] *= clip / norm`; grads [3, 4] and [12], norm 13, clip 1 -> each divided by 13
    a, b = nn.Parameter(np.zeros(2)), nn.Parameter(np.zeros(1))
    a.grad, b.grad = ta.tensor(np.array([3.0, 4.0])), ta.tensor(np.array([12.0]))
    params = [a, b]
    norm = sum((p.grad ** 2).sum() for p in params).sqrt()
    clip = 1.0
    if norm > clip:
        for p in params:
            p.grad[:] *= clip / norm
    np.testing.assert_allclose(a.grad.numpy(), [3 / 13, 4 / 13])
    np.testing.assert_allclose(b.grad.numpy(), [12 / 13])


def test_grad_slice_times_tensor_and_data_slice_assignment():
    p = nn.Parameter(np.array([1.0, 2.0, 3.0]))
    p.grad = ta.tensor(np.array([1.0, 1.0, 1.0]))
    p.grad[1:] *= ta.tensor([2.0, 3.0])
    np.testing.assert_array_equal(p.grad.numpy(), [1.0, 2.0, 3.0])
    p.data[...] = ta.tensor([7.0, 8.0, 9.0])
    p.data[0] = 0.0
    np.testing.assert_array_equal(p.numpy(), [0.0, 8.0, 9.0])


def test_makemore_update_to_data_ratio_idiom():
    # makemore: (lr * p.grad.std() / p.data.std()).log10().item(); std uses N - 1
    p = nn.Parameter(np.array([1.0, 3.0]))   # std = sqrt(2)
    p.grad = ta.tensor(np.array([0.0, 20.0]))  # std = sqrt(200)
    lr = 0.1
    ratio = (lr * p.grad.std() / p.data.std()).log10().item()
    assert ratio == pytest.approx(np.log10(0.1 * 10.0))  # sqrt(200) / sqrt(2) = 10 -> log10(1) = 0


def test_grad_zero_and_norm_idioms():
    p = nn.Parameter(np.array([3.0, 4.0]))
    (p * p).sum().backward()  # grad 2p = [6, 8], norm 10
    assert float((p.grad ** 2).sum().sqrt()) == 10.0
    p.grad.zero_()
    np.testing.assert_array_equal(p.grad.numpy(), [0.0, 0.0])


def test_annotated_transformer_data_idioms():
    # `x.data.clone()` is a copy (changing it leaves x alone); `target.data.unsqueeze(1)` is a (N, 1) view
    x = ta.tensor([[0.1, 0.2, 0.7]])
    true_dist = x.data.clone()
    true_dist.fill_(0.5 / 2)
    true_dist.scatter_(1, ta.tensor([2]).data.unsqueeze(1), 0.5)
    np.testing.assert_allclose(true_dist.numpy(), [[0.25, 0.25, 0.5]])
    np.testing.assert_allclose(x.numpy(), [[0.1, 0.2, 0.7]])
    target = ta.tensor([2, 0, 1])
    assert target.data.unsqueeze(1).shape == (3, 1)


def test_label_smoothing_target_rows_built_in_place_and_kl_sum_gradient():
    # Label smoothing over V=4 classes, padding id 0, smoothing 0.4: every class gets 0.4 / (V - 2) = 0.2,
    # the true class 0.6, the padding column 0, and a row whose target IS the padding id is all zeros.
    x = ta.tensor(np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25], [0.4, 0.3, 0.2, 0.1]])),
                  requires_grad=True)  # log-probabilities, as a Generator's log_softmax gives
    target = ta.tensor([2, 0, 3])
    true_dist = x.data.clone()
    assert not true_dist.requires_grad
    true_dist.fill_(0.4 / 2)
    true_dist.scatter_(1, target.data.unsqueeze(1), 0.6)
    true_dist[:, 0] = 0
    mask = ta.nonzero(target.data == 0)  # (1, 1): row 1; squeeze() makes it a 0-d index, which index_fill_ takes
    assert mask.shape == (1, 1) and mask.squeeze().shape == ()
    true_dist.index_fill_(0, mask.squeeze(), 0.0)
    expected = np.array([[0.0, 0.2, 0.6, 0.2], [0.0, 0.0, 0.0, 0.0], [0.0, 0.2, 0.2, 0.6]])
    np.testing.assert_allclose(true_dist.numpy(), expected, rtol=1e-15)
    np.testing.assert_allclose(x.data.exp().numpy()[0], [0.1, 0.2, 0.3, 0.4], rtol=1e-12)  # x itself untouched
    # no padding target: nonzero is (0, 1), squeeze() gives (0,), and index_fill_ changes nothing
    empty = ta.nonzero(ta.tensor([2, 3]) == 0)
    assert empty.shape == (0, 1) and empty.dim() == 2 and empty.squeeze().shape == (0,)
    untouched = ta.ones(2, 4).index_fill_(0, empty.squeeze(), 0.0)
    np.testing.assert_array_equal(untouched.numpy(), np.ones((2, 4)))
    # KLDivLoss(sum) = sum over t > 0 of t (log t - x); its gradient in x is -t (zero rows give zero gradient)
    loss = nn.KLDivLoss(reduction="sum")(x, true_dist.clone().detach())
    t_ = expected
    by_hand = sum(t_[i, j] * (np.log(t_[i, j]) - np.log([[0.1, 0.2, 0.3, 0.4], [0.25] * 4, [0.4, 0.3, 0.2, 0.1]])[i, j])
                  for i in range(3) for j in range(4) if t_[i, j] > 0)
    assert loss.item() == pytest.approx(by_hand, rel=1e-12)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), -expected, rtol=1e-15)


def test_sgd_by_hand_through_data():
    # p.data -= lr * p.grad: one step of SGD on sum(p^2) (grad 2p) with lr 0.25 halves p
    p = nn.Parameter(np.array([2.0, -4.0]))
    (p * p).sum().backward()
    p.data -= 0.25 * p.grad
    np.testing.assert_array_equal(p.numpy(), [1.0, -2.0])


def test_writing_a_tensor_that_requires_grad_into_a_buffer_records_the_write(float64):
    # PyTorch's CopySlices: buf[i] = v keeps v's gradient (the old seq2seq tutorial fills its
    # encoder_outputs this way); it used to be a plain copy that silently cut v out of the graph
    rng = np.random.default_rng(7)
    w = ta.tensor(rng.standard_normal(3), requires_grad=True)
    buf = ta.zeros(4, 3, dtype=np.float64)
    buf[1] = w * 2
    buf[2:4] = w  # broadcast into two rows
    assert buf.requires_grad and not buf.is_leaf
    (buf * ta.arange(12.0, dtype=np.float64).view(4, 3)).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.array([3, 4, 5]) + [6, 7, 8] + [9, 10, 11])

    def fill(a, b):
        out = ta.zeros(5, 3, dtype=np.float64)
        for i in range(5):
            out[i] = (a[i] * b).tanh()
        out[ta.tensor([0, 2])] = b  # an integer-array index, written last
        return out * (1 + out)  # read only after the writes

    a = ta.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    b = ta.tensor(rng.standard_normal(3), requires_grad=True)
    assert gradcheck(fill, [a, b])
    # a non-leaf can be written too: the gradient of the overwritten entries goes to the new value only
    x = ta.tensor(rng.standard_normal(4), requires_grad=True)
    y = x * 3.0
    y[0] = b[1]
    y.sum().backward()
    assert x.grad.tolist()[0] == 0.0 and x.grad.tolist()[1:] == [3.0, 3.0, 3.0] and b.grad.tolist()[1] == 1.0


def test_writes_after_a_read_compute_and_writes_into_saved_values_are_refused():
    v = ta.tensor([1.0, 2.0], requires_grad=True)
    h = ta.zeros(3, 2)
    h[0] = v
    h[1] = h[0] * 2  # h[0] was read before: its node keeps h's old node, so this computes (as PyTorch)
    h.sum().backward()
    assert v.grad.tolist() == [3.0, 3.0]  # 1 from h[0], 2 from h[1] = 2 h[0]
    e = v.exp()
    e[0] = ta.tensor(5.0, requires_grad=True)  # exp saved its output, which this write changes
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        e.sum().backward()
    p = ta.nn.Parameter(ta.zeros(2))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        p[0] = v[0]
    with ta.no_grad():
        h2 = ta.zeros(2)
        h2[0] = v[0]  # under no_grad a write is a plain copy
    assert not h2.requires_grad and h2.tolist() == [1.0, 0.0]
