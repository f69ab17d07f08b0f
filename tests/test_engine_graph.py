"""PyTorch's graph: nodes (grad_fn), in-place ops on non-leaves, writes into views, what each op saves.

Every expected value, gradient and raise here was measured with PyTorch 2.13 (float64) on the same
program, or derived by hand where the comment says so.
"""
import math

import numpy as np
import pytest

import tinyattn as ta
from tinyattn import gradcheck


def leaf(v):
    return ta.tensor(np.array(v, dtype=np.float64), requires_grad=True)


def const(v):
    return ta.tensor(np.array(v, dtype=np.float64))


X = [[0.5, -1.2, 2.0], [1.5, 0.3, -0.7]]
W = [[1.1, 0.4, -0.3], [0.2, 2.2, 0.9]]


# ---------------------------------------------------------------- the graph is made of nodes
def test_grad_fn_is_a_node_with_next_functions_and_leaves_accumulate_through_their_own():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    y = x * w + 1.0
    assert y.grad_fn.name() == "AddBackward" and not y.is_leaf and x.is_leaf and x.grad_fn is None
    (mul, _), (const_node, _) = y.grad_fn.next_functions
    assert mul.name() == "MulBackward" and const_node is None  # the constant 1.0 needs no gradient
    (ax, _), (aw, _) = mul.next_functions
    assert ax.name() == "AccumulateGrad" and ax.variable is x and aw.variable is w
    assert (x * 2).grad_fn.next_functions[0][0] is ax  # one AccumulateGrad per leaf, as PyTorch


def test_the_node_is_not_the_tensor_an_in_place_write_gives_a_new_node_reading_the_old_one():
    x = leaf([1.0, 2.0])
    h = x * 2
    old = h.grad_fn
    u = h * 3  # reads h before the write: keeps `old`
    h.add_(1.0)
    assert h.grad_fn is not old and h.grad_fn.next_functions[0][0] is old
    (u.sum() + h.sum()).backward()  # d/dx (6x) + d/dx (2x + 1) = 8 (by hand)
    assert x.grad.tolist() == [8.0, 8.0]
    v = x * 2
    s = v * v  # MulBackward saved v, which the write below changes: an error, as in PyTorch
    v.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        s.sum().backward()


# ---------------------------------------------------------------- the cases, with torch's values
def test_a_write_through_a_view_of_a_view_reaches_the_base_graph():
    w = leaf([1.0, 2, 3, 4])
    b = w * 2
    b[1:3][0] = 5.0
    b.sum().backward()
    assert w.grad.tolist() == [2.0, 0.0, 2.0, 2.0] and b.tolist() == [2.0, 5.0, 6.0, 8.0]


def test_a_write_of_a_graph_value_into_a_view_of_a_buffer_makes_the_buffer_require_grad():
    h = leaf([1.0, 2])
    out = ta.zeros(3, 2, dtype=np.float64)
    out[1][:] = h * 3
    assert out.requires_grad and out.grad_fn.name() == "CopySlicesBackward"
    (out.sum() + h.sum()).backward()
    assert h.grad.tolist() == [4.0, 4.0]


def test_writing_into_a_view_of_a_leaf_that_requires_grad_is_refused():
    u = leaf([1.0, 2, 3, 4])
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an in-place"):
        u[1:3][0] = 0.5
    assert u.tolist() == [1.0, 2.0, 3.0, 4.0]
    with ta.no_grad():
        u[1:3][0] = 0.5  # outside the graph it is a plain write, as an optimizer's
    assert u.tolist() == [1.0, 0.5, 3.0, 4.0]


@pytest.mark.parametrize("write", ["copy_", "add_"])
def test_copying_a_graph_value_into_a_constant_keeps_its_gradient(write):
    w = leaf([1.0, 2.0])
    c = ta.zeros(2, dtype=np.float64)
    getattr(c, write)(w)
    ((c * 3).sum() + w.sum()).backward()
    assert w.grad.tolist() == [4.0, 4.0]


