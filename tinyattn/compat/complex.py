"""Complex tensors (complex64, complex128): what Llama-style rotary embeddings need, with PyTorch's gradients.

Meta's Llama code rotates each pair of features of q and k by multiplying complex numbers:

    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)            # e^{i t theta_j}, complex64
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)

A complex tensor here is a NumPy complex array. ``view_as_real``/``view_as_complex``/``.real``/``.imag`` are
views sharing memory, as in PyTorch (a write through one is seen through the other).

The gradient convention is PyTorch's: for a real loss L and z = x + iy, ``z.grad = dL/dx + i dL/dy``. An op
whose backward is a real-linear map of the gradient (add, sum, reshape, indexing, cat) needs nothing new.
A holomorphic op f (mul, div, matmul, exp) sends back g * conj(f'(z)): its real backward, which computes
g * f'(z), run on conj(g) and conjugated (``_holomorphic``). Everything else would be silently wrong on
complex numbers (max compares, sigmoid takes |x|, c * c is no |c|^2), so ``Function.apply`` asks ``complex_op``
for every op with a complex first input or a complex output: the op itself, its holomorphic twin, or an error.
(Ordering ops, which compute outside the graph, refuse in ``ComplexMixin._ordered``.)
"""
from __future__ import annotations

import numpy as np

from tinyattn import autograd, checks
from tinyattn.autograd import Function
from tinyattn.compat.inplace import CopySlices, Overwrite
from tinyattn.compat.ops import Abs, Cast, Cos, Einsum, Flip, Repeat, Roll, Sin, Tri
from tinyattn.compat.views import Diagonal, Expand, memory_root
from tinyattn.ops import (
    Add, Cat, Contiguous, Div, Exp, GetItem, Log, MaskedFill, MatMul, Mul, Neg, Permute, PowConst, Reshape, Sqrt,
    Stack, Sub, Sum, Tanh, Where,
)

__all__ = ["complex", "conj", "imag", "is_complex", "polar", "real", "view_as_complex", "view_as_real", "angle"]

_REAL_OF = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}
_COMPLEX_OF = {r: c for c, r in _REAL_OF.items()}
_NAMES = {"f2": "Half", "f4": "Float", "f8": "Double", "i1": "Char", "i2": "Short", "i4": "Int", "i8": "Long",
          "u1": "Byte", "b1": "Bool", "c8": "ComplexFloat", "c16": "ComplexDouble"}


def _torch_name(dt: np.dtype) -> str:
    return _NAMES.get(dt.str[1:], str(dt))


def _holomorphic(op: type) -> type:
    """op's complex twin: the same forward; backward conj(op.backward(conj(g))) = g * conj(f'(z)) per input."""
    def backward(ctx, g):
        grads = op.backward(ctx, np.conj(g))
        return tuple(None if x is None else np.conj(x) for x in grads) if type(grads) is tuple else np.conj(grads)
    return type(op.__name__, (op,), {"backward": staticmethod(backward), "__doc__": op.__doc__,
                                     "__module__": __name__})


class _CastComplex(Cast):
    """a real or complex array cast to a complex dtype;  da = g, its real part when a was real"""
    @staticmethod
    def backward(ctx, g):
        return (g if ctx.in_dtype.kind == "c" else g.real).astype(ctx.in_dtype)


# Every op allowed a complex output, with the class that records it. Real-linear ops are their own twin.
TWINS: dict = {op: op for op in (Add, Sub, Neg, Sum, Reshape, Permute, GetItem, Contiguous, Cat, Stack, MaskedFill,
                                 Where, Expand, Diagonal, Flip, Roll, Repeat, Tri, Overwrite, CopySlices)}
TWINS.update({op: _holomorphic(op) for op in (Mul, Div, MatMul, Exp, Log, Sqrt, Tanh, PowConst, Sin, Cos, Einsum)})
TWINS[Cast] = _CastComplex


def complex_op(op: type) -> type:
    """The class that records ``op`` on complex arrays (``Function.apply`` asks), or the error: an op whose
    complex values and gradient tinyattn has not checked against PyTorch's convention refuses."""
    twin = TWINS.get(op)
    if twin is None:
        allowed = sorted({t.__name__ for t in TWINS} - {"Overwrite", "CopySlices", "_CastComplex"})
        raise NotImplementedError(f"{op.__name__} is not implemented for complex tensors in tinyattn (its complex "
                                  "result or gradient would be wrong). Turn the tensor real first (torch.view_as_real"
                                  f"(z), z.abs(), z.real). The ops that take complex tensors: {', '.join(allowed)}")
    return twin


# --- the ops: views between real pairs and complex numbers, and the complex-only functions --------------
class ViewAsReal(Function):
    """z (...) seen as (..., 2) real pairs, sharing memory;  dz = g[..., 0] + i g[..., 1]"""
    view = True

    @staticmethod
    def forward(ctx, z):
        ctx.dtype = z.dtype
        re = z.real  # a view: the real parts, with z's strides (in bytes)
        # (..., 2) on the same memory: the last step is one real number, from each real part to its imaginary part
        return np.lib.stride_tricks.as_strided(re, z.shape + (2,), z.strides + (re.itemsize,))

    @staticmethod
    def backward(ctx, g):
        out = np.empty(g.shape[:-1], dtype=ctx.dtype)
        out.real, out.imag = g[..., 0], g[..., 1]
        return out


