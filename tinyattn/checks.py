"""Argument checks for the public surface: each rule written once, with one wording.

A value of the wrong type raises TypeError, a value of the right type but out of range raises
ValueError, and both say the same thing::

    Linear: in_features must be a positive int, got in_features=2.0 (float)

``where`` (optional) names the function or layer that was called. ``bool`` is not an int here,
although Python makes it one: ``Linear(True, 3)`` is a mistake, not a layer of width 1. Each
check returns the value as a plain Python int or float.

Check at the public surface only (the function or layer a learner calls), not again inside.
"""
from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from tinyattn import autograd  # imports nothing from the package: the Tensor class registers itself there


def _fail(error: type, name: str, value, rule: str, where: str | None):
    kind = f" ({type(value).__name__})" if error is TypeError else ""
    return error(f"{where + ': ' if where else ''}{name} must be {rule}, got {name}={value!r}{kind}")


def int_at_least(name: str, value, minimum: int, where: str | None = None) -> int:
    """``value`` as an int, if it is an int >= ``minimum``."""
    rule = {0: "an int >= 0", 1: "a positive int"}.get(minimum, f"an int >= {minimum}")
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise _fail(TypeError, name, value, rule, where)
    if value < minimum:
        raise _fail(ValueError, name, value, rule, where)
    return int(value)


def positive_int(name: str, value, where: str | None = None) -> int:
    """``value`` as an int, if it is an int >= 1 (a size, a count, a number of heads)."""
    return int_at_least(name, value, 1, where)


def nonneg_int(name: str, value, where: str | None = None) -> int:
    """``value`` as an int, if it is an int >= 0 (an offset, a seed, a count that may be zero)."""
    return int_at_least(name, value, 0, where)


def number(name: str, value, where: str | None = None, *, at_least: float | None = None,
           above: float | None = None, finite: bool = False) -> float:
    """``value`` as a float, if it is a real number (and >= ``at_least``, or > ``above``, and not
    +-inf if ``finite``, when given). NaN is out of every range, so a bound also refuses NaN.
    """
    rule = ("a finite number" if finite else "a number") + (f" >= {at_least:g}" if at_least is not None else "") \
        + (f" > {above:g}" if above is not None else "")
    if isinstance(value, bool) or not isinstance(value, Real):
        raise _fail(TypeError, name, value, rule, where)
    if (at_least is not None and not value >= at_least) or (above is not None and not value > above) \
            or (finite and not math.isfinite(value)):
        raise _fail(ValueError, name, value, rule, where)
    return float(value)


def probability(name: str, value, where: str | None = None) -> float:
    """``value`` as a float, if it is a drop probability: 0 <= p < 1 (p = 1 would rescale by 1 / 0)."""
    rule = "a probability in [0, 1)"
    if isinstance(value, bool) or not isinstance(value, Real):
        raise _fail(TypeError, name, value, rule, where)
    if not 0.0 <= value < 1.0:
        raise _fail(ValueError, name, value, rule, where)
    return float(value)


def ids_in_range(ids, n: int | None, name: str, where: str | None = None, *, n_name: str = "n",
                 ignore: int | None = None) -> np.ndarray:
    """``ids`` (a Tensor, an array or a list) as an integer array, if every id is in [0, n): the one rule
    for token ids and class ids (embedding, the models' inputs, decode, cross_entropy's targets,
    one_hot), with one wording::

        embedding: input holds id 10 at position (0, 3), outside [0, 9] (num_embeddings=10)

    ``n=None`` checks only ids >= 0; ids equal to ``ignore`` (cross_entropy's ignore_index) pass.
    """
    arr = np.asarray(getattr(ids, "_data", ids))
    if arr.size == 0 and isinstance(ids, (list, tuple)):
        arr = arr.astype(np.int64)  # NumPy makes an empty list float64
    at = f"{where}: " if where else ""
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{at}{name} must be integer ids (indices, not values or probabilities; "
                        f"convert with .long()), got dtype {arr.dtype}")
    if not all_in_range(arr, n):  # the cheap test first
        bad = (arr < 0) if n is None else (arr < 0) | (arr >= n)
        if ignore is not None:
            bad &= arr != ignore
        if bad.any():
            pos = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), arr.shape))
            rule = "below 0: ids must be >= 0" if n is None else f"outside [0, {n - 1}] ({n_name}={n})"
            also = "" if ignore is None else f", and is not ignore_index={ignore}"
            raise ValueError(f"{at}{name} holds id {int(arr[pos])} at position {pos}, {rule}{also}")
    return arr


def all_in_range(arr: np.ndarray, n: int | None) -> bool:
    """0 <= every id (< n): one pass. Seen as unsigned ints of the same width, a negative id is huge."""
    if arr.size == 0:
        return True
    if n is None:
        return arr.dtype.kind == "u" or bool(arr.min() >= 0)
    return bool(arr.view(f"u{arr.dtype.itemsize}").max() < n)


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


def tensor_arg(value, fn: str, name: str = "input", position: int | None = None, hint: str = ""):
    """``value`` itself, if it is a Tensor; otherwise PyTorch's TypeError for a function that takes one
    (``expand_as(): argument 'other' (position 1) must be Tensor, not int``)."""
    if isinstance(value, autograd.Tensor):
        return value
    pos = f" (position {position})" if position is not None else ""
    raise TypeError(f"{fn}(): argument '{name}'{pos} must be Tensor, not {type(value).__name__}{hint}")