def test_in_place_masked_fill_on_fresh_scores_trains_like_the_out_of_place_form():
    # the attention chapter's `scores.masked_fill_(mask, -torch.inf)` (torch computes; so does this)
    q, k = np.random.default_rng(0).standard_normal((2, 3, 4)), np.random.default_rng(1).standard_normal((2, 3, 4))
    mask = ta.tril(ta.ones(3, 3)) == 0
    weights = const(np.arange(18.0).reshape(2, 3, 3))

    def attention(in_place):
        def f(q, k):
            scores = q @ k.transpose(-2, -1)  # (2, 3, 4) @ (2, 4, 3) -> (2, 3, 3)
            scores = scores.masked_fill_(mask, -math.inf) if in_place else scores.masked_fill(mask, -math.inf)
            return (scores.softmax(-1) * weights).sum()
        return f

    grads = []
    for in_place in (True, False):
        a, b = leaf(q), leaf(k)
        attention(in_place)(a, b).backward()
        grads.append((a.grad.numpy(), b.grad.numpy()))
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])
    np.testing.assert_allclose(grads[0][1][1, 2], [-0.02476, 0.26323, -0.12814, 0.067713], atol=1e-6)  # torch
    assert gradcheck(attention(True), [leaf(q), leaf(k)])


def test_a_write_into_a_quotient_computes_because_div_saves_only_the_divisor():
    x = leaf([[1.0, 2], [3, 4]])
    s = x / 2.0
    s[0, 0] = 0.0
    s.sum().backward()
    assert x.grad.tolist() == [[0.0, 0.5], [0.5, 0.5]]
    # the book's form: bmm, / sqrt(d), reshape, X[~mask] = -1e6
    rng = np.random.default_rng(0)
    q, k = leaf(rng.standard_normal((2, 3, 4))), leaf(np.random.default_rng(1).standard_normal((2, 3, 4)))
    scores = ta.bmm(q, k.transpose(1, 2)) / math.sqrt(4)  # (2, 3, 3)
    X = scores.reshape(-1, 3)  # (6, 3): a view of scores
    X[~ta.tril(ta.ones(3, 3)).bool().repeat(2, 1)] = -1e6
    (X.softmax(-1) * const(np.arange(18.0).reshape(6, 3))).sum().backward()
    np.testing.assert_allclose(q.grad.numpy()[1, 1], [0.086083, -0.014368, -0.033249, -0.09494], atol=1e-6)


def test_a_product_by_a_constant_saves_the_constant_so_changing_the_other_factor_is_no_error():
    w = leaf([1.0, 2.0])
    y = w * 2.5
    with ta.no_grad():
        w.mul_(2)
    y.sum().backward()
    assert w.grad.tolist() == [2.5, 2.5]


def test_a_dividend_that_changes_after_the_division_is_an_error_when_the_divisor_needs_a_gradient():
    c, w = const([1.0, 2.0]), leaf([3.0, 4.0])
    y = c / w
    c.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_augmented_assignment_on_a_graph_tensor_writes_in_place_and_aliases_see_it():
    w = leaf([1.0, 2.0])
    h = w * 2
    alias = h
    h *= 3
    assert alias.tolist() == [6.0, 12.0]
    h.sum().backward()
    assert w.grad.tolist() == [6.0, 6.0]


@pytest.mark.parametrize("program, expect", [
    (lambda x: x + 1, [2.0, 2.0]),  # nothing saved: the second backward runs (x.grad doubles)
    (lambda x: x.sum(), [2.0, 2.0]),
    (lambda x: x.mean(), [1.0, 1.0]),
    (lambda x: x[0], [2.0, 0.0]),
    (lambda x: x.reshape(2, 1).transpose(0, 1), [2.0, 2.0]),
    (lambda x: x * x, "second time"),  # MulBackward saved x
    (lambda x: x * 2.5, "second time"),  # ... or the constant 2.5
    (lambda x: x[[0, 1]], "second time"),  # IndexBackward saved the indices
    (lambda x: x.exp(), "second time"),
])
def test_a_second_backward_works_where_nothing_saved_is_needed(program, expect):
    x = leaf([1.0, 2.0])
    y = program(x).sum() if program(x).ndim else program(x)
    y.backward()
    if isinstance(expect, str):
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            y.backward()
    else:
        y.backward()
        assert x.grad.tolist() == expect


