"""Issue 38: PyTorch's tensor model without exceptions -- views, writes into them, what ops save, and
when requires_grad / retain_grad are read. Every expected value is derived by hand in the comment next
to it (or by NumPy); where PyTorch raises, its message is quoted and matched. No torch here: the same
programs are compared with PyTorch 2 in tests/oracle/test_engine_views_torch.py.
"""
import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn as nn
import tinyattn.nn.functional as F

SELF_OVERLAP = "more than one element of the written-to tensor refers to a single memory location"
PARTIAL_OVERLAP = "some elements of the input tensor and the written-to tensor refer to a single memory location"
MODIFIED = "modified by an inplace operation"


def leaf(values, dtype=torch.float64):
    return torch.tensor(values, dtype=dtype, requires_grad=True)


# --- views share memory and version counter --------------------------------------------------------
def test_expand_is_a_view_so_a_later_write_into_its_base_reaches_its_gradient():
    x = leaf([[1.0, 2.0]])
    h = x * 2
    e = h.expand(2, 2)
    h[0] = 0.0  # e sees the zeros: e no longer depends on x
    e.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0]]


def test_expand_shares_memory_and_version_with_its_base():
    x = torch.zeros(1, 3)
    e = x.expand(2, 3)
    x.add_(1)
    assert e.tolist() == [[1.0] * 3] * 2 and e._version == x._version == 1
    assert e.stride() == (0, 1) and x.stride() == (3, 1)


def test_gradient_through_an_expanded_view_rebuilt_after_a_base_write_sums_the_copies():
    x = leaf([[1.0, 2.0, 3.0]])
    w = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64)
    h = x * 1
    e = h.expand(2, 3)
    h.mul_(2)  # e's node is rebuilt from h's new one: e = 2x copied twice
    (e * w).sum().backward()
    assert x.grad.tolist() == [[2 * (1 + 4), 2 * (2 + 5), 2 * (3 + 6)]]


@pytest.mark.parametrize("write", [
    lambda e: e.add_(1), lambda e: e.mul_(2), lambda e: e.copy_(torch.ones(2, 3)), lambda e: e.exp_(),
    lambda e: e.clamp_(min=1), lambda e: e.__setitem__(slice(None), 5.0), lambda e: e.fill_(torch.tensor(2.0)),
    lambda e: e.uniform_(),
])
def test_writes_that_read_or_copy_per_element_into_an_expanded_tensor_are_refused(write):
    e = torch.zeros(1, 3).expand(2, 3)
    with pytest.raises(RuntimeError, match=SELF_OVERLAP):
        write(e)


def test_writes_of_one_value_into_an_expanded_tensor_reach_its_base():
    x = torch.zeros(1, 3)
    e = x.expand(2, 3)
    e.fill_(1.0)
    assert x.tolist() == [[1.0, 1.0, 1.0]]
    e[0] = torch.tensor([1.0, 2.0, 3.0])  # e[0] is one copy: nothing is written twice
    assert x.tolist() == [[1.0, 2.0, 3.0]]
    e.masked_fill_(torch.tensor([True, False, False]), 7.0)
    e[:, [2]] = 9.0  # index tensors: PyTorch's index_put_
    e[1:].mul_(2)  # size 1 along the expanded dim: no alias inside the written view
    assert x.tolist() == [[14.0, 4.0, 18.0]]
    e.zero_()
    assert x.tolist() == [[0.0, 0.0, 0.0]]


def test_a_recorded_write_into_an_expanded_view_is_refused_by_backward_as_pytorch():
    x = leaf([[1.0, 2.0]])
    e = (x * 2).expand(2, 2)
    e.zero_()  # PyTorch allows the forward and refuses the backward of CopySlices
    with pytest.raises(RuntimeError, match=SELF_OVERLAP):
        e.sum().backward()


