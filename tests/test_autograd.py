"""The engine's graph semantics (tinyattn/autograd.py): PyTorch's rules for freeing the graph, version
counters, and how .grad is accumulated. Every expected gradient here is derived by hand in a comment."""
import gc
import weakref

import numpy as np
import pytest

import tinyattn as ta
from tinyattn.autograd import Function


def leaf(values):
    return ta.tensor(np.array(values, dtype=np.float64), requires_grad=True)


# ---------------------------------------------------------------- accumulation
class TimesTwoSavedGrad(Function):
    """y = 2x, whose backward returns an array it saved in forward (legal: nothing forbids it)."""
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(np.full(x.shape, 2.0))
        return 2 * x

    @staticmethod
    def backward(ctx, g):
        (two,) = ctx.saved_tensors
        return two  # g is 1 below, so d(2x)/dx * g = 2: the saved array itself


def test_a_backward_that_returns_a_saved_array_accumulates_2_4_6():
    # Three backward passes of d(2x)/dx = 2 add up to 2, 4, 6. Keeping the returned array as .grad and
    # then adding into it in place would double the saved array too, giving 2, 4, 8.
    x = leaf([1.0])
    y = TimesTwoSavedGrad.apply(x)
    seen = []
    for _ in range(3):
        y.backward(retain_graph=True)
        seen.append(float(x.grad))
    assert seen == [2.0, 4.0, 6.0]


def test_first_gradient_is_a_copy_of_no_other_array():
    # x.grad must not share memory with the caller's gradient or with the graph.
    x = leaf([1.0, 2.0])
    g = np.array([5.0, 7.0])
    x.backward(g)  # a leaf's own backward: d x / d x = identity, so x.grad = g
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 7.0])
    assert not np.shares_memory(x.grad.numpy(), g)
    x.backward(g)
    np.testing.assert_array_equal(g, [5.0, 7.0])  # the caller's array is untouched
    np.testing.assert_array_equal(x.grad.numpy(), [10.0, 14.0])


def test_linear_gradients_are_kept_uncopied_and_still_accumulate_correctly():
    # y = x W^T + b, loss = sum(y * c): dW = c^T x, db = sum of c over rows, dx = c W (derived by hand).
    # _Linear promises new arrays, so .grad keeps them without a copy; each must still be its own memory.
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    W = leaf([[1.0, 0.0], [2.0, -1.0], [0.5, 0.5]])
    b = leaf([0.0, 1.0, 2.0])
    c = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 1.0]])
    loss = (ta.nn.functional.linear(x, W, b) * ta.tensor(c)).sum()
    loss.backward(retain_graph=True)
    dW, db, dx = c.T @ x.numpy(), c.sum(axis=0), c @ W.numpy()
    np.testing.assert_array_equal(W.grad.numpy(), dW)
    np.testing.assert_array_equal(b.grad.numpy(), db)
    np.testing.assert_array_equal(x.grad.numpy(), dx)
    grads = [W.grad.numpy(), b.grad.numpy(), x.grad.numpy()]
    for i, a in enumerate(grads):
        for other in grads[i + 1:] + [x.numpy(), W.numpy(), b.numpy(), c]:
            assert not np.shares_memory(a, other)
    loss.backward()  # a second pass adds the same gradients in place: twice each
    np.testing.assert_array_equal(W.grad.numpy(), 2 * dW)
    np.testing.assert_array_equal(b.grad.numpy(), 2 * db)
    np.testing.assert_array_equal(x.grad.numpy(), 2 * dx)


def test_a_weight_used_by_two_linears_gets_the_sum_in_its_own_memory():
    # y = sum(x W^T) + sum(z W^T): dW = (column sums of ones) = [sum of x rows + sum of z rows] per output row
    x, z = ta.tensor([[1.0, 2.0]]).double(), ta.tensor([[3.0, -1.0]]).double()  # (the weight is float64: a float32 input would be refused, as in PyTorch)
    W = leaf([[1.0, 1.0]])
    (ta.nn.functional.linear(x, W).sum() + ta.nn.functional.linear(z, W).sum()).backward()
    np.testing.assert_array_equal(W.grad.numpy(), [[4.0, 1.0]])