# ---------------------------------------------------------------- views
def test_views_share_memory_and_the_version_counter_and_know_their_base():
    b = ta.zeros(2, 3)
    for v in (b[0], b[:, 1:], b.view(6), b.reshape(3, 2), b.transpose(0, 1), b.unsqueeze(0), b.t()[1]):
        assert v._base is b and v._counter is b._counter and np.shares_memory(v.numpy(), b.numpy())
    v = b[1:][0]  # a view of a view: its base is the first tensor, as in PyTorch
    assert v._base is b
    v.add_(1.0)
    assert b._version == 1 and b.tolist() == [[0, 0, 0], [1, 1, 1]]
    assert b.transpose(0, 1).contiguous()._base is None  # a copy is not a view


@pytest.mark.parametrize("write, grad, value", [
    # measured with PyTorch 2.13: the written place gets 0, the rest keeps its gradient
    ("view", [2.0, 0.0, 6.0, 8.0], [2.0, 7.0, 6.0, 8.0]),
    ("transpose", [10.0, 2.0, 3.0, 40.0, 5.0, 6.0], None),
])
def test_writes_through_reshape_and_transpose_views_rewrite_the_base_history(write, grad, value):
    if write == "view":
        w = leaf([1.0, 2, 3, 4])
        b = w * 2
        v = b.view(2, 2)
        v[0, 1] = 7.0
        (b * const([1.0, 2, 3, 4])).sum().backward()
        assert b.tolist() == value
    else:
        w = leaf([1.0, 2, 3, 4, 5, 6])
        b = (w * 1).reshape(2, 3)
        b.t()[0].mul_(10)  # column 0 of b, through a transpose
        (b * const([[1.0, 2, 3], [4, 5, 6]])).sum().backward()
    assert w.grad.tolist() == grad


def test_an_older_view_follows_a_later_write_into_its_base():
    w = leaf([1.0, 2, 3])
    b = w * 2
    v = b[0:2]  # taken before the write
    b.mul_(3)
    assert v.tolist() == [6.0, 12.0]
    (v * const([1.0, 2])).sum().backward()
    assert w.grad.tolist() == [6.0, 12.0, 0.0]


def test_view_writes_are_checked_against_saved_values():
    w = leaf([1.0, 2, 3])
    b = w.tanh()  # TanhBackward saved its output, which the write below changes
    b[1:].add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()


def test_view_writes_match_finite_differences():
    def f(a, v):
        b = a * 1.5
        b.view(3, 2)[1:, 0] = v  # a (2,) slice of a view, written with a graph value
        c = b.reshape(2, 3)
        c.transpose(0, 1)[2].mul_(v[0])  # a row of a transpose, scaled in place
        return b.tanh()

    rng = np.random.default_rng(3)
    assert gradcheck(f, [leaf(rng.standard_normal(6)), leaf(rng.standard_normal(2))])


def test_view_raises_where_memory_is_not_laid_out_for_it_and_reshape_copies():
    t = ta.zeros(2, 3, 4)
    tt = t.transpose(1, 2)
    assert not tt.is_contiguous()
    with pytest.raises(RuntimeError, match=r"view size is not compatible with input tensor's size and stride.*"
                                           r"Use \.reshape\(\.\.\.\) instead"):
        tt.view(2, 12)
    assert tt.reshape(2, 12).shape == (2, 12) and tt.reshape(2, 12)._base is None  # a copy
    c = tt.contiguous()
    assert c.is_contiguous() and c.view(2, 12)._base is c
    assert t.contiguous() is t and t.reshape(6, 4)._base is t  # no copy when none is needed
    assert t[:, :, :1].is_contiguous() is False and t[:, :1].view(2, 4).shape == (2, 4)


