"""squeeze_, unsqueeze_, t_, transpose_, swapdims_, swapaxes_ against PyTorch 2.13: shapes, strides' contiguity,
version counts, values and every gradient through chains of them, and the same refusals."""
import numpy as np
import pytest
import torch

import tinyattn

rng = np.random.default_rng(5)
W = rng.standard_normal((2, 1, 3))

CHAINS = {
    "squeeze all then t": lambda x: (x.squeeze_(), x.t_()),
    "squeeze dim": lambda x: (x.squeeze_(1), x.unsqueeze_(-1)),
    "unsqueeze then transpose": lambda x: (x.unsqueeze_(0), x.transpose_(0, 3), x.swapdims_(1, 2)),
    "swapaxes negative": lambda x: (x.swapaxes_(-1, 0), x.squeeze_(-2)),
}


@pytest.mark.parametrize("name", CHAINS)
@pytest.mark.parametrize("through_view", [False, True])
def test_chains_match_values_versions_and_gradients(name, through_view):
    res = []
    for lib in (torch, tinyattn):
        w = lib.tensor(W, requires_grad=True)
        y = w * 2.0
        x = y[:] if through_view else y
        CHAINS[name](x)
        up = lib.tensor(np.linspace(-1, 1, x.numel()).reshape(tuple(x.shape)))
        (x * x * up).sum().backward()
        res.append((tuple(x.shape), x.is_contiguous(), x._version, y._version, x.detach().numpy().copy(),
                    w.grad.numpy().copy(), (x._base is y) if through_view else x._base is None))
    (ts, tc, tv, tyv, tx, tg, tb), (s, c, v, yv, xx, g, b) = res
    assert (s, c, v, yv, b) == (ts, tc, tv, tyv, tb)
    np.testing.assert_array_equal(xx, tx)
    np.testing.assert_allclose(g, tg, rtol=1e-14, atol=0)


@pytest.mark.parametrize("call", [
    lambda l: l.zeros(2, 3, requires_grad=True).unsqueeze_(0),
    lambda l: l.zeros(2, 3, requires_grad=True)[0].squeeze_(),
    lambda l: (l.zeros(4, requires_grad=True) * 1).split(2)[0].unsqueeze_(0),
    lambda l: l.zeros(2, 1, 3).t_(),
    lambda l: l.zeros(2, 1).squeeze_(5),
    lambda l: l.zeros(2, 1).unsqueeze_(-4),
    lambda l: l.zeros(2, 1).transpose_(0, 2),
])
def test_the_same_calls_raise_the_same_error_type(call):
    kinds = []
    for lib in (torch, tinyattn):
        with pytest.raises(Exception) as e:
            call(lib)
        kinds.append(type(e.value))
    assert kinds[0] is kinds[1] or issubclass(kinds[1], kinds[0]), kinds
