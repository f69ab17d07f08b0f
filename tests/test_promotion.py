"""PyTorch's promotion table for bool and small-int arithmetic, and for matrix products of mixed dtypes.

Every op reads one table (tinyattn/promotion.py). Each expectation below is worked out by hand from
PyTorch's rule, stated in the test.
"""
import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn as nn
import tinyattn.nn.functional as F

B = [True, False, True]


def b():
    return torch.tensor(B)


def u8():
    return torch.tensor([0, 3, 250], dtype=torch.uint8)


# ---------------------------------------------------------------------------- bool
def test_bool_to_a_python_bool_power_stays_bool():
    # x ** True is x, x ** False is 1 everywhere; PyTorch computes both in bool
    y, z = b() ** True, b() ** False
    assert y.dtype == torch.bool and z.dtype == torch.bool
    assert y.tolist() == B and z.tolist() == [True, True, True]


def test_bool_to_an_int_power_is_int64():
    y = b() ** 2  # a Python int lifts bool to int64: 1 ** 2, 0 ** 2, 1 ** 2
    assert y.dtype == torch.int64 and y.tolist() == [1, 0, 1]


@pytest.mark.parametrize("expr", ["b() - b()", "b() - True", "True - b()", "False - b()"])
def test_bool_minus_bool_is_refused_and_points_to_xor(expr):
    with pytest.raises(RuntimeError, match=r"with two bool tensors is not supported. Use the `\^` or `logical_xor\(\)`"):
        eval(expr)


@pytest.mark.parametrize("expr", ["torch.ones(3) - b()", "b() - torch.ones(3)", "1 - b()", "u8() - True",
                                  "torch.tensor([1, 2, 3]).sub(b())"])
def test_anything_minus_a_bool_is_refused_and_points_to_not(expr):
    with pytest.raises(RuntimeError, match=r"with a bool tensor is not supported. If you are trying to invert a "
                                           r"mask, use the `~` or `logical_not\(\)`"):
        eval(expr)


def test_negating_a_bool_is_refused():
    with pytest.raises(RuntimeError, match=r"Negation, the `-` operator, on a bool tensor is not supported"):
        -b()


@pytest.mark.parametrize("expr,kernel", [("b() % b()", "remainder_cpu"), ("b() // b()", "div_floor_cpu"),
                                         ("b() ** b()", "pow"), ("True ** b()", "pow"), ("b() // True", "div_floor_cpu"),
                                         ("b() % torch.tensor(True)", "remainder_cpu")])
def test_bool_ops_without_a_bool_kernel_are_refused_with_its_name(expr, kernel):
    with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'Bool\''):
        eval(expr)


def test_bool_with_an_int_computes_in_the_int():
    # the bool counts as 0/1 in the other side's dtype: [1, 0, 1] // 2 = [0, 0, 0]; [1,0,1] % 2 = [1, 0, 1]
    assert (b() // 2).tolist() == [0, 0, 0] and (b() % 2).tolist() == [1, 0, 1]
    assert (b() + b()).dtype == torch.bool and (b() + b()).tolist() == B  # bool + bool is "or", as PyTorch


# ---------------------------------------------------------------------------- bitwise
def test_bool_and_uint8_is_bitwise_in_uint8():
    # [1, 0, 1] & [0, 3, 250]: 1 & 0 = 0, 0 & 3 = 0, 1 & 250 = 0 (250 is even)
    y = b() & u8()
    assert y.dtype == torch.uint8 and y.tolist() == [0, 0, 0]
    assert (u8() | b()).tolist() == [1, 3, 251]  # 0|1, 3|0, 250|1
    assert (u8() ^ 1).tolist() == [1, 2, 251]  # 0^1, 3^1 = 0b10, 250^1


def test_ints_are_bitwise_not_logical():
    x = torch.tensor([6, 5])  # 6 & 3 = 0b110 & 0b011 = 2; 5 & 3 = 1; 6 | 3 = 7; 5 ^ 3 = 6
    assert (x & 3).tolist() == [2, 1] and (x | 3).tolist() == [7, 7] and (x ^ 3).tolist() == [5, 6]


def test_bools_are_logical():
    m = b()
    assert (m & torch.tensor([True, True, False])).tolist() == [True, False, False]
    assert (m ^ True).tolist() == [False, True, False] and (True ^ m).dtype == torch.bool


@pytest.mark.parametrize("expr,kernel,name", [("b() & torch.ones(3)", "bitwise_and_cpu", "Float"),
                                              ("torch.ones(3) | torch.ones(3)", "bitwise_or_cpu", "Float"),
                                              ("b() ^ 0.5", "bitwise_xor_cpu", "Float"),
                                              ("u8() & torch.ones(3, dtype=torch.float64)", "bitwise_and_cpu", "Double")])
def test_bitwise_on_floats_is_refused(expr, kernel, name):
    with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for \'{name}\''):
        eval(expr)


