"""torch.save(model) / load under safe_globals, as pytorch/examples' word_language_model: same answers as PyTorch."""
import pickle

import numpy as np
import pytest
import torch

import tinyattn


def _make(lib, name):
    class Model(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = lib.nn.Embedding(5, 4)
            self.rnn = lib.nn.LSTM(4, 4, 2)
            self.dec = lib.nn.Linear(4, 5)
            self.dec.weight = self.emb.weight
            self.act = lib.nn.functional.relu
            self.model_type = "LSTM"

        def forward(self, x):
            out, _ = self.rnn(self.emb(x))
            return self.dec(self.act(out))
    Model.__name__ = Model.__qualname__ = name
    globals()[name] = Model
    return Model


CLASSES = {"torch": _make(torch, "ModelT"), "tinyattn": _make(tinyattn, "ModelA")}


@pytest.mark.parametrize("lib", [torch, tinyattn])
def test_whole_model_checkpoint_behaves_as_pytorchs(lib, tmp_path):
    cls = CLASSES[lib.__name__]
    torch.manual_seed(0)
    ref = CLASSES["torch"]().double()
    m = cls().double()
    m.load_state_dict({k: v.detach().numpy() for k, v in ref.state_dict().items()} if lib is tinyattn
                      else ref.state_dict())
    with open(tmp_path / "m.pt", "wb") as f:
        lib.save(m, f)
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        lib.load(tmp_path / "m.pt")
    allowed = [cls, lib.nn.Embedding, lib.nn.LSTM, lib.nn.Linear, lib.nn.functional.relu]
    with open(tmp_path / "m.pt", "rb") as f, lib.serialization.safe_globals(allowed):
        back = lib.load(f)
    assert back.dec.weight is back.emb.weight and back.model_type == "LSTM"
    x = np.array([[1, 2], [3, 4], [0, 1]])
    with torch.no_grad():
        want = ref(torch.tensor(x)).numpy()
    np.testing.assert_allclose(back(lib.tensor(x)).detach().numpy(), want, rtol=0, atol=1e-13)
