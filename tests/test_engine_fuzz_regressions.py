"""Regression cases the differential fuzzer (tests/engine_fuzz.py) found: one short test per class.

Each test is the minimal program of one class where tinyattn differed from PyTorch 2.13, with the
result PyTorch gives, derived here without PyTorch (by hand, by NumPy, or by finite differences).
The comment above each test names what tinyattn did when the class was found.
"""
from __future__ import annotations

import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck


def _fd(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the scalar NumPy function f at x, over every element."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


# -- values ---------------------------------------------------------------------------------------
# found: torch.tensor([0.71], dtype=float64) held 0.7099999785423279 (the list went through float32)
def test_tensor_from_python_floats_in_float64_keeps_every_digit():
    vals = [0.71, -1.13, 0.1, 1 / 3]
    t = torch.tensor(vals, dtype=torch.float64)
    assert t.dtype == torch.float64
    assert t.tolist() == vals  # exactly: a Python float is a float64
    assert torch.tensor([[0.71, 0.3]], dtype=torch.float64, requires_grad=True).tolist() == [[0.71, 0.3]]


# found: torch.tensor(ndarray) shared the array's memory and strides (a sliced array made .view raise)
def test_torch_tensor_copies_an_array_and_from_numpy_shares_it():
    a = np.array([[1., 2., 3.], [4., 5., 6.]])
    t = torch.tensor(a[:, 1:])
    f = torch.from_numpy(a)
    a[0, 1] = 7.
    assert t.tolist() == [[2., 3.], [5., 6.]]          # a copy: the write is not seen
    assert f.tolist() == [[1., 7., 3.], [4., 5., 6.]]  # shared: the write is seen
    assert t.is_contiguous()
    assert t.view(-1).tolist() == [2., 3., 5., 6.]


# found: x.t() of a 1-D x returned x itself and x.flatten() a new view (PyTorch: the other way round)
def test_1d_t_is_a_new_view_and_flatten_is_the_tensor_itself():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    assert x.t() is not x
    assert x.flatten() is x
    h = x * 1.0
    v = h.t()
    v[0] = 5.  # a view: the write reaches h
    assert h.tolist() == [5., 2., 3.]


# found: index_select(1, ...) and x[:, idx] gave non-contiguous results, so .view(-1) raised
def test_index_results_are_contiguous():
    x = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    for r in (x.index_select(1, torch.tensor([2, 0])), x[:, [2, 0]]):
        assert r.is_contiguous()
        assert r.view(-1).tolist() == [3., 1., 6., 4.]
    assert x.index_select(0, torch.tensor([1, 1])).is_contiguous()


# -- views ----------------------------------------------------------------------------------------
# found: expand() was a copy, so a later write into its base was not seen (x.grad [[4, 4]], PyTorch [[0, 0]])
def test_expand_is_a_view_of_its_base():
    x = torch.tensor([[1., 2.]], requires_grad=True)
    h = x * 2
    e = h.expand(2, 2)
    h[0] = 0.
    assert e.tolist() == [[0., 0.], [0., 0.]]
    e.sum().backward()
    assert x.grad.tolist() == [[0., 0.]]


# found: writing a size-1 slice of an expanded tensor raised "more than one element of the written-to
# tensor refers to a single memory location"; a dim of size 1 never repeats an element
def test_write_into_size_one_slice_of_expanded_view():
    x = torch.tensor([[1., 2., 3.], [4., 5., 6.]], dtype=torch.float64, requires_grad=True)
    h = x * 2
    e = h.expand(2, 2, 3)
    e[:1].mul_(2)  # e[:1] is h itself, seen through a stride-0 dim of size 1
    assert h.tolist() == (4 * x.detach().numpy()).tolist()
    e.sum().backward()  # e.sum() = 2 * sum(h) = 2 * sum(4 x)
    assert x.grad.tolist() == [[8.] * 3] * 2
    with pytest.raises(RuntimeError, match="single memory location"):
        (x * 2).expand(2, 2, 3).mul_(2)  # a size-2 stride-0 dim: each element written twice


# found: retain_grad() did not see a later write through a view (h.grad [4, 72], PyTorch [4, 24])
def test_retain_grad_sees_a_later_write_through_a_view():
    x = torch.tensor([1., 2.], requires_grad=True)
    h = x * 2
    h.retain_grad()
    h[1:].mul_(3)  # h is now [2, 12]
    (h * h).sum().backward()
    assert h.grad.tolist() == [4., 24.]     # d(h.h)/dh at the final h
    assert x.grad.tolist() == [8., 144.]    # d/dx of 4x0^2 + 36x1^2


# -- the multi-output-view rule and overlapping operands -------------------------------------------
# found: in-place writes into outputs of split/chunk/unbind computed; PyTorch refuses them when grad is recorded
@pytest.mark.parametrize("take", ["h.split([1, 2], dim=-1)[0]", "h.chunk(2)[0]", "h.unbind(0)[1]",
                                  "h.split(1, 1)[2]"])
def test_split_chunk_unbind_outputs_refuse_inplace(take):
    x = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    h = x * 1.0
    part = eval(take)
    with pytest.raises(RuntimeError, match="multiple views"):
        part.mul_(2)
    with torch.no_grad():  # without a graph the write is allowed, and reaches the base
        h2 = x * 1.0
        h2.chunk(2)[0].mul_(2)
    assert h2.tolist() == [[2., 4., 6.], [4., 5., 6.]]


def test_qkv_split_then_scale_in_place_refuses():
    qkv = torch.tensor([[1., 2., 3.]], requires_grad=True) * 1.0
    q, k, v = qkv.split(1, dim=-1)
    with pytest.raises(RuntimeError, match="multiple views"):
        q *= 0.5


# found: y[1:].add_(y[:-1]) computed (a sliding sum); PyTorch refuses partly overlapping operands
def test_overlapping_operands_refuse():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    h = x * 1.0
    with pytest.raises(RuntimeError, match="single memory location"):
        h[1:].add_(h[:-1])
    h2 = torch.tensor([[1., 2.], [3., 4.]]) * 1.0
    h2[1:].add_(h2[:-1])  # rows 1 and 0 do not overlap: allowed
    assert h2.tolist() == [[1., 2.], [4., 6.]]
    h3 = torch.tensor([1., 2.]) * 1.0
    h3.mul_(h3)  # the very same memory: allowed
    assert h3.tolist() == [1., 4.]


# -- what backward reads (saved tensors and version counters) --------------------------------------
# found: t.mul_(t) then backward computed [2, 4]; PyTorch: mul saved t, which the write changed
def test_self_mul_in_place_then_backward_raises():
    x = torch.tensor([1., 2.], requires_grad=True)
    t = x * 1.0
    t.mul_(t)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        t.sum().backward()


def _ln(a: np.ndarray) -> np.ndarray:
    m = a.mean(-1, keepdims=True)
    return (a - m) / np.sqrt(((a - m) ** 2).mean(-1, keepdims=True) + 1e-5)


LN_X = np.array([[1., 2., 4.], [0., -1., 3.]])
LN_C = np.array([[1., 2., 3.], [3., 1., 2.]])


# found: layer_norm without weight kept its output for backward, so writing the output (or a detach()
# of it) in place gave wrong gradients silently
@pytest.mark.parametrize("write", ["y.add_(1)", "y.detach().mul_(2)"])
def test_layer_norm_without_weight_output_written_in_place(write):
    x = torch.tensor(LN_X, dtype=torch.float64, requires_grad=True)
    y = F.layer_norm(x, (3,))
    exec(write)
    (y * torch.tensor(LN_C, dtype=torch.float64)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), _fd(lambda a: (_ln(a) * LN_C).sum(), LN_X), rtol=1e-6, atol=1e-8)


