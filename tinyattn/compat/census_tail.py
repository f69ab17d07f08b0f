"""Tensor methods that the census of public teaching code (tests/data/census_names.csv) found missing,
mixed into the Tensor through MethodsMixin: ``bernoulli``/``bernoulli_``, ``unflatten``, ``ravel``,
``take``, ``absolute``, ``diag``, ``addmm``, ``erfinv``, ``multinomial``, ``lerp_``, ``clamp_max_``,
``clamp_min_``, ``get_device`` and ``H``. The torch.* functions of the same names are in
tinyattn/tail_functions.py. Random draws come from ``tinyattn.manual_seed``'s generator (NumPy's
stream, not PyTorch's), as torch.rand's and dropout's.
"""
from __future__ import annotations

import math

import numpy as np

from tinyattn import autograd, defaults
from tinyattn.autograd import Function
from tinyattn.compat.args import _norm_dim


class Bernoulli(Function):
    """out ~ Bernoulli(p) elementwise;  dp = 0 (PyTorch records the draw and gives it a zero gradient)"""
    @staticmethod
    def forward(ctx, p, draws):
        return (draws < p).astype(p.dtype)

    @staticmethod
    def backward(ctx, g):
        return np.zeros_like(g)


def check_probabilities(p: np.ndarray) -> None:
    if not ((p >= 0) & (p <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")


class Diag(Function):
    """a (n,) -> the (n+|k|, n+|k|) matrix with a on diagonal k; a (m, n) -> its diagonal k.
    The backward of each is the other: da = diag(g, k) read back."""
    @staticmethod
    def forward(ctx, a, k):
        ctx.shape, ctx.k = a.shape, k
        return np.diag(a, k).copy()

    @staticmethod
    def backward(ctx, g):
        if len(ctx.shape) == 1:
            return np.diagonal(g, ctx.k).copy()
        out = np.zeros(ctx.shape, dtype=g.dtype)
        rows = np.arange(g.shape[0]) + max(-ctx.k, 0)  # the diagonal's row and column indices
        out[rows, rows + ctx.k] = g
        return out


_SQRT_PI_2 = math.sqrt(math.pi) / 2


def erfinv_array(x: np.ndarray) -> np.ndarray:
    """The y with erf(y) = x, for x in [-1, 1] (+-inf at +-1, NaN outside): Giles's single-precision
    approximation (2010), then Newton steps on erf, which converge to the dtype's precision."""
    from tinyattn.special import erf_array  # (special.py holds erf; it imports the Tensor, so not at the top)
    x = np.asarray(x)
    x = x if x.dtype.kind == "f" else x.astype(defaults.get_default_dtype())
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.log((1.0 - x) * (1.0 + x))
        small = w < 5.0
        ws, wl = w - 2.5, np.sqrt(w) - 3.0
        ps = np.polyval([2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                         -0.00125372503, -0.00417768164, 0.246640727, 1.50140941], ws)
        pl = np.polyval([-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                         -0.0076224613, 0.00943887047, 1.00167406, 2.83297682], wl)
        y = np.where(small, ps, pl) * x
        for _ in range(3):  # Newton: y -= (erf(y) - x) / erf'(y)
            finite = np.isfinite(y)
            step = (erf_array(np.where(finite, y, 0)) - x) / (np.exp(-(y * y)) / _SQRT_PI_2)
            y = np.where(finite & (np.abs(x) < 1), y - step, y)
        y = np.where(np.abs(x) == 1, np.copysign(np.inf, x), np.where(np.abs(x) > 1, np.nan, y))
    return y.astype(x.dtype)


class Erfinv(Function):
    """y = erfinv(a);  da = g sqrt(pi)/2 exp(y^2)"""
    @staticmethod
    def forward(ctx, a):
        y = erfinv_array(a)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * _SQRT_PI_2 * np.exp(y * y)


class CensusTailMixin:
    def bernoulli(self, p=None, *, generator=None):
        """0/1 draws in self's dtype: with probability self per element, or with the float p for every one."""
        probs = self._data if p is None else np.full(self.shape, p, dtype=self.dtype)
        check_probabilities(probs)
        draws = defaults.rng_of(generator).random(self.shape)
        if p is not None:
            return autograd.Tensor._make((draws < probs).astype(self.dtype))
        return Bernoulli.apply(self, draws=draws)

    def bernoulli_(self, p=0.5, *, generator=None):
        """Overwrite self with 0/1 draws, each 1 with probability p (a float, or a tensor of self's shape)."""
        probs = p._data if isinstance(p, autograd.Tensor) else np.asarray(p, dtype=np.float64)
        if not isinstance(p, autograd.Tensor) and not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        check_probabilities(probs)
        draws = defaults.rng_of(generator).random(self.shape)
        return self._inplace("bernoulli_", (draws < probs).astype(self.dtype), region=False)

    def unflatten(self, dim: int, sizes) -> "autograd.Tensor":
        """Split dim into the dims ``sizes`` (one entry may be -1): (B, 6).unflatten(1, (2, 3)) -> (B, 2, 3)."""
        d = _norm_dim(dim, self.ndim, "unflatten")
        sizes = tuple(int(s) for s in sizes)
        if not sizes:
            raise RuntimeError("unflatten: sizes must be non-empty")
        known = math.prod(s for s in sizes if s != -1)
        if sizes.count(-1) > 1 or (-1 not in sizes and known != self.shape[d]) or \
                (-1 in sizes and (known == 0 or self.shape[d] % known)):
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                               f"({self.shape[d]}) in the input tensor")
        return self.reshape(*self.shape[:d], *sizes, *self.shape[d + 1:])  # (..., *sizes, ...)

    def ravel(self) -> "autograd.Tensor":
        return self.reshape(-1)  # (numel,)

    def take(self, index) -> "autograd.Tensor":
        """self read as 1-D at index (any shape; negative counts from the end): out has index's shape."""
        return self.reshape(-1)[index]

    def absolute(self) -> "autograd.Tensor":
        return self.abs()

    def diag(self, diagonal: int = 0) -> "autograd.Tensor":
        """1-D -> a square matrix with self on diagonal ``diagonal``; 2-D -> that diagonal, as a 1-D tensor."""
        if self.ndim not in (1, 2):
            raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.ndim}D")
        return Diag.apply(self, k=int(diagonal))

    def addmm(self, mat1, mat2, *, beta=1, alpha=1) -> "autograd.Tensor":
        """beta self + alpha (mat1 @ mat2); with beta = 0 self is not read (a NaN in it does not spread)."""
        prod = mat1.mm(mat2)  # (n, k) @ (k, m) -> (n, m)
        prod = prod if alpha == 1 else prod * alpha
        if beta == 0:
            return prod
        return prod + (self if beta == 1 else self * beta)

    def erfinv(self) -> "autograd.Tensor":
        """The inverse of erf elementwise, on [-1, 1] (+-inf at +-1, NaN outside)."""
        x = self if self.dtype.kind == "f" else self.to(defaults.get_default_dtype())
        return Erfinv.apply(x)

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator=None) -> "autograd.Tensor":
        from tinyattn.sampling import multinomial  # (sampling builds on the Tensor)
        return multinomial(self, num_samples, replacement, generator=generator)

    def lerp_(self, end, weight):
        return self.copy_(self.lerp(end, weight))

    def clamp_max_(self, max):  # noqa: A002
        return self.clamp_(max=max)

    def clamp_min_(self, min):  # noqa: A002
        return self.clamp_(min=min)

    def get_device(self) -> int:
        return -1  # PyTorch's answer for a CPU tensor

    @property
    def H(self) -> "autograd.Tensor":
        """The conjugate transpose of a matrix (a 0-d tensor is itself)."""
        if self.ndim == 0:
            return self
        if self.ndim != 2:
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.")
        return self.transpose(0, 1).conj()
