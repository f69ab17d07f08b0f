"""nn/normalization.py without PyTorch: GroupNorm and RMSNorm against NumPy's formulas, every gradient
by finite differences in float64, the modules' parameters and the errors."""
import numpy as np
import pytest

import tinyattn
import tinyattn.nn.functional as F
from tinyattn import gradcheck, nn

rng = np.random.default_rng(2)


def t(a):
    return tinyattn.tensor(a, dtype=tinyattn.float64, requires_grad=True)


@pytest.mark.parametrize("shape,groups", [((2, 6, 3), 3), ((2, 6, 2, 2), 2), ((3, 4), 4), ((2, 4, 5), 1)])
def test_group_norm_normalizes_each_group_then_applies_channel_affine(shape, groups):
    x, w, b = rng.standard_normal(shape) * 3 + 2, rng.standard_normal(shape[1]), rng.standard_normal(shape[1])
    g = x.reshape(shape[0], groups, -1)
    want = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(shape)
    per_channel = (shape[1],) + (1,) * (len(shape) - 2)
    got = F.group_norm(t(x), groups, t(w), t(b)).numpy()
    np.testing.assert_allclose(got, want * w.reshape(per_channel) + b.reshape(per_channel), rtol=1e-12, atol=1e-13)
    assert gradcheck(lambda x, w, b: F.group_norm(x, groups, w, b), (t(x), t(w), t(b)))


@pytest.mark.parametrize("shape,ns", [((4, 6), (6,)), ((2, 3, 4), (3, 4)), ((5,), (5,))])
def test_rms_norm_divides_by_the_root_mean_square(shape, ns):
    x, w = rng.standard_normal(shape), rng.standard_normal(ns)
    axes = tuple(range(len(shape) - len(ns), len(shape)))
    want = x / np.sqrt((x * x).mean(axes, keepdims=True) + 1e-6) * w
    np.testing.assert_allclose(F.rms_norm(t(x), ns, t(w), eps=1e-6).numpy(), want, rtol=1e-13)
    eps64 = np.finfo(np.float64).eps  # eps=None: the dtype's machine epsilon
    np.testing.assert_allclose(F.rms_norm(t(x), ns).numpy(), x / np.sqrt((x * x).mean(axes, keepdims=True) + eps64),
                               rtol=1e-13)
    assert gradcheck(lambda x, w: F.rms_norm(x, ns, w, 1e-6), (t(x), t(w)))


def test_modules_hold_pytorchs_parameters():
    gn = nn.GroupNorm(2, 4)
    assert [(k, v.tolist()) for k, v in gn.state_dict().items()] == [("weight", [1.0] * 4), ("bias", [0.0] * 4)]
    assert list(nn.GroupNorm(2, 4, bias=False).state_dict()) == ["weight"]
    assert list(nn.GroupNorm(2, 4, affine=False).state_dict()) == []
    rms = nn.RMSNorm([2, 3])
    assert rms.weight.shape == (2, 3) and list(rms.state_dict()) == ["weight"]
    assert nn.RMSNorm(3, dtype=tinyattn.float64).weight.dtype == tinyattn.float64
    x = tinyattn.randn(2, 4, 3)
    assert np.array_equal(gn(x).numpy(), F.group_norm(x, 2, gn.weight, gn.bias).numpy())
    assert repr(gn) == "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"
    assert repr(nn.RMSNorm(4)) == "RMSNorm((4,), eps=None, elementwise_affine=True)"


def test_errors_name_what_was_expected():
    with pytest.raises(ValueError, match="must be divisible by num_groups"):
        nn.GroupNorm(3, 4)
    with pytest.raises(RuntimeError, match="divisible by num_groups"):
        F.group_norm(tinyattn.ones(2, 4, 3), 3)
    with pytest.raises(RuntimeError, match="bias to be a vector"):
        F.group_norm(tinyattn.ones(2, 4, 3), 2, None, tinyattn.ones(2))
    with pytest.raises(RuntimeError, match="expected input with shape"):
        F.rms_norm(tinyattn.ones(2, 3), (2, 3, 4))
    with pytest.raises(TypeError, match="tuple of ints"):
        F.rms_norm(tinyattn.ones(2, 3), 3)
