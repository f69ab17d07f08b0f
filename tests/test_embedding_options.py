"""nn.Embedding's padding_idx and max_norm, and Embedding.from_pretrained, as PyTorch's."""
import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn as nn
from tinyattn.gradcheck import gradcheck


def test_the_padding_row_starts_at_zero():
    torch.manual_seed(0)
    e = nn.Embedding(5, 3, padding_idx=1)
    assert e.weight[1].tolist() == [0.0, 0.0, 0.0] and e.padding_idx == 1
    assert np.all(e.weight.numpy()[[0, 2, 3, 4]] != 0)  # the other rows are N(0, 1) draws
    assert nn.Embedding(5, 3, padding_idx=-1).padding_idx == 4  # counted from the end, stored as an id
    assert repr(e) == "Embedding(5, 3, padding_idx=1)"


def test_the_padding_row_never_gets_a_gradient():
    e = nn.Embedding(5, 3, padding_idx=1)
    with torch.no_grad():
        e.weight[1] = 7.0  # a nonzero padding row is still looked up as it is ...
    out = e(torch.tensor([[1, 2, 1]]))
    assert out[0, 0].tolist() == [7.0, 7.0, 7.0]
    (out * torch.arange(9.0).reshape(1, 3, 3)).sum().backward()
    # ... but gets no gradient: row 2 gets its upstream [3, 4, 5]; rows 1 (padding), 0, 3, 4 get zeros
    assert e.weight.grad.tolist() == [[0, 0, 0], [0, 0, 0], [3, 4, 5], [0, 0, 0], [0, 0, 0]]


def test_padding_gradient_gradcheck():
    # The padding row's zero gradient is a rule, not a derivative (the output does depend on that row), so
    # finite differences check the other rows: padded positions are multiplied by 0, which leaves the
    # padding row with a true derivative of 0 as well.
    e = nn.Embedding(4, 2, padding_idx=0).double()
    ids = torch.tensor([[0, 1, 3], [2, 0, 1]])
    real = (ids != 0).double()[..., None]  # (2, 3, 1)
    assert gradcheck(lambda w: e(ids) * real, [e.weight])


def test_padding_idx_out_of_range_is_refused():
    for bad in (5, -6):
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            nn.Embedding(5, 3, padding_idx=bad)


def test_max_norm_scales_the_rows_looked_up_in_the_table():
    m = nn.Embedding(4, 2, max_norm=1.0)
    with torch.no_grad():
        m.weight.copy_(torch.tensor([[3.0, 4.0], [0.3, 0.4], [1.0, 0.0], [6.0, 8.0]]))
    y = m(torch.tensor([0, 1, 0]))
    # row 0 has norm 5 > 1: scaled by 1 / 5 to [0.6, 0.8]; row 1 (norm 0.5) stays; rows 2, 3 were not looked up
    np.testing.assert_allclose(y.numpy(), [[0.6, 0.8], [0.3, 0.4], [0.6, 0.8]], rtol=1e-6)
    np.testing.assert_allclose(m.weight.detach().numpy(), [[0.6, 0.8], [0.3, 0.4], [1, 0], [6, 8]], rtol=1e-6)
    y.sum().backward()
    assert m.weight.grad.tolist() == [[2, 2], [1, 1], [0, 0], [0, 0]]  # row 0 used twice
    m1 = nn.Embedding(4, 2, max_norm=2.0, norm_type=1.0)
    with torch.no_grad():
        m1.weight.copy_(torch.tensor([[3.0, 4.0], [0.3, 0.4], [1.0, 0.0], [6.0, 8.0]]))
    m1(torch.tensor([3]))  # the 1-norm of [6, 8] is 14: scaled by 2 / 14
    np.testing.assert_allclose(m1.weight.detach().numpy()[3], [12 / 14, 16 / 14], rtol=1e-6)
    assert repr(m1) == "Embedding(4, 2, max_norm=2.0, norm_type=1.0)"


def test_from_pretrained_holds_the_table_frozen_by_default():
    table = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    f = nn.Embedding.from_pretrained(table, padding_idx=0)
    assert f.weight.tolist() == table.tolist() and not f.weight.requires_grad  # the padding row is kept as given
    assert repr(f) == "Embedding(3, 2, padding_idx=0)"
    assert nn.Embedding.from_pretrained(table, freeze=False).weight.requires_grad
    assert f(torch.tensor([2, 1])).tolist() == [[5.0, 6.0], [3.0, 4.0]]
