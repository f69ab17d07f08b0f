"""``tinyattn.random``: PyTorch's ``torch.random`` names for the one global generator (``manual_seed``'s).

``get_rng_state()`` is the generator's whole state as a uint8 tensor (37 bytes of NumPy's PCG64 state,
where PyTorch's holds 5056 of its Mersenne Twister); ``set_rng_state`` puts one back, so the draws
after it repeat. ``fork_rng()`` is a ``with`` block whose draws leave the global stream as it was.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np

from . import defaults
from .defaults import manual_seed  # noqa: F401  (torch.random.manual_seed)
from .tensor import Tensor

__all__ = ["get_rng_state", "set_rng_state", "fork_rng", "initial_seed", "manual_seed", "seed"]

_STATE_BYTES = 37  # state (16) + inc (16) of PCG64, has_uint32 (1), uinteger (4)


def get_rng_state() -> Tensor:
    """The global generator's state, as a uint8 tensor of 37 bytes (PyTorch's is a ByteTensor too)."""
    st = defaults.get_rng().bit_generator.state
    raw = (st["state"]["state"].to_bytes(16, "little") + st["state"]["inc"].to_bytes(16, "little")
           + bytes([st["has_uint32"]]) + int(st["uinteger"]).to_bytes(4, "little"))
    return Tensor(np.frombuffer(raw, dtype=np.uint8).copy())


def set_rng_state(new_state: Tensor) -> None:
    """Put back a state from get_rng_state: the draws that follow repeat those that followed it."""
    a = new_state._data if isinstance(new_state, Tensor) else None
    if a is None or a.dtype != np.uint8:
        raise TypeError("RNG state must be a torch.ByteTensor")
    if a.size != _STATE_BYTES:
        raise RuntimeError(f"Expected a generator state of size {_STATE_BYTES} (NumPy's PCG64; PyTorch's is 5056 "
                           f"bytes) but found the input RNG state size to be {a.size}")
    raw = a.reshape(-1).tobytes()
    defaults.get_rng().bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": int.from_bytes(raw[:16], "little"), "inc": int.from_bytes(raw[16:32], "little")},
        "has_uint32": raw[32], "uinteger": int.from_bytes(raw[33:], "little")}


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng", _devices_kw: str = "devices",
             device_type: str | None = None) -> Iterator[None]:
    """Draws (and seeds) inside the block do not move the global stream: its state is put back on exit."""
    if not enabled:
        yield
        return
    saved = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(saved)


def initial_seed() -> int:
    """The seed the global generator was last seeded with (0, tinyattn's, until manual_seed or seed)."""
    return defaults.initial_seed_value


def seed() -> int:
    """Seed the global generator with a fresh non-deterministic 64-bit seed, and return it."""
    import os
    n = int.from_bytes(os.urandom(8), "little")
    defaults.manual_seed(n)
    return n
