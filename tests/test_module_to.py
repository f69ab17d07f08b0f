"""Module.to in all of PyTorch's forms: the same Parameter objects cast in place (their gradients too),
floating buffers cast, integer buffers kept, the CPU accepted, GPUs and non-floating dtypes refused."""
import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn


def model():
    tinyattn.manual_seed(0)
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    m(tinyattn.randn(3, 2)).sum().backward()
    return m


FORMS = {
    "to(dtype)": lambda m: m.to(tinyattn.float64),
    "to(device=, dtype=)": lambda m: m.to(device="cpu", dtype=tinyattn.float64),
    "to(dtype=)": lambda m: m.to(dtype=tinyattn.float64),
    "to(tensor)": lambda m: m.to(tinyattn.zeros(1, dtype=tinyattn.float64)),
    "to('cpu', dtype)": lambda m: m.to("cpu", tinyattn.float64),
    "to(dtype, non_blocking)": lambda m: m.to(tinyattn.float64, True),
    "to(float)": lambda m: m.to(float),
    "to(device obj, dtype, non_blocking=)": lambda m: m.to(tinyattn.device("cpu"), tinyattn.float64, non_blocking=True),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_that_names_a_floating_dtype_casts_in_place(form):
    m = model()
    w, g = m[0].weight, m[0].weight.grad
    before = w.detach().numpy().copy()
    assert FORMS[form](m) is m
    assert m[0].weight is w and w.grad is g  # the same objects, as PyTorch's in-place conversion
    assert w.dtype == np.float64 and g.dtype == np.float64 and m[1].running_mean.dtype == np.float64
    assert m[1].num_batches_tracked.dtype == np.int64  # an integer buffer keeps its dtype
    np.testing.assert_array_equal(w.detach().numpy(), before.astype(np.float64))
    assert all(p.dtype == np.float64 for p in m.parameters())


@pytest.mark.parametrize("call", [lambda m: m.to("cpu"), lambda m: m.to(tinyattn.device("cpu")), lambda m: m.to(),
                                  lambda m: m.to("cpu", non_blocking=True),
                                  lambda m: m.to(memory_format=tinyattn.channels_last)])
def test_a_device_or_layout_alone_changes_nothing(call):
    m = model()
    assert call(m) is m and m[0].weight.dtype == np.float32 and m[0].weight.grad.dtype == np.float32


def test_the_loss_after_to_float64_is_the_float64_loss():
    m = model().to(tinyattn.float64)
    x = tinyattn.tensor(np.arange(6.0).reshape(3, 2))
    out = m(x)
    assert out.dtype == np.float64
    w, b = m[0].weight.detach().numpy(), m[0].bias.detach().numpy()
    h = x.numpy() @ w.T + b
    ref = (h - h.mean(0)) / np.sqrt(h.var(0) + 1e-5) * m[1].weight.detach().numpy() + m[1].bias.detach().numpy()
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-12)


@pytest.mark.parametrize("call,exc,text", [
    (lambda m: m.to(tinyattn.int64), TypeError,
     "nn.Module.to only accepts floating point or complex dtypes, but got desired dtype=torch.int64"),
    (lambda m: m.to(tinyattn.zeros(1, dtype=tinyattn.int32)), TypeError, "desired dtype=torch.int32"),
    (lambda m: m.to("cuda:0", tinyattn.int64), TypeError, "floating point or complex"),  # dtype checked first
    (lambda m: m.to(tinyattn.float64, copy=False), RuntimeError, ".to() does not accept copy argument"),
    (lambda m: m.to("cpu", tinyattn.float64, False, True), RuntimeError, ".to() does not accept copy argument"),
    (lambda m: m.to("cuda"), AssertionError, "Torch not compiled with CUDA enabled"),
    (lambda m: m.to(0), RuntimeError, "Cannot access accelerator device when none is available."),
    (lambda m: m.to("cpu", "cpu"), TypeError, "to() received an invalid combination of arguments - got (str, str)"),
    (lambda m: m.to(foo=1), TypeError, "to() received an invalid combination of arguments"),
    (lambda m: m.to(tinyattn.float64, non_blocking=1), TypeError, "invalid combination"),
])
def test_refusals_raise_pytorchs_errors_and_change_nothing(call, exc, text):
    m = model()
    with pytest.raises(exc) as info:
        call(m)
    assert text in str(info.value)
    assert m[0].weight.dtype == np.float32
