"""Regression tests for the classes the op-surface fuzzer (tests/surface_fuzz.py) found, without torch.

Each expected value is derived here independently: with Python's math, NumPy, two's complement by hand,
or central differences of a NumPy formula for gradients. tests/oracle/test_surface_fuzz_live.py runs
this file with ``import torch`` in place of tinyattn and checks it passes there too.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tinyattn as torch

FLOAT_OPS = {  # name -> the real function it computes
    "exp": math.exp, "log": math.log, "sqrt": math.sqrt, "sin": math.sin, "cos": math.cos, "tan": math.tan,
    "atan": math.atan, "tanh": math.tanh, "sigmoid": lambda v: 1 / (1 + math.exp(-v)), "sinh": math.sinh,
    "cosh": math.cosh, "log2": math.log2, "log10": math.log10, "log1p": math.log1p, "expm1": math.expm1,
    "reciprocal": lambda v: 1 / v, "rsqrt": lambda v: 1 / math.sqrt(v), "exp2": lambda v: 2.0 ** v, "erf": math.erf,
}


def _fd(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of the NumPy function f (array -> number) at x, element by element."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[i] += eps
        lo[i] -= eps
        g[i] = (f(hi) - f(lo)) / (2 * eps)
    return g


def _grad(fn, *arrays):
    """The gradients of sum(fn(*tensors) * w) (w fixed, distinct) for float64 leaves holding arrays."""
    xs = [torch.tensor(a.tolist(), dtype=torch.float64, requires_grad=True) for a in arrays]
    out = fn(*xs)
    w = np.arange(1, out.numel() + 1, dtype=np.float64).reshape(tuple(out.shape)) / 4
    (out * torch.tensor(w.tolist(), dtype=torch.float64)).sum().backward()
    return [x.grad.numpy() for x in xs], w


# --- 1. an op with a real-valued result computes an integer or bool input in the default float dtype --------
@pytest.mark.parametrize("name", sorted(FLOAT_OPS))
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_float_ops_of_integers_compute_in_the_default_float_dtype(name, dtype):
    vals = [True, True] if dtype == "bool" else [1, 2, 5]  # (uint8's exp of 5 in float16 would be 148.375)
    x = torch.tensor(vals, dtype=getattr(torch, dtype))
    out = getattr(torch, name)(x)
    want = np.array([FLOAT_OPS[name](float(v)) for v in vals], dtype=np.float32)
    assert out.dtype == torch.float32
    np.testing.assert_allclose(out.numpy(), want, rtol=2e-6)
    torch.set_default_dtype(torch.float64)
    try:
        assert getattr(x, name)().dtype == torch.float64
    finally:
        torch.set_default_dtype(torch.float32)


def test_sigmoid_of_uint8_is_not_computed_in_float16():
    """NumPy's exp of uint8 is float16, and -x of uint8 wraps: 1 / (1 + exp(-200)) came out NaN."""
    out = torch.tensor([200, 3], dtype=torch.uint8).sigmoid()
    np.testing.assert_allclose(out.numpy(), [1.0, 1 / (1 + math.exp(-3))], rtol=1e-6)


# --- 2. sums and products of integers are int64; dtype= casts first, and is kept --------------------------------
@pytest.mark.parametrize("dtype", ["uint8", "int32", "bool"])
def test_integer_sums_and_products_are_int64(dtype):
    vals = [[200, 100], [7, 1]] if dtype != "bool" else [[True, True], [False, True]]
    x = torch.tensor(vals, dtype=getattr(torch, dtype))
    a = np.array(vals, dtype=np.int64)  # exact: no wrap in int64
    for out, want in ((x.sum(), a.sum()), (x.sum(0), a.sum(0)), (x.prod(1), a.prod(1)),
                      (x.cumsum(0), np.cumsum(a, 0)), (x.cumprod(1), np.cumprod(a, 1)), (torch.nansum(x), a.sum())):
        assert out.dtype == torch.int64
        assert out.tolist() == want.tolist()


def test_dtype_argument_casts_first_and_keeps_the_dtype():
    x = torch.tensor([200, 100], dtype=torch.uint8)
    s = x.sum(dtype=torch.uint8)  # 300 wraps round to 300 - 256
    assert s.dtype == torch.uint8 and s.item() == 44
    c = torch.cumsum(torch.tensor([2**31 - 1, 1], dtype=torch.int64), 0, dtype=torch.int32)
    assert c.dtype == torch.int32 and c.tolist() == [2**31 - 1, -2**31]  # two's complement
    assert torch.mean(torch.tensor([1, 2]), dtype=torch.float64).item() == 1.5
    f = torch.tensor([0.1] * 10, dtype=torch.float32, requires_grad=True)
    s64 = f.sum(dtype=torch.float64)
    assert s64.dtype == torch.float64 and s64.item() == sum([float(np.float32(0.1))] * 10)
    s64.backward()
    assert f.grad.dtype == torch.float32 and f.grad.tolist() == [1.0] * 10
    sm = torch.tensor([1, 2, 3]).softmax(0, dtype=torch.float64)
    e = np.exp([1.0, 2.0, 3.0])
    assert sm.dtype == torch.float64
    np.testing.assert_allclose(sm.numpy(), e / e.sum(), rtol=1e-12)
    assert torch.log_softmax(torch.tensor([1.0, 2.0]), 0, dtype=torch.float64).dtype == torch.float64