def test_a_tensor_used_twice_gets_the_sum_and_neither_path_is_written_into():
    # y = x * x + x: dy/dx = 2x + 1 = [3, 5] at x = [1, 2]
    x = leaf([1.0, 2.0])
    (x * x + x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 5.0])


# ---------------------------------------------------------------- the graph is freed
def test_second_backward_raises_pytorchs_message():
    x = leaf([1.0, 2.0])
    loss = (x * x).sum()
    loss.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])  # the failed call added nothing


def test_retain_graph_allows_a_second_backward_and_the_gradients_add():
    # d/dx sum(x^2) = 2x = [2, 4]; twice: [4, 8]
    x = leaf([1.0, 2.0])
    loss = (x * x).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 8.0])
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()  # the second call did not retain


def test_a_shared_subgraph_is_freed_by_the_first_loss():
    x = leaf([0.5])
    h = x.tanh()
    l1, l2 = h.sum(), (h * h).sum()
    l1.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        l2.backward()


def test_backward_frees_the_saved_arrays_and_intermediate_tensors():
    x = leaf(np.ones((4, 4)))
    h = x.exp()
    tensor_probe, saved_probe = weakref.ref(h), weakref.ref(h._data)  # exp saves its output's array
    loss = (h * 3.0).sum()
    del h
    gc.collect()
    assert tensor_probe() is None  # the graph holds nodes, not tensors (as PyTorch)
    assert saved_probe() is not None  # ... and what ExpBackward saved
    loss.backward()
    gc.collect()
    assert saved_probe() is None  # freed by backward, though loss is still alive
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.e)  # d/dx 3 exp(x) at x = 1


def test_gradcheck_of_a_function_with_two_outputs_of_one_graph():
    x = leaf([0.3, -0.2, 0.9])
    assert ta.gradcheck(lambda t: (t.tanh(), t.tanh() * t), [x])


# ---------------------------------------------------------------- version counters
def test_in_place_change_of_a_saved_tensor_raises():
    # The case: y = sum(x * w); w[0] = 100 before backward. Without the check x.grad = [100, w1].
    x, w = leaf([1.0, 2.0]), ta.tensor([3.0, 4.0], dtype=ta.float64)
    y = (x * w).sum()
    assert w._version == 0
    w[0] = 100.0
    assert w._version == 1
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[float64 tensor of shape \(2,\)\] "
                                           r"is at version 1; expected version 0 instead"):
        y.backward()


def test_zero_on_a_saved_leaf_under_no_grad_raises():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    with ta.no_grad():
        x.zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_in_place_change_through_a_view_is_seen():
    # w.T is a view of w: changing the view changes what MatMul saved.
    x, w = leaf(np.ones((1, 2))), ta.tensor(np.eye(2))
    wt = w.T
    y = (x @ wt).sum()
    wt.mul_(2.0)
    assert w._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_change_of_an_unsaved_input_is_allowed():
    # Add saves nothing, so changing one of its inputs after forward can not change its gradient.
    a = ta.tensor([0.0, 1.0], dtype=ta.float64)
    x = leaf([0.0, 0.0])
    y = (x + a).sum()  # Add saves nothing: dy/dx = 1
    a.fill_(5.0)
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])


def test_detach_shares_the_version_counter_and_data_does_not():
    w = ta.tensor([1.0, 2.0])
    w.detach().add_(1.0)
    assert w._version == 1
    w.data.add_(1.0)  # as in PyTorch: .data is outside autograd's checks
    assert w._version == 1
    np.testing.assert_array_equal(w.numpy(), [3.0, 4.0])


def test_every_in_place_op_bumps_the_version():
    t = ta.zeros(2, 3)
    ops = [lambda: t.zero_(), lambda: t.fill_(1.0), lambda: t.copy_(ta.ones(2, 3)), lambda: t.add_(1.0),
           lambda: t.sub_(1.0), lambda: t.mul_(2.0), lambda: t.div_(2.0), lambda: t.clamp_(min=0.0),
           lambda: t.masked_fill_(ta.ones(3).bool(), 0.0), lambda: t.index_fill_(0, [1], 1.0),
           lambda: t.scatter_(1, ta.tensor([[0], [2]]), 5.0), lambda: t.__setitem__(0, 1.0),
           lambda: t.__iadd__(1.0)]
    for i, op in enumerate(ops, 1):
        op()
        assert t._version == i


