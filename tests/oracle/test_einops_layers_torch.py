"""einops' torch layers (einops.layers.torch) inside tinyattn models, as code with only its torch
imports changed builds them: ``nn.Sequential(Rearrange(...), nn.Linear(...))``. Each is adopted as the
same einops layer on tinyattn; values, every gradient, state_dict keys and repr match PyTorch's."""
import copy

import numpy as np
import pytest
import torch
from einops.layers.torch import EinMix, Rearrange, Reduce

import tinyattn


def _pair(build):
    """The same model built on PyTorch and on tinyattn (its parameters copied from PyTorch's)."""
    torch.manual_seed(0)
    tm, am = build(torch), build(tinyattn)
    am.load_state_dict({k: tinyattn.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, am


BUILDS = {
    "patches": lambda lib: lib.nn.Sequential(
        Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2), lib.nn.Linear(12, 5)),
    "pool": lambda lib: lib.nn.Sequential(lib.nn.Linear(4, 3), Reduce("b n d -> b d", "mean")),
    "max": lambda lib: lib.nn.Sequential(Reduce("b c (h 2) (w 2) -> b c h w", "max")),
    "einmix": lambda lib: lib.nn.Sequential(
        EinMix("b t c -> b t d", weight_shape="c d", bias_shape="d", c=4, d=3), lib.nn.Tanh()),
    "einmix_pre": lambda lib: lib.nn.ModuleList([EinMix("b (t two) c -> b t d", weight_shape="two c d",
                                                        two=2, c=4, d=3)]),
}
SHAPES = {"patches": (2, 3, 4, 4), "pool": (2, 3, 4), "max": (2, 3, 4, 4), "einmix": (2, 5, 4),
          "einmix_pre": (2, 6, 4)}


@pytest.mark.parametrize("name", list(BUILDS))
def test_layer_in_a_model_matches_pytorch(name):
    torch.set_default_dtype(torch.float64)
    tinyattn.set_default_dtype(tinyattn.float64)
    try:
        tm, am = _pair(BUILDS[name])
        x = np.random.default_rng(1).standard_normal(SHAPES[name])
        outs = []
        for lib, m in ((torch, tm), (tinyattn, am)):
            xt = lib.tensor(x, requires_grad=True)
            f = m[0] if name == "einmix_pre" else m
            y = f(xt)
            (y * y).sum().backward()
            outs.append((y.detach().numpy(), xt.grad.numpy(), {k: p.grad.numpy() for k, p in m.named_parameters()}))
        (yt, gt, pt), (ya, ga, pa) = outs
        np.testing.assert_allclose(ya, yt, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(ga, gt, rtol=1e-12, atol=1e-12)
        assert pa.keys() == pt.keys()
        for k in pt:
            np.testing.assert_allclose(pa[k], pt[k], rtol=1e-12, atol=1e-12)
        assert list(am.state_dict()) == list(tm.state_dict())
        assert repr(am) == repr(tm)
    finally:
        torch.set_default_dtype(torch.float32)
        tinyattn.set_default_dtype(tinyattn.float32)


def test_attribute_assignment_and_deepcopy():
    class Net(tinyattn.nn.Module):
        def __init__(self):
            super().__init__()
            self.to_heads = Rearrange("b n (h d) -> b h n d", h=2)

        def forward(self, x):
            return self.to_heads(x)

    net = copy.deepcopy(Net())
    assert isinstance(net.to_heads, tinyattn.nn.Module) and "to_heads" in dict(net.named_children())
    x = np.arange(24.0).reshape(1, 3, 8)
    np.testing.assert_array_equal(net(tinyattn.tensor(x)).numpy(),
                                  Rearrange("b n (h d) -> b h n d", h=2)(torch.tensor(x)).numpy())


def test_einmix_keeps_the_weights_it_was_given():
    torch.manual_seed(3)
    layer = EinMix("b c -> b d", weight_shape="c d", bias_shape="d", c=4, d=2)
    holder = tinyattn.nn.ModuleDict({"mix": layer})
    np.testing.assert_array_equal(holder["mix"].weight.detach().numpy(), layer.weight.detach().numpy())
    np.testing.assert_array_equal(holder["mix"].bias.detach().numpy(), layer.bias.detach().numpy())
