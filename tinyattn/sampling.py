"""Random tensors and sampling, drawn from the one generator seeded by ``manual_seed``.

``randn``, ``rand``, ``randint``, ``randperm``, ``multinomial`` and ``normal`` (torch.* names): the
same seed gives the same numbers. Each also takes ``generator=``, a ``tinyattn.Generator`` with a
stream of its own (``g = Generator().manual_seed(2147483647)``), as in PyTorch.
"""
from __future__ import annotations

import numpy as np

from . import checks
from .checks import device as _device
from .compat.args import _sized
from .tensor import Tensor, _as_array, _new_shape, get_default_dtype, rng_of


def randn(*shape, size=None, generator=None, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """Standard normal samples."""
    _device(device)
    dt = np.dtype(dtype or get_default_dtype()).type
    return Tensor(rng_of(generator).standard_normal(_new_shape(_sized("randn", shape, size)), dtype=dt), requires_grad=requires_grad)


def rand(*shape, size=None, generator=None, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """Uniform [0, 1) samples."""
    _device(device)
    dt = np.dtype(dtype or get_default_dtype()).type
    return Tensor(rng_of(generator).random(_new_shape(_sized("rand", shape, size)), dtype=dt), requires_grad=requires_grad)


def randn_like(input, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """randn of input's shape, in input's (float) dtype unless dtype is given."""
    return randn(tuple(input.shape), dtype=dtype or input.dtype, requires_grad=requires_grad, device=device)


def rand_like(input, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """rand of input's shape, in input's (float) dtype unless dtype is given."""
    return rand(tuple(input.shape), dtype=dtype or input.dtype, requires_grad=requires_grad, device=device)


def _int_arg(v, name: str, op: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{op}: {name} must be an int, got {type(v).__name__}")
    return int(v)


def randint(*args, low=None, high=None, size=None, generator=None, dtype=np.int64, device=None) -> Tensor:
    """Uniform integers in [low, high) of shape ``size``, in PyTorch's two forms: ``randint(high, size)``
    (low=0) and ``randint(low=0, high, size)``, each argument positional or by keyword."""
    _device(device)
    if len(args) > 3:
        raise TypeError(f"randint() takes at most 3 positional arguments (low, high, size), got {len(args)}")
    if len(args) == 3 and isinstance(args[1], (tuple, list)):
        raise TypeError(f"randint: got a size twice ({args[1]} and {args[2]}); use randint(high, size) or randint(low, high, size)")
    if len(args) == 2 and isinstance(args[1], (tuple, list)):  # randint(high, size)
        args = (0,) + args if low is None else args
    elif len(args) == 1 and high is None:  # randint(high, size=...)
        args = (0,) + args
    given = dict(zip(("low", "high", "size"), args))
    for name, v in (("low", low), ("high", high), ("size", size)):
        if v is not None:
            if name in given:
                raise TypeError(f"randint() got multiple values for argument '{name}'")
            given[name] = v
    missing = [n for n in ("high", "size") if n not in given]
    if missing:
        raise TypeError("randint() missing required argument(s): " + ", ".join(f'"{n}"' for n in missing))
    low, high, size = given.get("low", 0), given["high"], given["size"]
    low, high = _int_arg(low, "low", "randint"), _int_arg(high, "high", "randint")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint: size must be a tuple of ints such as (2, 3), got {type(size).__name__}")
    if high <= low:
        raise ValueError(f"randint: high={high} must be greater than low={low} (it draws from [low, high))")
    draws = rng_of(generator).integers(low, high, size=_new_shape(size), dtype=np.int64)
    return Tensor._make(draws.astype(dtype, copy=False))


def randperm(n: int, *, generator=None, dtype=np.int64, device=None) -> Tensor:
    """A random permutation of 0..n-1 (int64)."""
    _device(device)
    n = checks.nonneg_int("n", n, "randperm")
    return Tensor._make(rng_of(generator).permutation(n).astype(dtype, copy=False))


def multinomial(input, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
    """Category ids drawn with probability weight / row sum: weights (C,) or (N, C) -> int64 (num_samples,) or (N, num_samples).

    Without replacement each category is drawn at most once (Efraimidis-Spirakis: every category
    draws Exp(1) / weight, and the num_samples smallest keys win).
    """
    w = np.asarray(_as_array(input), dtype=np.float64)
    if w.ndim not in (1, 2) or w.shape[-1] == 0:
        raise ValueError(f"multinomial: weights must be 1-D (C,) or 2-D (N, C) with C >= 1, got shape {w.shape}")
    num_samples = checks.positive_int("num_samples", num_samples, "multinomial")
    rows = w.reshape(-1, w.shape[-1])  # (N, C)
    C = rows.shape[1]
    bad = ~np.isfinite(rows) | (rows < 0)  # (N, C)
    if bad.any():
        raise ValueError(f"multinomial: weights must be finite and >= 0; row(s) {np.flatnonzero(bad.any(axis=1))[:5].tolist()} "
                         "hold a negative, NaN or inf weight")
    n_pos = (rows > 0).sum(axis=1)  # (N,)
    if (n_pos == 0).any():
        raise ValueError(f"multinomial: row(s) {np.flatnonzero(n_pos == 0)[:5].tolist()} sum to zero; "
                         "every row needs at least one positive weight")
    if not replacement and num_samples > n_pos.min():
        raise ValueError(f"multinomial: num_samples={num_samples} without replacement, but a row has only "
                         f"{int(n_pos.min())} categories with weight > 0 (of C={C}); pass replacement=True or draw fewer")
    rng = rng_of(generator)
    if replacement:
        cdf = np.cumsum(rows, axis=1)
        cdf /= cdf[:, -1:]  # (N, C), last column exactly 1
        u = rng.random((rows.shape[0], num_samples))  # (N, num_samples) in [0, 1)
        out = np.stack([np.searchsorted(c, ui, side="right") for c, ui in zip(cdf, u)])
    else:
        with np.errstate(divide="ignore"):
            keys = rng.exponential(size=rows.shape) / rows  # weight 0 -> key inf: never among the smallest
        out = np.argsort(keys, axis=1, kind="stable")[:, :num_samples]
    return Tensor._make(out.astype(np.int64).reshape(w.shape[:-1] + (num_samples,)))


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, requires_grad: bool = False,
           device=None) -> Tensor:
    """Normal samples mean + std * N(0, 1), as torch.normal: ``normal(mean, std, size)`` with numbers,
    or ``normal(mean_tensor, std_tensor)`` with one draw per element of their broadcast shape."""
    _device(device)
    m, s = _as_array(mean), _as_array(std)
    if m.dtype.kind not in "iuf" or s.dtype.kind not in "iuf":
        raise TypeError(f"normal: mean and std must be numbers or float tensors, got dtypes {m.dtype} and {s.dtype}")
    if (s < 0).any():
        raise ValueError(f"normal: std must be >= 0, got {std if s.ndim == 0 else 'a tensor with negative entries'}")
    if size is not None:
        if m.ndim or s.ndim:
            raise ValueError("normal: give size= only with a number mean and std (with tensors the shape is theirs)")
        shape = _new_shape((size,) if isinstance(size, (int, np.integer)) else (tuple(size),))
    else:
        try:
            shape = np.broadcast_shapes(m.shape, s.shape)
        except ValueError:
            raise ValueError(f"normal: mean {m.shape} and std {s.shape} do not broadcast") from None
    floats = [a.dtype for a in (m, s) if a.dtype.kind == "f" and a.ndim]  # a tensor's float dtype wins
    dt = np.dtype(dtype or (floats[0] if floats else get_default_dtype())).type
    z = rng_of(generator).standard_normal(shape, dtype=dt)
    z *= s.astype(dt)
    z += m.astype(dt)
    return Tensor(z, requires_grad=requires_grad)
