"""torch.equal, torch.eq/ne/lt/le/gt/ge, torch.dot, Tensor.mm/bmm/dot and Tensor.to's three signatures:
values against NumPy, gradients by finite differences, and PyTorch's errors."""
import numpy as np
import pytest

import tinyattn
from tinyattn.gradcheck import gradcheck

RNG = np.random.default_rng(1)


def t64(*shape, requires_grad=True):
    return tinyattn.tensor(RNG.standard_normal(shape), requires_grad=requires_grad)


def test_equal_is_shape_and_values_a_python_bool():
    a = tinyattn.tensor([1.0, 2.0])
    assert tinyattn.equal(a, tinyattn.tensor([1.0, 2.0])) is True
    assert tinyattn.equal(a, tinyattn.tensor([1, 2])) is True  # values compare after promotion
    assert tinyattn.equal(a, tinyattn.tensor([[1.0, 2.0]])) is False  # same values, other shape
    assert tinyattn.equal(tinyattn.tensor(1.0), tinyattn.tensor([1.0])) is False
    assert tinyattn.equal(a, tinyattn.tensor([1.0, 2.5])) is False
    nan = tinyattn.tensor([1.0, float("nan")])
    assert tinyattn.equal(nan, nan) is False  # NaN equals nothing
    # PyTorch 2.13's words, measured: equal(): argument 'other' (position 2) must be Tensor, not list
    with pytest.raises(TypeError, match=r"^equal\(\): argument 'other' \(position 2\) must be Tensor, not list$"):
        tinyattn.equal(a, [1.0, 2.0])


@pytest.mark.parametrize("name,np_fn", [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                                        ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)])
def test_comparison_functions_broadcast_take_numbers_and_return_bool(name, np_fn):
    fn = getattr(tinyattn, name)
    a, b = RNG.integers(0, 3, (2, 3)).astype(float), RNG.integers(0, 3, (3,)).astype(float)
    out = fn(tinyattn.tensor(a, requires_grad=True), tinyattn.tensor(b))
    assert out.dtype == np.bool_ and not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), np_fn(a, b))
    np.testing.assert_array_equal(fn(tinyattn.tensor(a), 1).numpy(), np_fn(a, 1))
    np.testing.assert_array_equal(fn(input=tinyattn.tensor(a), other=tinyattn.tensor(1)).numpy(), np_fn(a, 1))
    into = tinyattn.zeros(2, 3, dtype=tinyattn.bool)
    assert fn(tinyattn.tensor(a), 1.5, out=into) is into
    np.testing.assert_array_equal(into.numpy(), np_fn(a, 1.5))
    with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'input' must be Tensor, not int"):
        fn(1, tinyattn.tensor(a))
    with pytest.raises(ValueError, match="do not broadcast"):
        fn(tinyattn.ones(2), tinyattn.ones(3))


def test_comparison_other_names():
    assert tinyattn.greater is tinyattn.gt and tinyattn.less_equal is tinyattn.le and tinyattn.not_equal is tinyattn.ne


def test_dot_mm_bmm_values_gradients_and_ranks():
    u, v = t64(5), t64(5)
    np.testing.assert_allclose(tinyattn.dot(u, v).numpy(), u.numpy() @ v.numpy(), rtol=1e-14)
    assert tinyattn.dot(u, v).shape == () and u.dot(v).shape == ()
    assert tinyattn.dot(tinyattn.tensor([1, 2]), tinyattn.tensor([3, 4])).item() == 11
    assert gradcheck(lambda a, b: tinyattn.dot(a, b), (u, v))
    m, n = t64(3, 4), t64(4, 2)
    np.testing.assert_allclose(m.mm(n).numpy(), m.numpy() @ n.numpy(), rtol=1e-14)
    assert gradcheck(lambda a, b: a.mm(b), (m, n))
    p, q = t64(2, 3, 4), t64(2, 4, 5)
    np.testing.assert_allclose(p.bmm(q).numpy(), p.numpy() @ q.numpy(), rtol=1e-14)
    assert gradcheck(lambda a, b: a.bmm(b), (p, q))
    with pytest.raises(ValueError, match="1D tensors expected, but got 2D and 1D"):
        tinyattn.dot(m, u)
    with pytest.raises(ValueError, match="dot: the vectors have 5 and 3 elements"):
        tinyattn.dot(u, t64(3))
    with pytest.raises(RuntimeError, match="must have the same dtype"):
        tinyattn.dot(u, tinyattn.ones(5, dtype=tinyattn.float32))
    with pytest.raises(ValueError, match="mm expects two 2-D tensors"):
        m.mm(u)
    with pytest.raises(ValueError, match="bmm: both operands must be 3-D"):
        p.bmm(n)
    with pytest.raises(ValueError, match="bmm: batch sizes differ"):
        p.bmm(t64(3, 4, 5))
    with pytest.raises(ValueError, match="a's last dim"):
        m.mm(m)