# found: layer_norm saved no copy of its input, so writing the input after it went unnoticed
def test_layer_norm_input_written_after_it_raises_at_backward():
    x = torch.tensor(LN_X, dtype=torch.float64, requires_grad=True)
    h = x * 1.0
    y = F.layer_norm(h, (3,))
    h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        (y * torch.tensor(LN_C, dtype=torch.float64)).sum().backward()


def _sdpa(a: np.ndarray) -> np.ndarray:
    s = a @ a.T / np.sqrt(a.shape[-1])
    w = np.exp(s - s.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ a


# found: SDPA kept its output for backward, so `y += 1` after it raised at backward
def test_sdpa_output_written_in_place_then_backward():
    a = np.array([[1., 2.], [3., 4.]]) * 0.3
    x = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    y = F.scaled_dot_product_attention(x, x, x)
    y += 1
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), _fd(lambda b: _sdpa(b).sum(), a), rtol=1e-6, atol=1e-8)


# found: buf[None] = v with v of shape (1, n) crashed at backward ("Overwrite.backward returned a
# gradient of shape (n,) for input 1, which has shape (1, n)")
def test_setitem_none_with_leading_one_backward():
    x = torch.tensor([1., 2., 3.], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([[5., 6., 7.]], dtype=torch.float64, requires_grad=True)
    buf = x * 1.0
    buf[None] = y * 2
    (buf * torch.tensor([1., 2., 3.], dtype=torch.float64)).sum().backward()
    assert buf.tolist() == [10., 12., 14.]
    assert x.grad.tolist() == [0., 0., 0.]         # every element was overwritten
    assert y.grad.tolist() == [[2., 4., 6.]]


# -- requires_grad, .data, no_grad views ------------------------------------------------------------
# found: w.requires_grad_(False) after the graph was built: tinyattn still filled w.grad
def test_requires_grad_false_after_graph_built_leaves_grad_none():
    w = torch.tensor([1., 2.], requires_grad=True)
    loss = (w * w).sum()
    w.requires_grad_(False)
    loss.backward()
    assert w.grad is None


# found: w.data = ... was not seen by a graph built before (w.grad [2, 4], PyTorch [20, 40])
def test_data_assignment_is_seen_by_an_existing_graph():
    w = torch.tensor([1., 2.], requires_grad=True)
    loss = (w * w).sum()
    w.data = torch.tensor([10., 20.])
    loss.backward()  # MulBackward reads the saved w, which is w's (new) data
    assert w.grad.tolist() == [20., 40.]


# found: a row viewed under no_grad, its base then updated under no_grad: repr(row) and
# row.requires_grad raised "modified inplace with grad mode enabled" (nothing was done with grad on)
def test_no_grad_view_after_no_grad_update_can_be_read():
    w = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    with torch.no_grad():
        row = w[0]
        w.sub_(0.1 * w)
    assert "0.9" in repr(row)
    _ = row.requires_grad
    np.testing.assert_allclose(row.tolist(), [0.9, 1.8], rtol=1e-6)


# found: backward through a view taken under no_grad raised "this tensor does not require grad";
# PyTorch runs it (the no_grad view is cut from the graph: no gradient reaches its base)
def test_backward_through_a_no_grad_view_runs():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    with torch.no_grad():
        v = x[1:]
    (v * 2).sum().backward()
    assert x.grad is None
    h = x * 2
    with torch.no_grad():
        r = h[0]
    (r * 3).sum().backward()
    assert x.grad is None


# -- second backward -------------------------------------------------------------------------------
# found: torch.add(x, x, alpha=2) could not be backwarded twice with retain_graph=True
def test_add_with_alpha_backward_twice():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = torch.add(x, x, alpha=2)
    loss = (y * y).sum()  # 9 x^2
    loss.backward(retain_graph=True)
    loss.backward()
    assert x.grad.tolist() == [36., 72.]   # twice 18 x


# -- the API the programs use ----------------------------------------------------------------------
@pytest.mark.parametrize("name,np_fn,np_grad", [
    ("relu_", lambda a: np.maximum(a, 0), lambda a: (a > 0) * 1.0),
    ("exp_", np.exp, np.exp),
    ("sigmoid_", lambda a: 1 / (1 + np.exp(-a)), lambda a: np.exp(-a) / (1 + np.exp(-a)) ** 2),
    ("tanh_", np.tanh, lambda a: 1 - np.tanh(a) ** 2),
])
def test_inplace_activations(name, np_fn, np_grad):
    a = np.array([-1.5, -0.2, 0.3, 1.1])
    x = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    h = x * 1.0
    out = getattr(h, name)()
    assert out is h
    np.testing.assert_allclose(h.tolist(), np_fn(a), rtol=1e-12)
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np_grad(a), rtol=1e-9)


