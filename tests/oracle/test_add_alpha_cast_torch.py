"""add/sub/add_/sub_ with an integer alpha on bool, uint8, int32 and float32 results, against PyTorch
(tests/test_add_alpha_cast.py derives the same without torch)."""
from __future__ import annotations

import pytest
import torch

import tinyattn


def _all(lib, dt, alpha):
    vals = [True, False, True, False] if dt == "bool" else [1, 0, 5, 200]
    other = [True, True, False, False] if dt == "bool" else [1, 1, 0, 100]
    x, y = lib.tensor(vals, dtype=getattr(lib, dt)), lib.tensor(other, dtype=getattr(lib, dt))
    out = [lib.add(x, y, alpha=alpha).tolist(), str(lib.add(x, y, alpha=alpha).dtype).split(".")[-1]]
    b = x.clone()
    b.add_(y, alpha=alpha)
    out.append(b.tolist())
    if dt != "bool":  # (bool - bool raises in both)
        out.append(lib.sub(x, y, alpha=alpha).tolist())
    out.append(tuple(lib.add(lib.zeros((0, 2), dtype=getattr(lib, dt)), lib.tensor(0), alpha=alpha).shape))
    return out


@pytest.mark.parametrize("dt", ["bool", "uint8", "int32", "float32"])
@pytest.mark.parametrize("alpha", [-1, 0, 2, -3])
def test_integer_alpha_matches_pytorch(dt, alpha):
    assert _all(tinyattn, dt, alpha) == _all(torch, dt, alpha)
