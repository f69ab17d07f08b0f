"""F.conv3d / nn.Conv3d: the N-d convolution of conv1d/conv2d in three spatial dims. Values against a
loop written from the definition (tests/test_conv_pool_batchnorm.py's conv_reference), every gradient
by finite differences in float64 over every element, PyTorch's layout, init, padding modes and errors."""
import math

import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck

from test_conv_pool_batchnorm import _pads, conv_reference

RNG = np.random.default_rng(3)


def t64(*shape):
    return tinyattn.tensor(RNG.standard_normal(shape), requires_grad=True)


@pytest.mark.parametrize("stride,padding,dilation,groups,K", [
    (1, 0, 1, 1, (2, 2, 2)), (2, 1, 1, 2, (3, 2, 3)), (1, "same", (1, 2, 1), 4, (2, 3, 2)),
    (1, "valid", 1, 1, (1, 3, 2)), ((1, 2, 2), (1, 0, 2), (2, 1, 1), 2, (2, 2, 1)), (1, "same", 1, 1, (3, 3, 3))])
def test_conv3d_matches_the_definition_and_every_gradient(stride, padding, dilation, groups, K):
    x, w, b = t64(2, 4, 4, 5, 4), t64(4, 4 // groups, *K), t64(4)
    out = F.conv3d(x, w, b, stride, padding, dilation, groups)
    s = (stride,) * 3 if isinstance(stride, int) else stride
    d = (dilation,) * 3 if isinstance(dilation, int) else dilation
    ref = conv_reference(x.numpy(), w.numpy(), b.numpy(), s, _pads(padding, K, d, 3), d, groups)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)
    if padding == "same":
        assert out.shape == (2, 4, 4, 5, 4)
    assert gradcheck(lambda x, w, b: F.conv3d(x, w, b, stride, padding, dilation, groups), (x, w, b))


def test_conv3d_without_batch_dim_and_without_bias():
    x, w = t64(2, 3, 4, 3), t64(3, 2, 2, 2, 2)
    np.testing.assert_array_equal(F.conv3d(x, w).numpy(), F.conv3d(x.unsqueeze(0), w).numpy()[0])
    assert gradcheck(lambda x, w: F.conv3d(x, w, padding=1), (x, w))


def test_conv3d_module_layout_init_repr_and_a_patch_embedding():
    tinyattn.manual_seed(0)
    c = nn.Conv3d(4, 6, (2, 3, 1), groups=2)
    assert c.weight.shape == (6, 2, 2, 3, 1) and c.bias.shape == (6,) and c.weight.dtype == np.float32
    bound = 1 / math.sqrt(2 * 2 * 3 * 1)  # fan_in = in_channels / groups * kernel volume
    assert bound * 0.8 < np.abs(c.weight.numpy()).max() <= bound and np.abs(c.bias.numpy()).max() <= bound
    assert repr(nn.Conv3d(2, 4, 3, padding=1, stride=2)) == \
        "Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1))"
    # a video ViT's tubelet embedding: kernel == stride cuts the clip into non-overlapping patches
    m = nn.Conv3d(3, 5, (2, 4, 4), stride=(2, 4, 4)).double()
    clip = RNG.standard_normal((1, 3, 4, 8, 8))  # (N, C, frames, H, W)
    out = m(tinyattn.tensor(clip))
    assert out.shape == (1, 5, 2, 2, 2)
    patch = clip[0, :, 2:4, 4:8, 0:4]  # frame block 1, row block 1, column block 0
    np.testing.assert_allclose(out.numpy()[0, :, 1, 1, 0], m.weight.numpy().reshape(5, -1) @ patch.reshape(-1)
                               + m.bias.numpy(), rtol=1e-12)


def test_conv3d_padding_modes_pad_first():
    x = t64(1, 2, 3, 4, 3)
    m = nn.Conv3d(2, 3, 3, padding=1, padding_mode="circular").double()
    xp = np.pad(x.numpy(), [(0, 0), (0, 0), (1, 1), (1, 1), (1, 1)], mode="wrap")
    ref = conv_reference(xp, m.weight.numpy(), m.bias.numpy(), (1, 1, 1), [(0, 0)] * 3, (1, 1, 1), 1)
    np.testing.assert_allclose(m(x).numpy(), ref, rtol=1e-12, atol=1e-12)
    lazy = nn.LazyConv3d(4, 2)
    assert lazy(tinyattn.ones(1, 3, 2, 2, 2)).shape == (1, 4, 1, 1, 1) and type(lazy) is nn.Conv3d
    assert lazy.weight.shape == (4, 3, 2, 2, 2)


def test_conv3d_errors():
    with pytest.raises(RuntimeError, match=r"Expected 4D \(unbatched\) or 5D \(batched\) input"):
        F.conv3d(tinyattn.ones(2, 5, 5), tinyattn.ones(1, 2, 3, 3, 3))
    with pytest.raises(RuntimeError, match="weight must be 5-D"):
        F.conv3d(tinyattn.ones(1, 2, 5, 5, 5), tinyattn.ones(1, 2, 3, 3))
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        nn.Conv3d(2, 4, 3, stride=2, padding="same")
    with pytest.raises(TypeError, match="kernel_size must be an int or a tuple of 3 ints"):
        nn.Conv3d(2, 4, (3, 3))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        nn.Conv3d(2, 4, 3)(tinyattn.ones(1, 2, 2, 5, 5))