def test_relu_inplace_flags():
    x = torch.tensor([-1., 2.], requires_grad=True)
    h = x * 1.0
    assert F.relu(h, inplace=True) is h
    assert h.tolist() == [0., 2.]
    h2 = x * 1.0
    assert torch.nn.ReLU(inplace=True)(h2) is h2
    (h + h2).sum().backward()
    assert x.grad.tolist() == [0., 2.]


def test_select_diagonal_mT_are_views():
    x = torch.tensor([[1., 2., 3.], [4., 5., 6.]], dtype=torch.float64, requires_grad=True)
    h = x * 1.0
    s, d, m = h.select(1, 2), h.diagonal(), h.mT
    assert s.tolist() == [3., 6.] and d.tolist() == [1., 5.] and m.tolist() == [[1., 4.], [2., 5.], [3., 6.]]
    h[0, 0] = 9.
    assert d.tolist() == [9., 5.] and m[0, 0].item() == 9.
    assert gradcheck(lambda a: a.select(1, 2) * 2 + a.diagonal().sum() + a.mT.sum(0), [x])


def test_detach_in_place_and_retains_grad():
    x = torch.tensor([1., 2.], requires_grad=True)
    h = x * 2
    assert h.retains_grad is False
    h.retain_grad()
    assert h.retains_grad is True
    d = x * 3
    assert d.detach_() is d and d.requires_grad is False and d.grad_fn is None
    with pytest.raises(RuntimeError, match="detach views in-place"):
        (x * 1.0)[0:].detach_()


