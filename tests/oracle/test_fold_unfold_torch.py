"""F.unfold / F.fold and their modules against PyTorch 2.13: values, gradients (bit for bit: both are
copies and sums of the same numbers) and reprs, over strides, paddings, dilations, unbatched input."""
import numpy as np
import pytest
import torch

import tinyattn

CASES = [((2, 3, 7, 6), dict(kernel_size=3)), ((2, 3, 7, 6), dict(kernel_size=(2, 3), stride=2, padding=1)),
         ((1, 2, 9, 9), dict(kernel_size=3, dilation=2, padding=(1, 2), stride=(2, 1))),
         ((3, 8, 8), dict(kernel_size=4, stride=4)), ((2, 3, 32, 32), dict(kernel_size=7, stride=4, padding=2))]


@pytest.mark.parametrize("shape,kw", CASES)
def test_same_as_pytorch(shape, kw):
    x = np.random.default_rng(0).standard_normal(shape)
    got = []
    for lib in (torch, tinyattn):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.unfold(t, **kw)
        (y * y * 0.5 + y).sum().backward()
        z = lib.tensor(y.detach().numpy(), requires_grad=True)
        f = lib.nn.functional.fold(z, shape[-2:], **kw)
        (f * f).sum().backward()
        got.append((y.detach().numpy(), t.grad.numpy(), f.detach().numpy(), z.grad.numpy(),
                    repr(lib.nn.Unfold(**kw)), repr(lib.nn.Fold(shape[-2:], **kw))))
    for a, b in zip(*got):
        if isinstance(a, str):
            assert a == b
        else:
            np.testing.assert_array_equal(b, a)
