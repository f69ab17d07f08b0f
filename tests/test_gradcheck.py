"""gradcheck itself: it must catch wrong backwards (including ones a .sum() check misses) and say where."""
import numpy as np
import pytest

import tinyattn as ta
from tinyattn.gradcheck import GradcheckError, gradcheck, numerical_grad
from tinyattn.tensor import Function


class SoftmaxZeroBackward(Function):
    """softmax with a backward that returns zeros: wrong, but its *sum* really has zero gradient."""
    @staticmethod
    def forward(ctx, a):
        e = np.exp(a - a.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    @staticmethod
    def backward(ctx, g):
        return np.zeros_like(g)


class SquareForgotTwo(Function):
    """x^2 with backward g*x (the factor 2 forgotten)."""
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * a


def x64(*shape):
    return ta.tensor(np.random.default_rng(0).standard_normal(shape), requires_grad=True)


def test_correct_backward_passes():
    x = x64(3, 4)
    assert gradcheck(lambda x: x.softmax(-1), [x]) is True


def test_wrong_backward_is_caught_with_input_index_and_values():
    x = x64(2, 3)
    with pytest.raises(GradcheckError) as e:
        gradcheck(lambda x: SquareForgotTwo.apply(x), [x])
    msg = str(e.value)
    assert "input 0" in msg and "index (" in msg and "analytic" in msg and "numeric" in msg and "relative error" in msg


def test_zero_softmax_backward_passes_a_sum_check_but_not_gradcheck():
    x = x64(2, 5)
    # The naive check: gradient of sum(softmax(x)) is truly zero, so a zero backward "agrees".
    SoftmaxZeroBackward.apply(x).sum().backward()
    naive = numerical_grad(lambda a: SoftmaxZeroBackward.forward(None, a).sum(), x.numpy())
    np.testing.assert_allclose(x.grad.numpy(), naive, atol=1e-8)
    # The random upstream gradient exposes it.
    with pytest.raises(GradcheckError):
        gradcheck(lambda x: SoftmaxZeroBackward.apply(x), [x])


def test_raise_exception_false_returns_false():
    x = x64(3)
    assert gradcheck(lambda x: SquareForgotTwo.apply(x), [x], raise_exception=False) is False


def test_names_the_second_input_when_it_is_the_wrong_one():
    a, b = x64(3), x64(3)
    with pytest.raises(GradcheckError, match="input 1"):
        gradcheck(lambda a, b: a * 2 + SquareForgotTwo.apply(b), [a, b])


def test_float32_inputs_are_refused_with_a_clear_error():
    with pytest.raises(TypeError, match="float64"):
        gradcheck(lambda x: x * 2, [ta.randn(3, requires_grad=True)])


def test_tuple_outputs_and_non_tensor_inputs():
    a = x64(2, 3)
    assert gradcheck(lambda a, k: (a * k, a.exp()), [a, 3.0])


def test_inputs_are_restored_and_existing_grad_kept():
    a = x64(4)
    before = a.numpy().copy()
    a.grad = ta.tensor(np.full(4, 7.0))
    gradcheck(lambda a: a.tanh(), [a])
    np.testing.assert_array_equal(a.numpy(), before)
    np.testing.assert_array_equal(a.grad.numpy(), np.full(4, 7.0))


def test_numerical_grad_of_plain_numpy_function():
    x = np.array([[1.0, -2.0], [0.5, 3.0]])
    g = numerical_grad(lambda z: np.sum(np.sin(z) * z), x)
    np.testing.assert_allclose(g, np.cos(x) * x + np.sin(x), atol=1e-8)
    assert x[0, 0] == 1.0  # not modified


def test_an_input_that_is_not_contiguous_is_perturbed_itself():
    """A transposed array (a Linear weight stored (in, out), a slice with steps) is nudged in place, not a copy."""
    w = ta.tensor(np.asfortranarray(np.random.default_rng(1).standard_normal((3, 4))), requires_grad=True)
    assert not w.is_contiguous()
    x = ta.tensor(np.random.default_rng(2).standard_normal((5, 4)))
    assert gradcheck(lambda w: ta.nn.functional.linear(x, w).tanh(), [w])
    with pytest.raises(GradcheckError, match="input 0"):
        gradcheck(lambda w: SquareForgotTwo.apply(w), [w])