def test_t_of_a_1d_tensor_is_a_new_view_and_flatten_of_a_1d_tensor_is_itself():
    x = leaf([1.0, 2.0])
    y = x.t()
    assert y is not x and y._base is x and y.grad_fn is not None
    assert x.flatten() is x
    assert torch.tensor(3.0).flatten().shape == (1,)
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_select_diagonal_mt_narrow_write_into_their_base():
    x = torch.arange(9.0).reshape(3, 3)
    x.select(1, 2)[0] = 100.0
    x.diagonal().mul_(10)
    x.narrow(0, 2, 1).add_(1)
    x.mT[0, 1] = -1.0  # x[1, 0]
    assert x.tolist() == [[0.0, 1.0, 100.0], [-1.0, 40.0, 5.0], [7.0, 8.0, 81.0]]
    assert x.diagonal(1).tolist() == [1.0, 5.0] and x.diagonal(-1).tolist() == [-1.0, 8.0]
    b = torch.arange(6.0).reshape(1, 2, 3)
    assert b.mT.shape == (1, 3, 2) and b.mH.tolist() == b.mT.tolist() == [[[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]]
    with pytest.raises(RuntimeError, match="only supported on matrices"):
        torch.arange(3.0).mT


def test_diagonal_view_write_gradient():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    h = x * 1
    h.diagonal().mul_(3)  # h = [[3, 2], [3, 12]]
    (h * h).sum().backward()  # d/dx = 2 h * (3 on the diagonal, 1 off it)
    assert x.grad.tolist() == [[18.0, 4.0], [6.0, 72.0]]


def test_diagonal_and_select_gradients_by_finite_differences():
    x = torch.tensor(np.random.default_rng(0).normal(size=(3, 4)), requires_grad=True)
    assert torch.gradcheck(lambda t: t.diagonal(1) * t.select(0, 1)[1:], (x,))
    assert torch.gradcheck(lambda t: t.t().mT.expand(2, 3, 4), (x,))


# --- torch.tensor copies; as_tensor and from_numpy share --------------------------------------------
def test_tensor_of_an_ndarray_copies_it_densely():
    a = np.arange(10.0)
    t = torch.tensor(a[::2])
    a[0] = 99.0
    assert t.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0] and t.is_contiguous() and t.view(-1).shape == (5,)
    f = torch.tensor(np.asfortranarray(np.arange(6.0).reshape(2, 3)))  # the array's dim order kept, as PyTorch
    assert f.stride() == (1, 2)
    src = torch.ones(2)
    c = torch.tensor(src)
    src.add_(1)
    assert c.tolist() == [1.0, 1.0]


def test_as_tensor_and_from_numpy_share_memory():
    a = np.arange(4.0)
    t, u = torch.as_tensor(a), torch.from_numpy(a)
    a[0] = 99.0
    assert t.tolist()[0] == u.tolist()[0] == 99.0 and t.dtype == np.float64
    x = torch.ones(2)
    assert torch.as_tensor(x) is x and torch.as_tensor(x, dtype=torch.float64).dtype == np.float64
    assert torch.as_tensor([1.0, 2.0]).dtype == np.float32


def test_tensor_from_python_floats_in_float64_keeps_every_digit():
    assert torch.tensor([0.71], dtype=torch.float64).tolist() == [0.71]


# --- indexing results are laid out as PyTorch's ------------------------------------------------------
def test_index_select_and_index_tensor_results_are_contiguous():
    x = torch.arange(24.0).reshape(2, 3, 4)
    for y in (x.index_select(1, torch.tensor([0, 2])), x[:, [0, 2]], x[..., [1, 3]], x[:, :, torch.tensor([0, 1])]):
        assert y.is_contiguous()
        assert np.shares_memory(y.reshape(-1).numpy(), y.numpy())  # reshape aliases, as PyTorch
    assert x[..., [1, 3]].view(-1).tolist() == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0, 17.0, 19.0, 21.0, 23.0]