@pytest.mark.parametrize("call, exc", [
    (lambda x: x.mean(dtype=torch.int64), RuntimeError),
    (lambda x: x.softmax(0), NotImplementedError), (lambda x: x.log_softmax(0), NotImplementedError),
    (lambda x: x.var(), RuntimeError), (lambda x: x.std(), RuntimeError), (lambda x: x.norm(), RuntimeError),
])
def test_ops_without_an_integer_kernel_raise_on_integers(call, exc):
    with pytest.raises(exc):
        call(torch.tensor([1, 2, 3]))


# --- 3. clamp promotes, wraps, and takes tensor bounds -------------------------------------------------------
def test_clamp_of_integers_with_float_bounds_is_float32():
    out = torch.tensor([1, 2, 3]).clamp(min=1.5)
    assert out.dtype == torch.float32 and out.tolist() == [1.5, 2.0, 3.0]
    assert torch.tensor([1, 2], dtype=torch.uint8).clamp(min=-1).tolist() == [255, 255]  # -1 is 255 in uint8
    assert torch.tensor([5, 9]).clamp(2, 6).dtype == torch.int64


def test_clamp_with_tensor_bounds_broadcasts_and_passes_gradients():
    x, lo = np.array([0.5, -1.0, 2.0]), np.array([[0.0], [1.0]])
    (gx, glo), w = _grad(lambda a, b: a.clamp(min=b), x, lo)
    f = lambda a, b: float((np.maximum(a, b) * w).sum())  # noqa: E731
    np.testing.assert_allclose(gx, _fd(lambda a: f(a, lo), x), atol=1e-6)
    np.testing.assert_allclose(glo, _fd(lambda b: f(x, b), lo), atol=1e-6)
    out = torch.tensor([1.0, 5.0]).clamp(min=torch.tensor([0.0, float("nan")]), max=torch.tensor(3.0))
    assert out[0].item() == 1.0 and math.isnan(out[1].item())


# --- 4. reductions' edges -------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [lambda x: x.argmax(), lambda x: x.argmin(0), lambda x: x.max(0),
                                  lambda x: torch.min(x, 0), lambda x: x.median(0)])
def test_the_extreme_of_an_empty_slice_is_an_index_error(call):
    with pytest.raises(IndexError):
        call(torch.zeros(0, 3))


