"""Sampling (randint, randperm, multinomial), topk, torch.* reductions, bmm, allclose,
Tensor.cumsum/clamp/gather/tril/triu, F.one_hot/mse_loss/sigmoid/tanh/silu, nn.init and nn.utils."""
import ast
import math
import pathlib

import numpy as np
import pytest

import tinyattn as ta
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn import optim
from tinyattn.gradcheck import gradcheck
from tinyattn.tensor import MinMax

rng = np.random.default_rng(2024)


def t64(*shape):
    """A float64 leaf that requires grad, with distinct values (no ties for topk)."""
    return ta.tensor(rng.standard_normal(shape), requires_grad=True)


# ---------------------------------------------------------------------------- randint / randperm
def test_randint_accepts_both_pytorch_call_forms():
    a = ta.randint(5, (1000,))
    b = ta.randint(-3, 4, (10, 20))
    c = ta.randint(7, size=(3,))
    assert a.dtype == np.int64 and a.shape == (1000,) and set(a.tolist()) == set(range(5))
    assert b.shape == (10, 20) and b.numpy().min() == -3 and b.numpy().max() == 3
    assert c.shape == (3,) and 0 <= c.numpy().min() and c.numpy().max() < 7
    assert ta.randint(0, 2, (4,), dtype=np.int32).dtype == np.int32
    assert ta.randint(3, (2, 2)).shape == (2, 2)


def test_randint_and_randperm_are_reproducible_from_manual_seed():
    ta.manual_seed(11)
    a, p = ta.randint(0, 100, (50,)), ta.randperm(50)
    ta.manual_seed(11)
    b, q = ta.randint(0, 100, (50,)), ta.randperm(50)
    ta.manual_seed(12)
    c, r = ta.randint(0, 100, (50,)), ta.randperm(50)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(p.numpy(), q.numpy())
    assert not np.array_equal(a.numpy(), c.numpy()) and not np.array_equal(p.numpy(), r.numpy())


def test_random_ints_draw_from_the_shared_generator():
    ta.manual_seed(0)
    fresh = ta.randn(4).numpy()
    ta.manual_seed(0)
    ta.randint(10, (3,))
    ta.randperm(5)
    ta.multinomial(ta.tensor([1.0, 2.0]), 1)
    assert not np.array_equal(ta.randn(4).numpy(), fresh)  # the draws above moved the one generator on


def test_randperm_is_a_permutation():
    p = ta.randperm(17)
    assert p.dtype == np.int64 and sorted(p.tolist()) == list(range(17))
    assert ta.randperm(0).shape == (0,)


def test_randint_and_randperm_errors():
    with pytest.raises(ValueError, match=r"high=3 must be greater than low=5"):
        ta.randint(5, 3, (2,))
    with pytest.raises(ValueError, match=r"high=0 must be greater than low=0"):
        ta.randint(0, (2,))
    with pytest.raises(TypeError, match=r"randint: high must be an int, got float"):
        ta.randint(0, 2.5, (2,))
    with pytest.raises(TypeError, match=r"size must be a tuple of ints such as \(2, 3\), got int"):
        ta.randint(0, 10, 3)
    with pytest.raises(TypeError, match=r"got a size twice"):
        ta.randint(10, (2,), (3,))
    with pytest.raises(ValueError, match=r"randperm: n must be an int >= 0, got n=-1"):
        ta.randperm(-1)


# ---------------------------------------------------------------------------- multinomial
def test_multinomial_with_replacement_follows_the_weights():
    ta.manual_seed(3)
    w = np.array([1.0, 0.0, 3.0, 6.0])
    draws = ta.multinomial(ta.tensor(w), 40_000, replacement=True)
    assert draws.dtype == np.int64 and draws.shape == (40_000,)
    freq = np.bincount(draws.numpy(), minlength=4) / 40_000
    np.testing.assert_allclose(freq, w / w.sum(), atol=0.01)
    assert freq[1] == 0  # weight 0 is never drawn


