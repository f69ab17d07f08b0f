"""Finite-difference gradient checking: does an op's backward agree with its forward?

For every element x_i of every input that requires grad, the central difference

    (f(x + eps e_i) - f(x - eps e_i)) / (2 eps)

is compared with what ``backward`` computed. The output is first contracted with a *random*
upstream gradient R, i.e. we check d<R, f(x)>/dx. Contracting with ``.sum()`` alone (R = all ones)
would miss real bugs: softmax's outputs always sum to 1, so a softmax whose backward returns zeros
passes a sum-check. Everything is done in float64, where eps=1e-6 leaves ~1e-10 of rounding error.
Complex inputs and outputs (complex128) follow PyTorch's convention: a complex input's gradient is
dL/dRe + i dL/dIm, each part by its own differences; a complex output is contracted as Re <R, f>.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .tensor import Tensor, no_grad


class GradcheckError(AssertionError):
    """Raised when an analytic gradient disagrees with the numeric one."""


def _outputs(out) -> list:
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if isinstance(o, Tensor)]


def gradcheck(fn: Callable, inputs, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, seed: int = 0) -> bool:
    """Compare autograd's gradients of ``fn(*inputs)`` with central differences, over every element.

    ``inputs``: a Tensor or a sequence of them (non-Tensors are passed through untouched). Every
    Tensor with ``requires_grad=True`` is checked and must be float64; it is perturbed *in place*, so
    ``fn`` may also ignore its arguments and read the tensors directly (e.g. a model's parameters).
    ``fn`` may return any shape, or a tuple of tensors; each is contracted with a fixed random tensor.
    Returns True, or raises ``GradcheckError`` naming the input, the worst index, both values and
    the relative error (or returns False when ``raise_exception=False``).
    """
    if not callable(fn):
        raise TypeError(f"gradcheck: fn must be callable (e.g. lambda x: x.tanh()), got {type(fn).__name__}")
    if isinstance(inputs, Tensor):
        inputs = [inputs]
    elif isinstance(inputs, (list, tuple)):
        inputs = list(inputs)
    else:
        raise TypeError(f"gradcheck: inputs must be a Tensor or a list/tuple of them, got {type(inputs).__name__}")
    checked = [(i, t) for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError("gradcheck: no input has requires_grad=True, so there is nothing to check")
    for i, t in checked:
        if t.dtype not in (np.float64, np.complex128):
            raise TypeError(f"gradcheck: input {i} has dtype {t.dtype}; finite differences need float64 or complex128 "
                            "(use .double(), or tinyattn.set_default_dtype(tinyattn.float64) before building)")

    outs = _outputs(fn(*inputs))
    if not outs:
        raise TypeError("gradcheck: fn must return a Tensor or a tuple of Tensors")
    rng = np.random.default_rng(seed)  # private: checking must not move the global seed
    upstream = [rng.standard_normal(o.shape) + (1j * rng.standard_normal(o.shape) if o.dtype.kind == "c" else 0)
                for o in outs]

    def projected() -> float:
        """<R, f(x)> (Re <R, f(x)> for a complex f): the scalar whose gradient we check."""
        return float(sum(np.sum(o._data.astype(np.float64) * r) if o.dtype.kind != "c" else np.vdot(r, o._data).real
                         for o, r in zip(_outputs(fn(*inputs)), upstream)))

    # Analytic: one backward pass per output, seeded with its random upstream gradient.
    saved = [t.grad for _, t in checked]
    for _, t in checked:
        t.grad = None
    for o, r in zip(outs, upstream):
        if o.requires_grad:
            o.backward(r.astype(o.dtype), retain_graph=True)  # the outputs may share a graph
    analytic = [np.zeros(t.shape, t.dtype) if t.grad is None else t.grad._data.astype(t.dtype) for _, t in checked]
    for (_, t), g in zip(checked, saved):
        t.grad = g

    # Numeric: nudge each element both ways.
    ok = True
    with no_grad():
        for (pos, t), a in zip(checked, analytic):
            numeric = _central_differences(t._data, projected, eps)  # perturbs t's own array in place
            err = np.abs(a - numeric)
            excess = err - (atol + rtol * np.abs(numeric))
            if (excess > 0).any() or not np.isfinite(a).all():
                ok = False
                worst = np.unravel_index(np.argmax(np.where(np.isfinite(excess), excess, np.inf)), t.shape)
                av, nv = a[worst], numeric[worst]
                rel = abs(av - nv) / max(abs(nv), 1e-12)
                msg = (f"gradcheck failed for input {pos} (shape {t.shape}) at index {tuple(int(i) for i in worst)}: "
                       f"analytic {av:.6g}, numeric {nv:.6g}, relative error {rel:.3g} "
                       f"(atol={atol}, rtol={rtol}; {int((excess > 0).sum())} of {t._data.size} elements off)")
                if raise_exception:
                    raise GradcheckError(msg)
    return ok


def numerical_grad(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central-difference gradient of a plain NumPy function ``f(x) -> scalar``, in float64, element by element.

    ``x`` is not modified. To check a function with an array output, pass a scalar projection,
    e.g. ``lambda x: np.sum(g(x) * R)`` with a random ``R``.
    """
    x = np.array(x, dtype=np.float64)  # a private float64 copy
    return _central_differences(x, lambda: _scalar(f(x)), eps)


def _central_differences(x: np.ndarray, f: Callable[[], float], eps: float) -> np.ndarray:
    """(f(x + eps e_j) - f(x - eps e_j)) / (2 eps) for every element j of x, as a float64 array of x's shape.

    Each element of x itself is nudged in place (and restored), and ``f`` reads x. Indexing x element by
    element (not a flattened copy) also reaches arrays that are not contiguous, such as a transposed weight.
    """
    grad = np.zeros(x.shape, dtype=np.complex128 if x.dtype.kind == "c" else np.float64)
    for j in np.ndindex(x.shape):
        orig = x[j]
        for step in (eps, 1j * eps) if x.dtype.kind == "c" else (eps,):  # a complex x: its real, then imaginary part
            x[j] = orig + step
            f_plus = f()
            x[j] = orig - step
            f_minus = f()
            x[j] = orig
            grad[j] += (f_plus - f_minus) / (2 * eps) * (step / eps)
    return grad


def _scalar(value) -> float:
    """f's result as a float; a clear error when f returned an array instead of a scalar."""
    arr = np.asarray(getattr(value, "data", value))
    if arr.size != 1 or not np.issubdtype(arr.dtype, np.number):
        raise TypeError(f"numerical_grad: f must return a scalar, got {type(value).__name__} of shape {arr.shape}; "
                        "reduce it first, e.g. lambda x: np.sum(g(x) * R) with a fixed random R")
    return float(arr.reshape(()))


# `tinyattn.gradcheck` is this module's `gradcheck` function (the package re-exports it under the module's
# name, so the function shadows the module as an attribute of `tinyattn`). Hang the module's names on the
# function too, so `tinyattn.gradcheck.gradcheck(...)` and `tinyattn.gradcheck.numerical_grad(...)` also
# work after a plain `import tinyattn`.
gradcheck.gradcheck = gradcheck  # type: ignore[attr-defined]
gradcheck.numerical_grad = numerical_grad  # type: ignore[attr-defined]
gradcheck.GradcheckError = GradcheckError  # type: ignore[attr-defined]


__all__ = ["gradcheck", "numerical_grad", "GradcheckError"]