def test_small_edges():
    assert torch.tensor([float("nan"), -2.0, 0.0]).sign().tolist() == [0.0, -1.0, 0.0]
    assert torch.tensor([0, 3], dtype=torch.uint8).any().dtype == torch.uint8
    assert torch.tensor([0, 3], dtype=torch.uint8).all(0).tolist() == 0
    assert torch.tensor([0, 3], dtype=torch.int32).any().dtype == torch.bool
    v, i = torch.tensor(4.0).topk(1)
    assert v.item() == 4.0 and i.item() == 0 and v.shape == ()
    with pytest.raises(IndexError):
        torch.tensor(4.0).sort(dim=1)
    lse = torch.zeros(2, 0).logsumexp(1)
    assert lse.tolist() == [-math.inf, -math.inf]
    assert torch.tensor([1, 2]).logsumexp(0).dtype == torch.float32
    assert torch.tensor([True, False]).square().dtype == torch.int64
    assert torch.tensor(2.0).cumsum(0).shape == ()
    x = torch.tensor([3.0, 0.0, -4.0])
    assert x.norm(0).item() == 2.0 and x.norm(-math.inf).item() == 0.0
    np.testing.assert_allclose(torch.tensor([3.0, -4.0]).norm(-1).item(), 1 / (1 / 3 + 1 / 4), rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.tensor([float("nan"), float("inf"), 2.5]).int()  # (the NaN's integer is the platform's: not checked)
        torch.tensor([float("nan")]).long()


# --- 5. the long tail ------------------------------------------------------------------------------------------
def test_prod_and_cumprod_values_and_gradients_with_zeros():
    a = np.array([[2.0, 0.0, 3.0], [1.5, -2.0, 0.5]])
    assert torch.tensor(a.tolist()).prod().item() == 0.0
    (g,), w = _grad(lambda x: x.prod(1), a)
    np.testing.assert_allclose(g, _fd(lambda b: float((np.prod(b, 1) * w).sum()), a), atol=1e-6)
    (g,), w = _grad(lambda x: x.prod(), a[:, :2] + 1)
    np.testing.assert_allclose(g, _fd(lambda b: float(np.prod(b) * w), a[:, :2] + 1), atol=1e-6)
    (g,), w = _grad(lambda x: torch.cumprod(x, 1), a)
    np.testing.assert_allclose(g, _fd(lambda b: float((np.cumprod(b, 1) * w).sum()), a), atol=1e-6)
    (g,), w = _grad(lambda x: x.cumprod(0), a)
    np.testing.assert_allclose(g, _fd(lambda b: float((np.cumprod(b, 0) * w).sum()), a), atol=1e-6)


@pytest.mark.parametrize("name, ref", [
    ("atan2", np.arctan2), ("hypot", np.hypot), ("fmax", np.fmax), ("fmin", np.fmin),
    ("xlogy", lambda a, b: a * np.log(b)),
])
def test_binary_long_tail_values_and_gradients(name, ref):
    a, b = np.array([[0.5, -1.5, 2.0]]), np.array([[1.0], [0.25]])  # (1, 3) with (2, 1): broadcast
    (ga, gb), w = _grad(getattr(torch, name), a, b)
    out = getattr(torch, name)(torch.tensor(a.tolist(), dtype=torch.float64), torch.tensor(b.tolist(), dtype=torch.float64))
    np.testing.assert_allclose(out.numpy(), ref(a, b), rtol=1e-12)
    f = lambda x, y: float((ref(x, y) * w).sum())  # noqa: E731
    np.testing.assert_allclose(ga, _fd(lambda x: f(x, b), a), atol=1e-6)
    np.testing.assert_allclose(gb, _fd(lambda y: f(a, y), b), atol=1e-6)


def test_integer_pairs_of_atan2_and_xlogy_are_float32():
    y, x = torch.tensor([1, 0]), torch.tensor([2, 3])
    assert torch.atan2(y, x).dtype == torch.float32
    np.testing.assert_allclose(torch.atan2(y, x).numpy(), [math.atan2(1, 2), 0.0], rtol=1e-6)
    assert torch.xlogy(torch.tensor([0, 2]), torch.tensor([0, 3])).tolist() == [0.0, pytest.approx(2 * math.log(3))]


def test_unary_long_tail():
    x = torch.tensor([-2.5, -0.0, 1.75, float("nan"), float("inf"), -float("inf")])
    assert x.signbit().tolist() == [True, True, False, False, False, True]
    assert torch.tensor([-3, 0, 2]).signbit().tolist() == [True, False, False]
    y = torch.nan_to_num(x)
    big = float(np.finfo(np.float32).max)
    assert y.tolist() == [-2.5, -0.0, 1.75, 0.0, big, -big]
    assert torch.tensor([-2.5, 1.75]).frac().tolist() == [-0.5, 0.75]
    with pytest.raises(NotImplementedError):
        torch.tensor([1]).frac()
    with pytest.raises(RuntimeError):
        torch.tensor([True]).positive()
    assert torch.tensor([3]).positive().tolist() == [3] and torch.tensor([3]).neg().tolist() == [-3]
    assert torch.tensor([0b1100]).bitwise_and(torch.tensor([0b1010])).tolist() == [0b1000]
    assert torch.bitwise_or(torch.tensor([0b1100]), torch.tensor([0b1010])).tolist() == [0b1110]
    assert torch.bitwise_xor(torch.tensor([0b1100]), torch.tensor([0b1010])).tolist() == [0b0110]
    assert torch.tensor([5], dtype=torch.uint8).bitwise_not().tolist() == [250]  # 255 - 5
    assert torch.isclose(torch.tensor([1.0, 1.0]), torch.tensor([1.0 + 1e-7, 1.1])).tolist() == [True, False]
    assert torch.tensor([1.0, 2.0]).where(torch.tensor([True, False]), torch.tensor(0.5)).tolist() == [1.0, 0.5]
    assert torch.count_nonzero(torch.tensor([[0, 1, 2], [0, 0, 3]]), dim=1).tolist() == [2, 1]
    assert torch.diff(torch.tensor([1, 4, 9, 16])).tolist() == [3, 5, 7]
    assert torch.tensor([True, False, False]).diff().tolist() == [True, False]
    assert torch.nansum(torch.tensor([1.0, float("nan"), 2.5])).item() == 3.5


def test_order_statistics():
    x = torch.tensor([[3.0, 1.0, 2.0, 5.0], [4.0, float("nan"), 0.0, 1.0]])
    v, i = x.median(1)
    assert v[0].item() == 2.0 and i[0].item() == 2  # the lower of the middle two: sorted 1 2 3 5
    assert math.isnan(v[1].item()) and i[1].item() == 1  # a NaN is the median of its row
    v, i = torch.kthvalue(x[0], 3)
    assert (v.item(), i.item()) == (3.0, 0)
    assert torch.msort(torch.tensor([[2, 1], [1, 3]])).tolist() == [[1, 1], [2, 3]]
    v, i = torch.tensor([1.0, 3.0, 3.0, 2.0, 4.0]).cummax(0)
    assert v.tolist() == [1.0, 3.0, 3.0, 3.0, 4.0] and i.tolist() == [0, 1, 2, 2, 4]  # the latest of equals
    v, i = torch.cummin(torch.tensor([2, 1, 1, 3]), 0)
    assert v.tolist() == [2, 1, 1, 1] and i.tolist() == [0, 1, 2, 2]


def test_index_and_count_helpers():
    m = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int32)
    assert m.trace().dtype == torch.int64 and torch.trace(m).item() == 1 + 5
    assert torch.tensor([1, 2, 2, 5]).bincount().tolist() == [0, 1, 2, 0, 0, 1]
    assert torch.bincount(torch.tensor([0, 0]), minlength=3).tolist() == [2, 0, 0]
    got = torch.tensor([1, 1, 3]).bincount(weights=torch.tensor([0.5, 0.25, 2.0]))
    assert got.dtype == torch.float32 and got.tolist() == [0.0, 0.75, 0.0, 2.0]
    u = torch.tensor([5, 6, 7], dtype=torch.uint8)
    assert u.index_fill(0, torch.tensor([0, 2]), -1).tolist() == [255, 6, 255]  # -1 is 255 in uint8
    assert u.clone().masked_fill_(torch.tensor([False, True, False]), -2).tolist() == [5, 254, 7]
    assert torch.tensor([2, 3]).float_power(2).dtype == torch.float64
    assert torch.float_power(torch.tensor([2.0]), torch.tensor([-1])).tolist() == [0.5]