def test_multinomial_without_replacement_draws_each_category_at_most_once():
    w = ta.tensor(np.array([[1.0, 2.0, 0.0, 4.0, 3.0], [5.0, 0.0, 1.0, 1.0, 1.0]]))
    out = ta.multinomial(w, 4)
    assert out.shape == (2, 4) and out.dtype == np.int64
    for row, weights in zip(out.numpy(), w.numpy()):
        assert len(set(row.tolist())) == 4 and all(weights[row] > 0)
    # the first pick (one sample without replacement) is proportional to the weights
    rows = np.tile([2.0, 1.0, 1.0], (30_000, 1))  # (N, 3)
    first = ta.multinomial(ta.tensor(rows), 1)[:, 0].numpy()
    np.testing.assert_allclose(np.bincount(first, minlength=3) / 30_000, [0.5, 0.25, 0.25], atol=0.01)


def test_multinomial_is_reproducible_from_manual_seed():
    w = ta.tensor([0.1, 0.2, 0.3, 0.4])
    ta.manual_seed(7)
    a, a2 = ta.multinomial(w, 20, replacement=True), ta.multinomial(w, 3)
    ta.manual_seed(7)
    b, b2 = ta.multinomial(w, 20, replacement=True), ta.multinomial(w, 3)
    ta.manual_seed(8)
    c = ta.multinomial(w, 20, replacement=True)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(a2.numpy(), b2.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())


def test_multinomial_errors():
    with pytest.raises(ValueError, match=r"row\(s\) \[1\] hold a negative, NaN or inf weight"):
        ta.multinomial(ta.tensor([[1.0, 2.0], [-1.0, 2.0]]), 1)
    with pytest.raises(ValueError, match=r"row\(s\) \[0\] hold a negative, NaN or inf weight"):
        ta.multinomial(ta.tensor([np.nan, 1.0]), 1)
    with pytest.raises(ValueError, match=r"row\(s\) \[1\] sum to zero"):
        ta.multinomial(ta.tensor([[1.0, 2.0], [0.0, 0.0]]), 1)
    with pytest.raises(ValueError, match=r"num_samples=3 without replacement, but a row has only 2 categories"):
        ta.multinomial(ta.tensor([1.0, 2.0]), 3)
    with pytest.raises(ValueError, match=r"num_samples=2 without replacement, but a row has only 1"):
        ta.multinomial(ta.tensor([0.0, 2.0, 0.0]), 2)
    with pytest.raises(ValueError, match=r"1-D \(C,\) or 2-D \(N, C\).*got shape \(2, 2, 2\)"):
        ta.multinomial(ta.ones(2, 2, 2), 1)
    with pytest.raises(ValueError, match=r"multinomial: num_samples must be a positive int, got num_samples=0"):
        ta.multinomial(ta.ones(3), 0)


# ---------------------------------------------------------------------------- topk
@pytest.mark.parametrize("dim", [-1, 0, 1])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_matches_a_numpy_sort(dim, largest):
    x = rng.standard_normal((4, 5, 6))
    values, indices = ta.topk(ta.tensor(x), 3, dim=dim, largest=largest)
    order = np.argsort(-x if largest else x, axis=dim)
    expected = np.take(order, [0, 1, 2], axis=dim)
    np.testing.assert_array_equal(indices.numpy(), expected)
    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(x, expected, axis=dim))
    assert indices.dtype == np.int64


def test_topk_returns_the_same_named_pair_as_max_and_as_the_method():
    x = ta.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    top = x.topk(1)
    assert isinstance(top, MinMax) and type(top) is type(x.max(dim=1))
    assert top.values.tolist() == [[5.0], [7.0]] and top.indices.tolist() == [[1], [0]]
    assert ta.topk(x, 0).values.shape == (2, 0)


def test_topk_gradient_goes_to_the_picked_entries_only():
    x = ta.tensor([[1.0, 5.0, 2.0, 4.0]], requires_grad=True)
    x.topk(2).values.sum().backward()
    assert x.grad.numpy().tolist() == [[0.0, 1.0, 0.0, 1.0]]
    a = t64(3, 5)
    assert gradcheck(lambda a: ta.topk(a, 3, dim=1).values, [a])
    assert gradcheck(lambda a: a.topk(2, dim=0, largest=False).values, [a])