# --- writes PyTorch refuses -------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda h: h.split(2, dim=1)[0], lambda h: h.chunk(3, dim=1)[1], lambda h: h.unbind(0)[0],
    lambda h: h.split(2, dim=1)[0][0],
])
def test_outputs_of_split_chunk_unbind_refuse_recorded_inplace_writes(make):
    x = leaf(np.ones((2, 6)))
    q = make(x * 1)
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace. This view is the output of a "
                                           "function that returns multiple views"):
        q.mul_(2)


def test_outputs_of_split_take_inplace_writes_outside_the_graph():
    x = torch.zeros(2, 6)
    q, k, v = x.split(2, dim=1)
    q.fill_(1.0)  # nothing requires grad: a plain write into x
    h = leaf(np.ones((2, 6))) * 1
    a, b, c = h.split(2, dim=1)
    with torch.no_grad():
        a.mul_(5)
    assert x.sum().item() == 4.0 and h.sum().item() == 8 + 4 * 5
    with pytest.raises(RuntimeError, match="its base or another view of its base has been modified inplace"):
        b.grad_fn  # PyTorch refuses any use of a sibling after the write, and reading its grad_fn
    assert b.requires_grad


def test_overlapping_operands_are_refused_and_the_same_memory_is_not():
    y = torch.arange(5.0)
    with pytest.raises(RuntimeError, match=PARTIAL_OVERLAP):
        y[1:].add_(y[:-1])
    with pytest.raises(RuntimeError, match=PARTIAL_OVERLAP):
        y[1:] = y[:-1]
    with pytest.raises(RuntimeError, match=PARTIAL_OVERLAP):
        y[1:].copy_(y[:-1])
    y.add_(y)
    y[1:].copy_(y[:-1].clone())
    y[1:].copy_(y[:1])  # apart: y[0] broadcast
    assert y.tolist() == [0.0, 0.0, 0.0, 0.0, 0.0]


def test_mul_by_itself_in_place_then_backward_raises_and_add_does_not():
    x = leaf([1.0, 2.0])
    t = x * 1
    t.mul_(t)  # Mul saved t (as its other operand), then changed it
    with pytest.raises(RuntimeError, match=MODIFIED):
        t.sum().backward()
    u = x * 1
    u.add_(u)  # Add saves nothing: d(2x)/dx = 2
    u.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


# --- requires_grad, retain_grad and .data read when PyTorch reads them --------------------------------
def test_requires_grad_turned_off_after_the_graph_was_built_leaves_grad_none():
    w = leaf([1.0, 2.0])
    loss = (w * 3).sum()
    w.requires_grad_(False)
    loss.backward()
    assert w.grad is None


def test_retain_grad_sees_a_later_write_through_a_view():
    x = leaf([1.0, 2.0])
    h = x * 2
    h.retain_grad()
    h[1:].mul_(3)  # h = [2, 12]
    (h * h).sum().backward()
    assert h.grad.tolist() == [4.0, 24.0] and x.grad.tolist() == [8.0, 144.0] and h.retains_grad


def test_data_assigned_after_forward_is_what_backward_reads():
    w, x = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    loss = (w * x).sum()
    w.data = torch.tensor([10.0, 20.0], dtype=torch.float64)
    loss.backward()
    assert x.grad.tolist() == [10.0, 20.0] and w.grad.tolist() == [3.0, 4.0]


def test_a_view_taken_under_no_grad_after_a_no_grad_update_can_be_printed_and_asked():
    emb = leaf(np.ones((3, 2)))
    with torch.no_grad():
        row = emb[0]
    assert row.requires_grad and row.is_leaf  # as PyTorch: it follows its base, and has no history
    (row * 2).sum().backward()  # runs; no gradient reaches emb or row
    assert emb.grad is None and row.grad is None
    with torch.no_grad():
        emb.sub_(0.5)
    assert "0.5" in repr(row) and row.requires_grad
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and its base or another view"):
        row * 2  # using it in the graph is ambiguous: PyTorch raises, with this message


def test_writes_into_a_no_grad_view_with_grad_mode_on_are_refused():
    h = leaf(np.ones(3)) * 1
    with torch.no_grad():
        v = h[1:]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace"):
        v.add_(1)


