"""torch.* functions that the census of public teaching code found missing (tests/data/census_names.csv),
with PyTorch 2.13's signatures: bernoulli, var_mean/std_mean, cdist, searchsorted/bucketize, diag,
cartesian_prod, erfinv, hstack/vstack/dstack/column_stack, addmm, take, ravel, unflatten, absolute,
lerp, range, hann_window and get/set_num_threads. Most are the Tensor methods of the same names
(tinyattn/compat/census_tail.py) or compositions of differentiable ops, so their gradients come from those.
"""
from __future__ import annotations

import math
import os
import warnings
from numbers import Number

import numpy as np

from . import checks
from .defaults import get_default_dtype
from .tensor import Tensor

__all__ = ["absolute", "addmm", "bernoulli", "bucketize", "cartesian_prod", "cdist", "column_stack", "diag", "dstack",
           "erfinv", "get_num_threads", "hann_window", "hstack", "lerp", "ravel", "searchsorted", "set_num_threads",
           "std_mean", "take", "unflatten", "var_mean", "vstack"]


def _t(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def bernoulli(input, p=None, *, generator=None, out=None) -> Tensor:
    """0/1 draws, 1 with probability input (elementwise) or p (a float, for every element)."""
    if out is not None:
        raise TypeError("bernoulli: out= is not supported (tinyattn returns a new tensor)")
    return _t(input).bernoulli(p, generator=generator)


def _moments(fn: str, input, dim, unbiased, keepdim, correction):
    """var_mean/std_mean's overloads: (input, dim, unbiased, keepdim), (input, unbiased), (input, dim, *, correction)."""
    x = _t(input)
    if isinstance(dim, bool):  # torch.var_mean(x, False): the second argument is unbiased
        dim, unbiased = None, dim
    spread = getattr(x, fn)(dim, unbiased, keepdim, correction=correction)
    return spread, x.mean(dim, keepdim=keepdim)


def var_mean(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple[Tensor, Tensor]:
    """(var, mean) over dim in one call (correction=1, Bessel's, unless given; unbiased=False is correction=0)."""
    return _moments("var", input, dim, unbiased, keepdim, correction)


def std_mean(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple[Tensor, Tensor]:
    """(std, mean) over dim in one call."""
    return _moments("std", input, dim, unbiased, keepdim, correction)


def cdist(x1, x2, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """||x1[..., i, :] - x2[..., j, :]||_p for every pair: (B.., P, M), (B.., R, M) -> (B.., P, R).
    compute_mode is accepted; the distances are always the direct difference's norms."""
    a, b = _t(x1), _t(x2)
    if a.ndim < 2 or b.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {a.ndim}D, X2 got: {b.ndim}D")
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {a.shape[-1]} X2: {b.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    diff = a.unsqueeze(-2) - b.unsqueeze(-3)  # (B.., P, 1, M) - (B.., 1, R, M) -> (B.., P, R, M)
    if p == 2:  # the norm's own gradient is NaN at a zero distance; PyTorch's is 0 there
        sq = (diff * diff).sum(-1)  # (B.., P, R)
        zero = Tensor(sq._data == 0)
        from .functions import where
        return where(zero, sq * 0, where(zero, sq + 1, sq).sqrt())
    return diff.norm(p, -1)  # (B.., P, R)


def searchsorted(sorted_sequence, values, *, out_int32: bool = False, right: bool = False, side: str | None = None,
                 out=None, sorter=None) -> Tensor:
    """For each value, the index where it would go into sorted_sequence's last dim to keep it sorted: before
    equal entries (side='left', right=False) or after them ('right'). A 1-D sequence serves every value;
    an (..., N) sequence pairs row by row with values (..., M)."""
    if out is not None:
        raise TypeError("searchsorted: out= is not supported (tinyattn returns a new tensor)")
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
    if side is not None and (side == "right") != bool(right) and right:
        raise RuntimeError(f"torch.searchsorted(): side and right can't be set to opposites, got side of {side} "
                           f"while right was {right}")
    side = side or ("right" if right else "left")
    seq = _t(sorted_sequence)._data
    scalar = isinstance(values, Number)
    vals = np.asarray(values) if scalar else _t(values)._data
    order = None if sorter is None else _t(sorter)._data
    if seq.ndim == 1:
        if order is not None:
            seq = seq[order]
        idx = np.searchsorted(seq, vals, side=side)
    else:
        if scalar or seq.shape[:-1] != vals.shape[:-1]:
            raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                               "dimensions of boundaries tensor and input value tensor must match, but we got "
                               f"boundaries tensor {list(seq.shape)} and input value tensor {list(vals.shape)}")
        rows, vrows = seq.reshape(-1, seq.shape[-1]), vals.reshape(-1, vals.shape[-1])  # (R, N), (R, M)
        if order is not None:
            rows = np.take_along_axis(rows, order.reshape(rows.shape), -1)
        idx = np.stack([np.searchsorted(r, v, side=side) for r, v in zip(rows, vrows)]).reshape(vals.shape)
    return Tensor(np.asarray(idx, dtype=np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False, out=None) -> Tensor:
    """The bucket of each input among 1-D sorted boundaries: i with boundaries[i-1] < x <= boundaries[i]
    (right=False), or boundaries[i-1] <= x < boundaries[i] (right=True)."""
    b = _t(boundaries)
    if b.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b.ndim})")
    return searchsorted(b, input, out_int32=out_int32, right=right, out=out)


def diag(input, diagonal: int = 0, *, out=None) -> Tensor:
    """1-D -> a square matrix with input on diagonal ``diagonal``; 2-D -> that diagonal (torch.diag)."""
    return _t(input).diag(diagonal)


def cartesian_prod(*tensors) -> Tensor:
    """Every combination of one entry from each 1-D tensor, in order: (n1 * n2 * ..., k), or the one tensor."""
    ts = [_t(x) for x in tensors]
    if any(x.ndim != 1 for x in ts):
        raise RuntimeError("Expect a 1D vector, but got shape " + str([list(x.shape) for x in ts if x.ndim != 1][0]))
    if len(ts) == 1:
        return ts[0]
    from .factories import meshgrid
    from .functions import stack
    grids = meshgrid(*ts, indexing="ij")  # k grids of shape (n1, ..., nk)
    return stack([g.reshape(-1) for g in grids], 1)  # (n1 * ... * nk, k)


def erfinv(input, *, out=None) -> Tensor:
    return _t(input).erfinv()


def _stacked(tensors, fn: str, min_dims: int) -> list[Tensor]:
    """NumPy's atleast_1d/2d/3d on each input: () -> (1,) / (1, 1) / (1, 1, 1), (n,) -> (1, n) / (1, n, 1),
    (m, n) -> (m, n, 1) for 3."""
    ts = [_t(x) for x in tensors]
    if not ts:
        raise RuntimeError(f"{fn} expects a non-empty TensorList")
    out = []
    for x in ts:
        if x.ndim < min_dims:
            x = x.reshape(1) if min_dims == 1 else x.reshape(1, -1) if min_dims == 2 else \
                x.reshape(1, -1, 1) if x.ndim < 2 else x.unsqueeze(-1)
        out.append(x)
    return out


def hstack(tensors, *, out=None) -> Tensor:
    """Concatenate along dim 1 (dim 0 when every input is 1-D); 0-d inputs count as 1-D."""
    from .functions import cat
    ts = _stacked(tensors, "hstack", 1)
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors, *, out=None) -> Tensor:
    """Concatenate along dim 0 after making every input at least 2-D ((n,) -> (1, n))."""
    from .functions import cat
    return cat(_stacked(tensors, "vstack", 2), 0)


def dstack(tensors, *, out=None) -> Tensor:
    """Concatenate along dim 2 after making every input at least 3-D ((n,) -> (1, n, 1), (m, n) -> (m, n, 1))."""
    from .functions import cat
    return cat(_stacked(tensors, "dstack", 3), 2)


def column_stack(tensors, *, out=None) -> Tensor:
    """0-d and 1-D inputs become columns (n, 1); then concatenate along dim 1."""
    from .functions import cat
    return cat([x.reshape(-1, 1) if x.ndim < 2 else x for x in (_t(t) for t in tensors)], 1)


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None) -> Tensor:
    """beta input + alpha (mat1 @ mat2): (n, k) @ (k, m) -> (n, m), input broadcast to (n, m)."""
    return _t(input).addmm(mat1, mat2, beta=beta, alpha=alpha)


def take(input, index) -> Tensor:
    return _t(input).take(index)


def ravel(input) -> Tensor:
    return _t(input).ravel()


def unflatten(input, dim: int, sizes) -> Tensor:
    return _t(input).unflatten(dim, sizes)


def absolute(input, *, out=None) -> Tensor:
    return _t(input).abs()


def lerp(input, end, weight, *, out=None) -> Tensor:
    """input + weight (end - input), exact at weight 0 and 1 (Tensor.lerp)."""
    return _t(input).lerp(end, weight)


def range_inclusive(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
                    requires_grad: bool = False) -> Tensor:
    """start, start + step, ..., up to and INCLUDING end (PyTorch's deprecated torch.range; it warns as
    PyTorch does). The dtype is the default float dtype unless given, even for int arguments. Exported as
    ``tinyattn.range``; named otherwise here so that this module keeps the builtin range."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    checks.device(device)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    n = math.floor((end - start) / step) + 1
    if n < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    vals = start + step * np.arange(max(n, 0), dtype=np.float64)
    return Tensor(vals.astype(np.dtype(dtype or get_default_dtype())), requires_grad=requires_grad)


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                requires_grad: bool = False) -> Tensor:
    """0.5 - 0.5 cos(2 pi n / N), n < window_length, N = window_length (periodic) or window_length - 1."""
    checks.device(device)
    L = checks.nonneg_int("window_length", window_length, "hann_window")
    if L <= 1:
        vals = np.ones(L)
    else:
        N = L if periodic else L - 1
        vals = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(L) / N)
    return Tensor(vals.astype(np.dtype(dtype or get_default_dtype())), requires_grad=requires_grad)


_threads = [os.cpu_count() or 1]


def get_num_threads() -> int:
    """The intra-op thread count last set (the number of CPUs until then); NumPy's BLAS picks its own."""
    return _threads[0]


def set_num_threads(int: int) -> None:  # noqa: A002  (PyTorch's parameter name)
    """Remembered for get_num_threads; tinyattn runs in NumPy, whose BLAS threads are set by its environment."""
    _threads[0] = checks.positive_int("int", int, "set_num_threads")


# --- the torch.* forms of the Tensor methods in compat/census_tail.py, and shape helpers ----------------
def addcmul(input, tensor1, tensor2, *, value=1, out=None) -> Tensor:
    return _t(input).addcmul(tensor1, tensor2, value=value)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None) -> Tensor:
    return _t(input).addcdiv(tensor1, tensor2, value=value)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None) -> Tensor:
    return _t(input).baddbmm(batch1, batch2, beta=beta, alpha=alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None) -> Tensor:
    return _t(input).addbmm(batch1, batch2, beta=beta, alpha=alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None) -> Tensor:
    return _t(input).addmv(mat, vec, beta=beta, alpha=alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None) -> Tensor:
    return _t(input).addr(vec1, vec2, beta=beta, alpha=alpha)