def test_topk_errors():
    x = ta.ones(2, 3)
    with pytest.raises(ValueError, match=r"topk: k=4 is out of range for dim -1 of size 3"):
        x.topk(4)
    with pytest.raises(ValueError, match=r"k=-1 is out of range"):
        ta.topk(x, -1)
    with pytest.raises(IndexError, match=r"topk: dim=2 is out of range for a tensor with 2 dims"):
        x.topk(1, dim=2)
    with pytest.raises(ValueError, match=r"topk: k=2 is out of range for a 0-d tensor"):
        ta.topk(ta.tensor(1.0), 2)  # (k=1 is the tensor itself, as in PyTorch)


# ---------------------------------------------------------------------------- torch.* reductions, allclose, bmm
def test_top_level_reductions_match_the_methods():
    x = rng.standard_normal((3, 4))
    t = ta.tensor(x)
    assert ta.argmax(t).item() == np.argmax(x)
    np.testing.assert_array_equal(ta.argmax(t, dim=1, keepdim=True).numpy(), np.argmax(x, axis=1)[:, None])
    assert ta.max(t).item() == x.max() and ta.min(t).item() == x.min()
    values, indices = ta.max(t, 0)
    np.testing.assert_array_equal(values.numpy(), x.max(0))
    np.testing.assert_array_equal(indices.numpy(), x.argmax(0))
    np.testing.assert_array_equal(ta.min(t, dim=1, keepdim=True).indices.numpy(), x.argmin(1)[:, None])
    np.testing.assert_allclose(ta.sum(t, dim=0).numpy(), x.sum(0))
    np.testing.assert_allclose(ta.mean(t, dim=(0, 1), keepdim=True).numpy(), x.mean(keepdims=True))
    assert ta.sum([1.0, 2.0]).item() == 3.0  # array-likes work too, as in torch.sum(tensor)
    a = t64(2, 3)
    assert gradcheck(lambda a: ta.sum(a, 1) + ta.mean(a, 1) + ta.max(a, 1).values, [a])


def test_max_min_sum_do_not_shadow_builtins_on_star_import():
    ns: dict = {}
    exec("from tinyattn import *", ns)
    assert not {"max", "min", "sum"} & set(ns)
    assert {"topk", "randint", "randperm", "multinomial", "argmax", "mean", "allclose", "bmm"} <= set(ns)
    assert ta.max.__name__ == "max" and max(3, 4) == 4  # the module's own helpers still see the builtins


def test_allclose_returns_a_python_bool():
    a = ta.tensor([1.0, 2.0, 3.0])
    assert ta.allclose(a, a + 1e-9) is True
    assert ta.allclose(a, a + 1e-3) is False
    assert ta.allclose(a, a + 1e-3, atol=1e-2) is True
    assert ta.allclose(ta.tensor([np.nan]), ta.tensor([np.nan]), equal_nan=True) is True
    with pytest.raises(ValueError, match=r"allclose: shapes \(3,\) and \(2,\) do not broadcast"):
        ta.allclose(a, ta.ones(2))


def test_bmm_is_a_checked_batched_matmul():
    a, b = t64(2, 3, 4), t64(2, 4, 5)
    out = ta.bmm(a, b)
    np.testing.assert_allclose(out.numpy(), np.matmul(a.numpy(), b.numpy()))
    assert gradcheck(ta.bmm, [a, b])
    with pytest.raises(ValueError, match=r"bmm: both operands must be 3-D.*got shapes \(3, 4\) and \(2, 4, 5\)"):
        ta.bmm(ta.ones(3, 4), ta.ones(2, 4, 5))
    with pytest.raises(ValueError, match=r"bmm: batch sizes differ: \(2, 3, 4\) has 2, \(1, 4, 5\) has 1"):
        ta.bmm(ta.ones(2, 3, 4), ta.ones(1, 4, 5))
    with pytest.raises(ValueError, match=r"matmul: a has shape \(2, 3, 4\) and b has shape \(2, 5, 5\)"):
        ta.bmm(ta.ones(2, 3, 4), ta.ones(2, 5, 5))


# ---------------------------------------------------------------------------- Tensor.tril/triu/cumsum/clamp/gather
def test_tril_and_triu_methods_match_the_functions():
    x = ta.tensor(rng.standard_normal((2, 4, 4)))
    for k in (-1, 0, 2):
        np.testing.assert_array_equal(x.tril(k).numpy(), np.tril(x.numpy(), k))
        np.testing.assert_array_equal(x.triu(diagonal=k).numpy(), ta.triu(x, k).numpy())
    with pytest.raises(ValueError, match=r"tril needs at least 2 dims, got shape \(3,\)"):
        ta.ones(3).tril()


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_values_and_gradient(dim):
    a = t64(3, 4, 2)
    np.testing.assert_allclose(a.cumsum(dim).numpy(), np.cumsum(a.numpy(), axis=dim))
    assert gradcheck(lambda a: a.cumsum(dim), [a])