# ---------------------------------------------------------------- hooks and retain_grad
def test_register_hook_sees_and_may_replace_the_gradient_and_retain_grad_keeps_it():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.retain_grad()
    seen = []
    handle = y.register_hook(lambda g: seen.append(g.tolist()) or g * 2)
    (y * y).sum().backward(retain_graph=True)
    assert seen == [[6.0, 12.0]] and y.grad.tolist() == [12.0, 24.0] and x.grad.tolist() == [36.0, 72.0]  # torch
    handle.remove()
    x.grad = None
    (y * y).sum().backward()
    assert x.grad.tolist() == [18.0, 36.0]


def test_a_hook_on_a_leaf_and_retain_grad_after_an_in_place_write():
    x = leaf([1.0, 2.0])
    handle = x.register_hook(lambda g: g * 10)
    (x * x).sum().backward()
    assert x.grad.tolist() == [20.0, 40.0]
    handle.remove()
    x.grad = None
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    y = x * 3
    y.retain_grad()
    y.add_(1)  # retain_grad follows the newest value, as PyTorch
    (y * y).sum().backward()
    assert y.grad.tolist() == [8.0, 14.0]
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        const([1.0]).register_hook(print)


# ---------------------------------------------------------------- what each op saves (PyTorch's formulas)
# op -> (its node, what its ctx saved: x / w the inputs, out its result, const a number, other an array
# computed in forward or an index, None a slot left empty because no gradient needs it)
SAVES = {
    "add": (lambda x, w: x + w, "AddBackward", ()),
    "sub": (lambda x, w: x - w, "SubBackward", ()),
    "neg": (lambda x, w: -x, "NegBackward", ()),
    "mul": (lambda x, w: x * w, "MulBackward", ("w", "x")),
    "mul_const": (lambda x, w: x * 2.5, "MulBackward", ("const", None)),
    "mul_frozen": (lambda x, w: x * w.detach(), "MulBackward", ("w", None)),  # (detach shares w's memory)
    "div": (lambda x, w: x / w, "DivBackward", ("w", "x")),
    "div_const": (lambda x, w: x / 2.0, "DivBackward", ("const", None)),
    "div_by_frozen": (lambda x, w: x / w.detach(), "DivBackward", ("w", None)),
    "rdiv_const": (lambda x, w: 2.0 / x, "MulBackward", ("const", None)),
    "pow_const": (lambda x, w: x ** 3.0, "PowConstBackward", ("x",)),
    "matmul": (lambda x, w: x @ w.T, "MatMulBackward", ("x", "other")),
    "exp": (lambda x, w: x.exp(), "ExpBackward", ("out",)),
    "sqrt": (lambda x, w: x.sqrt(), "SqrtBackward", ("out",)),
    "tanh": (lambda x, w: x.tanh(), "TanhBackward", ("out",)),
    "sigmoid": (lambda x, w: x.sigmoid(), "SigmoidBackward", ("other", "out")),
    "relu": (lambda x, w: x.relu(), "ReLUBackward", ("out",)),
    "log": (lambda x, w: x.log(), "LogBackward", ("x",)),
    "sum": (lambda x, w: x.sum(1), "SumBackward", ()),
    "mean": (lambda x, w: x.mean(1), "SumBackward", ()),
    "var": (lambda x, w: x.var(1), "VarBackward", ("x",)),
    "amax": (lambda x, w: x.amax(1), "AmaxBackward", ("x", "out")),
    "softmax": (lambda x, w: x.softmax(-1), "SoftmaxBackward", ("out",)),
    "log_softmax": (lambda x, w: x.log_softmax(-1), "LogSoftmaxBackward", ("out",)),
    "reshape": (lambda x, w: x.reshape(3, 2), "ReshapeBackward", ()),
    "transpose": (lambda x, w: x.transpose(0, 1), "PermuteBackward", ()),
    "expand": (lambda x, w: x[:1].expand(4, 3), "ExpandBackward", ()),
    "getitem": (lambda x, w: x[1, 1:], "GetItemBackward", ()),
    "getitem_array": (lambda x, w: x[[0, 1, 1]], "GetItemBackward", ("other",)),
    "masked_fill": (lambda x, w: x.masked_fill(x > 0, 0.0), "MaskedFillBackward", ("other",)),
    "where": (lambda x, w: ta.where(x > 0, x, w), "WhereBackward", ("other",)),
    "cat": (lambda x, w: ta.cat([x, w], 0), "CatBackward", ()),
    "stack": (lambda x, w: ta.stack([x, w]), "StackBackward", ()),
    "contiguous": (lambda x, w: x.t().contiguous(), "ContiguousBackward", ()),
    "clamp": (lambda x, w: x.clamp(-1, 1), "ClampBackward", ("x",)),
    "abs": (lambda x, w: x.abs(), "AbsBackward", ("x",)),
    "maximum": (lambda x, w: ta.maximum(x, w), "MaximumBackward", ("x", "w")),
    "cumsum": (lambda x, w: x.cumsum(1), "CumSumBackward", ()),
    "tril": (lambda x, w: x.tril(), "TriBackward", ()),
    "std": (lambda x, w: x.std(1), "StdFromVarBackward", ("out",)),
}