def test_index_add_values_and_gradients():
    x, src = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), np.array([[0.5, -1.0], [2.0, 0.25]])
    index = [2, 2]  # a repeated index adds up
    out = torch.tensor(x.tolist()).index_add(0, torch.tensor(index), torch.tensor(src.tolist()), alpha=2)
    want = x.copy()
    for i, row in zip(index, src):
        want[i] += 2 * row
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
    (gx, gs), w = _grad(lambda a, b: a.index_add(0, torch.tensor(index), b), x, src)

    def f(a, b):
        y = a.copy()
        for i, row in zip(index, b):
            y[i] = y[i] + row
        return float((y * w).sum())
    np.testing.assert_allclose(gx, _fd(lambda a: f(a, src), x), atol=1e-6)
    np.testing.assert_allclose(gs, _fd(lambda b: f(x, b), src), atol=1e-6)


def test_xlogy_gradient_where_x_is_zero_is_log_y():
    (gx, gy), w = _grad(torch.xlogy, np.array([0.0, 2.0]), np.array([3.0, 0.5]))
    np.testing.assert_allclose(gx, w * np.log([3.0, 0.5]), rtol=1e-12)  # d(x log y)/dx = log y, at x = 0 too
    np.testing.assert_allclose(gy, w * np.array([0.0, 2.0]) / [3.0, 0.5], rtol=1e-12)


@pytest.mark.parametrize("src", [torch.float16, torch.float32, torch.float64])
@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_of_a_0d_tensor(fn, src):
    """A 0-d tensor is one row of one entry: softmax 1, log_softmax 0, in the asked dtype, gradient 0."""
    x = torch.tensor(2.51, dtype=src)
    out = getattr(torch, fn)(x, 0, dtype=torch.float64)
    assert out.dtype == torch.float64 and out.shape == () and out.item() == (1.0 if fn == "softmax" else 0.0)
    if src is not torch.float16:
        leaf = torch.tensor(2.5, dtype=src, requires_grad=True)
        (getattr(torch, fn)(leaf, -1) * 3).backward()
        assert leaf.grad.item() == 0.0


@pytest.mark.parametrize("call", [lambda x: x.expand_as(0), lambda x: x.view_as(0), lambda x: x.reshape_as(0),
                                  lambda x: x.type_as(0), lambda x: torch.equal(x, 1)])
def test_tensor_only_arguments_refuse_a_number_with_a_type_error(call):
    with pytest.raises(TypeError, match=r"argument 'other' \(position \d\) must be Tensor, not int"):
        call(torch.tensor([0.5, 1.0]))


def test_glu_refuses_a_scalar():
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        torch.nn.functional.glu(torch.tensor(0.7))


# --- fill values: one rule (promotion.fill_number) for full, full_like, fill_, masked_fill, index_fill ------
U8_MASK = [True, False]
FILLS = {  # how each fills a uint8 tensor [1, 2] with v
    "full_like": lambda u, v: torch.full_like(u, v),
    "full": lambda u, v: torch.full((2,), v, dtype=torch.uint8),
    "fill_": lambda u, v: u.clone().fill_(v),
    "masked_fill": lambda u, v: u.masked_fill(torch.tensor(U8_MASK), v),
    "masked_fill_": lambda u, v: u.clone().masked_fill_(torch.tensor(U8_MASK), v),
    "index_fill": lambda u, v: u.index_fill(0, torch.tensor([0]), v),
}


