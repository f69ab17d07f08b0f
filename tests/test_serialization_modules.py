"""``torch.save(model, f)`` and the weights_only allowlist (pytorch/examples' word_language_model saves its
whole model, then loads it inside ``torch.serialization.safe_globals([...])``). Torch-free."""
import pickle

import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn as nn
import tinyattn.nn.functional as F


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5, 4)
        self.rnn = nn.GRU(4, 4)
        self.dec = nn.Linear(4, 5)
        self.dec.weight = self.emb.weight  # tied, as the example's --tied
        self.act = F.relu  # a module-level function as an attribute, as TransformerEncoderLayer.activation
        self.kind = "GRU"

    def forward(self, x):
        out, _ = self.rnn(self.emb(x))
        return self.dec(self.act(out))


def _saved(tmp_path):
    torch.manual_seed(0)
    m = Tied().eval()
    torch.save(m, tmp_path / "m.pt")
    return m, tmp_path / "m.pt"


def test_whole_module_round_trips_with_weights_only_false(tmp_path):
    m, path = _saved(tmp_path)
    back = torch.load(path, weights_only=False)
    assert type(back) is Tied and back.kind == "GRU" and back.act is F.relu and back.training is False
    assert back.dec.weight is back.emb.weight  # one tensor stored once: still tied
    x = torch.tensor([[1, 2], [3, 4], [0, 1]])
    np.testing.assert_array_equal(back(x).detach().numpy(), m(x).detach().numpy())
    assert [n for n, _ in back.named_parameters()] == [n for n, _ in m.named_parameters()]


def test_weights_only_load_needs_every_class_and_function_allowed(tmp_path):
    _, path = _saved(tmp_path)
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL .*Tied was not an allowed global"):
        torch.load(path)
    with torch.serialization.safe_globals([Tied, nn.Embedding, nn.GRU, nn.Linear]):
        with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL .*relu was not an allowed global"):
            torch.load(path)
    with torch.serialization.safe_globals([Tied, nn.Embedding, nn.GRU, nn.Linear, F.relu]):
        assert type(torch.load(path)) is Tied
    assert torch.serialization.get_safe_globals() == []  # the context manager put the list back


def test_add_and_clear_safe_globals(tmp_path):
    _, path = _saved(tmp_path)
    try:
        torch.serialization.add_safe_globals([Tied, nn.Embedding, nn.GRU, nn.Linear, F.relu, Tied])
        assert torch.serialization.get_safe_globals() == [Tied, nn.Embedding, nn.GRU, nn.Linear, F.relu]
        assert type(torch.load(path, map_location="cpu")) is Tied
    finally:
        torch.serialization.clear_safe_globals()
    assert torch.serialization.get_safe_globals() == []