def mv(input, vec, *, out=None) -> Tensor:
    return _t(input).mv(vec)


def vdot(input, other, *, out=None) -> Tensor:
    return _t(input).vdot(other)


def inner(input, other, *, out=None) -> Tensor:
    return _t(input).inner(other)


def dist(input, other, p=2) -> Tensor:
    return _t(input).dist(other, p)


def kron(input, other, *, out=None) -> Tensor:
    return _t(input).kron(_t(other))


def logit(input, eps=None, *, out=None) -> Tensor:
    return _t(input).logit(eps)


def fliplr(input) -> Tensor:
    return _t(input).fliplr()


def flipud(input) -> Tensor:
    return _t(input).flipud()


def movedim(input, source, destination) -> Tensor:
    return _t(input).movedim(source, destination)


moveaxis = movedim


def tile(input, dims) -> Tensor:
    return _t(input).tile(dims)


def take_along_dim(input, indices, dim=None, *, out=None) -> Tensor:
    return _t(input).take_along_dim(indices, dim)


def argwhere(input) -> Tensor:
    return _t(input).argwhere()


def tensor_split(input, indices_or_sections, dim: int = 0) -> tuple:
    return _t(input).tensor_split(indices_or_sections, dim)


def hsplit(input, sections) -> tuple:
    return _t(input).hsplit(sections)


