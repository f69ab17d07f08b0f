"""nn.utils.rnn: pad_sequence, PackedSequence, pack/pad_packed_sequence and their inverses, against
layouts written out by hand, gradients by finite differences, and PyTorch's errors."""
import numpy as np
import pytest

import tinyattn
from tinyattn.gradcheck import gradcheck
from tinyattn.nn.utils import clip_grad_norm_, rnn

RNG = np.random.default_rng(2)


def t64(*shape):
    return tinyattn.tensor(RNG.standard_normal(shape), requires_grad=True)


def test_nn_utils_is_a_package_keeping_its_names():
    import tinyattn.nn as nn
    assert nn.utils.clip_grad_norm_ is clip_grad_norm_ and nn.utils.rnn is rnn
    from tinyattn.nn.utils.rnn import pad_sequence  # noqa: F401  (PyTorch's import line)


def test_pad_sequence_layouts_sides_and_values():
    a, b = tinyattn.tensor([1.0, 2.0, 3.0]), tinyattn.tensor([4.0])
    np.testing.assert_array_equal(rnn.pad_sequence([a, b]).numpy(), [[1, 4], [2, 0], [3, 0]])  # (T, B)
    np.testing.assert_array_equal(rnn.pad_sequence([a, b], batch_first=True, padding_value=-1).numpy(),
                                  [[1, 2, 3], [4, -1, -1]])
    np.testing.assert_array_equal(rnn.pad_sequence((a, b), batch_first=True, padding_side="left").numpy(),
                                  [[1, 2, 3], [0, 0, 4]])
    mixed = rnn.pad_sequence([tinyattn.tensor([1, 2]), tinyattn.tensor([3])], padding_value=0.5)
    assert mixed.dtype == np.int64  # the first sequence's dtype, as PyTorch
    assert rnn.pad_sequence([tinyattn.ones(3, 2), tinyattn.ones(1, 2)], batch_first=True).shape == (2, 3, 2)
    assert rnn.pad_sequence(tinyattn.ones(2, 3)).shape == (3, 2)  # a tensor is the list of its rows


def test_pad_sequence_gradient_reaches_every_sequence():
    x, y = t64(4, 2), t64(2, 2)
    assert gradcheck(lambda x, y: rnn.pad_sequence([x, y], batch_first=True, padding_side="left"), (x, y))


def test_pad_sequence_errors():
    with pytest.raises(RuntimeError, match="received an empty list of sequences"):
        rnn.pad_sequence([])
    with pytest.raises(RuntimeError, match="Expected padding_side to be one of left or right, but got middle"):
        rnn.pad_sequence([tinyattn.ones(2)], padding_side="middle")
    with pytest.raises(RuntimeError, match=r"sequences\[1\] has shape \(2, 2\)"):
        rnn.pad_sequence([tinyattn.ones(3), tinyattn.ones(2, 2)])


def test_pack_and_pad_packed_round_trip_in_any_order():
    x = tinyattn.arange(12.0).reshape(3, 4).t()  # (T=4, B=3): column b is sequence b
    p = rnn.pack_padded_sequence(x, [4, 2, 3], enforce_sorted=False)
    np.testing.assert_array_equal(p.data.numpy(), [0, 8, 4, 1, 9, 5, 2, 10, 3])  # step by step, longest first
    np.testing.assert_array_equal(p.batch_sizes.numpy(), [3, 3, 2, 1])
    np.testing.assert_array_equal(p.sorted_indices.numpy(), [0, 2, 1])
    np.testing.assert_array_equal(p.unsorted_indices.numpy(), [0, 2, 1])
    padded, lengths = rnn.pad_packed_sequence(p)
    np.testing.assert_array_equal(padded.numpy(), [[0, 4, 8], [1, 5, 9], [2, 0, 10], [3, 0, 0]])
    np.testing.assert_array_equal(lengths.numpy(), [4, 2, 3])
    wide, _ = rnn.pad_packed_sequence(p, batch_first=True, total_length=6, padding_value=-1)
    np.testing.assert_array_equal(wide.numpy()[1], [4, 5, -1, -1, -1, -1])
    seqs = rnn.unpack_sequence(p)
    assert [s.tolist() for s in seqs] == [[0, 1, 2, 3], [4, 5], [8, 9, 10]]
    q = rnn.pack_sequence([tinyattn.tensor([1.0, 2.0]), tinyattn.tensor([3.0])])
    assert q.data.tolist() == [1, 3, 2] and q.batch_sizes.tolist() == [2, 1] and q.sorted_indices is None
    assert [s.tolist() for s in rnn.unpad_sequence(padded, lengths)] == [[0, 1, 2, 3], [4, 5], [8, 9, 10]]


def test_pack_and_unpack_pass_gradients_only_to_real_steps():
    x = t64(3, 4, 2)  # (B, T, features)
    lengths = [2, 4, 1]
    assert gradcheck(lambda x: rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False).data, x)
    assert gradcheck(lambda x: rnn.pad_packed_sequence(
        rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False), batch_first=True)[0], x)
    rnn.pad_packed_sequence(rnn.pack_padded_sequence(x, lengths, True, False), True)[0].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[..., 0], [[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]])


def test_pack_errors():
    x = tinyattn.ones(4, 3)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order when `enforce_sorted` is True"):
        rnn.pack_padded_sequence(x, [4, 2, 3])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        rnn.pack_padded_sequence(x, [4, 3, 0])
    with pytest.raises(RuntimeError, match=r"Expected `len\(lengths\)` to be equal to batch_size, but got 2"):
        rnn.pack_padded_sequence(x, [4, 3])
    with pytest.raises(RuntimeError, match="a length is 5, but the input has only 4 time steps"):
        rnn.pack_padded_sequence(x, [5, 3, 2])
    with pytest.raises(ValueError, match="Expected total_length to be at least the length of the longest"):
        rnn.pad_packed_sequence(rnn.pack_padded_sequence(x, [4, 3, 2]), total_length=2)


@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("kwargs", [dict(), dict(num_layers=2, bidirectional=True, batch_first=True)])
def test_rnns_on_a_packed_batch_equal_each_sequence_run_alone(cls, kwargs):
    tinyattn.manual_seed(0)
    m = getattr(tinyattn.nn, cls)(3, 4, **kwargs).double()
    seqs = [t64(n, 3) for n in (3, 5, 1, 3)]
    out, h = m(rnn.pack_sequence(seqs, enforce_sorted=False))
    h_n = h[0] if cls == "LSTM" else h
    for b, s in enumerate(rnn.unpack_sequence(out)):
        alone, h_alone = m(seqs[b])  # unbatched: (n, D*H), h (L*D, H)
        np.testing.assert_allclose(s.numpy(), alone.numpy(), rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(h_n.numpy()[:, b], (h_alone[0] if cls == "LSTM" else h_alone).numpy(),
                                   rtol=1e-13, atol=1e-14)


def test_lstm_on_a_packed_batch_gradients():
    tinyattn.manual_seed(1)
    m = tinyattn.nn.LSTM(2, 3).double()
    x, h0, c0 = t64(4, 3, 2), t64(1, 3, 3), t64(1, 3, 3)

    def run(x, h0, c0):
        out, (h, c) = m(rnn.pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False), (h0, c0))
        return out.data, h, c
    assert gradcheck(run, (x, h0, c0))