def test_to_every_signature():
    x = tinyattn.ones(2, 3, requires_grad=True)
    assert x.to("cpu", dtype=tinyattn.float32) is x  # nothing changes: the tensor itself
    assert x.to("cpu", non_blocking=True) is x and x.to() is x and x.to(None) is x
    assert x.to(tinyattn.device("cpu")) is x and x.to(memory_format=tinyattn.contiguous_format) is x
    assert x.to(tinyattn.zeros(1)) is x
    for y in (x.to(device="cpu", dtype=tinyattn.float64), x.to("cpu", tinyattn.float64),
              x.to(tinyattn.zeros(1, dtype=tinyattn.float64)), x.to(dtype=tinyattn.float64), x.to(float),
              x.to(tinyattn.float64, memory_format=tinyattn.preserve_format), x.to(None, tinyattn.float64),
              x.to("cpu", tinyattn.float64, False, True), x.to(tinyattn.float64, True, True)):
        assert y.dtype == np.float64 and y.requires_grad and y is not x
    for y in (x.to(tinyattn.float32, copy=True), x.to("cpu", copy=True), x.to(tinyattn.zeros(1), copy=True)):
        assert y is not x and y.dtype == np.float32 and not np.shares_memory(y.numpy(), x.numpy())
        np.testing.assert_array_equal(y.numpy(), x.numpy())
    i = x.to("cpu", dtype=tinyattn.int32)
    assert i.dtype == np.int32 and not i.requires_grad


def test_to_copy_passes_the_gradient_back():
    x = t64(2, 3)
    assert gradcheck(lambda x: x.to(tinyattn.float64, copy=True) * 3, x)
    y = tinyattn.tensor(RNG.standard_normal((2, 3)).astype(np.float32), requires_grad=True)
    y.to("cpu", tinyattn.float64).sum().backward()
    assert y.grad.dtype == np.float32 and np.array_equal(y.grad.numpy(), np.ones((2, 3), np.float32))


def test_to_refuses_what_fits_no_signature_and_other_devices():
    x = tinyattn.ones(2, 3)
    for bad in (lambda: x.to(tinyattn.float32, tinyattn.float64), lambda: x.to("cpu", "cpu"),
                lambda: x.to(tinyattn.float64, device="cpu"), lambda: x.to(tinyattn.zeros(1), dtype=tinyattn.float64),
                lambda: x.to("cpu", non_blocking="yes"), lambda: x.to(tinyattn.float64, foo=1),
                lambda: x.to("cpu", tinyattn.float64, dtype=tinyattn.float32),
                lambda: x.to(np.ones(2))):  # an array has a .dtype but is not one
        with pytest.raises(TypeError, match="to\\(\\) received an invalid combination of arguments"):
            bad()
    with pytest.raises(TypeError, match="takes from 0 to 4 positional arguments but 5 were given"):
        x.to("cpu", tinyattn.float64, False, False, False)
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        x.to("cuda:0", dtype=tinyattn.float64)
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
        x.to(1)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        x.to(memory_format=tinyattn.channels_last)
    assert tinyattn.ones(1, 2, 3, 4).to(memory_format=tinyattn.channels_last).shape == (1, 2, 3, 4)
    with pytest.raises(TypeError, match="NumPy has no bfloat16"):
        x.to(tinyattn.bfloat16)