@pytest.mark.parametrize("how", sorted(FILLS))
@pytest.mark.parametrize("v", [-1, -255, 255, 0, True])
def test_an_int_fill_in_uint8_range_or_down_to_minus_255_wraps(how, v):
    want = int(v) % 256  # two's complement by hand: -1 is 255, -255 is 1
    out = FILLS[how](torch.tensor([1, 2], dtype=torch.uint8), v)
    assert out.dtype == torch.uint8
    full = how in ("full_like", "full", "fill_")
    assert out.tolist() == ([want, want] if full else [want, 2])


@pytest.mark.parametrize("how", sorted(FILLS))
@pytest.mark.parametrize("v", [256, -256, 300, -1.0, 255.5, float("nan"), float("inf")])
def test_a_fill_out_of_uint8_range_raises_instead_of_wrapping(how, v):
    u = torch.tensor([1, 2], dtype=torch.uint8)
    if how.startswith("masked_fill") and isinstance(v, float) and not float(v).is_integer():
        return  # (a non-integer float into an integer masked_fill is docs/pytorch.md's TypeError here)
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without overflow"):
        FILLS[how](u, v)


def test_fill_values_in_other_integer_dtypes_are_range_checked_and_truncated():
    i32 = torch.tensor([1], dtype=torch.int32)
    assert torch.full_like(i32, -2 ** 31).tolist() == [-2 ** 31]
    for v in (2 ** 31, -2 ** 31 - 1, 2147483647.5):
        with pytest.raises(RuntimeError, match="value cannot be converted to type int without overflow"):
            torch.full_like(i32, v)
    assert torch.full_like(torch.tensor([7], dtype=torch.uint8), 2.9).tolist() == [2]  # toward 0
    assert torch.full_like(i32, -2.9).tolist() == [-2]
    assert torch.full((1,), 1e40, dtype=torch.float16).tolist() == [math.inf]


def test_out_of_place_masked_fill_broadcasts_self_to_the_mask():
    x = torch.tensor([[1.0], [2.0], [3.0]], requires_grad=True)  # (3, 1)
    mask = [[True, False], [False, False], [True, True]]  # (3, 2)
    out = x.masked_fill(torch.tensor(mask), -1.0)
    want = np.where(mask, -1.0, np.broadcast_to([[1.0], [2.0], [3.0]], (3, 2)))
    assert out.shape == (3, 2) and out.tolist() == want.tolist()
    out.sum().backward()  # each x[i] reaches the row's unmasked entries
    assert x.grad.tolist() == [[1.0], [2.0], [0.0]]
    with pytest.raises(RuntimeError if "tinyattn" not in torch.__name__ else ValueError):
        torch.zeros(3, 1).masked_fill_(torch.tensor(mask), 0.0)  # in place, self cannot grow


# --- ops PyTorch has no bool kernel for refuse a bool tensor; max/min along a dim still compute --------------
@pytest.mark.parametrize("call", [lambda b: b.abs(), lambda b: torch.floor(b), lambda b: b.ceil(), lambda b: b.round(),
                                  lambda b: torch.trunc(b), lambda b: b.relu(), lambda b: torch.relu(b),
                                  lambda b: b.argmax(), lambda b: torch.argmin(b, 0), lambda b: b.topk(1),
                                  lambda b: b.cumsum(0, dtype=torch.bool)])
def test_ops_without_a_bool_kernel_refuse_a_mask(call):
    with pytest.raises((NotImplementedError, RuntimeError), match="(Bool|bool)"):
        call(torch.tensor([True, False, True]))


def test_max_and_min_along_a_dim_of_a_mask_compute():
    m = torch.tensor([[False, True, True], [False, False, False]])
    values, indices = m.max(1)
    assert values.tolist() == [True, False] and indices.tolist() == [1, 0]  # the first of equal entries
    assert m.min(0).values.tolist() == [False, False, False]


def test_an_integer_dtype_argument_on_a_tensor_that_requires_grad_is_refused():
    x = torch.tensor([1.5, 2.5], requires_grad=True)
    for call in (lambda: x.sum(dtype=torch.int64), lambda: x.cumsum(0, dtype=torch.int32),
                 lambda: x.prod(dtype=torch.uint8), lambda: x.nansum(dtype=torch.bool)):
        with pytest.raises(RuntimeError, match="Autograd not support dtype"):
            call()
    with torch.no_grad():
        assert x.sum(dtype=torch.int64).tolist() == 3  # 1 + 2, each truncated first
    assert x.detach().cumsum(0, dtype=torch.int32).tolist() == [1, 3]


