"""torch.inf, pi, e, nan and newaxis, in the lines of tutorial code that use them, and the import lines
of a well-known annotated transformer."""
import math

import numpy as np

import tinyattn as torch


def test_the_constants_are_pythons_floats():
    assert torch.inf == math.inf and torch.pi == math.pi and torch.e == math.e and math.isnan(torch.nan)
    assert torch.newaxis is None


def test_a_causal_mask_filled_with_minus_inf():
    scores = torch.zeros(3, 3)
    mask = torch.triu(torch.ones(3, 3), diagonal=1).bool()
    w = torch.softmax(scores.masked_fill(mask, -torch.inf), dim=-1)
    # row i spreads evenly over its i + 1 visible keys
    np.testing.assert_allclose(w.numpy(), [[1, 0, 0], [1 / 2, 1 / 2, 0], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-6)


def test_the_tanh_gelu_with_pi():
    x = torch.tensor([1.0])
    y = 0.5 * x * (1 + torch.tanh(torch.sqrt(torch.tensor(2.0 / torch.pi)) * (x + 0.044715 * torch.pow(x, 3))))
    want = 0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * (1 + 0.044715)))
    np.testing.assert_allclose(y.numpy(), [want], rtol=1e-6)


def test_newaxis_indexes_as_none():
    assert torch.arange(3)[:, torch.newaxis].shape == (3, 1)


def test_the_annotated_transformers_import_lines():
    import tinyattn.multiprocessing as mp  # noqa: F401
    from tinyattn.utils.data.distributed import DistributedSampler  # noqa: F401
    assert callable(mp.spawn)
