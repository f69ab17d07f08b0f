"""nn.utils.rnn against PyTorch 2.13: pad_sequence, pack/pad_packed_sequence, values and gradients."""
import numpy as np
import pytest
import torch
from torch.nn.utils import rnn as trnn

import tinyattn
from tinyattn.nn.utils import rnn as arnn

RNG = np.random.default_rng(4)


def _grads(lib, rnn, arrays, fn, R):
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, rnn, xs)
    out = out if isinstance(out, tuple) else (out,)
    (out[0] * lib.tensor(R)).sum().backward()
    return [o.detach().numpy() for o in out], [x.grad.numpy() for x in xs]


@pytest.mark.parametrize("fn", [
    lambda t, r, xs: r.pad_sequence(xs),
    lambda t, r, xs: r.pad_sequence(xs, batch_first=True, padding_value=-2.0),
    lambda t, r, xs: r.pad_sequence(xs, batch_first=True, padding_side="left"),
    lambda t, r, xs: r.pad_packed_sequence(r.pack_sequence(xs, enforce_sorted=False)),
    lambda t, r, xs: r.pad_packed_sequence(r.pack_padded_sequence(r.pad_sequence(xs, batch_first=True), [3, 5, 1],
                                                                  batch_first=True, enforce_sorted=False),
                                           batch_first=True, total_length=7, padding_value=9.0),
    lambda t, r, xs: r.pack_padded_sequence(r.pad_sequence(xs), [3, 5, 1], enforce_sorted=False).data,
    lambda t, r, xs: r.unpack_sequence(r.pack_sequence(xs, enforce_sorted=False))[1],
    lambda t, r, xs: r.unpad_sequence(r.pad_sequence(xs), t.tensor([3, 5, 1]))[2],
])
def test_values_and_gradients(fn):
    arrays = [RNG.standard_normal((n, 2)) for n in (3, 5, 1)]
    theirs_out, _ = _grads(torch, trnn, arrays, fn, 0.0)  # the shape of the output, for R
    R = RNG.standard_normal(theirs_out[0].shape)
    theirs = _grads(torch, trnn, arrays, fn, R)
    mine = _grads(tinyattn, arnn, arrays, fn, R)
    for a, b in zip(mine[0] + mine[1], theirs[0] + theirs[1]):
        np.testing.assert_array_equal(a, b)


def test_packed_sequence_fields():
    x = np.arange(12.0).reshape(3, 4).T.copy()
    p, q = arnn.pack_padded_sequence(tinyattn.tensor(x), [4, 2, 3], enforce_sorted=False), \
        trnn.pack_padded_sequence(torch.tensor(x), [4, 2, 3], enforce_sorted=False)
    assert p._fields == q._fields
    for a, b in zip(p, q):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]


@pytest.mark.parametrize("call", [
    lambda t, r: r.pad_sequence([]), lambda t, r: r.pad_sequence([t.ones(3), t.ones(2, 2)]),
    lambda t, r: r.pad_sequence([t.ones(2)], padding_side="middle"),
    lambda t, r: r.pack_padded_sequence(t.ones(4, 3), [4, 2, 3]),
    lambda t, r: r.pack_padded_sequence(t.ones(4, 3), [4, 3, 0]),
    lambda t, r: r.pack_padded_sequence(t.ones(4, 3), [4, 3]),
    lambda t, r: r.pad_packed_sequence(r.pack_padded_sequence(t.ones(4, 3), [4, 3, 2]), total_length=2)])
def test_errors_of_the_same_type(call):
    with pytest.raises(Exception) as theirs:
        call(torch, trnn)
    with pytest.raises(type(theirs.value)):
        call(tinyattn, arnn)


@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("kwargs", [dict(), dict(num_layers=2, bidirectional=True), dict(batch_first=True)])
@pytest.mark.parametrize("lengths", [[5, 3, 3, 1], [3, 5, 1, 3]])
def test_rnns_on_packed_sequences(cls, kwargs, lengths):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, cls)(3, 4, **kwargs).double()
    mine = getattr(tinyattn.nn, cls)(3, 4, **kwargs).double()
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    bf = kwargs.get("batch_first", False)
    x = RNG.standard_normal((4, 5, 3) if bf else (5, 4, 3))
    h0 = RNG.standard_normal((kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1), 4, 4))
    results = []
    for lib, rnn, m in ((torch, trnn, theirs), (tinyattn, arnn, mine)):
        xt, ht = lib.tensor(x, requires_grad=True), lib.tensor(h0, requires_grad=True)
        packed = rnn.pack_padded_sequence(xt, lengths, batch_first=bf, enforce_sorted=lengths == sorted(lengths)[::-1])
        out, h = m(packed, (ht, ht * 0.5) if cls == "LSTM" else ht)
        padded, _ = rnn.pad_packed_sequence(out, batch_first=bf)
        hs = h if cls == "LSTM" else (h,)
        loss = (padded ** 2).sum() + sum((s * (1.5 + i)).sum() for i, s in enumerate(hs))
        loss.backward()
        results.append([padded.detach().numpy(), out.batch_sizes.numpy(), xt.grad.numpy(), ht.grad.numpy(),
                        m.weight_hh_l0.grad.numpy()] + [s.detach().numpy() for s in hs])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