# --- the extremes of nothing: PyTorch's exception types --------------------------------------------------
@pytest.mark.parametrize("name", ["amax", "amin", "max", "min"])
def test_extremes_of_nothing_raise_pytorchs_errors(name):
    with pytest.raises(IndexError, match="Expected reduction dim 0 to have non-zero size"):
        getattr(torch.zeros(0, 3), name)(0)
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified for input.numel\\(\\) == 0"):
        getattr(torch.zeros(0, 3), name)()
    out = getattr(torch.zeros(0, 3), name)(1)  # an empty result of non-empty slices is fine
    assert (out if name.startswith("a") else out.values).shape == (0,)


@pytest.mark.parametrize("p", [-1, -2, -0.5, math.inf, -math.inf])
def test_norms_without_an_identity_refuse_an_empty_tensor(p):
    with pytest.raises(RuntimeError, match="cannot compute the .* norm"):
        torch.zeros(0).norm(p)
    with pytest.raises(RuntimeError, match="cannot compute the .* norm"):
        torch.zeros(2, 0).norm(p, dim=1)
    assert torch.zeros(2, 0).norm(p, dim=0).shape == (0,)
    assert torch.zeros(0).norm(1).item() == 0.0 and torch.zeros(0).norm(2).item() == 0.0


# --- binary functions PyTorch defines on two tensors refuse a Python number ---------------------------------
@pytest.mark.parametrize("name", ["maximum", "minimum", "logical_and", "logical_or", "logical_xor", "atan2", "hypot",
                                  "fmax", "fmin", "isclose"])
def test_tensor_pair_functions_refuse_a_number_on_either_side(name):
    x = torch.tensor([0.5, -1.0])
    fn = getattr(torch, name)
    for call in (lambda: fn(x, 2.0), lambda: fn(1, x), lambda: fn(x, True), lambda: getattr(x, name)(0)):
        with pytest.raises(TypeError, match="must be Tensor, not"):
            call()


def test_fmod_takes_a_number_second_but_not_first():
    x = torch.tensor([5.0, -7.0])
    assert torch.fmod(x, 2).tolist() == [math.fmod(5, 2), math.fmod(-7, 2)]
    with pytest.raises(TypeError):
        torch.fmod(2, x)


def test_a_bool_number_first_in_sub_is_refused():
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor is not supported"):
        torch.sub(False, torch.tensor([1, 2]))


@pytest.mark.parametrize("op", ["|", "&", "^"])
def test_a_shape_mismatch_is_reported_before_a_missing_kernel(op):
    a, b = torch.ones(3), torch.ones(4)  # float has no bitwise kernel, and the shapes do not broadcast
    with pytest.raises((RuntimeError, ValueError), match="(must match the size|do not broadcast)"):
        eval(f"a {op} b")


# --- integer division of an empty tensor divides nothing ----------------------------------------------------
@pytest.mark.parametrize("call", [lambda e: e // 0, lambda e: e % 0, lambda e: torch.fmod(e, 0),
                                  lambda e: torch.remainder(e, torch.tensor(False)), lambda e: e.div(0, rounding_mode="trunc")])
def test_integer_division_by_zero_of_an_empty_tensor_is_empty(call):
    out = call(torch.zeros((2, 0), dtype=torch.int64))
    assert out.shape == (2, 0) and out.dtype == torch.int64
    with pytest.raises((ZeroDivisionError, RuntimeError)):
        call(torch.ones(2, dtype=torch.int64))


def test_topk_of_equal_values_and_median_of_nothing_and_bincounts_half_weights():
    assert torch.tensor([6, 1, 6]).topk(1).indices.tolist() == [0]
    assert torch.tensor([9, 9, 250], dtype=torch.uint8).topk(3).indices.tolist() == [2, 0, 1]
    assert torch.zeros(0, dtype=torch.bool).median().item() is True
    assert torch.zeros(0, dtype=torch.int64).median().item() == np.iinfo(np.int64).min
    w = torch.tensor([1.5, 2.0, 0.25], dtype=torch.float16)
    out = torch.tensor([2, 0, 2]).bincount(weights=w)
    assert out.dtype == torch.float64 and out.tolist() == [2.0, 0.0, 1.75]  # half weights sum in float64
    assert torch.tensor([1]).bincount(weights=torch.tensor([0.5])).dtype == torch.float32


def test_xlogy_gradient_where_x_is_zero_and_y_has_no_log_is_zero():
    (gx, _), w = _grad(torch.xlogy, np.array([0.0, 0.0, 1.0]), np.array([-2.0, 0.0, 0.5]))
    assert gx.tolist() == [0.0, 0.0, w[2] * math.log(0.5)]  # 0 log y is 0 for every y, so no slope in x at 0


