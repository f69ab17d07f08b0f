"""A checkpoint holding a dataclass config (build-nanogpt saves ``{'model': ..., 'config': GPTConfig(...)}``)."""
import dataclasses
import pickle

import numpy as np
import pytest

import tinyattn as torch

BUILT = []


@dataclasses.dataclass
class Config:
    block_size: int = 8
    n_embd: int = 4
    bias: bool = True
    scale: float = 0.5

    def __post_init__(self):
        BUILT.append(1)  # counts how often __init__ ran


@dataclasses.dataclass(frozen=True)
class Frozen:
    inner: Config
    name: str = "x"


def test_dataclass_round_trips_with_weights_only_false(tmp_path):
    w = torch.arange(6.0).reshape(2, 3)
    cfg = Frozen(Config(block_size=16, scale=0.25), "gpt")
    torch.save({"model": {"w": w}, "config": cfg, "step": 7}, tmp_path / "ck.pt")
    BUILT.clear()
    ck = torch.load(tmp_path / "ck.pt", weights_only=False)
    assert ck["config"] == cfg and type(ck["config"]) is Frozen and type(ck["config"].inner) is Config
    assert BUILT == []  # rebuilt as pickle does, without running __init__/__post_init__
    np.testing.assert_array_equal(ck["model"]["w"].numpy(), w.numpy())
    assert ck["step"] == 7


@pytest.mark.parametrize("weights_only", [None, True])
def test_default_load_refuses_the_class_as_pytorch_does(tmp_path, weights_only):
    torch.save({"config": Config()}, tmp_path / "ck.pt")
    with pytest.raises(pickle.UnpicklingError, match=r"Weights only load failed: GLOBAL .*Config was not an "
                                                      r"allowed global.*weights_only=False"):
        torch.load(tmp_path / "ck.pt", weights_only=weights_only)


def test_a_class_that_is_not_imported_is_not_imported_for_it(tmp_path):
    torch.save({"config": Config()}, tmp_path / "ck.pt")
    import json
    import zipfile
    with zipfile.ZipFile(tmp_path / "ck.pt") as z:
        manifest = json.loads(z.read("manifest.json"))
    manifest["root"]["items"][0][1]["class"] = ["some_module_never_imported", "Config"]
    with zipfile.ZipFile(tmp_path / "edited.pt", "w") as z:
        z.writestr("manifest.json", json.dumps(manifest))
    with pytest.raises(ValueError, match="import the module that defines it first"):
        torch.load(tmp_path / "edited.pt", weights_only=False)