def test_cumsum_backward_is_a_reversed_cumsum():
    x = ta.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.cumsum(0).backward(ta.tensor([1.0, 10.0, 100.0]))
    assert x.grad.numpy().tolist() == [111.0, 110.0, 100.0]
    with pytest.raises(IndexError, match=r"cumsum: dim=1 is out of range"):
        x.cumsum(1)


def test_clamp_values_gradient_and_alias():
    x = ta.tensor([-2.0, -0.5, 0.0, 0.5, 2.0], requires_grad=True)
    y = x.clamp(-1.0, 0.5)
    assert y.dtype == np.float32 and y.tolist() == [-1.0, -0.5, 0.0, 0.5, 0.5]
    y.backward(ta.ones(5))
    assert x.grad.numpy().tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]  # 1 inside [min, max] (ends included), 0 where clipped
    np.testing.assert_array_equal(x.clip(min=0).numpy(), np.maximum(x.numpy(), 0))
    np.testing.assert_array_equal(x.clamp(max=0).numpy(), np.minimum(x.numpy(), 0))
    a = ta.tensor(np.array([-1.5, -0.7, 0.2, 0.8, 1.6]), requires_grad=True)  # away from the bounds
    assert gradcheck(lambda a: a.clamp(-1.0, 1.0) * a, [a])


def test_clamp_errors():
    with pytest.raises(ValueError, match=r"clamp: give at least one of min= or max="):
        ta.ones(2).clamp()
    with pytest.raises(TypeError, match=r"clamp: max must be a number, got str"):
        ta.ones(2).clamp(0, "1")


def test_gather_matches_take_along_axis_and_allows_a_smaller_index():
    x = rng.standard_normal((3, 4))
    idx = np.array([[0, 3], [1, 1], [2, 0]])
    np.testing.assert_array_equal(ta.tensor(x).gather(1, ta.tensor(idx)).numpy(), np.take_along_axis(x, idx, 1))
    small = np.array([[2, 0, 1, 1]])  # (1, 4) along dim 0: only row 0 of the output
    np.testing.assert_array_equal(ta.tensor(x).gather(0, small).numpy(), np.take_along_axis(x, small, 0))
    sub = np.array([[3], [0]])  # (2, 1) along dim 1: like PyTorch, reads the leading 2 rows only
    np.testing.assert_array_equal(ta.tensor(x).gather(1, sub).numpy(), [[x[0, 3]], [x[1, 0]]])


def test_gather_backward_adds_repeated_picks():
    x = ta.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    x.gather(1, ta.tensor([[2, 2, 0]])).sum().backward()
    assert x.grad.numpy().tolist() == [[1.0, 0.0, 2.0]]
    a = t64(3, 4, 2)
    idx = rng.integers(0, 4, size=(3, 5, 2))  # repeats, and more picks than entries along dim 1
    assert gradcheck(lambda a: a.gather(1, idx), [a])
    assert gradcheck(lambda a: a.gather(-1, np.array([[[1], [0], [1], [1]]] * 3)), [a])


def test_gather_errors():
    x = ta.ones(2, 3)
    with pytest.raises(TypeError, match=r"gather: index must hold integer positions.*got dtype float32"):
        x.gather(1, ta.ones(2, 1))
    with pytest.raises(ValueError, match=r"index has shape \(2,\) but the input has shape \(2, 3\)"):
        x.gather(1, np.array([0, 1]))
    with pytest.raises(IndexError, match=r"gather: index holds 3, out of range for dim 1 of size 3 \(valid: 0..2\)"):
        x.gather(1, np.array([[0], [3]]))
    with pytest.raises(IndexError, match=r"gather: index holds -1"):
        x.gather(1, np.array([[-1], [0]]))
    with pytest.raises(ValueError, match=r"index of shape \(3, 1\) is larger than the input's shape \(2, 3\)"):
        x.gather(1, np.zeros((3, 1), dtype=np.int64))


