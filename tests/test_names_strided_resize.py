"""as_strided and resize_/resize_as_ without PyTorch: values against np.lib.stride_tricks.as_strided and
NumPy's reshape/truncation, gradients by finite differences in float64 over every element, the version
counter, and what each refuses."""
import numpy as np
import pytest

import tinyattn
from tinyattn import gradcheck

rng = np.random.default_rng(47)


def t(a, rg=True):
    return tinyattn.tensor(np.asarray(a, dtype=np.float64), dtype=tinyattn.float64, requires_grad=rg)


@pytest.mark.parametrize("size,stride,offset", [((3, 3), (1, 1), None), ((2, 3), (3, 1), 0), ((2, 2), (2, 1), 1),
                                                ((4,), (0,), 5), ((2, 2, 2), (1, 2, 1), 0), ((), (), 3)])
def test_as_strided_reads_storage_positions_and_its_gradient_adds_up(size, stride, offset):
    a = rng.standard_normal(12)
    want = np.lib.stride_tricks.as_strided(a[offset or 0:], size, tuple(s * a.itemsize for s in stride))
    got = tinyattn.as_strided(t(a), size, stride, offset)
    np.testing.assert_array_equal(got.detach().numpy(), want)
    assert gradcheck(lambda x: x.as_strided(size, stride, offset), (t(a),))


def test_as_strided_refuses_what_it_cannot_read():
    x = t(np.arange(6.0))
    for call, err, words in [(lambda: x.as_strided((3, 3), (1, 2)), RuntimeError, "out of bounds for storage of size 48"),
                             (lambda: x.as_strided((2,), (-1,)), RuntimeError, "Negative strides"),
                             (lambda: x.as_strided((2, 2), (1,)), RuntimeError, "mismatch in length"),
                             (lambda: x.as_strided((2,), (1,), -1), RuntimeError, "invalid storage offset -1"),
                             (lambda: x[2:].as_strided((2,), (1,)), NotImplementedError, "storage_offset\\(\\)=2")]:
        with pytest.raises(err, match=words):
            call()


@pytest.mark.parametrize("new", [(2, 3), (3, 2), (6,), (4,), (2, 2), (0,), (3, 4), (1, 1, 9)])
def test_resize_keeps_the_elements_in_storage_order(new):
    a = rng.standard_normal((2, 3))
    x = tinyattn.tensor(a)
    v = x._version
    assert x.resize_(*new) is x and tuple(x.shape) == new
    n = int(np.prod(new))
    keep = min(n, a.size)
    np.testing.assert_array_equal(x.numpy().reshape(-1)[:keep], a.reshape(-1)[:keep])
    assert (x.numpy().reshape(-1)[keep:] == 0).all()  # (PyTorch leaves new elements uninitialised)
    assert x._version == v + (new != (2, 3))  # an unchanged shape is no write, as PyTorch counts it


def test_resize_shares_memory_when_it_can_and_refuses_what_it_cannot_do():
    x = tinyattn.arange(6.0)
    view = x.view(2, 3)
    x.resize_((3, 2))
    view[0, 0] = 100.0
    assert x[0, 0].item() == 100.0  # the same count reshapes in place: views still share its memory
    y = tinyattn.ones(4)
    assert y.resize_as_(tinyattn.zeros(2, 2)).shape == (2, 2)
    for call, err, words in [(lambda: t([1.0, 2.0]).resize_(2, 1), RuntimeError, "require grad"),
                             (lambda: tinyattn.arange(6.0)[1:3].resize_(4), NotImplementedError, "a view"),
                             (lambda: tinyattn.arange(6.0).resize_(-1), RuntimeError, "non-negative"),
                             (lambda: tinyattn.arange(6.0).resize_(2, 2.5), TypeError, "size must be ints")]:
        with pytest.raises(err, match=words):
            call()
