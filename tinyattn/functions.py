"""The torch.* functions over tensors: ``cat``, ``stack``, ``where``, ``max``, ``sum``, ``exp``, ...

Most of them call the Tensor method of the same name, which does the work; ``cat``, ``stack`` and
``where`` take several tensors, so they check them here and call their op. This module defines
``max``, ``min``, ``sum``, ``abs``, ``pow``, ``all`` and ``any`` under PyTorch's names, so where it needs
Python's builtins of those names it writes ``builtins.any``. ``torch.sin(x)`` and ``x.sin()`` are one op: the derivative lives with the method's op.
"""
from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np

from functools import reduce

from . import checks, promotion
from .tensor import (Cat, Einsum, Function, MinMax, Stack, Tensor, Where, _as_array, _norm_dim, matmul,
                      numpy_names, promote_types, result_type)


def _t(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _tensors(seq, op: str) -> list:
    if isinstance(seq, Tensor) or not isinstance(seq, (Sequence, Iterable)):
        raise TypeError(f"{op} expects a list or tuple of tensors, got {type(seq).__name__}")
    ts = [x if isinstance(x, Tensor) else Tensor(x) for x in seq]
    if not ts:
        raise ValueError(f"{op} needs at least one tensor")
    dt = reduce(promote_types, (t.dtype for t in ts))  # float32 with int64 is float32, as in PyTorch
    return [t if t.dtype == dt else t.to(dt) for t in ts]


def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing dim; all other dims must match."""
    ts = _tensors(tensors, "cat")
    if builtins.any(t.ndim == 0 for t in ts):
        raise ValueError(f"cat: a 0-d tensor (a scalar) can not be concatenated; got shapes {[tuple(x.shape) for x in ts]} "
                         "(use stack to make a new dim)")
    d = _norm_dim(dim, ts[0].ndim, "cat")
    for t in ts[1:]:
        if t.ndim != ts[0].ndim or builtins.any(a != b for i, (a, b) in enumerate(zip(t.shape, ts[0].shape)) if i != d):
            raise ValueError(f"cat: shapes {[tuple(x.shape) for x in ts]} differ outside dim {dim}")
    return Cat.apply(*ts, dim=d)


concat = concatenate = cat  # PyTorch's other names for cat


def stack(tensors, dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dim."""
    ts = _tensors(tensors, "stack")
    if builtins.any(t.shape != ts[0].shape for t in ts):
        raise ValueError(f"stack: all tensors need the same shape, got {[tuple(x.shape) for x in ts]}")
    return Stack.apply(*ts, dim=_norm_dim(dim, ts[0].ndim + 1, "stack"))


_NOT_GIVEN = object()


def where(condition, input=_NOT_GIVEN, other=_NOT_GIVEN):  # noqa: A002  (PyTorch's keyword names)
    """Elementwise ``input if condition else other`` (condition is bool, gets no gradient). With the condition
    alone, ``where(condition)`` is ``nonzero(condition, as_tuple=True)``: one index tensor per dim."""
    a, b = input, other
    if a is _NOT_GIVEN and b is _NOT_GIVEN:
        return _t(condition).nonzero(as_tuple=True)
    if a is _NOT_GIVEN or b is _NOT_GIVEN:
        raise TypeError("where: give both input and other (where(condition, input, other)), "
                        "or neither (where(condition))")
    c = np.asarray(condition._data if isinstance(condition, Tensor) else condition)
    if c.dtype != bool:
        raise TypeError(f"where: condition must be bool, got dtype {c.dtype}")
    dt = result_type(a, b)  # PyTorch's promotion: float32 with int64 is float32, x with 0.5 keeps x's float dtype
    a, b = (x.to(dt) if isinstance(x, Tensor) else Tensor._make(np.asarray(_as_array(x), dtype=dt)) for x in (a, b))
    try:
        np.broadcast_shapes(c.shape, a.shape, b.shape)
    except ValueError:
        raise ValueError(f"where: condition {c.shape}, input {a.shape} and other {b.shape} do not broadcast") from None
    return Where.apply(a, b, cond=c)


def tril(x, diagonal: int = 0) -> Tensor:
    """Keep the lower triangle (j <= i + diagonal) of the last two dims, zero the rest."""
    return _t(x).tril(diagonal)


def triu(x, diagonal: int = 0) -> Tensor:
    """Keep the upper triangle (j >= i + diagonal) of the last two dims, zero the rest."""
    return _t(x).triu(diagonal)


def exp(x) -> Tensor: return _t(x).exp()
def log(x) -> Tensor: return _t(x).log()
def sqrt(x) -> Tensor: return _t(x).sqrt()
def tanh(x) -> Tensor: return _t(x).tanh()
def sigmoid(x) -> Tensor: return _t(x).sigmoid()
def relu(x) -> Tensor: return _t(x).relu()
def softmax(x, dim: int, dtype=None) -> Tensor: return _t(x).softmax(dim, dtype=dtype)
def log_softmax(x, dim: int, dtype=None) -> Tensor: return _t(x).log_softmax(dim, dtype=dtype)


# --- reductions and comparisons (each also takes NumPy's axis= and keepdims=) ----------------------
@numpy_names
def argmax(input, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest entry (of the flattened tensor, or along ``dim``); int64."""
    return _t(input).argmax(dim, keepdim)


@numpy_names
def mean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """sum(x) / N over ``dim`` (None = every element)."""
    return _t(input).mean(dim, keepdim, dtype=dtype)


@numpy_names
def max(input, dim: int | None = None, keepdim: bool = False, *, other=None):  # noqa: A001  (torch.max)
    """The largest entry; with ``dim``, the ``(values, indices)`` pair along it; with a tensor ``other``
    (in dim's place or by name), the elementwise maximum (as ``Tensor.max``)."""
    return _t(input).max(dim if other is None else other, keepdim)


@numpy_names
def min(input, dim: int | None = None, keepdim: bool = False, *, other=None):  # noqa: A001  (torch.min)
    """The smallest entry; with ``dim``, the ``(values, indices)`` pair along it; with a tensor ``other``
    (in dim's place or by name), the elementwise minimum (as ``Tensor.min``)."""
    return _t(input).min(dim if other is None else other, keepdim)


@numpy_names
def sum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A001  (torch.sum)
    """sum(x) over ``dim`` (None = every element)."""
    return _t(input).sum(dim, keepdim, dtype=dtype)


def histogram(input, bins=100, *, range=None, weight=None, density: bool = False):  # noqa: A002
    """Counts of input's values in ``bins`` equal bins over [min, max] (or ``range``): ``(hist, bin_edges)``,
    float tensors, as torch.histogram (``bins`` may also be a 1-D tensor of edges)."""
    x = _t(input)
    if x.dtype.kind != "f":
        raise TypeError(f"histogram expects a floating-point tensor, got dtype {x.dtype}")
    if not isinstance(bins, Tensor):
        checks.positive_int("bins", bins, "histogram")
    if range is not None and not (len(range) == 2 and range[0] < range[1]):
        raise ValueError(f"histogram: range must be (min, max) with min < max, got {range!r}")
    edges = bins.numpy() if isinstance(bins, Tensor) else bins
    w = None if weight is None else _t(weight).numpy().ravel()
    hist, edges = np.histogram(x.numpy().ravel(), bins=edges, range=range, weights=w, density=density)
    return Histogram(Tensor._make(hist.astype(x.dtype)), Tensor._make(edges.astype(x.dtype)))


class Histogram(NamedTuple):
    """What torch.histogram returns: ``hist, bin_edges = torch.histogram(x)``."""
    hist: Tensor
    bin_edges: Tensor


def allclose(input, other, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> bool:
    """True when |input - other| <= atol + rtol |other| everywhere (a Python bool, as torch.allclose)."""
    a, b = _as_array(input), _as_array(other)
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"allclose: shapes {a.shape} and {b.shape} do not broadcast") from None
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def equal(input, other) -> bool:
    """True when both tensors have the same shape and equal values (a Python bool, as torch.equal).

    Values compare after type promotion (``equal(tensor([1., 2.]), tensor([1, 2]))`` is True, as
    in PyTorch 2.13); NaN equals nothing, so a tensor holding NaN is not equal to itself."""
    checks.tensor_arg(input, "equal", "input", 1), checks.tensor_arg(other, "equal", "other", 2)
    return input.shape == other.shape and builtins.bool(np.all(input._data == other._data))


def _compare(name: str, input, other, out) -> Tensor:
    """torch.eq/ne/lt/le/gt/ge: the Tensor method of that name (a bool tensor, broadcast, no gradient);
    ``other`` may be a tensor or a number, ``out`` a bool tensor written in place."""
    checks.tensor_arg(input, name, hint=f" (a number goes second: {name}(x, 2))")
    res = getattr(input, name)(other)
    if out is None:
        return res
    checks.tensor_arg(out, name, "out")
    if out.shape != res.shape:
        raise ValueError(f"{name}(): out has shape {tuple(out.shape)}, the result has {tuple(res.shape)}")
    return out.copy_(res)


def eq(input, other, *, out=None) -> Tensor: return _compare("eq", input, other, out)
def ne(input, other, *, out=None) -> Tensor: return _compare("ne", input, other, out)
def lt(input, other, *, out=None) -> Tensor: return _compare("lt", input, other, out)
def le(input, other, *, out=None) -> Tensor: return _compare("le", input, other, out)
def gt(input, other, *, out=None) -> Tensor: return _compare("gt", input, other, out)
def ge(input, other, *, out=None) -> Tensor: return _compare("ge", input, other, out)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne  # PyTorch's other names


def einsum(equation: str, *operands) -> Tensor:
    """Sum of products named by letters, as torch.einsum: ``einsum('bhqd,bhkd->bhqk', q, k)`` is
    ``q @ k.transpose(-2, -1)``. Each operand gets one letter per dim; a letter in two operands is
    matched up, a letter left out of the output (after ``->``) is summed. ``...`` stands for the
    leading dims; without ``->`` the output is the letters used once, in alphabetical order.
    A letter of size 1 in one operand broadcasts against its size in another (and so do the ``...`` dims);
    a letter repeated in one operand takes the diagonal (``'ii->i'``; ``'ii'`` is the trace).
    The operands may also come as one list: ``einsum('ij,jk', [a, b])``."""
    if not isinstance(equation, str):
        raise TypeError(f"einsum: the first argument is the equation, a str such as 'ij,jk->ik', got {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ts = [_t(x) for x in operands]
    if not ts:
        raise ValueError("einsum needs at least one tensor")
    terms, out, sizes = _einsum_spec(equation.replace(" ", ""), [t.shape for t in ts])
    dtype = _einsum_dtype(ts, terms, out)
    ts = [t if t.dtype == dtype else t.to(dtype) for t in ts]  # (the cast's gradient comes back in t's dtype)
    for k, t in enumerate(terms):
        if len(set(t)) != len(t):  # a repeated letter: its diagonal, with the letter once
            once = "".join(dict.fromkeys(t))
            ts[k], terms[k] = _Diagonal.apply(ts[k], letters=t, once=once), once
        want = tuple(sizes[c] for c in terms[k])
        if ts[k].shape != want:  # size-1 dims stretched to the letter's size (the gradient sums back)
            ts[k] = ts[k].expand(*want)
    return Einsum.apply(*ts, spec=",".join(terms) + "->" + out)


def _einsum_dtype(ts: list, terms: list, out: str):
    """The dtype of einsum's result, by PyTorch's rule: the operands are taken left to right, two at a time;
    where the two share a letter summed out there (in neither the output nor a later operand) that step is a
    matrix product and promotes nothing (float32 with float64 is refused, as matmul), otherwise it is a
    broadcast product and promotes (``'bld,dn->bldn'`` of float64 and float32 is float64)."""
    own = []  # each operand's dtype once the letters only it has (and the output lacks) are summed out:
    for k, t in enumerate(ts):  # an int or bool sum is int64, as torch.sum's
        alone = set(terms[k]) - set(out).union(*terms[:k], *terms[k + 1:])
        own.append(np.dtype(np.int64) if alone and t._data.dtype.kind in "biu" else t._data.dtype)
    dtype, letters = own[0], set(terms[0])
    for k in range(1, len(ts)):
        later = set(out).union(*terms[k + 1:])
        if (letters & set(terms[k])) - later:
            so_far = Tensor._make(np.empty(0, dtype))  # (operands 0 .. k-1 multiplied)
            dtype = promotion.same_dtype(so_far, Tensor._make(np.empty(0, own[k])),
                                         f"einsum operands {'0' if k == 1 else f'0-{k - 1}'} and {k}")
        else:
            dtype = promotion.promote_types(dtype, own[k])
        letters = (letters | set(terms[k])) & later
    return dtype


def _einsum_spec(equation: str, shapes: list) -> tuple:
    """The operands' letters with '...' written out, the explicit output, and each letter's size
    (a size 1 broadcasts), checked against the shapes."""
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: the equation {equation!r} names {len(terms)} operand(s), but {len(shapes)} were given")
    bad = set(equation) - set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.,->")
    if bad or equation.count("->") > 1:
        raise ValueError(f"einsum: {equation!r} is not an equation; use letters, ',', '...' and one '->', got {sorted(bad)}")
    spare = [c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in equation]
    n_ellipsis = builtins.max([len(shp) - len(t.replace("...", "")) for t, shp in zip(terms, shapes) if "..." in t],
                              default=0)
    dots = "".join(spare[:n_ellipsis][::-1])  # the letters that '...' stands for, leading dims first
    written = []
    for k, (t, shp) in enumerate(zip(terms, shapes)):
        if "..." in t:
            t = t.replace("...", dots[len(dots) - (len(shp) - len(t.replace("...", ""))):] if shp else "")
        if len(t) != len(shp) or "." in t:
            raise ValueError(f"einsum: operand {k} has shape {tuple(shp)} ({len(shp)} dims) but {terms[k]!r} "
                             f"gives it {len(terms[k].replace('...', ''))} letter(s)")
        written.append(t)
    sizes: dict = {}
    for k, (t, shp) in enumerate(zip(written, shapes)):
        mine: dict = {}
        for c, n in zip(t, shp):
            if mine.setdefault(c, n) != n:  # a repeated letter is a diagonal: a square one
                raise ValueError(f"einsum: letter {c!r} is repeated in operand {k} (a diagonal), but its dims "
                                 f"have sizes {mine[c]} and {n} in shape {tuple(shp)}; they must match")
            if sizes.setdefault(c, n) != n:
                if n != 1 and sizes[c] != 1:
                    raise ValueError(f"einsum: letter {c!r} is size {sizes[c]} in one operand and {n} in operand "
                                     f"{k} (shapes {[tuple(x) for x in shapes]}); the sizes of one letter must match "
                                     "(or be 1, which broadcasts)")
                sizes[c] = builtins.max(sizes[c], n)
    if arrow:
        out = rhs.replace("...", dots)
        unknown = [c for c in out if c not in sizes]
        if unknown or len(set(out)) != len(out):
            raise ValueError(f"einsum: the output {rhs!r} must use each letter of the operands at most once, got {rhs!r}")
    else:  # implicit output: the letters used once, alphabetically, after the '...' dims
        counts = "".join(written)
        out = dots + "".join(sorted(c for c in set(counts) if counts.count(c) == 1 and c not in dots))
    return written, out, sizes


class _Diagonal(Function):
    """An operand whose letters repeat ('iij') read along its diagonal ('ij');  d(x) = g on that diagonal, 0 off it"""
    @staticmethod
    def forward(ctx, x, letters, once):
        ctx.shape, ctx.letters, ctx.once = x.shape, letters, once
        return np.einsum(f"{letters}->{once}", x).copy()  # (NumPy's einsum gives a view of the diagonal)

    @staticmethod
    def backward(ctx, g):
        grid = np.indices(g.shape, sparse=True)  # one index per kept letter
        out = np.zeros(ctx.shape, dtype=g.dtype)
        out[tuple(grid[ctx.once.index(c)] for c in ctx.letters)] = g  # every diagonal entry is a distinct place
        return out


def bmm(input, mat2) -> Tensor:
    """Batched matrix product: (B, n, m) @ (B, m, p) -> (B, n, p); no broadcasting (use matmul for that)."""
    return _t(input).bmm(mat2)


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> MinMax:
    """The k largest (or smallest) entries along ``dim``: ``(values, indices)`` (as ``Tensor.topk``)."""
    return _t(input).topk(k, dim, largest, sorted)


def sort(input, dim: int = -1, descending: bool = False, stable: bool = False) -> MinMax:
    """``(values, indices)`` sorted along ``dim`` (as ``Tensor.sort``)."""
    return _t(input).sort(dim, descending, stable)


def argsort(input, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort ``input`` along ``dim`` (as ``Tensor.argsort``)."""
    return _t(input).argsort(dim, descending, stable)


def unique(input, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
           dim: int | None = None):
    """The distinct values in increasing order, optionally with inverse and counts (as ``Tensor.unique``)."""
    return _t(input).unique(sorted, return_inverse, return_counts, dim)


@numpy_names
def all(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001  (torch.all)
    """True where every element (over ``dim``) is nonzero (as ``Tensor.all``)."""
    return _t(input).all(dim, keepdim)


@numpy_names
def any(input, dim=None, keepdim: bool = False) -> Tensor:  # noqa: A001  (torch.any)
    """True where some element (over ``dim``) is nonzero (as ``Tensor.any``)."""
    return _t(input).any(dim, keepdim)


def numel(input) -> int:
    """The number of elements (a Python int, as torch.numel)."""
    return _t(input).numel()


# --- the top-level function of every other Tensor method (torch.pow, torch.sin, torch.transpose, ...)
def abs(input) -> Tensor: return _t(input).abs()  # noqa: A001
def sin(input) -> Tensor: return _t(input).sin()
def cos(input) -> Tensor: return _t(input).cos()
def neg(input) -> Tensor: return -_t(input)
def square(input) -> Tensor: return _t(input) ** 2


def trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoid rule along ``dim``: the area under y sampled at x (or at spacing dx, default 1).

    With a spacing: (sum(y) - (y_first + y_last) / 2) dx, PyTorch's formula (so the rounding is its own).
    With x (1-D, or y's shape): sum((x[i+1] - x[i]) (y[i+1] + y[i])) / 2."""
    y = _t(y)
    if x is not None and dx is not None:
        raise TypeError("trapezoid: give x or dx, not both")
    d = _norm_dim(dim, y.ndim, "trapezoid")
    n = y.shape[d]
    if n == 0:  # no samples: zero area, as PyTorch
        return Tensor(np.zeros(y.shape[:d] + y.shape[d + 1:], dtype=y.dtype))
    if x is None:
        ends = (y.narrow(d, 0, 1) + y.narrow(d, n - 1, 1)).squeeze(d)  # y_first + y_last
        return (y.sum(d) - ends * 0.5) * (1 if dx is None else dx)
    x = _t(x)
    if x.ndim == 1:
        if x.shape[0] != n:
            raise ValueError(f"trapezoid: x has {x.shape[0]} samples but y has {n} along dim {dim}")
        steps = (x[1:] - x[:-1]).view(*[n - 1 if i == d else 1 for i in range(y.ndim)])  # (1, .., n-1, .., 1)
    else:
        steps = x.narrow(d, 1, n - 1) - x.narrow(d, 0, n - 1)
    return (steps * (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1))).sum(d) / 2


def pow(input, exponent) -> Tensor:  # noqa: A001
    """input ** exponent; either one may be a number (``torch.pow(2, x)`` is 2 ** x)."""
    if not isinstance(input, Tensor) and isinstance(exponent, Tensor):
        return exponent.__rpow__(input)
    return _t(input) ** exponent


# torch.add(x, y, alpha=2) is x + 2 * y; the names of the other operators, and the rounding ones
def add(input, other, *, alpha=1) -> Tensor: return _operand(input, other).add(other, alpha=alpha)
def sub(input, other, *, alpha=1) -> Tensor: return _operand(_no_bool_sub(input), other).sub(other, alpha=alpha)
def mul(input, other) -> Tensor: return _operand(input, other).mul(other)
def div(input, other, *, rounding_mode=None) -> Tensor: return _operand(input, other).div(other, rounding_mode=rounding_mode)
def true_divide(input, other) -> Tensor: return _operand(input, other).true_divide(other)
def floor_divide(input, other) -> Tensor: return _operand(input, other) // other
def remainder(input, other) -> Tensor: return _operand(input, other) % other
def fmod(input, other) -> Tensor: return checks.tensor_arg(input, "fmod", "input", 1).fmod(other)  # (fmod(2, x): no)
def maximum(input, other) -> Tensor: return _tensor_pair("maximum", input, other)
def minimum(input, other) -> Tensor: return _tensor_pair("minimum", input, other)
subtract, multiply, divide = sub, mul, div


def _tensor_pair(name: str, input, other) -> Tensor:
    """``input.name(other)`` for the binary functions PyTorch defines on two tensors only (maximum, logical_and,
    atan2, fmax, ...): a Python number on either side is PyTorch's TypeError, so what runs here runs there."""
    checks.tensor_arg(input, name, "input", 1), checks.tensor_arg(other, name, "other", 2)
    return getattr(input, name)(other)


def _no_bool_sub(input):
    """torch.sub(False, x): a bool first is refused as for bool tensors (promotion's rule; _operand would cast it)."""
    if isinstance(input, bool):
        raise RuntimeError(promotion._BOOL_SUB[1])
    return input


def _operand(input, other) -> Tensor:
    """``input`` as a Tensor of the pair's dtype when it is a number and ``other`` a tensor (torch.add(1, x))."""
    if not isinstance(input, Tensor) and isinstance(other, Tensor):
        return other._lift(input)
    return _t(input)


def floor(input) -> Tensor: return _t(input).floor()
def ceil(input) -> Tensor: return _t(input).ceil()
def trunc(input) -> Tensor: return _t(input).trunc()
def round(input, *, decimals: int = 0) -> Tensor: return _t(input).round(decimals=decimals)  # noqa: A001
def sign(input) -> Tensor: return _t(input).sign()
def log1p(input) -> Tensor: return _t(input).log1p()
def expm1(input) -> Tensor: return _t(input).expm1()
def rsqrt(input) -> Tensor: return _t(input).rsqrt()
def reciprocal(input) -> Tensor: return _t(input).reciprocal()
def flip(input, dims) -> Tensor: return _t(input).flip(dims)
def roll(input, shifts, dims=None) -> Tensor: return _t(input).roll(shifts, dims)
def outer(input, vec2) -> Tensor: return _t(input).outer(vec2)
def clone(input) -> Tensor: return _t(input).clone()
def detach(input) -> Tensor: return _t(input).detach()
def cosh(input) -> Tensor: return _t(input).cosh()
def sinh(input) -> Tensor: return _t(input).sinh()
def log2(input) -> Tensor: return _t(input).log2()
def logical_not(input) -> Tensor: return _t(input).logical_not()
def logical_and(input, other) -> Tensor: return _tensor_pair("logical_and", input, other)
def logical_or(input, other) -> Tensor: return _tensor_pair("logical_or", input, other)
def logical_xor(input, other) -> Tensor: return _tensor_pair("logical_xor", input, other)
def t(input) -> Tensor: return _t(input).t()
def narrow(input, dim: int, start: int, length: int) -> Tensor: return _t(input).narrow(dim, start, length)
def index_select(input, dim: int, index) -> Tensor: return _t(input).index_select(dim, index)
def swapaxes(input, axis0: int, axis1: int) -> Tensor: return _t(input).transpose(axis0, axis1)
def swapdims(input, dim0: int, dim1: int) -> Tensor: return _t(input).transpose(dim0, dim1)
def norm(input, p=2, dim=None, keepdim: bool = False) -> Tensor: return _t(input).norm(p, dim, keepdim)


def mm(input, mat2) -> Tensor:
    """The product of two matrices, (n, k) @ (k, m) -> (n, m) (only 2-D, unlike matmul)."""
    return _t(input).mm(mat2)


def dot(input, tensor) -> Tensor:
    """The inner product of two 1-D tensors of one length and dtype, a 0-d tensor (``Tensor.dot``)."""
    return _t(input).dot(tensor)


def clamp_min(input, min) -> Tensor: return _t(input).clamp(min=min)  # noqa: A002
def clamp_max(input, max) -> Tensor: return _t(input).clamp(max=max)  # noqa: A002


def clamp(input, min=None, max=None) -> Tensor:  # noqa: A002
    """input clipped to [min, max] elementwise (either bound may be None)."""
    return _t(input).clamp(min, max)


clip = clamp  # PyTorch's alias


def cumsum(input, dim: int, *, dtype=None) -> Tensor: return _t(input).cumsum(dim, dtype=dtype)
def gather(input, dim: int, index, *, sparse_grad: bool = False) -> Tensor:
    return _t(input).gather(dim, index, sparse_grad=sparse_grad)
def masked_fill(input, mask, value) -> Tensor: return _t(input).masked_fill(mask, value)


@numpy_names
def var(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """sum((x - mean)^2) / (N - correction) over ``dim`` (as ``Tensor.var``, ``unbiased`` included)."""
    return _t(input).var(dim, unbiased, keepdim=keepdim, correction=correction)


@numpy_names
def std(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """sqrt(var(...)), with var's arguments."""
    return _t(input).std(dim, unbiased, keepdim=keepdim, correction=correction)


@numpy_names
def amax(input, dim=None, keepdim: bool = False) -> Tensor: return _t(input).amax(dim, keepdim)
@numpy_names
def amin(input, dim=None, keepdim: bool = False) -> Tensor: return _t(input).amin(dim, keepdim)
@numpy_names
def argmin(input, dim=None, keepdim: bool = False) -> Tensor: return _t(input).argmin(dim, keepdim)
@numpy_names
def logsumexp(input, dim, keepdim: bool = False) -> Tensor: return _t(input).logsumexp(dim, keepdim)


def isnan(input) -> Tensor: return _t(input).isnan()
def isinf(input) -> Tensor: return _t(input).isinf()
def isfinite(input) -> Tensor: return _t(input).isfinite()
def is_tensor(obj) -> bool: return isinstance(obj, Tensor)
def is_floating_point(input) -> bool: return _t(input).is_floating_point()


# --- shape functions --------------------------------------------------------------------------
def reshape(input, shape) -> Tensor: return _t(input).reshape(shape)
def flatten(input, start_dim: int = 0, end_dim: int = -1) -> Tensor: return _t(input).flatten(start_dim, end_dim)
def transpose(input, dim0: int, dim1: int) -> Tensor: return _t(input).transpose(dim0, dim1)
def permute(input, dims) -> Tensor: return _t(input).permute(dims)
def unsqueeze(input, dim: int) -> Tensor: return _t(input).unsqueeze(dim)
def squeeze(input, dim=None) -> Tensor: return _t(input).squeeze(dim)
def split(tensor, split_size_or_sections, dim: int = 0) -> tuple: return _t(tensor).split(split_size_or_sections, dim)
def chunk(input, chunks: int, dim: int = 0) -> tuple: return _t(input).chunk(chunks, dim)
def unbind(input, dim: int = 0) -> tuple: return _t(input).unbind(dim)


def repeat_interleave(input, repeats=None, dim: int | None = None, *, output_size: int | None = None) -> Tensor:
    """Each element ``repeats`` times along ``dim`` (flattened first when dim is None); with only a tensor of
    counts, ``repeat_interleave(arange(len(counts)), counts)``: each index as often as its count."""
    if repeats is None:
        return Tensor._make(np.arange(len(_t(input)))).repeat_interleave(input)
    return _t(input).repeat_interleave(repeats, dim, output_size=output_size)


def nonzero(input, as_tuple: bool = False):
    """The indices of the nonzero entries: (N, ndim) int64, or one 1-D tensor per dim with as_tuple=True."""
    return _t(input).nonzero(as_tuple=as_tuple)


# --- the long tail the op-surface fuzzer found missing (tests/surface_fuzz.py): each is its Tensor method --
def prod(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor: return _t(input).prod(dim, keepdim, dtype=dtype)
def cumprod(input, dim: int, *, dtype=None) -> Tensor: return _t(input).cumprod(dim, dtype=dtype)
def nansum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor: return _t(input).nansum(dim, keepdim, dtype=dtype)
def count_nonzero(input, dim=None) -> Tensor: return _t(input).count_nonzero(dim)
def median(input, dim=None, keepdim: bool = False): return _t(input).median(dim, keepdim)
def kthvalue(input, k: int, dim: int = -1, keepdim: bool = False): return _t(input).kthvalue(k, dim, keepdim)
def msort(input) -> Tensor: return _t(input).sort(dim=0).values
def cummax(input, dim: int): return _t(input).cummax(dim)
def cummin(input, dim: int): return _t(input).cummin(dim)
def diff(input, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor: return _t(input).diff(n, dim, prepend, append)
def trace(input) -> Tensor: return _t(input).trace()
def bincount(input, weights=None, minlength: int = 0) -> Tensor: return _t(input).bincount(weights, minlength)
def index_add(input, dim: int, index, source, *, alpha=1) -> Tensor: return _t(input).index_add(dim, index, source, alpha=alpha)
def index_fill(input, dim: int, index, value) -> Tensor: return _t(input).index_fill(dim, index, value)
def float_power(input, exponent) -> Tensor:  # (a number first is a float64 tensor: -2 into uint8 would wrap)
    return (_t(float(input)) if isinstance(input, (int, float)) else _t(input)).float_power(exponent)
def positive(input) -> Tensor: return _t(input).positive()
def negative(input) -> Tensor: return -_t(input)
def sgn(input) -> Tensor: return _t(input).sgn()
def signbit(input) -> Tensor: return _t(input).signbit()
def frac(input) -> Tensor: return _t(input).frac()
def exp2(input) -> Tensor: return _t(input).exp2()
def tan(input) -> Tensor: return _t(input).tan()
def atan(input) -> Tensor: return _t(input).atan()
def log10(input) -> Tensor: return _t(input).log10()
def nan_to_num(input, nan: float = 0.0, posinf=None, neginf=None) -> Tensor: return _t(input).nan_to_num(nan, posinf, neginf)
def atan2(input, other) -> Tensor: return _tensor_pair("atan2", input, other)
def hypot(input, other) -> Tensor: return _tensor_pair("hypot", input, other)
def fmax(input, other) -> Tensor: return _tensor_pair("fmax", input, other)
def fmin(input, other) -> Tensor: return _tensor_pair("fmin", input, other)
def xlogy(input, other) -> Tensor: return _operand(input, other).xlogy(other)
def bitwise_and(input, other) -> Tensor: return _operand(input, other) & other
def bitwise_or(input, other) -> Tensor: return _operand(input, other) | other
def bitwise_xor(input, other) -> Tensor: return _operand(input, other) ^ other
def bitwise_not(input) -> Tensor: return _t(input).bitwise_not()


def isclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    return checks.tensor_arg(input, "isclose", "input", 1).isclose(other, rtol, atol, equal_nan)


LONG_TAIL = ["atan", "atan2", "bincount", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "count_nonzero",
             "cummax", "cummin", "cumprod", "diff", "exp2", "float_power", "fmax", "fmin", "frac", "hypot",
             "index_add", "index_fill", "isclose", "kthvalue", "log10", "median", "msort", "nan_to_num", "nansum",
             "negative", "positive", "prod", "sgn", "signbit", "tan", "trace", "xlogy"]