# --- what ops save ----------------------------------------------------------------------------------
def _layer_norm_grad(x_values, write=None):
    x = leaf(x_values)
    y = F.layer_norm(x, (3,))
    if write is not None:
        write(y)
    (y * torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).sum().backward()
    return x.grad.numpy()


def test_layer_norm_without_weight_keeps_its_own_copy_for_backward():
    rows = [[1.0, 2.0, 4.0], [0.0, 3.0, 1.0]]
    clean = _layer_norm_grad(rows)
    assert np.allclose(clean.sum(axis=1), 0.0)  # layer norm's gradient has mean 0 along the row
    np.testing.assert_allclose(_layer_norm_grad(rows, lambda y: y.detach().mul_(5)), clean, rtol=1e-12)
    x = leaf(rows)
    assert torch.gradcheck(lambda t: F.layer_norm(t, (3,)), (x,))


def test_layer_norm_saves_its_input_so_a_later_write_into_it_raises():
    for weight in (None, torch.ones(3, dtype=torch.float64, requires_grad=True)):
        h = leaf([[1.0, 2.0, 4.0]]) * 1
        y = F.layer_norm(h, (3,), weight)
        h.add_(1)
        with pytest.raises(RuntimeError, match=MODIFIED):
            y.sum().backward()


def test_sdpa_keeps_its_output_only_for_4d_inputs_as_pytorchs_cpu_kernels():
    rng = np.random.default_rng(1)
    q4 = leaf(rng.normal(size=(1, 2, 3, 4)))
    y = F.scaled_dot_product_attention(q4, q4, q4)
    y += 1
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.sum().backward()
    q3 = leaf(rng.normal(size=(2, 3, 4)))
    F.scaled_dot_product_attention(q3, q3, q3).sum().backward()
    expected = q3.grad.numpy().copy()
    q3.grad = None
    y = F.scaled_dot_product_attention(q3, q3, q3)
    y += 1  # the composite path kept the weights, not y: y + 1 has y's gradient
    y.sum().backward()
    np.testing.assert_allclose(q3.grad.numpy(), expected, rtol=1e-12)
    assert torch.gradcheck(lambda t: F.scaled_dot_product_attention(t, t * 0.5, t), (q3,))


def test_add_with_alpha_backwards_twice_with_retain_graph():
    x = leaf([1.0, 2.0])
    y = torch.add(x, x, alpha=2)  # 3x
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


def test_setitem_none_with_leading_one_backward():
    x = leaf([1.0, 2.0, 3.0])
    buf = torch.zeros(3, dtype=torch.float64) * x
    buf[None] = (x * 2).reshape(1, 3)  # buf = 2x
    buf[0:3] = (buf * 1).reshape(1, 3)  # v may have more leading 1s than its place
    buf.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


# --- the API ---------------------------------------------------------------------------------------
def test_autograd_grad_returns_gradients_and_fills_no_grad():
    x, z = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = (x * x).sum()
    (gx,) = torch.autograd.grad(y, x, retain_graph=True)
    assert gx.tolist() == [2.0, 4.0] and x.grad is None
    gx, gz = torch.autograd.grad(y, [x, z], allow_unused=True)
    assert gx.tolist() == [2.0, 4.0] and gz is None
    h = x * 3
    a, b = h.sum(), (h * z).sum()  # two outputs: their gradients add
    gh, gz = torch.autograd.grad([a, b], [h, z], grad_outputs=[torch.tensor(2.0, dtype=torch.float64), None])
    assert gh.tolist() == [2 + 3.0, 2 + 4.0] and gz.tolist() == [3.0, 6.0] and z.grad is None
    with pytest.raises(RuntimeError, match="index 1 appears to not have been used in the graph"):
        torch.autograd.grad((x * 2).sum(), [x, z])
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.autograd.grad((x * 2).sum(), torch.ones(2))
    with pytest.raises(NotImplementedError, match="create_graph=True"):
        torch.autograd.grad((x * 2).sum(), x, create_graph=True)