# ---------------------------------------------------------------------------- functional
def test_one_hot_values_and_errors():
    out = F.one_hot(ta.tensor([[0, 2], [1, 2]]))
    assert out.dtype == np.int64 and out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out.numpy(), np.eye(3, dtype=np.int64)[[[0, 2], [1, 2]]])
    assert F.one_hot(ta.tensor([1]), num_classes=4).tolist() == [[0, 1, 0, 0]]
    with pytest.raises(ValueError, match=r"one_hot: input holds id 4 at position \(1,\), outside \[0, 2\] "
                                         r"\(num_classes=3\)"):
        F.one_hot(ta.tensor([0, 4]), 3)
    with pytest.raises(ValueError, match=r"one_hot: input holds id -1 at position \(0,\), below 0: ids must be >= 0"):
        F.one_hot(ta.tensor([-1, 0]))
    with pytest.raises(TypeError, match=r"one_hot: input must be integer ids .*got dtype float32"):
        F.one_hot(ta.tensor([1.0]))
    with pytest.raises(ValueError, match=r"can not infer num_classes from an empty tensor"):
        F.one_hot(np.zeros(0, dtype=np.int64))


def test_mse_loss_values_gradient_and_errors():
    a, b = t64(3, 4), t64(3, 4)
    sq = (a.numpy() - b.numpy()) ** 2
    np.testing.assert_allclose(F.mse_loss(a, b).item(), sq.mean())
    np.testing.assert_allclose(F.mse_loss(a, b, reduction="sum").item(), sq.sum())
    np.testing.assert_allclose(F.mse_loss(a, b, reduction="none").numpy(), sq)
    assert gradcheck(lambda a, b: F.mse_loss(a, b), [a, b])
    assert gradcheck(lambda a: F.mse_loss(a, b, reduction="none"), [a])
    with pytest.raises(ValueError, match=r"input has shape \(3, 1\) but target has shape \(3,\)"):
        F.mse_loss(ta.ones(3, 1), ta.ones(3))
    with pytest.raises(ValueError, match=r"reduction must be 'mean', 'sum' or 'none', got 'avg'"):
        F.mse_loss(a, b, reduction="avg")


def test_sigmoid_tanh_silu():
    x = rng.standard_normal((2, 5)) * 3
    s = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(F.sigmoid(ta.tensor(x)).numpy(), s)
    np.testing.assert_allclose(F.tanh(ta.tensor(x)).numpy(), np.tanh(x))
    np.testing.assert_allclose(F.silu(ta.tensor(x)).numpy(), x * s)
    a = t64(2, 5)
    assert gradcheck(F.silu, [a]) and gradcheck(F.sigmoid, [a]) and gradcheck(F.tanh, [a])
    with pytest.raises(TypeError, match=r"silu expects a floating-point input, got dtype int64"):
        F.silu(ta.tensor([1, 2]))
    assert {"one_hot", "mse_loss", "sigmoid", "tanh", "silu"} <= set(F.__all__)


# ---------------------------------------------------------------------------- nn.init
def test_init_fills_a_parameter_in_place():
    lin = nn.Linear(200, 300)
    w = lin.weight.numpy()
    assert nn.init.normal_(lin.weight, mean=0.5, std=0.02) is lin.weight
    assert lin.weight.numpy() is w and w.dtype == np.float32 and w.shape == (300, 200)
    assert abs(w.mean() - 0.5) < 0.002 and abs(w.std() - 0.02) < 0.002
    nn.init.uniform_(lin.weight, -0.1, 0.3)
    assert lin.weight.numpy() is w and w.min() >= -0.1 and w.max() < 0.3 and abs(w.mean() - 0.1) < 0.005
    assert nn.init.zeros_(lin.bias).tolist() == [0.0] * 300
    assert nn.init.ones_(lin.bias).numpy().sum() == 300
    assert nn.init.constant_(lin.bias, 0.25).numpy().max() == 0.25 and lin.bias.dtype == np.float32