def test_autograd_grad_returns_gradients_without_touching_grad():
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([3., 4.], requires_grad=True)
    loss = (x * w).sum()
    gx, gw = torch.autograd.grad(loss, [x, w], retain_graph=True)
    assert gx.tolist() == [3., 4.] and gw.tolist() == [1., 2.]
    assert x.grad is None and w.grad is None
    unused = torch.tensor([1.], requires_grad=True)
    (gu,) = torch.autograd.grad(loss, [unused], allow_unused=True)
    assert gu is None


# -- memory layout of results ----------------------------------------------------------------------
# found (fuzz seeds 11, 28): softmax of a transposed tensor kept the transposed layout; PyTorch's is contiguous
def test_softmax_of_a_transposed_tensor_is_contiguous():
    x = torch.tensor([[1., 2., 3.], [4., 5., 6.]])
    y = F.softmax(x.t(), -1)
    assert y.is_contiguous()
    assert y.view(-1).shape == (6,)
    assert not (x.t() * 2).is_contiguous()  # elementwise ops keep the input's layout, as in PyTorch


# found (fuzz seed 122): clone() of a transposed tensor came back contiguous; PyTorch's clone keeps
# the strides (memory_format=torch.preserve_format), so .view(-1) on it raises as on the original
def test_clone_keeps_a_transposed_layout():
    x = torch.tensor([[1., 2., 3.], [4., 5., 6.]])
    c = x.t().clone()
    assert not c.is_contiguous()
    assert c.contiguous().is_contiguous()
    assert c.tolist() == [[1., 4.], [2., 5.], [3., 6.]]


# found (fuzz seed 2192): clone() of an expanded tensor kept the stride-0 layout (not contiguous);
# PyTorch keeps strides only of a dense, non-overlapping layout and otherwise returns a contiguous clone
def test_clone_of_an_expanded_tensor_is_contiguous():
    x = torch.tensor([[1., 2.], [3., 4.]])
    c = x.unsqueeze(0).expand(2, 2, 2).clone()
    assert c.is_contiguous()
    c[0, 0, 0] = 9.  # its own memory: one element changes
    assert c.tolist() == [[[9., 2.], [3., 4.]], [[1., 2.], [3., 4.]]]
    assert x[:, ::2].clone().is_contiguous()      # a strided slice: gaps are not kept either