class ViewAsComplex(Function):
    """x (..., 2) of real pairs seen as complex numbers (...), sharing memory;  dx = (Re g, Im g) stacked"""
    view = True

    @staticmethod
    def forward(ctx, x):
        return x.view(_COMPLEX_OF[x.dtype])[..., 0]  # (..., 1) complex -> (...)

    @staticmethod
    def backward(ctx, g):
        return np.stack([g.real, g.imag], axis=-1)


class Real(Function):
    """Re z, a view of the real parts;  dz = g + 0i"""
    view = True

    @staticmethod
    def forward(ctx, z):
        ctx.dtype = z.dtype
        return z.real

    @staticmethod
    def backward(ctx, g):
        return g.astype(ctx.dtype)


class Imag(Function):
    """Im z, a view of the imaginary parts;  dz = 0 + i g"""
    view = True

    @staticmethod
    def forward(ctx, z):
        ctx.dtype = z.dtype
        return z.imag

    @staticmethod
    def backward(ctx, g):
        out = np.zeros(g.shape, dtype=ctx.dtype)
        out.imag = g
        return out


class Conj(Function):
    """conj(z) (a copy: PyTorch's is a lazy view);  dz = conj(g)"""
    @staticmethod
    def forward(ctx, z):
        return np.conj(z)

    @staticmethod
    def backward(ctx, g):
        return np.conj(g)


class Polar(Function):
    """r e^{i theta} = r cos theta + i r sin theta;  dr = Re g cos + Im g sin, dtheta = r (Im g cos - Re g sin)"""
    @staticmethod
    def forward(ctx, r, theta):
        c, s = np.cos(theta), np.sin(theta)
        ctx.save_for_backward(r, c, s)
        out = np.empty(np.broadcast_shapes(r.shape, theta.shape), dtype=_COMPLEX_OF[r.dtype])
        out.real, out.imag = r * c, r * s
        return out

    @staticmethod
    def backward(ctx, g):
        r, c, s = ctx.saved_tensors
        dr = g.real * c + g.imag * s if ctx.needs_input_grad[0] else None
        return dr, (r * (g.imag * c - g.real * s) if ctx.needs_input_grad[1] else None)


class Complex(Function):
    """re + i im;  dre = Re g, dim = Im g"""
    @staticmethod
    def forward(ctx, re, im):
        out = np.empty(np.broadcast_shapes(re.shape, im.shape), dtype=_COMPLEX_OF[re.dtype])
        out.real, out.imag = re, im
        return out

    @staticmethod
    def backward(ctx, g):
        return np.array(g.real), np.array(g.imag)


class ComplexAbs(Function):
    """|z|;  dz = g sgn(z) = g z / |z| (0 at z = 0), as PyTorch"""
    @staticmethod
    def forward(ctx, z):
        y = np.abs(z)
        ctx.save_for_backward(z, y)
        return y

    @staticmethod
    def backward(ctx, g):
        z, y = ctx.saved_tensors
        return g * np.divide(z, y, out=np.zeros_like(z), where=y != 0)


ComplexAbs.__name__ = ComplexAbs.__qualname__ = "Abs"  # (its node prints as <AbsBackward>, as a real abs's)


class Angle(Function):
    """atan2(Im z, Re z);  dz = g i z / |z|^2 (0 at z = 0), as PyTorch; a real x: 0 or pi, dx = 0"""
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        out = np.angle(z)
        return out if z.dtype.kind == "c" else out.astype(z.dtype)  # (np.angle of float32 is float64)

    @staticmethod
    def backward(ctx, g):
        (z,) = ctx.saved_tensors
        if z.dtype.kind != "c":
            return np.zeros_like(g)
        sq = z.real * z.real + z.imag * z.imag
        return g * np.divide(1j * z, sq, out=np.zeros_like(z), where=sq != 0)


TWINS.update({op: op for op in (ViewAsReal, ViewAsComplex, Real, Imag, Conj, Polar, Complex, ComplexAbs, Angle)})


# --- the surface: PyTorch's checks and messages ---------------------------------------------------
def _tensor(x, fn: str, arg: str = "input", pos: int = 1):
    return checks.tensor_arg(x, fn, arg, pos)


def view_as_real(input):
    """The complex tensor (...) as a real view (..., 2) of (real, imaginary) pairs, sharing its memory."""
    z = _tensor(input, "view_as_real")
    if z.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return ViewAsReal.apply(z)