def test_xavier_and_kaiming_use_pytorchs_fans():
    w = nn.Parameter(np.zeros((64, 32, 3)))  # fan_in = 32 * 3, fan_out = 64 * 3
    bound = math.sqrt(6 / (96 + 192))
    nn.init.xavier_uniform_(w, gain=2.0)
    assert np.abs(w.numpy()).max() <= 2.0 * bound and np.abs(w.numpy()).max() > 1.9 * bound
    nn.init.xavier_normal_(w)
    assert abs(w.numpy().std() - math.sqrt(2 / (96 + 192))) < 0.005
    nn.init.kaiming_uniform_(w, a=math.sqrt(5))  # what torch's nn.Linear uses: bound 1 / sqrt(fan_in)
    assert np.abs(w.numpy()).max() <= 1 / math.sqrt(96) and np.abs(w.numpy()).max() > 0.95 / math.sqrt(96)
    nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(w.numpy().std() - math.sqrt(2 / 192)) < 0.005


def test_init_is_reproducible_from_manual_seed():
    a, b, c = (nn.Parameter(np.zeros((4, 5))) for _ in range(3))
    ta.manual_seed(5)
    nn.init.xavier_uniform_(a)
    ta.manual_seed(5)
    nn.init.xavier_uniform_(b)
    ta.manual_seed(6)
    nn.init.xavier_uniform_(c)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())


def test_init_errors():
    with pytest.raises(ValueError, match=r"init.xavier_uniform_ needs a weight with at least 2 dims.*got shape \(5,\)"):
        nn.init.xavier_uniform_(nn.Parameter(np.zeros(5)))
    with pytest.raises(TypeError, match=r"init.normal_ draws real numbers.*got dtype int64"):
        nn.init.normal_(ta.tensor([1, 2]))
    with pytest.raises(TypeError, match=r"init.zeros_ expects a Tensor or Parameter.*got ndarray"):
        nn.init.zeros_(np.ones(3))
    with pytest.raises(ValueError, match=r"init.normal_: std must be >= 0, got -1"):
        nn.init.normal_(ta.ones(2), std=-1)
    with pytest.raises(ValueError, match=r"init.uniform_: needs a <= b, got a=1, b=0"):
        nn.init.uniform_(ta.ones(2), 1, 0)
    with pytest.raises(ValueError, match=r"mode must be 'fan_in' or 'fan_out', got 'fan'"):
        nn.init.kaiming_uniform_(ta.ones(2, 2), mode="fan")


# ---------------------------------------------------------------------------- nn.utils.clip_grad_norm_
def _grads():
    a, b = nn.Parameter(np.zeros(2)), nn.Parameter(np.zeros(3))
    a.grad, b.grad = ta.tensor([3.0, 0.0], dtype=ta.float64), ta.tensor([0.0, 4.0, -12.0], dtype=ta.float64)  # joint L2 norm 13, largest |g| 12
    return a, b


def test_nn_utils_clip_grad_norm_matches_optim():
    a, b = _grads()
    total = nn.utils.clip_grad_norm_([a, b], 1.3)
    a2, b2 = _grads()
    # PyTorch's clip_grad_norm_ returns a 0-d tensor (in the gradients' dtype); tinyattn.optim's own name a float
    assert isinstance(total, ta.Tensor) and total.shape == () and total.dtype == np.float64
    assert total.item() == pytest.approx(13.0) == optim.clip_grad_norm([a2, b2], 1.3)
    assert isinstance(optim.clip_grad_norm(list(_grads()), 1.3), float)
    np.testing.assert_array_equal(a.grad.numpy(), a2.grad.numpy())
    np.testing.assert_allclose(b.grad.numpy(), [0.0, 0.4, -1.2], rtol=1e-6)