def _named(a, x, w, y):
    if a is None:
        return None
    for name, t in (("x", x), ("w", w), ("out", y)):
        if a is t._data:
            return name
    return "const" if isinstance(a, np.ndarray) and a.ndim == 0 else "other"


@pytest.mark.parametrize("op", SAVES)
def test_each_op_saves_only_what_its_backward_needs(op):
    f, node, saved = SAVES[op]
    x, w = leaf(X).abs() if op in ("sqrt", "log") else leaf(X), leaf(W)
    y = f(x, w)
    assert y.grad_fn.name() == node
    assert tuple(_named(a, x, w, y) for a in y.grad_fn.ctx._saved) == saved


# Version-error parity, measured with PyTorch 2.13: after y = op(x, w), add 0 in place (under no_grad)
# to x, to w, or to y, then y.sum().backward(); "R" = raises "modified by an inplace operation", "." =
# computes. Last column: a second backward without retain_graph ("R" = raises "second time").
PARITY = {
    "add": "....", "sub": "....", "mul": "RR.R", "mul_const": "...R", "div": "RR.R", "div_const": "...R",
    "rdiv_const": "...R", "neg": "....", "pow_const": "R..R", "pow_tensor": "RRRR", "matmul": "RR.R",
    "exp": "..RR", "log": "R..R", "sqrt": "R.RR", "tanh": "..RR", "sigmoid": "..RR", "relu": "..RR",
    "sum": "....", "mean": "....", "amax": "R.RR", "softmax": "..RR", "log_softmax": "..RR", "reshape": "....",
    "transpose": "....", "getitem": "....", "getitem_adv": "...R", "masked_fill": "...R", "where": "...R",
    "cat": "....", "stack": "....", "contiguous": "....", "abs": "R..R", "sin": "R..R", "cos": "R..R",
    "clamp": "R..R", "cumsum": "....", "tril": "....", "log1p": "R..R", "expm1": "..RR", "maximum": "RR.R",
    "flip": "....", "roll": "....", "repeat_interleave": "....", "std": "R.RR", "var": "R..R", "max_dim": "...R",
    "unsqueeze": "....", "permute": "....", "flatten": "....", "norm": "R.RR", "remainder": "RR.R",
    "square": "R..R", "clone": "....", "sort": "...R",
    # The two differences left (PyTorch: gather "R..R", logsumexp "R.RR": GatherBackward keeps x,
    # LogsumexpBackward keeps x and its result). Here gather keeps only the index and logsumexp is built
    # from ops that keep neither, so where PyTorch raises these compute the right gradient for the values
    # the forward saw (gradcheck covers both); no write goes unnoticed that would change a gradient.
    "gather": "...R", "logsumexp": "...R",
}
PROGRAMS = {
    "add": lambda x, w: x + w, "sub": lambda x, w: x - w, "mul": lambda x, w: x * w,
    "mul_const": lambda x, w: x * 2.5, "div": lambda x, w: x / w, "div_const": lambda x, w: x / 2.0,
    "rdiv_const": lambda x, w: 2.0 / x, "neg": lambda x, w: -x, "pow_const": lambda x, w: x ** 3.0,
    "pow_tensor": lambda x, w: x.abs() ** w, "matmul": lambda x, w: x @ w.transpose(0, 1), "exp": lambda x, w: x.exp(),
    "log": lambda x, w: x.abs().log(), "sqrt": lambda x, w: x.abs().sqrt(), "tanh": lambda x, w: x.tanh(),
    "sigmoid": lambda x, w: x.sigmoid(), "relu": lambda x, w: x.relu(), "sum": lambda x, w: x.sum(1),
    "mean": lambda x, w: x.mean(1), "amax": lambda x, w: x.amax(1), "softmax": lambda x, w: x.softmax(-1),
    "log_softmax": lambda x, w: x.log_softmax(-1), "reshape": lambda x, w: x.reshape(3, 2),
    "transpose": lambda x, w: x.transpose(0, 1), "getitem": lambda x, w: x[1, 1:],
    "getitem_adv": lambda x, w: x[[0, 1, 1]], "masked_fill": lambda x, w: x.masked_fill(x > 0, 0.0),
    "where": lambda x, w: ta.where(x > 0, x, w), "cat": lambda x, w: ta.cat([x, w], 0),
    "stack": lambda x, w: ta.stack([x, w]), "contiguous": lambda x, w: x.transpose(0, 1).contiguous(),
    "abs": lambda x, w: x.abs(), "sin": lambda x, w: x.sin(), "cos": lambda x, w: x.cos(),
    "clamp": lambda x, w: x.clamp(-1, 1), "cumsum": lambda x, w: x.cumsum(1), "tril": lambda x, w: x.tril(),
    "log1p": lambda x, w: x.abs().log1p(), "expm1": lambda x, w: x.expm1(), "maximum": lambda x, w: ta.maximum(x, w),
    "flip": lambda x, w: x.flip(0), "roll": lambda x, w: x.roll(1, 1), "repeat_interleave": lambda x, w: x.repeat_interleave(2, 0),
    "std": lambda x, w: x.std(1), "var": lambda x, w: x.var(1), "max_dim": lambda x, w: x.max(1)[0],
    "gather": lambda x, w: x.gather(1, ta.tensor([[0], [2]])), "unsqueeze": lambda x, w: x.unsqueeze(0),
    "permute": lambda x, w: x.permute(1, 0), "flatten": lambda x, w: x.flatten(), "norm": lambda x, w: x.norm(),
    "remainder": lambda x, w: x % w.abs(), "square": lambda x, w: x * x, "logsumexp": lambda x, w: x.logsumexp(1),
    "clone": lambda x, w: x.clone(), "sort": lambda x, w: x.sort(1)[0],
}


