"""nn.Conv1d/2d, pooling and BatchNorm1d/2d: values against loops written from the definitions,
every gradient by finite differences (float64, every element), PyTorch's layouts, init and errors."""
import itertools
import math

import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck

RNG = np.random.default_rng(0)


def t64(*shape, requires_grad=True):
    return tinyattn.tensor(RNG.standard_normal(shape), requires_grad=requires_grad)


def conv_reference(x, w, b, stride, pad, dilation, groups):
    """out[n, o, p] = b[o] + sum over c in o's group and k of w[o, c, k] * x_padded[n, c, p * s + k * d]."""
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + list(pad))
    K = w.shape[2:]
    O = [(xp.shape[2 + i] - dilation[i] * (K[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    N, Co, cg = x.shape[0], w.shape[0], w.shape[1]
    out = np.zeros((N, Co, *O))
    for n, o, *pos in itertools.product(range(N), range(Co), *[range(v) for v in O]):
        g = o // (Co // groups)
        acc = 0.0 if b is None else b[o]
        for c, *k in itertools.product(range(cg), *[range(v) for v in K]):
            idx = tuple(pos[i] * stride[i] + k[i] * dilation[i] for i in range(nd))
            acc += w[(o, c, *k)] * xp[(n, g * cg + c, *idx)]
        out[(n, o, *pos)] = acc
    return out


CONV2D_CASES = [  # stride, padding, dilation, groups, kernel
    (1, 0, 1, 1, (3, 3)), (2, 1, 1, 2, (3, 3)), (1, "same", 2, 3, (2, 3)), (3, 2, 2, 1, (3, 1)),
    (1, "valid", 1, 6, (2, 2)), (1, "same", 1, 1, (4, 4)), ((2, 1), (0, 1), (1, 2), 2, (2, 3)),
]


def _pads(padding, K, dilation, nd):
    if padding == "valid":
        return [(0, 0)] * nd
    if padding == "same":
        return [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(K, dilation)]
    p = (padding,) * nd if isinstance(padding, int) else padding
    return [(v, v) for v in p]


@pytest.mark.parametrize("stride,padding,dilation,groups,K", CONV2D_CASES)
def test_conv2d_matches_the_definition_and_every_gradient(stride, padding, dilation, groups, K):
    x, w, b = t64(2, 6, 7, 6), t64(6, 6 // groups, *K), t64(6)
    out = F.conv2d(x, w, b, stride, padding, dilation, groups)
    s = (stride,) * 2 if isinstance(stride, int) else stride
    d = (dilation,) * 2 if isinstance(dilation, int) else dilation
    ref = conv_reference(x.numpy(), w.numpy(), b.numpy(), s, _pads(padding, K, d, 2), d, groups)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, stride, padding, dilation, groups), (x, w, b))


@pytest.mark.parametrize("stride,padding,dilation,groups,k", [(1, 0, 1, 1, 3), (2, 1, 1, 2, 3), (1, "same", 2, 4, 4),
                                                              (1, "same", 1, 1, 4), (3, 0, 1, 1, 1)])
def test_conv1d_matches_the_definition_and_every_gradient(stride, padding, dilation, groups, k):
    x, w = t64(3, 4, 11), t64(8, 4 // groups, k)
    out = F.conv1d(x, w, None, stride, padding, dilation, groups)
    ref = conv_reference(x.numpy(), w.numpy(), None, (stride,), _pads(padding, (k,), (dilation,), 1), (dilation,),
                         groups)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)
    if padding == "same":
        assert out.shape == (3, 8, 11)
    assert gradcheck(lambda x, w: F.conv1d(x, w, None, stride, padding, dilation, groups), (x, w))


def test_conv_without_batch_dim_is_the_batched_result_of_one():
    x, w = t64(4, 9), t64(2, 4, 3)
    np.testing.assert_array_equal(F.conv1d(x, w).numpy(), F.conv1d(x.unsqueeze(0), w).numpy()[0])
    assert gradcheck(lambda x, w: F.conv1d(x, w), (x, w))


def test_conv_modules_layout_init_and_padding_modes():
    tinyattn.manual_seed(0)
    c = nn.Conv2d(4, 8, (3, 2), groups=2)
    assert c.weight.shape == (8, 2, 3, 2) and c.bias.shape == (8,) and c.weight.dtype == np.float32
    bound = 1 / math.sqrt(2 * 3 * 2)  # fan_in = in_channels / groups * kernel area
    assert np.abs(c.weight.numpy()).max() <= bound and np.abs(c.weight.numpy()).max() > 0.8 * bound
    assert np.abs(c.bias.numpy()).max() <= bound
    assert list(c.state_dict()) == ["weight", "bias"]
    assert nn.Conv1d(2, 3, 3, bias=False).bias is None
    assert repr(nn.Conv2d(2, 4, 3, padding=1, stride=2)) == \
        "Conv2d(2, 4, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))"
    x = t64(1, 2, 5)
    m = nn.Conv1d(2, 3, 3, padding=2, padding_mode="circular").double()
    xp = np.concatenate([x.numpy()[..., -2:], x.numpy(), x.numpy()[..., :2]], axis=-1)  # wrapped around
    ref = conv_reference(xp, m.weight.numpy(), m.bias.numpy(), (1,), [(0, 0)], (1,), 1)
    np.testing.assert_allclose(m(x).numpy(), ref, rtol=1e-12, atol=1e-12)


def test_conv_errors_name_what_was_expected():
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        nn.Conv1d(2, 4, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv1d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="Invalid padding string 'full'"):
        nn.Conv2d(2, 4, 3, padding="full")
    with pytest.raises(RuntimeError, match=r"expected input\[1, 3, 5\] to have 2 channels, but got 3"):
        nn.Conv1d(2, 4, 3)(tinyattn.ones(1, 3, 5))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        nn.Conv1d(2, 4, 3)(tinyattn.ones(1, 2, 2))
    with pytest.raises(RuntimeError, match="must have the same dtype"):
        F.conv1d(tinyattn.ones(1, 2, 5), tinyattn.ones(1, 2, 3, dtype=tinyattn.float64))


def pool_reference(x, K, stride, pad, reduce, fill):
    """Each window of the input padded with ``fill`` (per dim: (before, after)), reduced by ``reduce``."""
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + list(pad), constant_values=fill)
    O = [(xp.shape[2 + i] - K[i]) // stride[i] + 1 for i in range(nd)]
    out = np.zeros(x.shape[:2] + tuple(O))
    for pos in itertools.product(*[range(v) for v in O]):
        win = xp[(Ellipsis, *[slice(p * s, p * s + k) for p, s, k in zip(pos, stride, K)])]
        out[(Ellipsis, *pos)] = reduce(win.reshape(*x.shape[:2], -1))
    return out


@pytest.mark.parametrize("k,s,p", [(2, 2, 0), (3, 2, 1), (3, 1, 1), ((2, 3), (1, 2), (1, 0))])
def test_max_and_avg_pool2d_match_window_loops_and_gradients(k, s, p):
    x = t64(2, 3, 7, 6)
    K, S, P = [(v,) * 2 if isinstance(v, int) else v for v in (k, s, p)]
    pads = [(v, v) for v in P]
    np.testing.assert_array_equal(F.max_pool2d(x, k, s, p).numpy(),
                                  pool_reference(x.numpy(), K, S, pads, lambda w: w.max(-1), -np.inf))
    np.testing.assert_allclose(F.avg_pool2d(x, k, s, p).numpy(),  # padding zeros count (count_include_pad)
                               pool_reference(x.numpy(), K, S, pads, lambda w: w.mean(-1), 0.0), rtol=1e-13)
    ones = np.ones(x.shape)  # count_include_pad=False: divide by the real elements in each window
    real = pool_reference(ones, K, S, pads, lambda w: w.sum(-1), 0.0)
    np.testing.assert_allclose(F.avg_pool2d(x, k, s, p, count_include_pad=False).numpy(),
                               pool_reference(x.numpy(), K, S, pads, lambda w: w.sum(-1), 0.0) / real, rtol=1e-13)
    assert gradcheck(lambda x: F.max_pool2d(x, k, s, p), x)
    assert gradcheck(lambda x: F.avg_pool2d(x, k, s, p, count_include_pad=False), x)


def test_max_pool_ceil_mode_dilation_and_indices():
    x = t64(1, 2, 7)
    out, idx = F.max_pool1d(x, 3, 2, ceil_mode=True, return_indices=True)
    assert out.shape == (1, 2, 3)  # floor would give 3 as well at L=7; L=8 needs the overhanging window
    x8 = t64(1, 2, 8)
    out8, idx8 = F.max_pool1d(x8, 3, 2, ceil_mode=True, return_indices=True)
    a = x8.numpy()
    expect = np.stack([a[..., 0:3].max(-1), a[..., 2:5].max(-1), a[..., 4:7].max(-1), a[..., 6:8].max(-1)], -1)
    np.testing.assert_array_equal(out8.numpy(), expect)
    np.testing.assert_array_equal(np.take_along_axis(a, idx8.numpy(), -1), expect)  # indices into the input
    assert idx8.dtype == np.int64
    d = F.max_pool1d(x8, 2, 1, dilation=3)  # taps i and i + 3
    np.testing.assert_array_equal(d.numpy(), np.maximum(a[..., :5], a[..., 3:8]))
    assert gradcheck(lambda x: F.max_pool1d(x, 3, 2, ceil_mode=True), x8)
    assert gradcheck(lambda x: F.max_pool1d(x, 2, 1, dilation=3), x8)
    x2 = t64(1, 1, 4, 5)
    o2, i2 = F.max_pool2d(x2, 2, return_indices=True)
    np.testing.assert_array_equal(x2.numpy().reshape(1, 1, -1)[..., i2.numpy().reshape(-1)].reshape(o2.shape),
                                  o2.numpy())


def test_max_pool_sends_the_gradient_to_one_element_per_window():
    x = tinyattn.tensor([[[1.0, 5.0, 5.0, 2.0]]], requires_grad=True)
    F.max_pool1d(x, 2, 1).sum().backward()  # windows (1, 5), (5, 5), (5, 2): the tie goes to the first 5
    np.testing.assert_array_equal(x.grad.numpy(), [[[0.0, 2.0, 1.0, 0.0]]])


def test_adaptive_avg_pool_bins_as_pytorch_defines_them():
    x = t64(2, 3, 7, 5)
    out = F.adaptive_avg_pool2d(x, (3, 2))
    a = x.numpy()
    for i, j in itertools.product(range(3), range(2)):  # bin i: floor(i H / O) .. ceil((i + 1) H / O)
        h0, h1 = (i * 7) // 3, -(-(i + 1) * 7 // 3)
        w0, w1 = (j * 5) // 2, -(-(j + 1) * 5 // 2)
        np.testing.assert_allclose(out.numpy()[..., i, j], a[..., h0:h1, w0:w1].mean((-1, -2)), rtol=1e-13)
    np.testing.assert_allclose(nn.AdaptiveAvgPool2d(1)(x).numpy()[..., 0, 0], a.mean((-1, -2)), rtol=1e-13)
    assert F.adaptive_avg_pool2d(x, (None, 2)).shape == (2, 3, 7, 2)
    assert gradcheck(lambda x: F.adaptive_avg_pool2d(x, (3, 2)), x)
    x1 = t64(2, 3, 10)
    np.testing.assert_allclose(F.adaptive_avg_pool1d(x1, 4).numpy()[..., 1], x1.numpy()[..., 2:5].mean(-1),
                               rtol=1e-13)
    assert gradcheck(lambda x: F.adaptive_avg_pool1d(x, 4), x1)


def test_pooling_modules_and_errors():
    assert repr(nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert repr(nn.AvgPool2d(2)) == "AvgPool2d(kernel_size=2, stride=2, padding=0)"
    x = t64(1, 2, 6, 6)
    np.testing.assert_array_equal(nn.MaxPool2d(2)(x).numpy(), F.max_pool2d(x, 2).numpy())
    np.testing.assert_array_equal(nn.AvgPool2d(3, 1, 1)(x).numpy(), F.avg_pool2d(x, 3, 1, 1).numpy())
    assert nn.MaxPool1d(2, return_indices=True)(t64(1, 2, 6))[1].shape == (1, 2, 3)
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.max_pool2d(x, 3, padding=2)
    np.testing.assert_allclose(F.avg_pool2d(x, 2, divisor_override=3).numpy(),
                               F.avg_pool2d(x, 2).numpy() * 4 / 3, rtol=1e-13)


def test_batchnorm_training_running_statistics_and_eval():
    tinyattn.manual_seed(0)
    bn = nn.BatchNorm2d(3).double()
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert bn.num_batches_tracked.dtype == np.int64 and bn.num_batches_tracked.item() == 0
    rm, rv = np.zeros(3), np.ones(3)
    for step in range(3):
        x = t64(4, 3, 2, 5) * 2 + 1
        out = bn(x)
        a = x.numpy()
        mean, var = a.mean((0, 2, 3)), a.var((0, 2, 3))
        expect = (a - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5)
        np.testing.assert_allclose(out.numpy(), expect, rtol=1e-12, atol=1e-12)
        n = a.size / 3
        rm, rv = 0.9 * rm + 0.1 * mean, 0.9 * rv + 0.1 * var * n / (n - 1)  # the unbiased variance, as PyTorch
        np.testing.assert_allclose(bn.running_mean.numpy(), rm, rtol=1e-12)
        np.testing.assert_allclose(bn.running_var.numpy(), rv, rtol=1e-12)
    assert bn.num_batches_tracked.item() == 3
    bn.eval()
    x = t64(2, 3, 2, 2)
    np.testing.assert_allclose(bn(x).numpy(), (x.numpy() - rm[:, None, None]) / np.sqrt(rv[:, None, None] + 1e-5),
                               rtol=1e-12)
    assert gradcheck(lambda x: bn(x), x)


def test_batchnorm_momentum_none_is_a_cumulative_average_and_options():
    bn = nn.BatchNorm1d(2, momentum=None).double()
    batches = [t64(5, 2) for _ in range(3)]
    for x in batches:
        bn(x)
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean([b.numpy().mean(0) for b in batches], 0), rtol=1e-12)
    free = nn.BatchNorm1d(2, affine=False, track_running_stats=False)
    assert list(free.state_dict()) == [] and free.weight is None and free.running_mean is None
    free.eval()  # no running statistics: the batch's, even in eval mode
    x = t64(6, 2, 3)
    a = x.numpy()
    np.testing.assert_allclose(free.double()(x).numpy(), (a - a.mean((0, 2))[:, None]) /
                               np.sqrt(a.var((0, 2))[:, None] + 1e-5), rtol=1e-12)


def test_batchnorm_gradients_in_training_every_input_and_parameter():
    bn = nn.BatchNorm1d(3).double()
    bn.weight.data.copy_(tinyattn.tensor(RNG.standard_normal(3)))
    x = t64(5, 3, 4)
    assert gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (x, bn.weight, bn.bias))


def test_batchnorm_errors():
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(3)(tinyattn.ones(1, 3))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(tinyattn.ones(4, 3, 2, 2))
    with pytest.raises(RuntimeError, match="running_mean should contain 2 elements not 3"):
        nn.BatchNorm1d(3)(tinyattn.ones(4, 2))


def test_lazy_conv_and_batchnorm_take_their_sizes_from_the_first_input():
    tinyattn.manual_seed(0)
    conv = nn.LazyConv2d(4, 3, padding=1)
    w = conv.weight
    assert tuple(w.shape) == (4, 0, 3, 3) and conv.in_channels == 0
    x = t64(2, 6, 5, 5, requires_grad=False).float()
    out = conv(x)
    assert type(conv) is nn.Conv2d and conv.weight is w and tuple(w.shape) == (4, 6, 3, 3) and conv.in_channels == 6
    assert np.abs(w.numpy()).max() <= 1 / math.sqrt(6 * 9)
    np.testing.assert_array_equal(out.numpy(), F.conv2d(x, w, conv.bias, padding=1).numpy())
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv1d(4, 3, groups=2)(tinyattn.ones(1, 3, 5))
    bn = nn.LazyBatchNorm2d()
    bn(t64(4, 3, 2, 2, requires_grad=False).float())
    assert type(bn) is nn.BatchNorm2d and bn.num_features == 3 and bn.num_batches_tracked.item() == 1
    assert bn.weight.shape == (3,) and bn.running_var.shape == (3,)