# ---------------------------------------------------------------------------- uint8 and int8
def test_uint8_plus_a_negative_number_wraps_round():
    # -1 in uint8 is 255: 0 + 255 = 255, 3 + 255 = 258 - 256 = 2, 250 + 255 = 505 - 256 = 249
    y = u8() + (-1)
    assert y.dtype == torch.uint8 and y.tolist() == [255, 2, 249]
    assert ((-1) + u8()).tolist() == [255, 2, 249]
    assert (u8() + 300).tolist() == [44, 47, 38]  # 300 - 256 = 44
    assert (torch.tensor([100], dtype=torch.int8) + 300).tolist() == [-112]  # 300 -> 44; 144 -> 144 - 256


def test_uint8_minus_and_times_wrap():
    assert (u8() - 1).tolist() == [255, 2, 249]
    assert (u8() * -1).tolist() == [0, 253, 6]  # 3 * 255 = 765 = 2 * 256 + 253; 250 * 255 % 256 = 6


def test_uint8_compares_with_the_number_in_uint8():
    # PyTorch converts -1 to the tensor's dtype first: u8 < -1 is u8 < 255
    assert (u8() < -1).tolist() == [True, True, True]
    assert ((-1) < u8()).tolist() == [False, False, False]
    assert (u8() < 300).tolist() == [True, True, False]  # 300 -> 44
    assert (u8() <= 0.5).tolist() == [True, False, False]  # a float compares as a float


def test_an_int_tensor_to_a_negative_python_int_is_refused():
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed."):
        torch.tensor([3]) ** -1


def test_a_uint8_power_too_large_for_uint8_is_refused():
    with pytest.raises(RuntimeError, match="value cannot be converted to type uint8_t without overflow"):
        u8() ** 300


def test_int_division_is_float():
    y = torch.tensor([1, 2], dtype=torch.uint8) / 4
    assert y.dtype == torch.float32 and y.tolist() == [0.25, 0.5]


def test_builtin_abs():
    assert abs(torch.tensor([-2.0, 3.0])).tolist() == [2.0, 3.0]


# ---------------------------------------------------------------------------- matrix products
def test_float32_into_a_float64_linear_is_refused():
    layer = nn.Linear(3, 2).double()
    with pytest.raises(RuntimeError, match="mat1 and mat2 must have the same dtype, but got Float and Double"):
        layer(torch.ones(4, 3))
    assert layer(torch.ones(4, 3).double()).dtype == torch.float64


@pytest.mark.parametrize("a,b", [((2, 3), (3, 4)), ((3,), (3,)), ((5, 2, 3), (3, 4))])
def test_matmul_of_float32_and_float64_is_refused(a, b):
    with pytest.raises(RuntimeError, match="must have the same dtype, but got Float and Double"):
        torch.ones(*a) @ torch.ones(*b, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="but got Double and Float"):
        torch.matmul(torch.ones(*a, dtype=torch.float64), torch.ones(*b))


def test_int_matmul_stays_int():
    y = torch.tensor([[1, 2]]) @ torch.tensor([[3], [4]])  # 1*3 + 2*4
    assert y.dtype == torch.int64 and y.tolist() == [[11]]


# ---------------------------------------------------------------------------- in place
def test_in_place_ops_read_the_same_table():
    u = u8()
    u += -1  # wraps as u8 + -1 does
    assert u.tolist() == [255, 2, 249] and u.dtype == torch.uint8
    m = b()
    m += True  # bool + bool is "or": stays bool
    assert m.tolist() == [True, True, True]
    with pytest.raises(RuntimeError, match="with two bool tensors is not supported"):
        b().sub_(b())
    with pytest.raises(RuntimeError, match="with a bool tensor is not supported"):
        x = torch.ones(3)
        x -= b()
    with pytest.raises(RuntimeError, match="result type Long can't be cast to the desired output type Bool"):
        m = b()
        m *= torch.tensor([1, 2, 3])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        torch.tensor([1, 2]).add_(0.5)


def test_comparing_with_none_or_a_string_is_pythons_answer():
    x = torch.tensor([1, 2])
    assert (x == None) is False and (x != None) is True and (x == "a") is False  # noqa: E711
    with pytest.raises(TypeError):
        x < None  # noqa: B015