def test_nn_utils_clip_grad_norm_inf_norm_and_errors():
    a, b = _grads()
    assert nn.utils.clip_grad_norm_([a, b], 6.0, norm_type=float("inf")).item() == 12.0
    np.testing.assert_allclose(b.grad.numpy(), [0.0, 2.0, -6.0], rtol=1e-6)
    a, b = _grads()
    assert nn.utils.clip_grad_norm_([a, b], 3.8, norm_type=1).item() == pytest.approx(19.0)  # any p > 0, like PyTorch
    np.testing.assert_allclose(b.grad.numpy(), [0.0, 0.8, -2.4], rtol=1e-6)
    a, b = _grads()
    assert nn.utils.clip_grad_norm_([a, b], 100.0, norm_type=3).item() == pytest.approx((27 + 64 + 1728) ** (1 / 3))
    for bad in (0, -2, "two", True, float("nan")):
        with pytest.raises(ValueError, match=r"clip_grad_norm_: norm_type must be a number p > 0 .* or float\('inf'\)"):
            nn.utils.clip_grad_norm_([a], 1.0, norm_type=bad)
    a.grad = ta.tensor(np.array([np.inf, 1.0]))
    with np.errstate(invalid="ignore"):  # inf * 0 -> NaN in the clipped gradient, as in PyTorch
        assert nn.utils.clip_grad_norm_([a], 1.0, error_if_nonfinite=False).item() == math.inf
    a.grad = ta.tensor(np.array([np.inf, 1.0]))
    with pytest.raises(ValueError, match=r"clip_grad_norm_: the total gradient norm is inf"):
        nn.utils.clip_grad_norm_([a], 1.0)  # tinyattn's default (PyTorch's is False): no silent NaN
    with pytest.raises(TypeError, match=r"clip_grad_norm_: params\[0\] is a str"):
        nn.utils.clip_grad_norm_(["w"], 1.0)


def test_clip_grad_norm_returns_a_tensor_to_log_with_item():
    # the logging idiom `norm = clip_grad_norm_(...); print(f"{norm.item():.2f}")`, in float32 gradients too
    w = nn.Parameter(np.zeros(2, dtype=np.float32))
    w.grad = ta.tensor(np.array([6.0, 8.0], dtype=np.float32))  # norm 10, clipped to 5: halved
    norm = nn.utils.clip_grad_norm_([w], 5.0)
    assert norm.dtype == np.float32 and f"{norm.item():.2f}" == "10.00" and not norm.requires_grad
    np.testing.assert_allclose(w.grad.numpy(), [3.0, 4.0], rtol=1e-6)
    assert nn.utils.clip_grad_norm_([nn.Parameter(np.zeros(1))], 1.0).item() == 0.0  # no .grad yet: norm 0


def test_nn_never_imports_optim():
    """The dependency direction: nn <- optim, never the other way."""
    nn_dir = pathlib.Path(nn.__file__).parent
    for path in nn_dir.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert "optim" not in (node.module or ""), f"{path.name} imports {node.module}"
            elif isinstance(node, ast.Import):
                assert not any("optim" in n.name for n in node.names), path.name


# ---- in-place assignment: nanoGPT's top-k filter --------------------------------------------
def test_setitem_runs_the_nanogpt_top_k_filter():
    ta.manual_seed(0)
    logits = ta.randn(2, 10)
    before = logits.numpy().copy()
    v, _ = ta.topk(logits, 3)
    logits[logits < v[:, [-1]]] = -float("inf")  # as in nanoGPT's generate()
    kept = np.isfinite(logits.numpy())
    assert kept.sum(axis=1).tolist() == [3, 3]
    np.testing.assert_array_equal(logits.numpy()[kept], before[kept])
    np.testing.assert_array_equal(np.sort(before, axis=1)[:, -3:], np.sort(logits.numpy()[kept].reshape(2, 3), axis=1))


def test_setitem_refuses_a_tensor_in_the_graph_but_works_under_no_grad():
    w = ta.tensor(np.zeros(3), requires_grad=True)
    with pytest.raises(RuntimeError, match="masked_fill"):
        w[0] = 1.0
    with ta.no_grad():
        w[0] = 1.0
        w[1:] = ta.tensor(np.array([2.0, 3.0]))
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0, 3.0])
    ids = ta.tensor(np.arange(4))
    with pytest.raises(OverflowError, match=r"shape \(4,\) and dtype int64"):
        ids[0] = float("inf")
    with pytest.raises(IndexError, match=r"shape \(4,\)"):
        ids[7] = 1


def test_calculate_gain_has_pytorchs_values():
    # the table in torch.nn.init.calculate_gain's documentation
    g = nn.init.calculate_gain
    assert g("linear") == g("conv2d") == g("conv_transpose1d") == g("sigmoid") == 1.0
    assert g("tanh") == pytest.approx(5 / 3)
    assert g("relu") == pytest.approx(math.sqrt(2))
    assert g("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert g("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert g("selu") == 0.75
    with pytest.raises(ValueError, match=r"unknown nonlinearity 'gelu'.*'selu'"):
        g("gelu")
