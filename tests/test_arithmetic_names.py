"""torch.add & co., // and %, fmod, maximum/minimum, the rounding functions, log1p/expm1/rsqrt and
the other elementwise names that tutorial code calls, each against values worked out by hand."""
import math

import numpy as np
import pytest

import tinyattn as torch
from tinyattn.gradcheck import gradcheck

rng = np.random.default_rng(5)


def f64(*shape, low=-2.0, high=2.0):
    return torch.tensor(rng.uniform(low, high, shape), requires_grad=True)


def test_the_operator_names_and_alpha():
    x, y = torch.tensor([1.0, 2.0]), torch.tensor([10.0, 20.0])
    assert torch.add(x, y, alpha=2).tolist() == [21.0, 42.0]  # x + 2 y
    assert x.sub(y, alpha=0.5).tolist() == [-4.0, -8.0] and torch.subtract(y, x).tolist() == [9.0, 18.0]
    assert torch.mul(x, 3).tolist() == [3.0, 6.0] and x.multiply(y).tolist() == [10.0, 40.0]
    assert torch.div(y, x).tolist() == [10.0, 10.0] and torch.true_divide(x, 4).tolist() == [0.25, 0.5]
    assert torch.add(1, x).tolist() == [2.0, 3.0]  # a number first, as torch.add(1, x) allows
    assert torch.tensor([7, 8]).div(2).tolist() == [3.5, 4.0]  # integer division by name is true division