# -- a second backward after the graph was freed (F10, F13) --------------------------------------
# found (fuzz seed 2058): after a backward freed the graph, a second backward through add(..., alpha=)
# of a leaf raised "backward through the graph a second time"; PyTorch's node keeps only alpha, nothing
# to free (a probe of 66 ops found sub(alpha=) and a transposing einsum doing the same). The rule: a node
# that saved no array may run again; add/sub scale by alpha in their own node, a one-operand einsum saves
# only its input's shape.
@pytest.mark.parametrize("op,grad", [("torch.add(x, x, alpha=2)", 3.), ("torch.sub(x, x, alpha=2)", -1.),
                                     ("x.add(torch.ones(2, 2), alpha=2)", 1.), ("torch.einsum('ij->ji', x)", 1.),
                                     ("torch.einsum('ij->j', x)", 1.)])
def test_backward_again_after_the_graph_was_freed_where_nothing_was_saved(op, grad):
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    h = eval(op)
    h.sum().backward()
    (h * 1.0).sum().backward()
    assert x.grad.tolist() == [[2 * grad] * 2] * 2   # twice d(sum h)/dx


# the other side of that rule: where the node saved arrays (x * 2.0 keeps 2.0, a two-operand einsum keeps
# its operands), the second backward raises, as PyTorch's does
@pytest.mark.parametrize("op", ["x * 2.0", "torch.einsum('ij,jk->ik', x, x)", "torch.add(x * x, x, alpha=2)"])
def test_backward_again_through_a_node_that_saved_arrays_raises(op):
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    h = eval(op)
    h.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        (h * 1.0).sum().backward()


# add_/sub_ with alpha: one node too (self += alpha * other); the values and gradients by hand
def test_inplace_add_and_sub_with_alpha():
    x = torch.tensor([1., 2.], requires_grad=True)
    w = torch.tensor([3., 5.], requires_grad=True)
    h = x.clone()                                # (x * 1.0 would keep the 1.0: a second backward raises)
    h.add_(w, alpha=2).sub_(x, alpha=0.5)        # h = x + 2 w - x / 2
    assert h.tolist() == [6.5, 11.]
    h.sum().backward()
    (h * 1.0).sum().backward()                   # nothing saved: runs again
    assert x.grad.tolist() == [1., 1.] and w.grad.tolist() == [4., 4.]   # twice 1/2 and twice 2


# alpha in add/sub's own node follows PyTorch's rule for it: a float alpha can not scale an integer result
# (a bool result takes an int alpha: True + 2 * True is still True)
def test_alpha_on_integer_and_bool_tensors():
    i = torch.tensor([1, 2])
    assert i.add(i, alpha=2).tolist() == [3, 6] and i.add(i, alpha=2).dtype == torch.int64
    assert i.add(torch.tensor([1., 2.]), alpha=2.5).tolist() == [3.5, 7.]   # a float result: fine
    for write in (lambda: i.add(i, alpha=2.5), lambda: i.clone().sub_(i, alpha=2.5)):
        with pytest.raises(RuntimeError, match="alpha must not be a floating point number"):
            write()
    b = torch.tensor([True, False])
    assert b.add(b, alpha=2).tolist() == [True, False]


# found (fuzz seed 3260): a masked assignment h[h > 0] = 0. was backwarded through again after its graph
# was freed; PyTorch's index_put saved the mask's indices, so the second backward raises
def test_second_backward_through_a_masked_assignment_raises():
    x = torch.tensor([-1., 2., 3.], requires_grad=True)
    h = x.clone()
    h[h > 0] = 0.
    h.sum().backward()
    assert x.grad.tolist() == [1., 0., 0.]
    with pytest.raises(RuntimeError, match="second time"):
        (h * 1.0).sum().backward()


