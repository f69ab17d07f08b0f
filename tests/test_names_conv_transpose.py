"""nn/conv_transpose.py without PyTorch: a transposed convolution is the adjoint of the convolution with
the same weight (<conv(u, w), y> = <u, conv_transpose(y, w)>), its values match a direct NumPy scatter
loop, every gradient matches finite differences in float64, and the modules' shapes and errors."""
import itertools

import numpy as np
import pytest

import tinyattn
import tinyattn.nn.functional as F
from tinyattn import gradcheck, nn

rng = np.random.default_rng(6)


def t(a):
    return tinyattn.tensor(a, dtype=tinyattn.float64, requires_grad=True)


def scatter(x, w, stride, pad, out_pad, dilation, groups):
    """The definition, one input position at a time: out[o * ...] += x[c, s] w[c, o, k] at s*stride + k*dilation."""
    N, C, *S = x.shape
    K, Cg = w.shape[2:], w.shape[1]
    full = [(s - 1) * st + d * (k - 1) + 1 + op for s, st, d, k, op in zip(S, stride, dilation, K, out_pad)]
    out = np.zeros((N, Cg * groups, *full))
    for n, c in itertools.product(range(N), range(C)):
        g = c // (C // groups)
        for s in itertools.product(*map(range, S)):
            for k in itertools.product(*map(range, K)):
                pos = tuple(si * st + ki * d for si, st, ki, d in zip(s, stride, k, dilation))
                out[(n, slice(g * Cg, (g + 1) * Cg)) + pos] += x[(n, c) + s] * w[(c, slice(None)) + k]
    return out[(slice(None), slice(None)) + tuple(slice(p, f - p) for p, f in zip(pad, full))]


CASES = [(1, (2, 4, 5), (4, 3, 3), (2,), (1,), (1,), (1,), 1), (1, (1, 4, 4), (4, 1, 2), (1,), (0,), (2,), (3,), 2),
         (2, (1, 2, 3, 3), (2, 2, 3, 2), (2, 1), (1, 0), (1, 0), (1, 2), 1), (2, (2, 4, 2, 3), (4, 1, 2, 2), (2, 2), (0, 0), (0, 1), (1, 1), 4),
         (3, (1, 2, 2, 2, 2), (2, 1, 2, 1, 2), (2, 1, 1), (0, 0, 1), (1, 0, 0), (1, 1, 1), 1)]


@pytest.mark.parametrize("nd,xs,ws,stride,pad,out_pad,dilation,groups", CASES)
def test_values_are_the_scatter_definition_and_gradients_are_finite_differences(nd, xs, ws, stride, pad, out_pad,
                                                                             dilation, groups):
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[1] * groups)
    fn = getattr(F, f"conv_transpose{nd}d")
    got = fn(t(x), t(w), t(b), stride, pad, out_pad, groups, dilation).numpy()
    want = scatter(x, w, stride, pad, out_pad, dilation, groups) + b.reshape((-1,) + (1,) * nd)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x, w, b: fn(x, w, b, stride, pad, out_pad, groups, dilation), (t(x), t(w), t(b)))


@pytest.mark.parametrize("nd,stride,pad,dilation,groups", [(1, 2, 1, 1, 1), (2, 2, 0, 2, 2), (2, 3, 1, 1, 1)])
def test_it_is_the_adjoint_of_the_convolution(nd, stride, pad, dilation, groups):
    w = rng.standard_normal((4, 6 // groups) + (3,) * nd)  # conv: 6 -> 4 channels; transposed: 4 -> 6
    u = rng.standard_normal((2, 6) + (9,) * nd)
    cu = getattr(F, f"conv{nd}d")(t(u), t(w), None, stride, pad, dilation, groups)  # (2, 4, *O)
    y = rng.standard_normal(cu.shape)
    ty = getattr(F, f"conv_transpose{nd}d")(t(y), t(w), None, stride, pad, 0, groups, dilation)
    op = tuple(a - b for a, b in zip(u.shape[2:], ty.shape[2:]))  # what stride dropped at the end
    ty = getattr(F, f"conv_transpose{nd}d")(t(y), t(w), None, stride, pad, op, groups, dilation)
    assert ty.shape == u.shape
    np.testing.assert_allclose((cu.numpy() * y).sum(), (u * ty.numpy()).sum(), rtol=1e-12)


def test_modules_shapes_output_size_and_unbatched_input():
    m = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
    assert m.weight.shape == (4, 3, 3, 3) and m.bias.shape == (6,)
    assert m(tinyattn.randn(2, 4, 5, 5)).shape == (2, 6, 10, 10)
    assert m(tinyattn.randn(4, 5, 5)).shape == (6, 10, 10)
    up = nn.ConvTranspose1d(2, 2, 3, stride=2, padding=1)
    assert up(tinyattn.randn(1, 2, 5)).shape == (1, 2, 9)
    assert up(tinyattn.randn(1, 2, 5), output_size=[10]).shape == (1, 2, 10)
    with pytest.raises(ValueError, match="valid sizes range"):
        up(tinyattn.randn(1, 2, 5), output_size=[11])
    assert nn.ConvTranspose3d(1, 2, 2, bias=False, dtype=tinyattn.float64).weight.dtype == tinyattn.float64
    assert repr(nn.ConvTranspose1d(2, 3, 3, output_padding=0, dilation=2)) == \
        "ConvTranspose1d(2, 3, kernel_size=(3,), stride=(1,), dilation=(2,))"


def test_errors_name_what_was_expected():
    with pytest.raises(RuntimeError, match="output padding must be smaller"):
        F.conv_transpose1d(tinyattn.ones(1, 2, 4), tinyattn.ones(2, 3, 3), stride=2, output_padding=2)
    with pytest.raises(RuntimeError, match="to have 2 channels, but got 3"):
        F.conv_transpose1d(tinyattn.ones(1, 3, 4), tinyattn.ones(2, 3, 3))
    with pytest.raises(RuntimeError, match="too small"):
        F.conv_transpose1d(tinyattn.ones(1, 2, 4), tinyattn.ones(2, 3, 3), padding=3)
    with pytest.raises(ValueError, match='Only "zeros" padding mode'):
        nn.ConvTranspose2d(2, 2, 3, padding_mode="circular")
