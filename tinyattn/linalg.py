"""torch.linalg for the forms teaching code uses: norms (``vector_norm``, ``matrix_norm``, ``norm``), ``inv``,
``det``, ``slogdet``, ``solve`` and ``cholesky``, batched over leading dims, each Function's derivative next to
its forward (the matrix identities d(A^-1) = -A^-1 dA A^-1, d det A = det A tr(A^-1 dA), ...). A singular or
non-positive-definite input raises ``LinAlgError`` (a RuntimeError) with PyTorch's words. The top-level
``torch.det``, ``logdet``, ``inverse`` and ``cholesky_inverse`` are here too.
"""
from __future__ import annotations

import numpy as np

from .tensor import Function, Tensor

__all__ = ["LinAlgError", "cholesky", "cholesky_inverse", "det", "eigh", "eigvalsh", "inv", "inverse", "logdet",
           "matrix_exp", "matrix_norm", "norm", "slogdet", "solve", "vector_norm"]


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: the factorization or inverse does not exist for this input."""


def _square(A, who: str) -> Tensor:
    A = A if isinstance(A, Tensor) else Tensor(A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{who}: A must be batches of square matrices, but they are "
                           f"{' by '.join(map(str, A.shape[-2:])) if A.ndim >= 2 else A.ndim} matrices")
    if A.dtype.kind != "f":
        from .promotion import torch_name  # (PyTorch's name of the dtype: Long, not int64)
        raise RuntimeError(f"{who}: Expected a floating point or complex tensor as input. Got {torch_name(A._data)}")
    return A


def _mT(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)  # (..., n, m) -> (..., m, n)


class Inv(Function):
    """X = A^-1;  dA = -X^T g X^T"""
    @staticmethod
    def forward(ctx, a):
        try:
            x = np.linalg.inv(a)
        except np.linalg.LinAlgError:
            raise LinAlgError("linalg.inv: The diagonal element 1 is zero, the inversion could not be completed "
                              "because the input matrix is singular.") from None
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return -(_mT(x) @ g @ _mT(x))  # (..., n, n)


def inv(A, *, out=None) -> Tensor:
    """The inverse of each square matrix of A (..., n, n)."""
    return Inv.apply(_square(A, "linalg.inv"))


class Det(Function):
    """d = det A;  dA = g d A^-T (computed through the adjugate-free identity, where A is invertible)"""
    @staticmethod
    def forward(ctx, a):
        d = np.linalg.det(a)
        ctx.save_for_backward(a, d)
        return np.asarray(d)

    @staticmethod
    def backward(ctx, g):
        a, d = ctx.saved_tensors
        return (g * d)[..., None, None] * _mT(np.linalg.inv(a))  # (..., n, n)


def det(A, *, out=None) -> Tensor:
    return Det.apply(_square(A, "linalg.det"))


class LogAbsDet(Function):
    """log|det A|;  dA = g A^-T"""
    @staticmethod
    def forward(ctx, a):
        _, logabs = np.linalg.slogdet(a)
        ctx.save_for_backward(a)
        return np.asarray(logabs)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return np.asarray(g)[..., None, None] * _mT(np.linalg.inv(a))


def slogdet(A, *, out=None) -> tuple[Tensor, Tensor]:
    """(sign, log|det A|): the determinant as sign * exp(logabsdet), without overflow for large matrices."""
    A = _square(A, "linalg.slogdet")
    sign = np.linalg.slogdet(A._data)[0]
    return Tensor(np.asarray(sign, dtype=A.dtype)), LogAbsDet.apply(A)


def logdet(A) -> Tensor:
    """log det A: NaN where det A < 0, -inf where it is 0 (torch.logdet)."""
    sign, logabs = slogdet(A)
    return logabs + Tensor(np.log(np.where(sign._data < 0, np.nan, 1.0)).astype(logabs.dtype))


class Solve(Function):
    """X = A^-1 B;  dB = A^-T g,  dA = -dB X^T"""
    @staticmethod
    def forward(ctx, a, b, vector):
        try:
            x = np.linalg.solve(a, b[..., None] if vector else b)
        except np.linalg.LinAlgError:
            raise LinAlgError("torch.linalg.solve: The solver failed because the input matrix is singular.") from None
        ctx.save_for_backward(a, x)
        ctx.vector = vector
        return x[..., 0] if vector else x

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved_tensors
        gb = np.linalg.solve(_mT(a), g[..., None] if ctx.vector else g)  # (..., n, k)
        ga = -(gb @ _mT(x))  # (..., n, k) @ (..., k, n)
        return ga, (gb[..., 0] if ctx.vector else gb)


def solve(A, B, *, left: bool = True, out=None) -> Tensor:
    """X with A X = B: B (..., n, k), or (..., n) for one vector per matrix."""
    if not left:
        raise NotImplementedError("linalg.solve(left=False): solve A^T X^T = B^T with left=True instead")
    A = _square(A, "linalg.solve")
    B = B if isinstance(B, Tensor) else Tensor(B)
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    return Solve.apply(A, B, vector=vector)


def _phi(m: np.ndarray) -> np.ndarray:
    """The lower triangle with its diagonal halved."""
    out = np.tril(m)
    out[..., np.arange(m.shape[-1]), np.arange(m.shape[-1])] *= 0.5
    return out


class Cholesky(Function):
    """L lower with L L^T = A;  dA = sym(L^-T phi(L^T g) L^-1), phi = lower triangle, diagonal halved
    (PyTorch's: the gradient is symmetric, as A is)."""
    @staticmethod
    def forward(ctx, a):
        try:
            low = np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            raise LinAlgError("linalg.cholesky: The factorization could not be completed because the input is not "
                              "positive-definite.") from None
        ctx.save_for_backward(low)
        return low

    @staticmethod
    def backward(ctx, g):
        (low,) = ctx.saved_tensors
        p = _phi(_mT(low) @ g)  # (..., n, n)
        linv = np.linalg.inv(low)
        ga = _mT(linv) @ p @ linv
        return 0.5 * (ga + _mT(ga))


def cholesky(A, *, upper: bool = False, out=None) -> Tensor:
    """L with L L^T = A for a symmetric positive-definite A (upper=True: U = L^T, U^T U = A)."""
    low = Cholesky.apply(_square(A, "linalg.cholesky"))
    return low.mT if upper else low


def cholesky_inverse(L, upper: bool = False) -> Tensor:
    """(L L^T)^-1 from a Cholesky factor L (or (U^T U)^-1 with upper=True)."""
    L = L if isinstance(L, Tensor) else Tensor(L)
    A = L.mT @ L if upper else L @ L.mT  # (..., n, n)
    return inv(A)


def inverse(A) -> Tensor:
    return inv(A)


def vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The ord-norm of x's entries over dim (all of them when None): sum(|x|^ord)^(1/ord); inf: max |x|."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    if dtype is not None:
        x = x.to(dtype)
    if dim is None:
        out = x.reshape(-1).norm(ord, 0)
        return out.reshape(*(1,) * x.ndim) if keepdim else out
    return x.norm(ord, dim, keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None) -> Tensor:
    """The Frobenius norm of each matrix (ord='fro'); the other matrix norms are not implemented here."""
    A = A if isinstance(A, Tensor) else Tensor(A)
    if ord != "fro":
        raise NotImplementedError(f"linalg.matrix_norm: ord={ord!r} is not implemented here; ord='fro' is")
    return vector_norm(A, 2, tuple(dim), keepdim, dtype=dtype)


def norm(A, ord=None, dim=None, keepdim: bool = False, *, out=None, dtype=None) -> Tensor:
    """vector_norm when ord is None or a number with dim an int or None (a 2-D input with ord=None: the
    Frobenius norm, the same number); matrix_norm for ord='fro' or a 2-tuple dim."""
    A = A if isinstance(A, Tensor) else Tensor(A)
    if ord is not None and dim is None and A.ndim not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.ndim}D.")
    if isinstance(ord, str) or (ord is not None and dim is None and A.ndim == 2) or \
            (isinstance(dim, (tuple, list)) and len(dim) == 2 and ord is not None):
        return matrix_norm(A, ord if ord is not None else "fro", (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


from .linalg_eig import eigh, eigvalsh, matrix_exp  # noqa: E402  (the matrix exponential, symmetric eigenproblems)
from .compat.cross_and_powers import linalg_cross as cross, linalg_matrix_power as matrix_power  # noqa: E402,F401
