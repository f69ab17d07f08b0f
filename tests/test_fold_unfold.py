"""F.unfold / F.fold (nn.Unfold / nn.Fold): unfold against a loop written from the definition, fold as
its adjoint (<unfold(x), y> = <x, fold(y)>), gradients by finite differences, and the shape errors."""
import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn import gradcheck

RNG = np.random.default_rng(4)
GEOMETRIES = [dict(kernel_size=3), dict(kernel_size=(2, 3), stride=2, padding=1),
              dict(kernel_size=3, dilation=2, padding=(1, 2), stride=(2, 1)), dict(kernel_size=4, stride=4)]


def _pair(v):
    return (v, v) if isinstance(v, int) else v


def _unfold_loop(x, kernel_size, dilation=1, padding=0, stride=1):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(_pair, (kernel_size, dilation, padding, stride))
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    N, C, H, W = xp.shape
    oh, ow = (H - dh * (kh - 1) - 1) // sh + 1, (W - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((N, C * kh * kw, oh * ow))
    for c in range(C):
        for i in range(kh):
            for j in range(kw):
                for a in range(oh):
                    for b in range(ow):
                        out[:, (c * kh + i) * kw + j, a * ow + b] = xp[:, c, a * sh + i * dh, b * sw + j * dw]
    return out


@pytest.mark.parametrize("kw", GEOMETRIES)
def test_unfold_is_im2col_and_fold_its_adjoint(kw):
    x = RNG.standard_normal((2, 3, 9, 8))
    cols = F.unfold(tinyattn.tensor(x), **kw)
    np.testing.assert_array_equal(cols.numpy(), _unfold_loop(x, **kw))
    y = RNG.standard_normal(cols.shape)
    back = F.fold(tinyattn.tensor(y), (9, 8), **kw)
    assert back.shape == (2, 3, 9, 8)
    assert np.sum(cols.numpy() * y) == pytest.approx(np.sum(x * back.numpy()), rel=1e-12)
    np.testing.assert_array_equal(nn.Unfold(**kw)(tinyattn.tensor(x)).numpy(), cols.numpy())
    np.testing.assert_array_equal(nn.Fold((9, 8), **kw)(tinyattn.tensor(y)).numpy(), back.numpy())


def test_gradients_by_finite_differences():
    kw = dict(kernel_size=(2, 3), stride=(1, 2), padding=1, dilation=(2, 1))
    x = tinyattn.tensor(RNG.standard_normal((1, 2, 5, 6)), requires_grad=True)
    assert gradcheck(lambda t: F.unfold(t, **kw) ** 2, (x,))
    L = F.unfold(x.detach(), **kw).shape
    y = tinyattn.tensor(RNG.standard_normal(L), requires_grad=True)
    assert gradcheck(lambda t: F.fold(t, (5, 6), **kw) ** 2, (y,))


def test_unbatched_input_and_errors():
    x = RNG.standard_normal((3, 6, 6))
    np.testing.assert_array_equal(F.unfold(tinyattn.tensor(x), 3).numpy(), _unfold_loop(x[None], 3)[0])
    assert repr(nn.Unfold(3, stride=2)) == "Unfold(kernel_size=3, dilation=1, padding=0, stride=2)"
    with pytest.raises(RuntimeError, match=r"Only 3D or 4D input Tensors are supported \(got 2D\)"):
        F.unfold(tinyattn.randn(2, 3), 2)
    with pytest.raises(RuntimeError, match="calculated number of sliding blocks 3 \\* 3 = 9, but got input.size\\(2\\)=5"):
        F.fold(tinyattn.randn(1, 12, 5), (4, 4), 2)
