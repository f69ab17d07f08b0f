"""Global state: the default dtype and the one random generator (dtype promotion: ``promotion.py``).

Grad mode lives in ``autograd.py``; everything else that a ``manual_seed`` or a ``set_default_dtype``
changes lives here, so a learner finds the whole of tinyattn's global state in one short file.
"""
from __future__ import annotations

import sys

import numpy as np

from tinyattn import checks

_default_dtype: type = np.float32
_rng: np.random.Generator = np.random.default_rng(0)
initial_seed_value: int = 0
# PyTorch's three print profiles; set_printoptions starts from one and overrides what it is given
_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=float("inf"), edgeitems=3, linewidth=80)}
_print_opts: dict = dict(_PROFILES["default"], sci_mode=None)


def set_default_dtype(dt) -> None:
    """Set the dtype that Python floats and float lists become (float32 or float64)."""
    global _default_dtype
    dt = np.dtype(dt).type
    if dt not in (np.float32, np.float64):
        raise TypeError(f"default dtype must be float32 or float64, got {np.dtype(dt).name}")
    _default_dtype = dt


def get_default_dtype():
    """The dtype Python floats become (float32 unless changed)."""
    return _default_dtype


def manual_seed(n: int) -> np.random.Generator:
    """Seed the ONE generator behind init, dropout, randn and sampling: same seed, same numbers."""
    global _rng, initial_seed_value
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"manual_seed expects an int, got {type(n).__name__}")
    initial_seed_value = int(n) % 2**64  # what torch.initial_seed() answers
    _rng = np.random.default_rng(initial_seed_value)  # PyTorch accepts negative seeds too
    return _rng


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    """How tensors print, as ``torch.set_printoptions``: ``profile`` ('default', 'short', 'full') first,
    then each option given; ``sci_mode`` is always set (None: NumPy decides, False: never, True: always)."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        _print_opts.update(_PROFILES[profile])
    for k, v in dict(precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth).items():
        if v is not None:
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise TypeError(f"set_printoptions: {k} must be a number, got {type(v).__name__}")
            _print_opts[k] = v
    _print_opts["sci_mode"] = sci_mode


def array2string_kwargs() -> dict:
    """``np.array2string`` keywords for the current print options (``Tensor.__repr__`` reads them)."""
    o = _print_opts
    kw = dict(precision=int(o["precision"]), edgeitems=int(o["edgeitems"]), max_line_width=int(o["linewidth"]),
              threshold=sys.maxsize if o["threshold"] == float("inf") else int(o["threshold"]))
    if o["sci_mode"] is not None:  # NumPy's own choice otherwise, as PyTorch's None
        fmt = np.format_float_scientific if o["sci_mode"] else np.format_float_positional
        kw["formatter"] = {"float_kind": lambda x, p=kw["precision"]: fmt(x, precision=p, unique=False)}
    return kw


def get_rng() -> np.random.Generator:
    """The generator seeded by ``manual_seed``; library code draws all its randomness here."""
    return _rng


class Generator:
    """A random stream of its own, as ``torch.Generator``: ``g = Generator().manual_seed(2147483647)``,
    then ``randn(27, 27, generator=g)``. Seeded streams repeat exactly, but the numbers are NumPy's
    (PCG64), not PyTorch's, for the same seed."""

    def __init__(self, device=None) -> None:
        checks.device(device)
        self.manual_seed(67280421310721)  # PyTorch's default seed

    def manual_seed(self, seed: int) -> "Generator":
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
            raise TypeError(f"Generator.manual_seed expects an int, got {type(seed).__name__}")
        self._seed = int(seed)
        self.rng = np.random.default_rng(self._seed % 2**64)
        return self  # so that `g = torch.Generator().manual_seed(n)` works

    def seed(self) -> int:
        """Reseed from the operating system's entropy; returns the new seed."""
        return self.manual_seed(int(np.random.SeedSequence().entropy) % 2**63).initial_seed()

    def initial_seed(self) -> int:
        return self._seed

    @property
    def device(self) -> str:
        return "cpu"


def rng_of(generator) -> np.random.Generator:
    """The NumPy generator to draw from for a ``generator=`` argument: ``manual_seed``'s when None, a
    ``Generator``'s own stream, or a ``numpy.random.Generator`` as it is."""
    if generator is None:
        return _rng
    if isinstance(generator, Generator):
        return generator.rng
    if isinstance(generator, np.random.Generator):
        return generator
    raise TypeError(f"generator must be a tinyattn.Generator, a numpy.random.Generator or None (then "
                    f"manual_seed's), got {type(generator).__name__}")