@pytest.mark.parametrize("name, value, slope", [
    ("relu_", lambda v: max(v, 0.0), lambda v: float(v > 0)),
    ("exp_", np.exp, np.exp),
    ("sigmoid_", lambda v: 1 / (1 + np.exp(-v)), lambda v: np.exp(-v) / (1 + np.exp(-v)) ** 2),
    ("tanh_", np.tanh, lambda v: 1 - np.tanh(v) ** 2),
])
def test_inplace_activations(name, value, slope):
    xs = [-1.0, 2.0]
    plain = torch.tensor(xs, dtype=torch.float64)
    assert getattr(plain, name)() is plain and plain.tolist() == pytest.approx([value(v) for v in xs])
    x = leaf(xs)
    y = x * 1
    getattr(y, name)()
    y.sum().backward()
    assert x.grad.tolist() == pytest.approx([slope(v) for v in xs])
    t = x * 1
    getattr(t, name)()
    t.add_(1)  # it saved its output, which is t's memory: backward finds it changed, as PyTorch's
    with pytest.raises(RuntimeError, match=MODIFIED):
        t.sum().backward()


def test_relu_inplace_flags():
    x = leaf([-1.0, 2.0])
    y = x * 1
    assert F.relu(y, inplace=True) is y and y.tolist() == [0.0, 2.0]
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0]
    z = x * 1
    assert nn.ReLU(inplace=True)(z) is z
    nn.ReLU(inplace=True)(z)  # a second write into what the first saved: backward raises, as PyTorch's
    with pytest.raises(RuntimeError, match=MODIFIED):
        z.sum().backward()
    z = torch.tensor([-1.0, 2.0])
    assert F.relu(z).tolist() == [0.0, 2.0] and z.tolist() == [-1.0, 2.0]


def test_detach_in_place_and_retains_grad():
    x = leaf([1.0, 2.0])
    y = x * 2
    assert not y.retains_grad and not x.retains_grad
    y.retain_grad()
    assert y.retains_grad
    assert y.detach_() is y and not y.requires_grad and y.grad_fn is None and y.is_leaf
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        (x * 2)[0].detach_()


def test_layer_norm_backward_reads_data_assigned_after_forward_as_pytorch():
    x = leaf([[1.0, 2.0, 4.0]])
    y = F.layer_norm(x, (3,))  # saves x, its mean 7/3 and rstd; backward rebuilds xhat from x
    old = np.array([1.0, 2.0, 4.0])
    mean, rstd = old.mean(), 1 / np.sqrt(old.var() + 1e-5)
    x.data = torch.tensor([[0.0, 1.0, 5.0]], dtype=torch.float64)
    g = np.array([1.0, 2.0, 3.0])
    (y * torch.tensor(g, dtype=torch.float64)).sum().backward()
    xhat = (np.array([0.0, 1.0, 5.0]) - mean) * rstd  # the new x with the saved statistics
    expected = rstd * (g - g.mean() - xhat * (g * xhat).mean())
    np.testing.assert_allclose(x.grad.numpy()[0], expected, rtol=1e-12)


def test_index_result_of_a_transposed_tensor_keeps_its_layout_as_pytorch():
    x = torch.arange(24.0).reshape(2, 3, 4)
    y = x.mT[torch.tensor([1, 1])]  # PyTorch orders the result's dims by the source's strides: (12, 1, 4)
    assert y.stride() == (12, 1, 4) and not y.is_contiguous()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        y.view(-1)
    assert x.mT.index_select(0, torch.tensor([1, 0])).is_contiguous()  # index_select always is


def test_tensor_mm_and_bmm_methods():
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert a.mm(torch.tensor([[1.0], [1.0]])).tolist() == [[3.0], [7.0]]
    assert a[None].bmm(a[None]).tolist() == [[[7.0, 10.0], [15.0, 22.0]]]
    with pytest.raises(ValueError, match="2-D"):
        a[None].mm(a)
