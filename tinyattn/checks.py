"""Argument checks shared by the public surface: each rule written once, with one wording."""
from __future__ import annotations


def device(device) -> None:
    """PyTorch code passes device= everywhere; here every tensor lives in NumPy on the CPU."""
    if device is not None and str(device).split(":")[0] != "cpu":
        raise ValueError(f"device={device!r}: tinyattn runs on the CPU with NumPy; use device='cpu' or leave it out")
