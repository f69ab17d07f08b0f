"""F.interpolate / nn.Upsample without PyTorch: every mode against a reference written from its definition
(np.interp for linear, a 16-term loop for bicubic, window means for area), PyTorch's index rules, every
gradient by finite differences in float64, and the errors. (tests/oracle/test_surface_resize.py compares
the same calls, and a sweep of sizes and scale factors, with PyTorch itself.)"""
import itertools

import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck

RNG = np.random.default_rng(5)


def t64(*shape):
    return tinyattn.tensor(RNG.standard_normal(shape), requires_grad=True)


def source(o, S, O, align_corners):
    """PyTorch's source coordinate of output position o (float64)."""
    if align_corners:
        return o * (S - 1) / (O - 1) if O > 1 else 0.0 * o
    return (o + 0.5) * S / O - 0.5


def nearest_index(O, S, scale_factor=None):
    s = np.float32(1.0 / scale_factor) if scale_factor else np.float32(S) / np.float32(O)
    return np.minimum(np.floor(np.arange(O, dtype=np.float32) * s).astype(int), S - 1)  # floor(o * scale), in float32


@pytest.mark.parametrize("S,O", [(4, 7), (7, 4), (5, 5), (3, 9), (6, 1), (1, 4)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_linear_is_np_interp_at_pytorchs_source_coordinates(S, O, align_corners):
    x = t64(2, 3, S)
    out = F.interpolate(x, size=O, mode="linear", align_corners=align_corners)
    src = np.clip(source(np.arange(O), S, O, align_corners), 0, S - 1)
    ref = np.apply_along_axis(lambda r: np.interp(src, np.arange(S), r), -1, x.numpy())
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x: F.interpolate(x, size=O, mode="linear", align_corners=align_corners), (x,))


@pytest.mark.parametrize("size", [(5, 7), (3, 2), (8, 8)])
def test_bilinear_and_trilinear_are_separable_and_reproduce_planes_with_align_corners(size):
    x = t64(1, 2, 4, 5)
    out = F.interpolate(x, size=size, mode="bilinear", align_corners=False).numpy()
    ref = x.numpy()
    for axis, (S, O) in ((3, (5, size[1])), (2, (4, size[0]))):
        src = np.clip(source(np.arange(O), S, O, False), 0, S - 1)
        ref = np.apply_along_axis(lambda r: np.interp(src, np.arange(S), r), axis, ref)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    # with align_corners=True the corners map onto corners, so a plane a + b h + c w is reproduced exactly
    h, w = np.meshgrid(np.arange(4.0), np.arange(5.0), indexing="ij")
    plane = tinyattn.tensor((1 + 2 * h - 3 * w)[None, None])
    H, W = np.meshgrid(np.linspace(0, 3, size[0]), np.linspace(0, 4, size[1]), indexing="ij")
    up = F.interpolate(plane, size=size, mode="bilinear", align_corners=True).numpy()[0, 0]
    np.testing.assert_allclose(up, 1 + 2 * H - 3 * W, rtol=1e-12, atol=1e-12)
    d, h, w = np.meshgrid(np.arange(3.0), np.arange(4.0), np.arange(2.0), indexing="ij")
    vol = tinyattn.tensor((d * h - w + 2 * d * w * h)[None, None])  # trilinear: linear in each coordinate
    D, H, W = np.meshgrid(np.linspace(0, 2, 5), np.linspace(0, 3, 3), np.linspace(0, 1, 4), indexing="ij")
    up = F.interpolate(vol, size=(5, 3, 4), mode="trilinear", align_corners=True).numpy()[0, 0]
    np.testing.assert_allclose(up, D * H - W + 2 * D * W * H, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x: F.interpolate(x, size=size, mode="bilinear"), (x,))
    v = t64(1, 1, 2, 3, 2)
    assert gradcheck(lambda v: F.interpolate(v, scale_factor=(1.5, 0.7, 2), mode="trilinear"), (v,))


def cubic(x, A=-0.75):
    x = abs(x)
    return ((A + 2) * x - (A + 3)) * x * x + 1 if x <= 1 else (((A * x - 5 * A) * x + 8 * A) * x - 4 * A if x < 2 else 0.0)


@pytest.mark.parametrize("size,align_corners", [((6, 5), False), ((3, 7), True), ((2, 2), False), ((9, 4), True)])
def test_bicubic_is_keys_cubic_convolution_over_16_clamped_neighbours(size, align_corners):
    x = t64(1, 2, 4, 5)
    out = F.interpolate(x, size=size, mode="bicubic", align_corners=align_corners).numpy()
    xs = x.numpy()
    ref = np.zeros(out.shape)
    for oh, ow in itertools.product(range(size[0]), range(size[1])):
        sh, sw = source(oh, 4, size[0], align_corners), source(ow, 5, size[1], align_corners)
        ih, iw = int(np.floor(sh)), int(np.floor(sw))
        for dh, dw in itertools.product(range(-1, 3), range(-1, 3)):
            weight = cubic(sh - (ih + dh)) * cubic(sw - (iw + dw))
            ref[..., oh, ow] += weight * xs[..., min(max(ih + dh, 0), 3), min(max(iw + dw, 0), 4)]
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    const = F.interpolate(tinyattn.full((1, 1, 4, 5), 2.5, dtype=tinyattn.float64), size=size, mode="bicubic")
    np.testing.assert_allclose(const.numpy(), 2.5, rtol=1e-14)  # the 4 weights of each dim sum to 1
    assert gradcheck(lambda x: F.interpolate(x, size=size, mode="bicubic", align_corners=align_corners), (x,))


@pytest.mark.parametrize("S,kwargs", [(4, dict(size=7)), (7, dict(size=3)), (3, dict(scale_factor=1.7)),
                                      (5, dict(scale_factor=0.45)), (4, dict(scale_factor=2.5)),
                                      (5, dict(scale_factor=1.3, recompute_scale_factor=True))])
def test_nearest_reads_floor_of_o_times_scale_and_sends_gradients_back_summed(S, kwargs):
    x = t64(2, 1, S)
    out = F.interpolate(x, **kwargs)
    O = kwargs.get("size") or int(S * kwargs["scale_factor"])
    kernel_scale = None if "size" in kwargs or kwargs.get("recompute_scale_factor") else kwargs["scale_factor"]
    idx = nearest_index(O, S, kernel_scale)
    np.testing.assert_array_equal(out.numpy(), x.numpy()[..., idx])
    g = RNG.standard_normal(out.shape)
    (out * tinyattn.tensor(g)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.stack([g[..., idx == s].sum(-1) for s in range(S)], -1),
                               rtol=1e-12)
    assert gradcheck(lambda x: F.interpolate(x, **kwargs), (x,))


def test_nearest_scale_factor_rules_in_1d_2d_and_nearest_exact():
    # 3 -> int(3 * 1.01) = 3 positions. The kernel's scale is 1 / 1.01, so floor(o / 1.01) reads 0, 0, 1 ...
    ramp = tinyattn.arange(3.0).reshape(1, 1, 3)
    assert F.interpolate(ramp, scale_factor=1.01).numpy().ravel().tolist() == [0.0, 0.0, 1.0]
    # ... but PyTorch's 4-D kernel copies when the size is unchanged and halves when it doubles
    grid = tinyattn.arange(15.0).reshape(1, 1, 3, 5)
    got = F.interpolate(grid, scale_factor=(1.01, 2.1)).numpy()[0, 0]
    np.testing.assert_array_equal(got, grid.numpy()[0, 0][:, np.arange(10) // 2])
    # recompute_scale_factor=True: the kernel sees only the sizes, so 3 -> 3 is a copy in 1-D too
    assert F.interpolate(ramp, scale_factor=1.01, recompute_scale_factor=True).numpy().ravel().tolist() == [0, 1, 2]
    # nearest-exact reads the input position whose centre is nearest: floor((o + 0.5) * S / O)
    x = tinyattn.arange(4.0).reshape(1, 1, 4)
    assert F.interpolate(x, size=6, mode="nearest-exact").numpy().ravel().tolist() == \
        [np.floor((o + 0.5) * 4 / 6) for o in range(6)]
    assert F.interpolate(x, size=6).numpy().ravel().tolist() == [np.floor(o * 4 / 6) for o in range(6)]


def test_area_is_the_mean_over_pytorchs_bins_and_size_from_scale_factor_truncates():
    x = t64(1, 2, 6, 5)
    out = F.interpolate(x, size=(4, 3), mode="area")
    np.testing.assert_allclose(out.numpy(), F.adaptive_avg_pool2d(x, (4, 3)).numpy(), rtol=1e-15)
    assert out[0, 1, 0, 0].item() == pytest.approx(x.numpy()[0, 1, 0:2, 0:2].mean(), rel=1e-14)  # bin 0: 0..1
    assert F.interpolate(x, scale_factor=0.7, mode="area").shape == (1, 2, 4, 3)  # int(6 * .7), int(5 * .7)
    assert F.interpolate(x, scale_factor=(1.5, 2), mode="bilinear").shape == (1, 2, 9, 10)
    assert gradcheck(lambda x: F.interpolate(x, size=(4, 3), mode="area"), (x,))


def test_float32_stays_float32_and_upsample_modules():
    x = tinyattn.randn(1, 3, 4, 4)
    assert F.interpolate(x, scale_factor=2, mode="bicubic").dtype == np.float32
    up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)
    assert repr(up) == "Upsample(scale_factor=2.0, mode='bilinear')"
    np.testing.assert_array_equal(up(x).numpy(), F.interpolate(x, scale_factor=2.0, mode="bilinear",
                                                               align_corners=True).numpy())
    assert repr(nn.Upsample(size=(3, 4))) == "Upsample(size=(3, 4), mode='nearest')"
    assert nn.UpsamplingNearest2d(scale_factor=2)(x).shape == (1, 3, 8, 8)
    np.testing.assert_array_equal(nn.UpsamplingBilinear2d(size=5)(x).numpy(),
                                  F.interpolate(x, size=5, mode="bilinear", align_corners=True).numpy())


@pytest.mark.parametrize("call,exc,text", [
    (lambda x: F.interpolate(x, size=3, scale_factor=2), ValueError, "only one of size or scale_factor"),
    (lambda x: F.interpolate(x), ValueError, "either size or scale_factor should be defined"),
    (lambda x: F.interpolate(x, size=3, recompute_scale_factor=True), ValueError, "not meaningful with an explicit"),
    (lambda x: F.interpolate(x, size=3, align_corners=True), ValueError, "align_corners option can only be set"),
    (lambda x: F.interpolate(x, size=(2, 3, 4)), ValueError, "same number of spatial dimensions"),
    (lambda x: F.interpolate(x, scale_factor=(2,)), ValueError, "Input and scale_factor must have the same number"),
    (lambda x: F.interpolate(x, size=(2.0, 3)), TypeError, "expected size to be one of int"),
    (lambda x: F.interpolate(x, size=3, mode="linear"), NotImplementedError, "Got 4D input, but linear mode needs 3D"),
    (lambda x: F.interpolate(x, size=3, mode="bogus"), NotImplementedError, "Only 3D, 4D and 5D input"),
    (lambda x: F.interpolate(x[0, 0], size=3), NotImplementedError, "(got 2D)"),
    (lambda x: F.interpolate(x, scale_factor=0.1), RuntimeError,
     "Input and output sizes should be greater than 0, but got input (H: 4, W: 4) output (H: 0, W: 0)"),
])
def test_errors_are_pytorchs(call, exc, text):
    with pytest.raises(exc) as info:
        call(tinyattn.ones(1, 1, 4, 4))
    assert text in str(info.value)


@pytest.mark.parametrize("mode,half", [("bilinear", 1.0), ("bicubic", 2.0), ("lanczos", 3.0)])
@pytest.mark.parametrize("size", [(2, 3), (3, 7), (5, 2)])
def test_antialias_weights_are_the_stretched_filter_normalised(mode, half, size):
    """Shrinking S -> O (s = S / O > 1) stretches the filter s times: output o reads the input positions p
    whose centres lie within half * s of its centre (o + 0.5) s, weighted by filter((p + 0.5 - centre) / s)
    and normalised to sum to 1 (Pillow's and PyTorch's rule); growing keeps the filter unstretched."""
    def filt(x):
        x = abs(x)
        if mode == "bilinear":
            return max(1 - x, 0.0)
        if mode == "bicubic":
            return cubic(x, A=-0.5)
        return np.sinc(x) * np.sinc(x / 3) if x < 3 else 0.0

    def matrix(S, O):
        s = S / O
        stretch = max(s, 1.0)
        A = np.zeros((O, S))
        for o in range(O):
            centre = (o + 0.5) * s
            lo, hi = max(int(centre - half * stretch + 0.5), 0), min(int(centre + half * stretch + 0.5), S)
            for p in range(lo, hi):
                A[o, p] = filt((p + 0.5 - centre) / stretch)
            A[o] /= A[o].sum()
        return A

    x = t64(1, 2, 6, 5)
    out = F.interpolate(x, size=size, mode=mode, antialias=True)
    ref = np.einsum("hH,wW,ncHW->nchw", matrix(6, size[0]), matrix(5, size[1]), x.numpy())
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x: F.interpolate(x, size=size, mode=mode, antialias=True), (x,))


def test_antialias_errors():
    with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear, bicubic, and lanczos modes"):
        F.interpolate(tinyattn.ones(1, 1, 4, 4), size=2, antialias=True)
    with pytest.raises(ValueError, match="Lanczos mode requires antialias=True"):
        F.interpolate(tinyattn.ones(1, 1, 4, 4), size=2, mode="lanczos")