def vsplit(input, sections) -> tuple:
    return _t(input).vsplit(sections)


def nanmean(input, dim=None, keepdim: bool = False, *, dtype=None, out=None) -> Tensor:
    return _t(input).nanmean(dim, keepdim, dtype=dtype)


def masked_select(input, mask, *, out=None) -> Tensor:
    return _t(input).masked_select(mask)


def scatter(input, dim: int, index, src=None, value=None, *, reduce=None) -> Tensor:
    return _t(input).scatter(dim, index, value if src is None else src, reduce=reduce)


def scatter_reduce(input, dim: int, index, src, reduce: str, *, include_self: bool = True) -> Tensor:
    return _t(input).scatter_reduce(dim, index, src, reduce, include_self=include_self)


def scatter_add(input, dim: int, index, src) -> Tensor:
    return _t(input).scatter_add(dim, index, src)


def broadcast_to(input, size) -> Tensor:
    return _t(input).expand(*size)


def broadcast_tensors(*tensors) -> tuple:
    """Every tensor expanded (a view) to the one shape they broadcast to."""
    ts = [_t(x) for x in tensors]
    shape = np.broadcast_shapes(*(x.shape for x in ts))
    return tuple(x.expand(*shape) for x in ts)


def _atleast(n: int, tensors):
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = _stacked(ts, f"atleast_{n}d", n)
    return out[0] if len(tensors) == 1 and not isinstance(tensors[0], (list, tuple)) else tuple(out)