# the mechanism, measured on 25 writes against PyTorch 2.13: a write at positions given by arrays (a mask,
# index tensors: PyTorch's index_put, masked_fill, index_fill, scatter save them) or into a view (PyTorch's
# CopySlices frees its copy of the view's op) runs once; a write of all of h (fill_, zero_, copy_, h[...] =,
# h[:] =) saved nothing and runs again. The gradients: the written places get 0, the rest 1.
@pytest.mark.parametrize("write,again,grad", [
    ("h[h > 0] = 0.", False, [[1., 0., 0.], [0., 1., 0.]]),
    ("h[[0, 1], [0, 2]] = 0.", False, [[0., 1., 1.], [1., 1., 0.]]),
    ("h.index_fill_(1, torch.tensor([0]), 0.)", False, [[0., 1., 1.], [0., 1., 1.]]),
    ("h.scatter_(1, torch.tensor([[0], [1]]), 0.)", False, [[0., 1., 1.], [1., 0., 1.]]),
    ("h[0] = 0.", False, [[0., 0., 0.], [1., 1., 1.]]),
    ("h[:, 1] = 0.", False, [[1., 0., 1.], [1., 0., 1.]]),
    ("h[0].fill_(1.)", False, [[0., 0., 0.], [1., 1., 1.]]),
    ("h[:] = 0.", True, [[0., 0., 0.], [0., 0., 0.]]),
    ("h[...] = 0.", True, [[0., 0., 0.], [0., 0., 0.]]),
    ("h.fill_(1.)", True, [[0., 0., 0.], [0., 0., 0.]]),
    ("h.copy_(torch.ones(2, 3))", True, [[0., 0., 0.], [0., 0., 0.]]),
])
def test_second_backward_after_a_write_raises_only_where_positions_or_a_view_were_kept(write, again, grad):
    x = torch.tensor([[-1., 2., 3.], [4., -5., 6.]], requires_grad=True)
    h = x.clone()
    exec(write)
    h.sum().backward()
    assert x.grad.tolist() == grad
    if again:
        (h * 1.0).sum().backward()
        assert x.grad.tolist() == [[2 * g for g in row] for row in grad]
    else:
        with pytest.raises(RuntimeError, match="second time"):
            (h * 1.0).sum().backward()


# -- views and writes (F11, F12, F14, F16) ----------------------------------------------------------
# found (probe of 66 ops x {write the output, write the input} then backward): a one-operand einsum
# that only permutes is a view in both libraries, but tinyattn's node saved its input, so a write into
# the view raised at backward; PyTorch's einsum is a permute there, whose backward reads nothing
def test_permuting_einsum_output_written_in_place_then_backward():
    x0 = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    x = x0 * 1.0
    h = torch.einsum('ij->ji', x)
    h.add_(1)
    assert x.tolist() == [[2., 3., 4.], [5., 6., 7.]]  # a view: the write reached x
    (h * torch.tensor([[0., 1.], [2., 3.], [4., 5.]])).sum().backward()
    assert x0.grad.tolist() == [[0., 2., 4.], [1., 3., 5.]]  # the weights, transposed back


# found (a probe of 96 ops x {write the input, write the output} then backward, against PyTorch 2.13): a
# two-operand einsum kept both operands, so a write into x after einsum('ij,jk->ik', x, c) raised at
# backward; dx needs only c (PyTorch's bmm keeps an operand only for the other's gradient)
def test_einsum_keeps_an_operand_only_for_the_others_gradient():
    c = torch.tensor([[0.5, -1.5], [2.0, 0.25]])
    x0 = torch.tensor([[1., -2.], [3., 0.5]], requires_grad=True)
    x = x0 * 1.0
    h = torch.einsum('ij,jk->ik', x, c)
    x.add_(1)                                   # x is not kept: no error
    h.sum().backward()
    assert x0.grad.tolist() == [[-1.0, 2.25], [-1.0, 2.25]]   # d(sum x c)/dx_ij = sum_k c_jk
    w = torch.tensor([[1., 0.], [0., 1.]], requires_grad=True)
    h = torch.einsum('ij,jk->ik', x, w)         # w needs a gradient: x is kept for it
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        h.sum().backward()


# found (fuzz seed 3436): after a write into the base, reading retains_grad of a split output raised
# the multi-output-view error; PyTorch raises it on grad_fn/is_leaf and use, and retains_grad answers
# from its flag: False, or True where retain_grad() was called before the write
@pytest.mark.parametrize("retain", [False, True])
def test_retains_grad_of_a_split_output_after_a_base_write_answers(retain):
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    h = x * 1.0
    _, s = h.chunk(2)
    if retain:
        s.retain_grad()
    h.mul_(2)
    assert s.retains_grad is retain
    assert s.requires_grad is True
    assert s.tolist() == [[6., 8.]]
    with pytest.raises(RuntimeError, match="multiple views"):
        _ = s.is_leaf


