"""torch.matrix_exp (also torch.linalg.matrix_exp and Tensor.matrix_exp) and the symmetric eigendecomposition
torch.linalg.eigh / eigvalsh, each Function's derivative next to its forward:

  * exp(A) by scaling and squaring: A / 2^s has 1-norm <= 1/2, its Taylor series to degree 18 is exact to
    rounding there, then squared s times. The gradient is the upper-right block of exp([[A^T, G], [0, A^T]])
    (the Frechet derivative of exp at A^T in the direction G), which is what PyTorch computes too.
  * A = V diag(L) V^T read from one triangle (UPLO='L' or 'U'): dA = V (diag(gL) + skew(V^T gV) / E) V^T with
    E_ij = L_j - L_i and skew(M) = (M - M^T) / 2: symmetric, as PyTorch's (measured), so a gradient step keeps
    A symmetric.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import promotion
from .tensor import Function, Tensor

__all__ = ["eigh", "eigvalsh", "matrix_exp"]


def _square_input(A, who: str, kernel: str | None = None) -> Tensor:
    """A as batches of square matrices of floats, or PyTorch's error for what came. ``kernel``: the name in
    PyTorch's NotImplementedError for a dtype it has no kernel for (eigh: half and integers); without it an
    integer input gets the RuntimeError that linalg's other functions give."""
    A = A if isinstance(A, Tensor) else Tensor(A)
    if A.ndim < 2:
        raise RuntimeError(f"{who}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{who}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if A.dtype.kind == "c":
        raise NotImplementedError(f"{who} of a complex matrix is not implemented in tinyattn (its gradient is not "
                                  "checked against PyTorch's complex convention); PyTorch computes it")
    if kernel is not None and (A.dtype.kind != "f" or A.dtype.itemsize < 4 or A.dtype.name == "bfloat16"):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{promotion.torch_name(A._data)}'")
    if A.dtype.kind != "f":
        raise RuntimeError(f"{who}: Expected a floating point or complex tensor as input. "
                           f"Got {promotion.torch_name(A._data)}")
    return A


def _mT(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def expm(a: np.ndarray) -> np.ndarray:
    """exp of each matrix of a (..., n, n), in a's dtype (float16/bfloat16 computed in float32)."""
    work = a.astype(np.float32) if a.dtype.kind == "f" and a.dtype.itemsize < 4 else a
    n = work.shape[-1]
    eye = np.eye(n, dtype=work.dtype)
    if work.size == 0:
        return a.copy()
    norm = np.abs(work).sum(axis=-2).max(axis=-1)  # the 1-norm of each matrix, (...)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(np.isfinite(norm) & (norm > 0.5), np.ceil(np.log2(np.where(norm > 0.5, norm, 1.0) / 0.5)), 0)
    s = s.astype(np.int64)
    x = work / np.exp2(s).astype(work.dtype)[..., None, None]
    with np.errstate(invalid="ignore", over="ignore"):  # a NaN or inf entry gives NaN everywhere, as PyTorch's
        out = eye + x / 18  # Horner: I + x (I + x/2 (I + x/3 (...)))
        for k in range(17, 0, -1):
            out = eye + (x @ out) / k
        for i in range(int(s.max(initial=0))):
            out = np.where((s > i)[..., None, None], out @ out, out)
    return out.astype(a.dtype, copy=False)


class MatrixExp(Function):
    """E = exp(A);  dA = the upper-right block of exp([[A^H, g], [0, A^H]])"""
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return expm(a)

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        n = a.shape[-1]
        block = np.zeros(a.shape[:-2] + (2 * n, 2 * n), dtype=np.result_type(a, g))
        block[..., :n, :n] = block[..., n:, n:] = np.conj(_mT(a))  # A^H (A^T for real A)
        block[..., :n, n:] = g
        return expm(block)[..., :n, n:]


def matrix_exp(A) -> Tensor:
    """The matrix exponential exp(A) = I + A + A^2/2! + ... of each square matrix of A (..., n, n)."""
    return MatrixExp.apply(_square_input(A, "linalg.matrix_exp"))


class EighResult(NamedTuple):
    """torch.return_types.linalg_eigh: ``eigenvalues`` ascending (..., n), ``eigenvectors`` as columns (..., n, n)."""
    eigenvalues: Tensor
    eigenvectors: Tensor


class EigenValues(Function):
    """L of A = V diag(L) V^T;  dA = V diag(g) V^T"""
    @staticmethod
    def forward(ctx, a, vals, vecs):
        ctx.save_for_backward(vecs)
        return vals.copy()

    @staticmethod
    def backward(ctx, g):
        (v,) = ctx.saved_tensors
        return (v * g[..., None, :]) @ _mT(v)


class EigenVectors(Function):
    """V of A = V diag(L) V^T;  dA = V (skew(V^T g) / E) V^T, E_ij = L_j - L_i off the diagonal, 0 on it"""
    @staticmethod
    def forward(ctx, a, vals, vecs):
        ctx.save_for_backward(vals, vecs)
        return vecs.copy()

    @staticmethod
    def backward(ctx, g):
        vals, v = ctx.saved_tensors
        vtg = _mT(v) @ g
        skew = (vtg - _mT(vtg)) / 2
        gap = vals[..., None, :] - vals[..., :, None]  # (..., n, n): L_j - L_i
        off = ~np.eye(vals.shape[-1], dtype=bool)
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = np.where(off, skew / np.where(off, gap, 1), 0)
        return v @ inner @ _mT(v)


def _decompose(A, UPLO: str, who: str):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    A = _square_input(A, who, kernel="linalg_eigh_cpu")
    vals, vecs = np.linalg.eigh(A._data, UPLO=UPLO)
    return A, vals.astype(A.dtype, copy=False), vecs.astype(A.dtype, copy=False)


def eigh(A, UPLO: str = "L", *, out=None) -> EighResult:
    """(eigenvalues ascending, eigenvectors as columns) of each symmetric matrix of A, read from the lower
    triangle (UPLO='L') or the upper one ('U'); the other triangle is not looked at. Each eigenvector's sign
    is LAPACK's choice, as in PyTorch: code should not depend on it."""
    A, vals, vecs = _decompose(A, UPLO, "linalg.eigh")
    return EighResult(EigenValues.apply(A, vals=vals, vecs=vecs), EigenVectors.apply(A, vals=vals, vecs=vecs))


def eigvalsh(A, UPLO: str = "L", *, out=None) -> Tensor:
    """The eigenvalues, ascending, of each symmetric matrix of A (..., n, n): eigh's first half."""
    A, vals, vecs = _decompose(A, UPLO, "linalg.eigh")  # (PyTorch names eigh in the errors)
    return EigenValues.apply(A, vals=vals, vecs=vecs)