def test_relu_passes_and_abs_stops_the_gradient_at_a_nan():
    """PyTorch's conventions where no derivative exists: relu's backward masks only entries <= 0 (a NaN is not),
    abs's is g sgn(x) with sgn(NaN) = 0."""
    x = torch.tensor([float("nan"), -1.0, 2.0], requires_grad=True)
    (x.relu() * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 3.0]
    x.grad = None
    (x.abs() * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [0.0, -2.0, 3.0]


# --- found by the widened generator (views, in-place writes, torch.nn.functional) ---------------------------
def _softmax_rows(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("reduction", ["sum", "mean"])
def test_cross_entropy_with_classes_at_dim_1_and_a_batch_of_one_has_the_right_gradient(reduction):
    """Logits (1, C, d), contiguous: the gradient is softmax - onehot at every position (it lost the -1 once)."""
    z = np.array([[[1.42, 0.17, 0.3], [-2.73, -1.62, 0.9], [-2.85, 2.63, -0.4]]])  # (N=1, C=3, d=3)
    t = [[2, 0, 1]]
    x = torch.tensor(z.tolist(), dtype=torch.float64, requires_grad=True)
    torch.nn.functional.cross_entropy(x, torch.tensor(t), reduction=reduction).backward()
    p = _softmax_rows(np.moveaxis(z, 1, -1))  # (1, d, C)
    p[0, np.arange(3), t[0]] -= 1
    want = np.moveaxis(p, -1, 1) / (3 if reduction == "mean" else 1)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-10, atol=1e-12)
    assert abs(float(x.grad.sum())) < 1e-12  # each position's softmax - onehot sums to 0


@pytest.mark.parametrize("call", [lambda e: e.add_(1), lambda e: e.relu_(), lambda e: e.clamp_(0, 0),
                                  lambda e: e.exp_(), lambda e: e.mul_(torch.ones(1)), lambda e: e.zero_(),
                                  lambda e: e.transpose(0, -1).sub_(0.5), lambda e: e.copy_(torch.ones(2, 0))])
def test_in_place_writes_into_an_empty_tensor_write_nothing(call):
    e = torch.zeros(2, 0)
    assert call(e).shape in ((2, 0), (0, 2)) and e.shape == (2, 0)  # (once refused: 'more than one element ...')


def test_a_comparison_into_an_empty_out():
    o = torch.zeros((2, 0), dtype=torch.bool)
    assert torch.eq(torch.zeros(2, 0), torch.zeros(1, 0), out=o).shape == (2, 0)


def test_copy_casts_into_selfs_dtype_and_refuses_to_grow():
    u = torch.tensor([[9], [6], [6]], dtype=torch.uint8)
    u[0].copy_(torch.tensor([2.7], requires_grad=True))  # a float with grad into an int view: truncated, no graph
    assert u.tolist() == [[2], [6], [6]]
    b = torch.tensor([True, False])
    b.copy_(torch.tensor([0.0, 0.5]))
    assert b.tolist() == [False, True]
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        torch.zeros(3).copy_(torch.ones(2, 3))


def test_zero_of_a_bool_tensor_and_index_fill_of_a_0d_tensor():
    assert torch.tensor([True, True]).zero_().tolist() == [False, False]
    assert torch.tensor(2.5).index_fill_(0, torch.tensor([0]), -1.0).item() == -1.0
    assert torch.tensor(2.0).index_add(0, torch.tensor([0]), torch.tensor(3.0)).item() == 5.0


def test_in_place_results_that_self_cannot_hold_are_refused():
    for call in (lambda x: x.exp_(), lambda x: x.sigmoid_(), lambda x: x.clamp_(0.5, 1), lambda x: x.add_(0.5)):
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type"):
            call(torch.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        torch.tensor(1.0).sub_(torch.ones(1))  # a 0-d self cannot grow to (1,)
    with pytest.raises((RuntimeError, ValueError)):
        torch.ones(3).tril_()


def test_in_place_integer_arithmetic_wraps_like_out_of_place():
    u = torch.tensor([3, 5], dtype=torch.uint8)
    u.add_(torch.tensor([7], dtype=torch.uint8), alpha=-1)
    assert u.tolist() == [(3 - 7) % 256, (5 - 7) % 256]
    v = torch.tensor([3], dtype=torch.uint8)
    v.sub_(torch.tensor([-1]))  # an int64 operand, written back into uint8
    assert v.tolist() == [4]
    w = torch.tensor([5, 11, 0, 250], dtype=torch.uint8)
    assert w.clone().clamp_(-3, -2).tolist() == [253] * 4 == w.clamp(-3, -2).tolist()  # -3 is 253, -2 is 254


def test_index_add_refuses_a_source_of_the_wrong_shape():
    with pytest.raises(RuntimeError, match="source tensor shape must match self tensor shape"):
        torch.zeros(1, 3).index_add(0, torch.tensor([0]), torch.ones(1, 2))  # (once: a silent partial add)
    out = torch.zeros(2, 3).index_add(1, torch.tensor([0, 2]), torch.ones(2, 2))
    assert out.tolist() == [[1.0, 0.0, 1.0], [1.0, 0.0, 1.0]]


def test_gelu_tanh_of_a_0d_tensor():
    def gelu(v):
        return 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
    assert abs(torch.nn.functional.gelu(torch.tensor(0.32, dtype=torch.float16), approximate="tanh").item()
               - gelu(0.32)) < 2e-3
    x = torch.tensor(0.32, dtype=torch.float64, requires_grad=True)
    torch.nn.functional.gelu(x, approximate="tanh").backward()
    assert abs(x.grad.item() - (gelu(0.32 + 1e-6) - gelu(0.32 - 1e-6)) / 2e-6) < 1e-8


def test_glu_and_layer_norm_of_empty_tensors():
    assert torch.nn.functional.glu(torch.zeros(0, 2), -2).shape == (0, 2)
    x = torch.zeros(0, 3, requires_grad=True)
    w = torch.ones(3, requires_grad=True)
    y = torch.nn.functional.layer_norm(x, (3,), w)
    y.sum().backward()
    assert y.shape == (0, 3) and x.grad.shape == (0, 3) and w.grad.tolist() == [0.0, 0.0, 0.0]
    assert torch.nn.functional.layer_norm(torch.zeros(2, 0), (0,)).shape == (2, 0)


def test_float_power_of_a_number_and_softmax_dtype_and_softmin_of_a_mask():
    out = torch.float_power(-2, torch.tensor([[1, 3]], dtype=torch.uint8))
    assert out.dtype == torch.float64 and out.tolist() == [[-2.0, -8.0]]  # (once: -2 wrapped to 254 first)
    x = torch.tensor([0.5, 1.5], dtype=torch.float16)
    for fn in (torch.nn.functional.softmax, torch.nn.functional.log_softmax):
        assert fn(x, dim=-1, dtype=torch.float64).dtype == torch.float64
    p = torch.nn.functional.softmax(x, dim=-1, dtype=torch.float64)
    assert abs(p[1].item() - 1 / (1 + math.exp(-1.0))) < 1e-12
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor is not supported"):
        torch.nn.functional.softmin(torch.tensor([True, False]), dim=0, dtype=torch.float64)


def test_kl_div_of_a_negative_target_is_nan_not_zero():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (log of a negative number)
        out = torch.nn.functional.kl_div(torch.tensor([0.5, -1.0]), torch.tensor([-0.5, 0.25]), reduction="none")
    assert math.isnan(out[0].item()) and abs(out[1].item() - 0.25 * (math.log(0.25) + 1.0)) < 1e-6


def test_max_without_dim_shares_its_gradient_among_the_nans_as_amax_does_not():
    """A NaN result: torch.max()/min() count every NaN as a tie (each gets g / count), amax/amin give NaN
    everywhere (their formula compares with ==, and NaN == NaN is False)."""
    nan = float("nan")
    data = [[1.0, nan, 3.0], [nan, 2.0, nan]]
    for name in ("max", "min"):
        x = torch.tensor(data, requires_grad=True)
        y = getattr(x, name)()
        assert math.isnan(y.item())
        (y * 6.0).backward()
        assert x.grad.tolist() == [[0.0, 2.0, 0.0], [2.0, 0.0, 2.0]]
    x = torch.tensor(data, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (0 / 0 in amax's split)
        x.amax().backward()
    assert all(math.isnan(v) for row in x.grad.tolist() for v in row)
    x = torch.tensor([1.0, 3.0, 3.0], requires_grad=True)  # without NaN, ties still share
    x.max().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5]


def test_matrix_products_of_bools_raise_and_one_operand_einsum_sums_ints_in_int64():
    b = torch.tensor([[True, False], [True, True]])
    for call in (lambda: b @ b, lambda: b @ b[0], lambda: b[0] @ b[0], lambda: torch.mm(b, b),
                 lambda: torch.einsum("ij,jk->ik", b, b)):
        with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
            call()
    with pytest.raises(RuntimeError, match="have the same dtype"):  # (the dtypes are compared first)
        b.float() @ b
    assert (b.long() @ b.long()).tolist() == [[1, 0], [2, 1]]  # the fix the message names
    u8 = torch.tensor([[200, 100], [3, 4]], dtype=torch.uint8)
    # a letter summed away: the sum is int64 as torch.sum's (uint8 would wrap 300 to 44)
    for eq, want in (("ij->i", [300, 7]), ("ij->", 307), ("ii", 204)):
        got = torch.einsum(eq, u8)
        assert got.dtype == torch.int64 and got.tolist() == want, eq
    assert torch.einsum("ij->i", b).tolist() == [1, 2] and torch.einsum("ij->i", b).dtype == torch.int64
    for eq in ("ij->ji", "ii->i", "ij->ij"):  # nothing summed: the dtype is kept
        assert torch.einsum(eq, u8).dtype == torch.uint8 and torch.einsum(eq, b).dtype == torch.bool
    assert torch.einsum("ij,jk->ik", u8, u8).dtype == torch.uint8  # a product keeps its dtype, as bmm's