# found (live fuzz seed 5851): retain_grad() on a split output whose base was written since computed;
# PyTorch's retain_grad rebuilds the view's node (unless it is a leaf or already retained), so it raises there
def test_retain_grad_on_a_split_output_after_a_base_write_raises():
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    h = x * 1.0
    _, s = h.chunk(2)
    h.mul_(2)
    with pytest.raises(RuntimeError, match="multiple views"):
        s.retain_grad()
    with torch.no_grad():
        v = h[0]                      # a no_grad view is a leaf: nothing to rebuild, nothing raised
    h.mul_(2)
    v.retain_grad()
    assert v.retains_grad is False


# found (live fuzz seed 3968): the outputs of split/unbind of a tensor that does not require grad did not
# follow their base once it did; PyTorch makes them no_grad views there (their requires_grad is the base's,
# and after a write into the base any use raises its no_grad-view error)
@pytest.mark.parametrize("parts", ["n.chunk(2)", "n.unbind(0)"])
def test_split_outputs_of_a_tensor_without_grad_are_no_grad_views(parts):
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    n = torch.zeros(2, 2)
    a, b = eval(parts)
    a.mul_(2)                         # nothing requires grad: a plain write
    assert a.requires_grad is False
    n[0] = x[0]                       # the base now has a history
    assert a.requires_grad is True and b.requires_grad is True
    a.retain_grad()                   # a leaf (no node of its own): nothing to do, as PyTorch
    with pytest.raises(RuntimeError, match="no_grad mode and its base"):
        _ = b * 2


# found (fuzz seed 89 of the recorded set): a view taken under no_grad, its base then set to
# requires_grad_(False): a write into the view raised the no_grad-view error; PyTorch checks that rule
# only while the view requires grad (it follows its base), so it computes
def test_no_grad_view_of_a_base_that_no_longer_requires_grad_can_be_written():
    x = torch.tensor([0.5, -1.], requires_grad=True)
    with torch.no_grad():
        v = x[0]
    x.requires_grad_(False)
    v.mul_(2)
    assert v.tolist() == 1.0 and x.tolist() == [1.0, -1.0]


# found (replay seed 89): a no_grad view whose base was written under no_grad, read while the base did not
# require grad, was marked up to date; once the base required grad again, using the view computed. PyTorch
# rebuilds a view's history only while its base requires grad, so the no_grad view still raises then
def test_no_grad_view_raises_once_its_base_requires_grad_again():
    x = torch.tensor([1., 2.], requires_grad=True)
    with torch.no_grad():
        v = x[0]
        x.mul_(2)
    x.requires_grad_(False)
    assert (v * 1).requires_grad is False     # read while the base does not require grad: computes
    x.requires_grad_(True)
    assert v.requires_grad is True
    with pytest.raises(RuntimeError, match="no_grad mode and its base"):
        _ = v * 3


# found (fuzz seed 4324): e.copy_(e) on an expanded tensor raised the self-overlap error; PyTorch's copy_
# from the very same elements writes nothing (so checks no overlap), but counts and records the write: a
# backward through the expanded view then raises in the view's rewrite (PyTorch's CopySlices), as here
def test_copy_of_an_expanded_tensor_onto_itself_is_a_no_op():
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    e = (x * 1.0).expand(2, 2, 2)
    assert e.copy_(e) is e
    assert e.tolist() == [[[1., 2.], [3., 4.]]] * 2
    assert e._version == 1
    with pytest.raises(RuntimeError, match="more than one element"):
        e.sum().backward()
    c = torch.zeros(2).expand(3, 2)
    assert c.copy_(c[:]) is c and c._version == 1     # the same elements through another view: the same
    with pytest.raises(RuntimeError, match="more than one element"):
        c.add_(c)                                      # (add_ reads them: refused, as PyTorch)
