"""A checkpoint holding a dataclass config, as build-nanogpt writes it: the same answers as PyTorch's load."""
import dataclasses
import pickle

import numpy as np
import pytest
import torch

import tinyattn


@dataclasses.dataclass
class GPTConfig:
    block_size: int = 32
    vocab_size: int = 320
    n_layer: int = 2


@pytest.mark.parametrize("lib", [torch, tinyattn])
def test_dataclass_checkpoint_loads_like_pytorchs(lib, tmp_path):
    w = lib.tensor(np.arange(6.0).reshape(2, 3))
    lib.save({"model": {"w": w}, "config": GPTConfig(block_size=8), "step": 3}, tmp_path / "m.pt")
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        lib.load(tmp_path / "m.pt")  # weights_only's default refuses the class in both
    ck = lib.load(tmp_path / "m.pt", weights_only=False)
    assert ck["config"] == GPTConfig(block_size=8) and type(ck["config"]) is GPTConfig and ck["step"] == 3
    np.testing.assert_array_equal(ck["model"]["w"].numpy(), np.arange(6.0).reshape(2, 3))