def _storage_offset(x: np.ndarray) -> int:
    """Where x starts in the memory it views, in elements (PyTorch's storage_offset())."""
    root = memory_root(x)
    if not isinstance(root, np.ndarray):
        return 0
    return (x.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // x.itemsize


def view_as_complex(input):
    """A real tensor (..., 2) of (real, imaginary) pairs as a complex view (...), sharing its memory. As PyTorch:
    float32 -> complex64, float64 -> complex128; the last dim has size 2 and stride 1, every other stride and
    the storage offset are even (each complex number is two adjacent reals)."""
    x = _tensor(input, "view_as_complex")
    a = x._data
    if a.dtype.kind != "f" or a.dtype == np.float16:
        extra = (" (float16 would be complex32, which NumPy has no dtype for: use float32)"
                 if a.dtype == np.float16 else "")
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {_torch_name(a.dtype)}{extra}")
    if a.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if a.shape[-1] != 2:
        raise RuntimeError(f"Tensor must have a last dimension of size 2 (got shape {tuple(a.shape)})")
    strides = [s // a.itemsize for s in a.strides]
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if _storage_offset(a) % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return ViewAsComplex.apply(x)


def _float_pair(a, b, fn: str, names: tuple):
    a, b = _tensor(a, fn, names[0], 1), _tensor(b, fn, names[1], 2)
    da, db = a._data.dtype, b._data.dtype
    if da.kind != "f" or db.kind != "f" or np.float16 in (da, db):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {_torch_name(da)} and "
                           f"{_torch_name(db)}" + (" (tinyattn: Float or Double; NumPy has no complex32)"
                                                   if np.float16 in (da, db) else ""))
    if da != db:
        raise RuntimeError(f"Expected object of scalar type {_torch_name(da)} but got scalar type {_torch_name(db)} "
                           "for second argument")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"{fn}: shapes {tuple(a.shape)} and {tuple(b.shape)} do not broadcast "
                         "(sizes must match or be 1, aligned from the right)") from None
    return a, b


def polar(abs, angle):  # noqa: A002  (PyTorch's argument names)
    """abs * e^{i angle}: complex64 from float32 (complex128 from float64), as torch.polar."""
    return Polar.apply(*_float_pair(abs, angle, "polar", ("abs", "angle")))


def complex(real, imag):  # noqa: A001
    """real + i imag: complex64 from float32 (complex128 from float64), as torch.complex."""
    return Complex.apply(*_float_pair(real, imag, "complex", ("real", "imag")))


def is_complex(input) -> bool:
    return _tensor(input, "is_complex").dtype.kind == "c"


def real(input):
    return _tensor(input, "real").real


def imag(input):
    return _tensor(input, "imag").imag


def conj(input):
    return _tensor(input, "conj").conj()


def angle(input):
    return _tensor(input, "angle").angle()


class ComplexMixin:
    """Tensor's complex methods: ``.real``/``.imag`` (views), ``conj()``, ``angle()``, ``abs()``, ``is_complex()``."""

    __slots__ = ()
    _complex_op = staticmethod(complex_op)  # (read by Function.apply for every complex output)

    @property
    def real(self):
        """The real parts, a view (a real tensor's real part is itself, as PyTorch)."""
        return Real.apply(self) if self.dtype.kind == "c" else self

    @property
    def imag(self):
        """The imaginary parts, a view; a real tensor has none (PyTorch's error)."""
        if self.dtype.kind != "c":
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
        return Imag.apply(self)

    def conj(self):
        """The complex conjugate (a real tensor: itself)."""
        return Conj.apply(self) if self.dtype.kind == "c" else self

    def angle(self):
        """The argument of each complex number; of a real number, 0 or pi."""
        if self.dtype.kind not in "fc":  # (PyTorch gives an int tensor's angle as a float)
            return Angle.apply(self.to(np.float32))
        return Angle.apply(self)

    def abs(self):
        return ComplexAbs.apply(self) if self.dtype.kind == "c" else Abs.apply(self)

    def is_complex(self) -> bool:
        return self.dtype.kind == "c"

    # Complex numbers have no order: NumPy sorts them by real part, then imaginary; PyTorch refuses, so do we.
    # (max/min along a dim and sort go through these; they compute outside the graph, so Function.apply never sees them)
    def _ordered(self, name: str):
        if self.dtype.kind == "c":
            raise RuntimeError(f"{name}(): does not support complex input (complex numbers have no order; compare "
                               ".abs() or .real)")
        return getattr(super(), name)

    def argmax(self, *args, **kwargs):
        return self._ordered("argmax")(*args, **kwargs)

    def argmin(self, *args, **kwargs):
        return self._ordered("argmin")(*args, **kwargs)

    def argsort(self, *args, **kwargs):
        return self._ordered("argsort")(*args, **kwargs)

    def _arg_extreme(self, fn, op: str, dim, keepdim: bool):  # (max/min along a dim come here, not to argmax)
        self._ordered("argmax" if fn is np.argmax else "argmin")
        return super()._arg_extreme(fn, op, dim, keepdim)

    def topk(self, *args, **kwargs):
        return self._ordered("topk")(*args, **kwargs)

    def is_conj(self) -> bool:
        """False: conj() here is computed at once, never PyTorch's lazily conjugated view."""
        return False

    def resolve_conj(self):
        return self
