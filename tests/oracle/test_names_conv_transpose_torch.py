"""nn/conv_transpose.py against PyTorch 2.13: F.conv_transpose1d/2d/3d with stride, padding,
output_padding, groups, dilation and bias, unbatched inputs; values and the gradients of input, weight
and bias (float64 to 1e-12, float32 to 1e-4 relative); the modules' shapes, reprs, output_size; errors."""
import numpy as np
import pytest
import torch

import tinyattn

rng = np.random.default_rng(5)

CASES = [  # (nd, x shape, w shape, kwargs)
    (1, (2, 4, 5), (4, 3, 3), {}), (1, (2, 4, 5), (4, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    (1, (2, 4, 5), (4, 1, 2), {"groups": 2, "dilation": 3, "output_padding": 2}),
    (1, (4, 6), (4, 2, 3), {"stride": 3}), (1, (1, 2, 1), (2, 2, 1), {}),
    (2, (2, 4, 3, 4), (4, 3, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    (2, (1, 6, 3, 3), (6, 2, 2, 3), {"stride": (2, 1), "padding": (0, 1), "groups": 3, "dilation": (1, 2)}),
    (2, (2, 2, 4, 4), (2, 3, 4, 4), {"stride": 2, "padding": 1}),
    (3, (1, 2, 2, 3, 2), (2, 2, 2, 2, 2), {"stride": 2, "output_padding": (1, 0, 1)}),
]


def run(lib, nd, xs, ws, kw, dtype, bias):
    dt = getattr(lib, dtype)
    x = lib.tensor(rng_x[xs], dtype=dt, requires_grad=True)
    w = lib.tensor(rng_x[ws], dtype=dt, requires_grad=True)
    b = lib.tensor(np.linspace(-1, 1, ws[1] * kw.get("groups", 1)), dtype=dt, requires_grad=True) if bias else None
    out = getattr(lib.nn.functional, f"conv_transpose{nd}d")(x, w, b, **kw)
    out.backward(lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)), dtype=dt))
    return [out.detach().numpy(), x.grad.numpy(), w.grad.numpy()] + ([b.grad.numpy()] if bias else [])


rng_x = {}
for _nd, _xs, _ws, _kw in CASES:
    rng_x.setdefault(_xs, rng.standard_normal(_xs))
    rng_x.setdefault(_ws, rng.standard_normal(_ws))


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-12), ("float32", 1e-4)])
@pytest.mark.parametrize("nd,xs,ws,kw", CASES)
def test_values_and_every_gradient_match_pytorch(nd, xs, ws, kw, dtype, tol, bias):
    want, got = run(torch, nd, xs, ws, kw, dtype, bias), run(tinyattn, nd, xs, ws, kw, dtype, bias)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * max(1.0, np.abs(w).max()))


@pytest.mark.parametrize("make", [lambda nn: nn.ConvTranspose1d(2, 3, 3), lambda nn: nn.ConvTranspose1d(2, 4, 3, dilation=2, bias=False, groups=2),
                                  lambda nn: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
                                  lambda nn: nn.ConvTranspose3d(2, 2, (1, 2, 3), stride=(1, 2, 1))])
def test_modules_repr_parameter_shapes_and_output(make):
    mt, ma = make(torch.nn), make(tinyattn.nn)
    assert repr(ma) == repr(mt)
    assert [(k, tuple(v.shape)) for k, v in ma.named_parameters()] == [(k, tuple(v.shape)) for k, v in mt.named_parameters()]
    ma.load_state_dict({k: tinyattn.tensor(v.detach().numpy()) for k, v in mt.state_dict().items()})
    x = rng.standard_normal((2, mt.in_channels) + (4,) * len(mt.kernel_size)).astype(np.float32)
    np.testing.assert_allclose(ma(tinyattn.tensor(x)).detach().numpy(), mt(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


def test_initialisation_bound_is_pytorchs():
    # kaiming_uniform(a=sqrt(5)) with fan-in = weight.size(1) * prod(kernel): every weight and bias within 1/sqrt(fan_in)
    for lib in (torch, tinyattn):
        m = lib.nn.ConvTranspose2d(3, 8, 3, groups=1)
        bound = 1 / np.sqrt(8 * 9)
        assert np.abs(m.weight.detach().numpy()).max() <= bound and np.abs(m.bias.detach().numpy()).max() <= bound
        assert np.abs(m.weight.detach().numpy()).max() > 0.8 * bound


def test_output_size_picks_the_output_padding():
    for lib in (torch, tinyattn):
        m = lib.nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1)
        x = lib.ones(1, 2, 5, 5)
        assert tuple(m(x).shape) == (1, 2, 9, 9)
        assert tuple(m(x, output_size=[10, 10]).shape) == (1, 2, 10, 10)
        assert tuple(m(x, output_size=(1, 2, 10, 9)).shape) == (1, 2, 10, 9)
        with pytest.raises(ValueError, match="requested an output size of"):
            m(x, output_size=[12, 12])


ERRORS = [(lambda l: l.nn.functional.conv_transpose1d(l.ones(1, 2, 4), l.ones(2, 3, 3), stride=2, output_padding=2),
           RuntimeError, "output padding must be smaller than either stride or dilation"),
          (lambda l: l.nn.functional.conv_transpose1d(l.ones(1, 3, 4), l.ones(2, 3, 3)), RuntimeError,
           "Given transposed=1, weight of size"),
          (lambda l: l.nn.functional.conv_transpose1d(l.ones(1, 2, 4), l.ones(2, 3, 3), padding=3), RuntimeError,
           "Output size is too small"),
          (lambda l: l.nn.ConvTranspose1d(2, 3, 3, padding_mode="reflect"), ValueError,
           'Only "zeros" padding mode is supported for ConvTranspose1d'),
          (lambda l: l.nn.ConvTranspose1d(3, 4, 3, groups=2), ValueError, "in_channels must be divisible by groups")]


@pytest.mark.parametrize("call,exc,text", ERRORS)
def test_errors_are_pytorchs(call, exc, text):
    for lib in (torch, tinyattn):
        with pytest.raises(exc, match=text):
            call(lib)