def _outcome(op, what):
    x, w = leaf(X), leaf(W)
    y = PROGRAMS[op](x, w)
    if what == "second":
        y.sum().backward()
        try:
            y.sum().backward()  # (a fresh sum on top: only y's graph below it was freed)
        except RuntimeError as e:
            assert "second time" in str(e)
            return "R"
        return "."
    with ta.no_grad():
        {"x": x, "w": w, "y": y}[what].add_(0.0)
    try:
        y.sum().backward()
    except RuntimeError as e:
        assert "modified by an inplace operation" in str(e)
        return "R"
    return "."


@pytest.mark.parametrize("op", PARITY)
def test_version_errors_and_second_backwards_match_pytorch(op):
    assert "".join(_outcome(op, what) for what in ("x", "w", "y", "second")) == PARITY[op]


# ---------------------------------------------------------------- edge bugs, with torch's answers
def test_a_negative_power_of_a_0d_tensor():
    x = ta.tensor(0.5, requires_grad=True)
    y = x ** -2.0
    y.backward()
    assert y.item() == 4.0 and x.grad.item() == -16.0
    for p in (-1.0, -0.5, -3.0, -2.5):  # d/dx x^p = p x^(p-1)
        x = leaf(0.5)
        (x ** p).backward()
        assert x.grad.item() == pytest.approx(p * 0.5 ** (p - 1), rel=1e-12)