def atleast_1d(*tensors):
    return _atleast(1, tensors)


def atleast_2d(*tensors):
    return _atleast(2, tensors)


def atleast_3d(*tensors):
    return _atleast(3, tensors)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """True where an entry of elements is among test_elements (False with invert=True)."""
    a = _t(elements)._data
    b = _t(test_elements)._data if isinstance(test_elements, Tensor) or np.ndim(test_elements) else test_elements
    return Tensor(np.isin(a, b, invert=invert))


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, layout=None, device=None,
             requires_grad: bool = False, out=None) -> Tensor:
    """base ** linspace(start, end, steps): steps points evenly spaced on a log scale."""
    checks.device(device)
    steps = checks.nonneg_int("steps", steps, "logspace")
    vals = float(base) ** np.linspace(float(start), float(end), steps)
    return Tensor(vals.astype(np.dtype(dtype or get_default_dtype())), requires_grad=requires_grad)


def diagonal(input, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return _t(input).diagonal(offset, dim1, dim2)


def diag_embed(input, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """(..., n) -> (..., m, m), m = n + |offset|, input on diagonal ``offset`` of the last two dims (or of
    dim1, dim2 of the result). Written into zeros (diagonal_scatter), not multiplied by a one-hot: an inf on
    the diagonal leaves 0 off it, not NaN."""
    from .compat.args import _norm_dim
    x = _t(input)
    m = x.shape[-1] + abs(offset)
    out = Tensor(np.zeros(x.shape[:-1] + (m, m), dtype=x.dtype)).diagonal_scatter(x, offset, -2, -1)
    nd = out.ndim
    d1, d2 = _norm_dim(dim1, nd, "diag_embed"), _norm_dim(dim2, nd, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return out if (d1, d2) == (nd - 2, nd - 1) else out.movedim((nd - 2, nd - 1), (d1, d2))


def block_diag(*tensors) -> Tensor:
    """The 0-, 1- or 2-D inputs (a scalar is (1, 1), a vector (1, n)) on the diagonal of one 2-D tensor."""
    from .functions import cat
    from .promotion import result_type
    ts = [x.reshape(1, -1) if x.ndim < 2 else x for x in (_t(t) for t in tensors)]
    if any(x.ndim > 2 for x in ts):
        raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions.")
    dt = result_type(*ts) if ts else np.dtype(get_default_dtype())
    total = sum(x.shape[1] for x in ts)
    rows, left = [], 0
    for x in ts:
        r, c = x.shape
        rows.append(cat([Tensor(np.zeros((r, left), dt)), x.to(dt), Tensor(np.zeros((r, total - left - c), dt))], 1))
        left += c
    return cat(rows, 0) if rows else Tensor(np.zeros((1, 0), dt))


def tensordot(a, b, dims=2, out=None) -> Tensor:
    """Contract dims of a with dims of b: an int n (a's last n with b's first n) or two lists of dims."""
    a, b = _t(a), _t(b)
    if isinstance(dims, (int, np.integer)):
        da, db = list(range(a.ndim - int(dims), a.ndim)), list(range(int(dims)))
    else:
        da, db = ([d] if isinstance(d, (int, np.integer)) else list(d) for d in dims)
    da, db = [d % a.ndim for d in da], [d % b.ndim for d in db]
    keep_a = [d for d in range(a.ndim) if d not in da]
    keep_b = [d for d in range(b.ndim) if d not in db]
    k = math.prod(a.shape[d] for d in da)
    left = a.permute(*keep_a, *da).reshape(-1, k)  # (prod kept of a, k)
    right = b.permute(*db, *keep_b).reshape(k, -1)  # (k, prod kept of b)
    return (left @ right).reshape(*[a.shape[d] for d in keep_a], *[b.shape[d] for d in keep_b])


def cosine_similarity(x1, x2, dim: int = 1, eps: float = 1e-8) -> Tensor:
    from .nn.more_losses import cosine_similarity as cs  # (nn builds on this module's layer)
    return cs(x1, x2, dim, eps)


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    from .nn.more_losses import pairwise_distance as pd
    return pd(x1, x2, p, eps, keepdim)


def is_nonzero(input) -> bool:
    x = _t(input)
    if x.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if x.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(x._data.reshape(-1)[0] != 0)


_deterministic = [False]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Remembered for are_deterministic_algorithms_enabled; every tinyattn op is deterministic already."""
    _deterministic[0] = bool(mode)


def are_deterministic_algorithms_enabled() -> bool:
    return _deterministic[0]


__all__ += ["addbmm", "addcdiv", "addcmul", "addmv", "addr", "are_deterministic_algorithms_enabled", "argwhere",
            "atleast_1d", "atleast_2d", "atleast_3d", "baddbmm", "block_diag", "broadcast_tensors", "broadcast_to",
            "cosine_similarity", "diag_embed", "diagonal", "dist", "fliplr", "flipud", "hsplit", "inner", "is_nonzero",
            "isin", "kron", "logit", "logspace", "masked_select", "moveaxis", "movedim", "mv", "nanmean",
            "pairwise_distance", "scatter", "scatter_add", "scatter_reduce", "take_along_dim", "tensor_split", "tensordot", "tile",
            "use_deterministic_algorithms", "vdot", "vsplit"]



# order statistics, scans and masked writes (their Tensor methods: compat/statistics.py, compat/scans_and_writes.py)
def quantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear", out=None) -> Tensor:  # noqa: A002
    if out is not None:
        raise TypeError("quantile: out= is not supported (tinyattn returns a new tensor)")
    return _t(input).quantile(q, dim, keepdim, interpolation=interpolation)


def nanquantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear", out=None) -> Tensor:  # noqa: A002
    if out is not None:
        raise TypeError("nanquantile: out= is not supported (tinyattn returns a new tensor)")
    return _t(input).nanquantile(q, dim, keepdim, interpolation=interpolation)


def nanmedian(input, dim=None, keepdim: bool = False): return _t(input).nanmedian(dim, keepdim)  # noqa: A002,E704
def mode(input, dim: int = -1, keepdim: bool = False): return _t(input).mode(dim, keepdim)  # noqa: A002,E704
def logcumsumexp(input, dim: int) -> Tensor: return _t(input).logcumsumexp(dim)  # noqa: A002,E704
def rot90(input, k: int = 1, dims=(0, 1)) -> Tensor: return _t(input).rot90(k, dims)  # noqa: A002,E704
def masked_scatter(input, mask, source) -> Tensor: return _t(input).masked_scatter(mask, source)  # noqa: A002,E704


def nan_to_num_(input, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:  # noqa: A002
    return input.nan_to_num_(nan, posinf, neginf)
def renorm(input, p: float, dim: int, maxnorm: float) -> Tensor: return _t(input).renorm(p, dim, maxnorm)  # noqa: A002,E704
def histc(input, bins: int = 100, min: float = 0, max: float = 0) -> Tensor: return _t(input).histc(bins, min, max)  # noqa: A002,E704


def unique_consecutive(input, return_inverse: bool = False, return_counts: bool = False, dim=None):  # noqa: A002
    return _t(input).unique_consecutive(return_inverse, return_counts, dim)


def combinations(input, r: int = 2, with_replacement: bool = False) -> Tensor:  # noqa: A002
    """Every r-element combination of a 1-D tensor's entries, one per row: (n choose r, r), in
    itertools.combinations' order (with_replacement: combinations_with_replacement's)."""
    import itertools
    x = _t(input)
    if not isinstance(r, int) or isinstance(r, bool):
        raise TypeError(f"combinations(): argument 'r' must be int, not {type(r).__name__}")
    if x.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return Tensor(np.zeros(0, dtype=x._data.dtype))
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = np.array(list(pick(range(x.shape[0]), r)), dtype=np.int64).reshape(-1, r)  # (count, r)
    return x[Tensor(rows)]  # (count, r): an indexed read, so the gradient adds up at each entry


def trapz(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """PyTorch's older name for trapezoid (x a tensor of sample points; a spacing is dx=)."""
    if x is not None and not isinstance(x, Tensor):
        raise TypeError(f"trapz(): x must be a tensor of sample points (a spacing goes in dx=), got {type(x).__name__}")
    from .functions import trapezoid
    return trapezoid(y, x, dx=dx, dim=dim)


# out-of-place writes and number parts (their Tensor methods: compat/scatters_more.py)
def select_scatter(input, src, dim: int, index: int) -> Tensor: return _t(input).select_scatter(src, dim, index)  # noqa: A002,E501,E704
def diagonal_scatter(input, src, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:  # noqa: A002
    return _t(input).diagonal_scatter(src, offset, dim1, dim2)


def slice_scatter(input, src, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:  # noqa: A002
    return _t(input).slice_scatter(src, dim, start, end, step)


def frexp(input): return _t(input).frexp()  # noqa: A002,E704
def ldexp(input, other) -> Tensor: return _t(input).ldexp(other)  # noqa: A002,E704
def gcd(input, other) -> Tensor: return _t(input).gcd(other)  # noqa: A002,E704
def lcm(input, other) -> Tensor: return _t(input).lcm(other)  # noqa: A002,E704


def vander(x, N=None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix: column j is x ** (N - 1 - j) (x ** j if increasing), N = len(x) unless given;
    integers and bools give int64. Built by repeated products, so the gradient holds at x = 0."""
    x = _t(x)
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if x._data.dtype.kind in "biu":
        x = x.to(np.int64)
    if n == 0:
        return Tensor(np.zeros((x.shape[0], 0), dtype=x._data.dtype))
    cols = [Tensor(np.ones(x.shape, dtype=x._data.dtype))]
    for _ in range(n - 1):
        cols.append(cols[-1] * x)  # x^j = x^(j-1) x
    from .functions import stack
    out = stack(cols, dim=1)  # (len(x), N): increasing powers
    return out if increasing else out.flip(1)


def chain_matmul(*matrices) -> Tensor:
    """matrices[0] @ matrices[1] @ ... (deprecated in PyTorch for torch.linalg.multi_dot, as it warns)."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                  "parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if not isinstance(m, Tensor):
            raise TypeError(f"expected Tensor as element 0 in argument 0, but got {type(m).__name__}")
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return matrices[0].clone()
    for i, (a, b) in enumerate(zip(matrices, matrices[1:])):
        if a.dtype != b.dtype:
            from .promotion import _TORCH_NAME, _key
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{_TORCH_NAME[_key(matrices[0]._data.dtype)].lower()} and tensor {i + 1} "
                               f"{_TORCH_NAME[_key(b._data.dtype)].lower()}")
        if a.shape[1] != b.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(a.shape)} and "
                               f"{list(b.shape)} cannot be multiplied")
    out = matrices[0]
    for m in matrices[1:]:
        out = out @ m  # (rows of the first, cols of this)
    return out


def put(input, index, source, accumulate: bool = False) -> Tensor:  # noqa: A002
    return _t(input).put(index, source, accumulate)


def index_put(input, indices, values, accumulate: bool = False) -> Tensor:  # noqa: A002
    return _t(input).index_put(indices, values, accumulate)


def index_reduce(input, dim: int, index, source, reduce: str, *, include_self: bool = True) -> Tensor:  # noqa: A002
    return _t(input).index_reduce(dim, index, source, reduce, include_self=include_self)


def as_strided(input, size, stride, storage_offset=None) -> Tensor:  # noqa: A002
    return _t(input).as_strided(size, stride, storage_offset)