def test_floor_division_and_remainder_have_pythons_signs():
    a = torch.tensor([7, -7, 7, -7])
    b = torch.tensor([2, 2, -2, -2])
    # Python: 7 // 2 = 3, -7 // 2 = -4, 7 // -2 = -4, -7 // -2 = 3; the remainder takes b's sign
    assert (a // b).tolist() == [3, -4, -4, 3] and (a // b).dtype == torch.int64
    assert (a % b).tolist() == [1, 1, -1, -1]
    assert ((a // b) * b + a % b).tolist() == a.tolist()  # the identity both are built on
    assert torch.fmod(a, b).tolist() == [1, -1, 1, -1]  # C's fmod takes a's sign
    assert a.div(b, rounding_mode="trunc").tolist() == [3, -3, -3, 3]
    assert a.div(b, rounding_mode="floor").tolist() == [3, -4, -4, 3]
    assert (7 // torch.tensor([2, -2])).tolist() == [3, -4] and (7 % torch.tensor([4])).tolist() == [3]
    assert (torch.tensor([5.5, -5.5]) // 2).tolist() == [2.0, -3.0]
    assert torch.remainder(torch.tensor([5.5, -5.5]), 2).tolist() == [1.5, 0.5]
    # trunc division of big integers is exact (a float quotient would lose the last digits)
    big = torch.tensor([-(2 ** 62) - 1])
    assert big.div(3, rounding_mode="trunc").item() == -((2 ** 62 + 1) // 3)
    assert (torch.arange(10) // 3).tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3]


def test_integer_division_by_zero_raises_and_float_division_gives_inf():
    for op in (lambda a: a // 0, lambda a: a % 0, lambda a: torch.fmod(a, 0),
               lambda a: a.div(torch.tensor([1, 0]), rounding_mode="trunc")):
        with pytest.raises(ZeroDivisionError, match="integer division by zero"):
            op(torch.tensor([1, 2]))
    assert (torch.tensor([1.0, -1.0]) // 0).tolist() == [math.inf, -math.inf]
    with pytest.raises(ValueError, match="rounding_mode must be None, 'trunc' or 'floor', got 'round'"):
        torch.tensor([1.0]).div(2, rounding_mode="round")


def test_gradients_of_remainder_fmod_and_rounded_division():
    a = f64(3, 4, low=0.3, high=5.0)
    b = torch.tensor(rng.uniform(0.7, 1.9, (4,)), requires_grad=True)  # broadcast along rows
    assert gradcheck(lambda a, b: a % b, [a, b])
    assert gradcheck(lambda a, b: torch.fmod(-a, b), [a, b])
    # a // b is a step: its gradient is 0 for both (PyTorch's div(rounding_mode=...) gives the same)
    (a // b).backward(torch.ones(3, 4, dtype=torch.float64))
    assert not a.grad.numpy().any() and not b.grad.numpy().any() and b.grad.shape == (4,)


def test_maximum_and_minimum_send_the_gradient_to_the_winner_and_split_ties():
    a = torch.tensor([1.0, 5.0, 3.0], requires_grad=True)
    b = torch.tensor([2.0, 4.0, 3.0], requires_grad=True)
    m = torch.maximum(a, b)
    assert m.tolist() == [2.0, 5.0, 3.0] and torch.minimum(a, b).tolist() == [1.0, 4.0, 3.0]
    m.backward(torch.tensor([10.0, 20.0, 30.0]))
    assert a.grad.tolist() == [0.0, 20.0, 15.0] and b.grad.tolist() == [10.0, 0.0, 15.0]
    x, y = f64(2, 3), f64(3)
    assert gradcheck(lambda x, y: x.maximum(y), [x, y]) and gradcheck(lambda x, y: x.minimum(y), [x, y])
    assert torch.maximum(torch.tensor([1.0]), torch.tensor([float("nan")])).isnan().item()  # NaN wins
    assert torch.clamp_min(torch.tensor([-1.0, 2.0]), 0).tolist() == [0.0, 2.0]
    assert torch.tensor([-1.0, 2.0]).clamp_max(0).tolist() == [-1.0, 0.0]


def test_rounding_functions_and_their_zero_gradient():
    x = torch.tensor([-1.5, -0.5, 0.5, 1.5, 2.7])
    assert x.floor().tolist() == [-2.0, -1.0, 0.0, 1.0, 2.0] and torch.ceil(x).tolist() == [-1.0, -0.0, 1.0, 2.0, 3.0]
    assert torch.trunc(x).tolist() == [-1.0, -0.0, 0.0, 1.0, 2.0] and x.sign().tolist() == [-1.0, -1.0, 1.0, 1.0, 1.0]
    assert torch.round(x).tolist() == [-2.0, -0.0, 0.0, 2.0, 3.0]  # ties go to the even neighbour
    assert torch.round(torch.tensor([1.2345]), decimals=2).item() == pytest.approx(1.23)
    i = torch.tensor([3, -2])
    assert i.floor().dtype == torch.int64 and i.round().tolist() == [3, -2]  # integers are whole already
    y = f64(6)
    for f in (torch.floor, torch.ceil, torch.round, torch.trunc, torch.sign):
        y.grad = None
        f(y).backward(torch.tensor(rng.standard_normal(6)))
        assert y.grad.tolist() == [0.0] * 6


def test_log1p_expm1_rsqrt_reciprocal_and_friends():
    tiny = torch.tensor([1e-10], dtype=torch.float64)
    assert tiny.log1p().item() == pytest.approx(1e-10, rel=1e-9)  # log(1 + x) would round 1 + 1e-10
    assert torch.expm1(tiny).item() == pytest.approx(1e-10, rel=1e-9)
    assert torch.rsqrt(torch.tensor([4.0, 0.25])).tolist() == [0.5, 2.0]
    r = torch.reciprocal(torch.tensor([4, 5]))  # integers become the default float dtype
    assert r.dtype == torch.float32 and r.tolist() == pytest.approx([0.25, 0.2])
    assert torch.log2(torch.tensor([8.0])).item() == pytest.approx(3.0)
    z = torch.tensor([0.0, 1.0])
    assert torch.sinh(z).tolist() == pytest.approx([0.0, math.sinh(1.0)])
    assert torch.cosh(z).tolist() == pytest.approx([1.0, math.cosh(1.0)])
    pos = f64(2, 3, low=0.2, high=3.0)
    for f in (torch.log1p, torch.expm1, torch.rsqrt, torch.reciprocal, torch.sinh, torch.cosh, torch.log2):
        assert gradcheck(f, [pos])


def test_nan_and_inf_tests_and_logical_ops():
    x = torch.tensor([1.0, float("nan"), float("inf"), -float("inf")])
    assert x.isnan().tolist() == [False, True, False, False]
    assert torch.isinf(x).tolist() == [False, False, True, True]
    assert torch.isfinite(x).tolist() == [True, False, False, False]
    p, q = torch.tensor([True, True, False]), torch.tensor([True, False, False])
    assert torch.logical_and(p, q).tolist() == [True, False, False]
    assert p.logical_or(q).tolist() == [True, True, False] and p.logical_xor(q).tolist() == [False, True, False]
    assert torch.logical_not(q).tolist() == [False, True, True]
    assert torch.tensor([1, 2]).eq(torch.tensor([1, 3])).tolist() == [True, False]
    assert torch.tensor([1, 2]).ne(1).tolist() == [False, True]
    assert torch.tensor([1, 2]).gt(1).tolist() == [False, True] and torch.tensor([1, 2]).le(1).tolist() == [True, False]
    assert torch.is_tensor(x) and not torch.is_tensor([1.0]) and torch.is_floating_point(x)
    assert not torch.tensor([1]).is_floating_point()


def test_dtype_limits():
    assert torch.finfo(torch.float32).min == -np.finfo(np.float32).max
    assert torch.finfo(torch.float16).eps == 2.0 ** -10 and torch.finfo().bits == 32  # the default dtype
    assert torch.iinfo(torch.long).max == 2 ** 63 - 1 and torch.iinfo(torch.uint8).min == 0
    with pytest.raises(TypeError, match="finfo: int64 is not a floating-point dtype"):
        torch.finfo(torch.long)
    with pytest.raises(TypeError, match="bfloat16 is not supported"):
        torch.finfo(torch.bfloat16)


def test_log_of_zero_is_minus_inf_without_a_warning():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # word_language_model builds its causal mask as log(tril(ones))
        mask = torch.log(torch.tril(torch.ones(3, 3)))
    assert mask.tolist() == [[0.0, -math.inf, -math.inf], [0.0, 0.0, -math.inf], [0.0, 0.0, 0.0]]