def test_empty_index_empty_reduction_and_a_0d_mean_over_its_dim():
    assert ta.zeros(3, 2)[[]].shape == (0, 2)
    assert ta.zeros(1, 0).amax(dim=0).shape == (0,)
    with pytest.raises(IndexError, match="amax\\(\\): Expected reduction dim 0 to have non-zero size"):
        ta.zeros(0, 3).amax(dim=0)  # torch raises too (IndexError): the reduced dim is empty
    assert ta.tensor(1.5).mean(dim=-1).item() == 1.5
    assert ta.tensor(1.5).sum(dim=0).item() == 1.5


def test_writing_into_an_expanded_tensor_is_refused_with_pytorchs_message():
    e = ta.zeros(1, 3).expand(4, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory"):
        e.add_(1.0)


def test_attention_over_no_queries_and_a_mask_wider_than_the_scores():
    import tinyattn.nn.functional as F
    x = ta.zeros(2, 0, 8, requires_grad=True)
    out = ta.nn.Attention(8, 2)(x)  # torch's layer: (2, 0, 8)
    assert out.shape == (2, 0, 8)
    out.sum().backward()
    assert x.grad.shape == (2, 0, 8)
    q, k, v = ta.zeros(2, 3), ta.zeros(4, 3), ta.zeros(5, 4, 2)
    with pytest.raises(ValueError, match=r"attn_mask has shape \(5, 2, 4\), which does not broadcast"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=ta.ones(5, 2, 4).bool())  # torch raises: the scores are (2, 4)
    assert F.scaled_dot_product_attention(q, k, v, attn_mask=ta.ones(2, 4).bool()).shape == (5, 2, 2)  # torch's shape


def test_a_view_used_under_no_grad_after_its_base_changed_still_follows_the_base_later():
    w = leaf([1.0, 2, 3])
    b = w * 2
    v = b[0:2]
    b.mul_(3)
    with ta.no_grad():
        assert (v + 1).tolist() == [7.0, 13.0]
    (v * const([1.0, 2])).sum().backward()  # by hand: v = 6 w[0:2], so [6, 12, 0]
    assert w.grad.tolist() == [6.0, 12.0, 0.0]


def test_views_taken_under_no_grad_are_not_written_in_the_graph():
    x = leaf([1.0, 2, 3])
    b = x * 2
    with ta.no_grad():
        v = b[1:]
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace"):
        v.mul_(2.0)  # (torch raises too; nothing was written)
    assert b.tolist() == [2.0, 4.0, 6.0]
    with ta.no_grad():
        v.mul_(2.0)  # both under no_grad: allowed
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and its base"):
        v * 1.0


# ---------------------------------------------------------------- the core's layout
def test_tinyattn_tensor_is_the_engine_module_and_the_factory_in_both_spellings():
    import importlib
    import subprocess
    import sys

    import tinyattn.tensor as T
    from tinyattn.tensor import Function, Tensor, no_grad

    module = importlib.import_module("tinyattn.tensor")
    assert T is module is ta.tensor and T.Tensor is Tensor is ta.Tensor
    assert Function is ta.Function and no_grad is ta.no_grad
    t = ta.tensor([1.0, 2.0], requires_grad=True)  # the factory, PyTorch's signature
    assert isinstance(t, Tensor) and t.requires_grad and t.dtype == np.float32
    assert T([1, 2], dtype=ta.float64).dtype == np.float64
    # a fresh interpreter, submodule first: the import order must not decide which object wins
    code = ("import tinyattn.tensor as T, tinyattn as torch; assert T is torch.tensor; "
            "assert torch.tensor([3.]).tolist() == [3.0]; from tinyattn import tensor; assert tensor is T")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_core_files_keep_their_line_budgets_and_autograd_imports_nothing_from_the_package():
    import pathlib

    root = pathlib.Path(ta.__file__).parent
    lines = {p.relative_to(root).as_posix(): len(p.read_text().splitlines()) for p in root.rglob("*.py")}
    assert lines["autograd.py"] <= 350 and lines["tensor.py"] <= 650 and lines["ops.py"] <= 500
    assert max(lines.values()) <= 700, max(lines.items(), key=lambda kv: kv[1])
    source = (root / "autograd.py").read_text()
    assert "from tinyattn" not in source and "from ." not in source and "import tinyattn" not in source