class Cube(Function):
    """a^3, saving its input: a change of that input after forward must be caught."""
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a ** 3

    @staticmethod
    def backward(ctx, g):
        return 3 * ctx.saved_tensors[0] ** 2 * g


def test_a_custom_function_that_saves_its_input_is_checked_too():
    x = leaf([1.0, 2.0])
    y = Cube.apply(x).sum()
    with ta.no_grad():
        x.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    z = Cube.apply(x).sum()  # a new forward saves the new values: d/dx x^3 = 3x^2 = [12, 48] at x = [2, 4]
    z.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [12.0, 48.0])


# ---------------------------------------------------------------- writers outside the in-place methods
# An optimizer step, nn.init and load_state_dict write into a parameter's array; PyTorch counts each
# as an in-place change (they run under no_grad), so a graph built before them refuses to backward.
MODIFIED = "one of the variables needed for gradient computation has been modified by an inplace operation"


def _linear_graph():
    """A Linear layer (float64) and a loss whose backward needs the weight: dL/dx = g @ W."""
    ta.manual_seed(0)
    lin = ta.nn.Linear(3, 2).double()
    x = ta.randn(4, 3, dtype=ta.float64, requires_grad=True)
    return lin, x, (lin(x) ** 2).sum()


@pytest.mark.parametrize("make", [
    lambda ps: ta.optim.SGD(ps, lr=0.1),
    lambda ps: ta.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1),
    lambda ps: ta.optim.Adam(ps, lr=0.1),
    lambda ps: ta.optim.AdamW(ps, lr=0.1, weight_decay=0.1),
], ids=["SGD", "SGD-nesterov", "Adam", "AdamW"])
def test_an_optimizer_step_counts_as_an_in_place_change(make):
    lin, x, loss = _linear_graph()
    opt = make(lin.parameters())
    for p in lin.parameters():
        p.grad = ta.ones(p.shape, dtype=p.dtype)  # a gradient from some other graph
    before = lin.weight._version
    opt.step()
    assert lin.weight._version == before + 1 and lin.bias._version == 1
    with pytest.raises(RuntimeError, match=MODIFIED):
        loss.backward()


def test_a_parameter_without_a_gradient_is_not_stepped_and_not_counted():
    lin, x, loss = _linear_graph()
    lin.bias.grad = ta.ones(2, dtype=ta.float64)
    ta.optim.SGD(lin.parameters(), lr=0.1).step()
    assert lin.weight._version == 0 and lin.bias._version == 1
    loss.backward()  # the weight, which the graph saved, is unchanged: backward works


