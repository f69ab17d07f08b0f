"""``cross`` (torch.cross, linalg.cross), ``aminmax``, ``diagflat``, ``diag_embed`` (the method),
``rad2deg``/``deg2rad``, ``matrix_power`` (torch and linalg) and ``randint_like``: each built from ops that
have their own gradients (products, amin/amax, diag, matmul, inv), so the gradients are theirs. The Tensor
methods are mixed in through CrossAndPowersMixin; the functions are below it."""
from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np

from tinyattn import autograd, defaults, promotion


class aminmax(NamedTuple):  # noqa: N801  (PyTorch's type name: torch.return_types.aminmax)
    min: "autograd.Tensor"
    max: "autograd.Tensor"


def _cross(a, b, dim: int, op: str):
    """a x b along ``dim`` (its size 3 in both; the other dims broadcast)."""
    if not isinstance(b, autograd.Tensor):
        raise TypeError(f"{op}(): argument 'other' must be Tensor, not {type(b).__name__}")
    if a.ndim != b.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected scalar type {promotion.torch_name(a._data)} but found "
                           f"{promotion.torch_name(b._data)}")
    if a._data.dtype == np.bool_:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    if not -a.ndim <= dim < max(a.ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-a.ndim}, {a.ndim - 1}], "
                         f"but got {dim})")
    if a.shape[dim] != 3 or b.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. "
                           f"Got {a.shape[dim]} and {b.shape[dim]}")
    x, y = a.movedim(dim, -1), b.movedim(dim, -1)  # (..., 3)
    parts = [x[..., i] * y[..., j] - x[..., j] * y[..., i] for i, j in ((1, 2), (2, 0), (0, 1))]
    return _stack(parts).movedim(-1, dim)


def _stack(parts):
    from tinyattn.functions import stack
    return stack(parts, -1)


def _default_cross_dim(a) -> int:
    """torch.cross without dim: the first dim of size 3 of input, with PyTorch's deprecation warning."""
    warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                  "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree with "
                  "that of linalg.cross in a future release.", UserWarning, stacklevel=3)
    for d, n in enumerate(a.shape):
        if n == 3:
            return d
    raise RuntimeError("no dimension of size 3 in input")


def _power(A, n: int, caller: str = "matrix_power(): argument 'n' (position 1)"):
    """A^n for square matrices A (..., m, m); a negative n inverts first; A^0 is the identity. ``caller``
    names the argument n as PyTorch's TypeError does for each entry point."""
    op = "linalg.matrix_power"
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{caller} must be int, not {type(n).__name__}")
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if n == 0:
        eye = np.broadcast_to(np.eye(A.shape[-1], dtype=A._data.dtype), A.shape).copy()
        return autograd.Tensor._make(eye)
    if n < 0:
        from tinyattn.linalg import inv
        A, n = inv(A), -n
    out, base = None, A
    while n:  # square and multiply
        if n & 1:
            out = base if out is None else out.matmul(base)
        n >>= 1
        if n:
            base = base.matmul(base)
    return out


class CrossAndPowersMixin:
    def cross(self, other, dim=None) -> "autograd.Tensor":
        return _cross(self, other, _default_cross_dim(self) if dim is None else int(dim), "cross")

    def aminmax(self, *, dim=None, keepdim: bool = False) -> aminmax:
        """(min, max) over all of self, or over ``dim``: the amin and amax of it (ties share the gradient)."""
        if self._data.size == 0 or (dim is not None and self.shape[dim] == 0):
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                               "no identity.")
        if dim is None and keepdim:
            return aminmax(self.amin(tuple(range(self.ndim)), True), self.amax(tuple(range(self.ndim)), True))
        return aminmax(self.amin(dim, keepdim), self.amax(dim, keepdim))

    def diagflat(self, offset: int = 0) -> "autograd.Tensor":
        """self flattened, on diagonal ``offset`` of a square matrix."""
        return self.reshape(-1).diag(offset)

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> "autograd.Tensor":
        from tinyattn.tail_functions import diag_embed
        return diag_embed(self, offset, dim1, dim2)

    def rad2deg(self) -> "autograd.Tensor":
        x = self if self._data.dtype.kind in "fc" else self.to(defaults.get_default_dtype())
        return x * (180.0 / math.pi)

    def deg2rad(self) -> "autograd.Tensor":
        x = self if self._data.dtype.kind in "fc" else self.to(defaults.get_default_dtype())
        return x * (math.pi / 180.0)

    def matrix_power(self, n: int) -> "autograd.Tensor":
        return _power(self, n)

    def rad2deg_(self): return self._inplace_from("rad2deg_", lambda x: x.rad2deg())
    def deg2rad_(self): return self._inplace_from("deg2rad_", lambda x: x.deg2rad())


def _t(x):
    return x if isinstance(x, autograd.Tensor) else autograd.Tensor(x)


def cross(input, other, dim=None):
    """torch.cross: without dim, the first dim of size 3 (PyTorch's deprecated default; linalg.cross takes -1)."""
    return _t(input).cross(other, dim)


def linalg_cross(input, other, *, dim: int = -1):
    return _cross(_t(input), other, int(dim), "linalg.cross")


def aminmax_fn(input, *, dim=None, keepdim: bool = False) -> aminmax:
    return _t(input).aminmax(dim=dim, keepdim=keepdim)


def diagflat(input, offset: int = 0):
    return _t(input).diagflat(offset)


def rad2deg(input):
    return _t(input).rad2deg()


def deg2rad(input):
    return _t(input).deg2rad()


def matrix_power(input, n: int):
    return _power(_t(input), n, "matrix_power(): argument 'n' (position 2)")


def linalg_matrix_power(A, n: int, *, out=None):
    return _power(_t(A), n, "linalg_matrix_power(): argument 'n' (position 2)")


def randint_like(input, low=0, high=None, *, dtype=None, generator=None, requires_grad: bool = False,
                 device=None, layout=None, memory_format=None):
    """Integers drawn uniformly from [low, high) (``randint_like(x, high)`` is low = 0) in input's shape, in
    input's dtype unless ``dtype`` is given; drawn from tinyattn's generator (NumPy's stream)."""
    if high is None:
        low, high = 0, low
    for name, v in (("low", low), ("high", high)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"randint_like(): {name} must be an int, got {type(v).__name__}")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    dt = np.dtype(dtype) if dtype is not None else _t(input)._data.dtype
    if dt == np.bool_ and (low < 0 or high > 2):
        raise RuntimeError("to - 1 is out of bounds for bool" if high > 2 else "from is out of bounds for bool")
    draws = defaults.rng_of(generator).integers(low, high, size=_t(input).shape, dtype=np.int64)
    out = autograd.Tensor._make(draws.astype(dt))
    return out.requires_grad_() if requires_grad else out
