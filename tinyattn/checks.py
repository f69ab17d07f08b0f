"""Argument checks shared by the public surface: each rule written once, with one wording."""
from __future__ import annotations


def device(device, who: str = "device") -> None:
    """PyTorch code passes device= everywhere; here every tensor lives in NumPy on the CPU.

    Other devices get the errors a CPU-only PyTorch raises (the message starts with PyTorch's own), so
    ``'cuda' if torch.cuda.is_available() else 'cpu'`` is the one idiom that works in both.
    """
    kind = "cpu" if device is None else str(device).split(":")[0]
    if kind == "cpu":
        return
    if kind == "cuda":
        raise AssertionError(f"Torch not compiled with CUDA enabled ({who}={str(device)!r}: tinyattn runs on the CPU "
                             "with NumPy; pick the device with 'cuda' if torch.cuda.is_available() else 'cpu')")
    if kind == "mps":
        raise RuntimeError(f"PyTorch is not linked with support for mps devices ({who}={str(device)!r}: "
                           "tinyattn runs on the CPU with NumPy)")
    raise RuntimeError(f"Expected one of cpu, cuda, mps device type at start of device string: {device}")