def test_an_ordinary_train_loop_still_works():
    # zero_grad, forward, backward, step: each forward saves the weights as they are after the last step.
    lin, x, _ = _linear_graph()
    opt = ta.optim.SGD(lin.parameters(), lr=0.01)
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = (lin(x) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert lin.weight._version == 5
    assert all(b < a for a, b in zip(losses, losses[1:]))  # gradient descent on a convex loss, small lr


def test_zero_grad_without_set_to_none_zeroes_in_place():
    lin, x, loss = _linear_graph()
    loss.backward()
    g = lin.weight.grad
    ta.optim.SGD(lin.parameters(), lr=0.1).zero_grad(set_to_none=False)
    assert lin.weight.grad is g and g._version == 1
    np.testing.assert_array_equal(g.numpy(), np.zeros((2, 3)))


def test_load_state_dict_counts_as_an_in_place_change():
    lin, x, loss = _linear_graph()
    lin.load_state_dict({k: 2 * v for k, v in lin.state_dict().items()})
    assert lin.weight._version == 1 and lin.bias._version == 1
    with pytest.raises(RuntimeError, match=MODIFIED):
        loss.backward()


@pytest.mark.parametrize("fill", [
    ta.nn.init.zeros_, ta.nn.init.ones_, lambda w: ta.nn.init.constant_(w, 0.5), ta.nn.init.normal_,
    ta.nn.init.uniform_, ta.nn.init.xavier_uniform_, ta.nn.init.xavier_normal_, ta.nn.init.kaiming_uniform_,
    ta.nn.init.kaiming_normal_,
], ids=["zeros_", "ones_", "constant_", "normal_", "uniform_", "xavier_uniform_", "xavier_normal_",
        "kaiming_uniform_", "kaiming_normal_"])
def test_every_init_function_counts_as_an_in_place_change(fill):
    lin, x, loss = _linear_graph()
    fill(lin.weight)
    assert lin.weight._version == 1  # one write, even where one init calls another
    with pytest.raises(RuntimeError, match=MODIFIED):
        loss.backward()


def test_clip_grad_norm_changes_the_gradients_not_the_parameters():
    # As in PyTorch: the gradients' counters move, the parameters' do not, so the graph still works.
    lin, x, loss = _linear_graph()
    for p in lin.parameters():
        p.grad = ta.full(p.shape, 10.0, dtype=ta.float64)
    grads = [p.grad for p in lin.parameters()]
    ta.nn.utils.clip_grad_norm_(lin.parameters(), 1.0)
    assert [g._version for g in grads] == [1, 1] and lin.weight._version == 0
    # 8 gradients of 10 have norm 10 sqrt(8); clipped to norm 1 each is 1 / sqrt(8) (less the 1e-6 guard)
    np.testing.assert_allclose(grads[0].numpy(), 1 / np.sqrt(8), rtol=1e-6)
    for p in lin.parameters():
        p.grad = None
    loss.backward()


def test_writes_through_data_and_dtype_casts_are_not_counted_as_in_pytorch():
    # .data is autograd's escape hatch (its own counter), and Module.to gives each parameter new memory,
    # so the arrays the graph saved keep their old values: nothing to refuse.
    lin, x, loss = _linear_graph()
    w_old = lin.weight.numpy().copy()
    lin.weight.data[0, 0] = 5.0
    lin.weight.data.copy_(ta.tensor(w_old))
    lin.float()
    assert lin.weight._version == 0 and lin.weight.dtype == np.float32
    loss.backward()
    # L = sum((x W^T + b)^2): dL/dx = 2 (x W^T + b) W, with the W of forward time
    y = x.numpy() @ w_old.T + lin.bias.numpy().astype(np.float64)
    np.testing.assert_allclose(x.grad.numpy(), 2 * y @ w_old, rtol=1e-6)


def test_matmul_and_linear_keep_only_what_a_gradient_needs():
    # y = x @ w: dx = g w^T needs w, dw = x^T g needs x. With x constant only x is kept, so a step that
    # changes w after forward is no error (as in PyTorch), while a change of x still is.
    x = ta.tensor(np.array([[1.0, 2.0]]))
    w = leaf([[3.0], [4.0]])
    y = x @ w
    with ta.no_grad():
        w.mul_(10.0)
    y.backward(ta.ones(1, 1, dtype=ta.float64))
    np.testing.assert_array_equal(w.grad.numpy(), [[1.0], [2.0]])  # x^T g, x as it was
    y = x @ w
    x.mul_(2.0)
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward(ta.ones(1, 1, dtype=ta.float64))
    # the same through nn.Linear: a first layer's input needs no gradient, so stepping its weight is fine
    lin, _, _ = _linear_graph()
    xc = ta.randn(4, 3, dtype=ta.float64)
    loss = lin(xc).sum()
    opt = ta.optim.SGD(lin.parameters(), lr=0.1)
    for p in lin.parameters():
        p.grad = ta.ones(p.shape, dtype=p.dtype)
    opt.step()
    opt.zero_grad()
    loss.backward()  # dW = g^T x with g = 1: every row of dW is the column sums of x
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.tile(xc.numpy().sum(axis=0), (2, 1)), rtol=1e-12)


def test_grad_fn_names_the_op_that_made_a_tensor_and_is_none_off_the_graph():
    # PyTorch's idiom `y.grad_fn is None` tells a leaf (or a no_grad result) from an op's output
    x = ta.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    assert x.grad_fn is None and x.is_leaf
    assert repr(y.grad_fn) == "<MulBackward>" and y.grad_fn.name() == "MulBackward"
    assert (y @ x).grad_fn.name() == "MatMulBackward"
    assert y.detach().grad_fn is None and y.data.grad_fn is None
    with ta.no_grad():
        assert (x * 3.0).grad_fn is None
    assert (ta.tensor([1.0]) * 3.0).grad_fn is None  # no input needs a gradient: nothing recorded
