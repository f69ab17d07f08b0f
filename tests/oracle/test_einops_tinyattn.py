"""einops on tinyattn tensors against the same einops calls on PyTorch: values and every gradient."""
import einops
import numpy as np
import pytest
import torch
from einops import einsum, pack, rearrange, reduce, repeat, unpack

import tinyattn

RNG = np.random.default_rng(5)

CALLS = [
    lambda t, x, y: rearrange(x, "b n (h d) -> b h n d", h=2),
    lambda t, x, y: rearrange(x, "b n c -> (b n) c"),
    lambda t, x, y: rearrange(x, "b n c -> c b n"),
    lambda t, x, y: rearrange([x, x * 2], "s b n c -> b s n c"),
    lambda t, x, y: reduce(x, "b n c -> b c", "max"),
    lambda t, x, y: reduce(x, "b n c -> b c", "min"),
    lambda t, x, y: reduce(x, "b n c -> c", "sum"),
    lambda t, x, y: reduce(x, "b (n two) c -> b n c", "mean", two=2),
    lambda t, x, y: reduce(x, "b n c -> b n () c", "mean"),
    lambda t, x, y: repeat(x, "b n c -> b n c r", r=3),
    lambda t, x, y: repeat(y, "n c -> b n c", b=2),
    lambda t, x, y: repeat(x, "b n c -> (b r) n c", r=2),
    lambda t, x, y: einsum(x, x, "b i c, b j c -> b i j"),
    lambda t, x, y: einsum(x, y, "b n c, n c -> b"),
    lambda t, x, y: pack([x, y.unsqueeze(0).expand(2, 4, 6)[:, :, :6]], "b * c")[0],
    lambda t, x, y: unpack(pack([x, y.sum(0).reshape(1, 6).expand(2, 6)], "b * c")[0],
                           pack([x, y.sum(0).reshape(1, 6).expand(2, 6)], "b * c")[1], "b * c")[1],
    lambda t, x, y: einops.rearrange(x, "b n (h d) -> b h n d", d=3).transpose(-2, -1),
]


@pytest.mark.parametrize("call", CALLS)
def test_same_values_and_gradients_as_on_pytorch(call):
    x, y = RNG.standard_normal((2, 4, 6)), RNG.standard_normal((4, 6))
    results = []
    for lib in (torch, tinyattn):
        xt, yt = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        out = call(lib, xt, yt)
        assert type(out) is lib.Tensor
        R = np.random.default_rng(6).standard_normal(tuple(out.shape))
        (out * lib.tensor(R)).sum().backward()
        results.append((out.detach().numpy(), xt.grad.numpy() if xt.grad is not None else None,
                        yt.grad.numpy() if yt.grad is not None else None))
    for a, b in zip(*results):
        if a is None or b is None:
            assert a is None and b is None
        else:
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)


def test_integer_tensors_and_errors():
    i = tinyattn.arange(12).reshape(3, 4)
    assert rearrange(i, "a b -> b a").tolist() == rearrange(torch.arange(12).reshape(3, 4), "a b -> b a").tolist()
    with pytest.raises(einops.EinopsError):
        rearrange(tinyattn.ones(2, 3), "a b c -> a b c")
