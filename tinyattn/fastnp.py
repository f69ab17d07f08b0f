"""NumPy made faster where NumPy itself is slow: same numbers, less time. Nothing here teaches attention.

Residents, each with its measurement:

* ``keep_freed_memory`` (applied when this module is imported): glibc's malloc hands large freed
  blocks back to the operating system, and a training step that frees and re-allocates a few hundred
  MB of activations then pays a page fault for every 4 KiB it touches again. Keeping them halves a
  small GPT's step (see its docstring).
* ``sum_last``, ``sum_along``, ``mean_last``, ``dot_last``, ``sum_rows``: sums along the last axis (and down the
  columns of a matrix) as a product with a vector of ones, which runs on the BLAS's vectorised
  kernels, instead of NumPy's reduction loop (see ``sum_last``);
* ``max_down``, ``sum_down``: the max and the sum down the rows of a matrix (attention's blocked
  path keeps its scores keys-down, see ``nn/sdpa.py``);
* ``max_keepdims``: ``python -c "import tinyattn.fastnp as f; f.report()"`` measures it on this machine
  (on a loaded 2-core machine, float32: 3.2x faster at (4096, 16), 1.5x at (8, 4, 64, 32), 1.0x at (64, 10)).
"""
from __future__ import annotations

import math
import os
import platform

import numpy as np

# ----------------------------------------------------------------------------------------------
# Memory: keep freed blocks for the next step instead of returning them to the OS
# ----------------------------------------------------------------------------------------------
MMAP_THRESHOLD = 32 * 2**20   # blocks up to this size come from the heap (glibc's own dynamic ceiling)
TRIM_THRESHOLD = 512 * 2**20  # free memory at the heap's top is returned to the OS only beyond this


def keep_freed_memory() -> bool:
    """Tell glibc's malloc to keep up to 512 MiB of freed memory for reuse; True if it took effect.

    By default glibc serves blocks above 128 KiB-32 MiB (a threshold it adapts) with ``mmap`` and gives
    the top of its heap back to the OS once more than twice that is free. A training step allocates
    its activations in the forward and frees them all in the backward, so every step the memory
    goes back and comes again, and the kernel zero-fills each 4 KiB page on first touch: a
    4-layer, width-128, batch-8 GPT step with the GELU written out (``benchmarks/tutorial_models.py``)
    made 60 000 page faults per step and took 244 ms; with the blocks kept, 2 500 faults and 122 ms
    (one thread, same numbers bit for bit). The price is that a process keeps up to
    ``TRIM_THRESHOLD`` of freed memory mapped (PyTorch's CUDA allocator keeps it all).

    Only on Linux with glibc (elsewhere nothing changes), and not when the environment variable
    ``TINYATTN_KEEP_FREED_MEMORY=0`` is set, or when the user already tuned malloc with
    ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` / ``MALLOC_TOP_PAD_``.
    """
    if os.environ.get("TINYATTN_KEEP_FREED_MEMORY", "1") == "0":
        return False
    if any(v in os.environ for v in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_")):
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # from glibc's <malloc.h>
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


KEEPS_FREED_MEMORY = keep_freed_memory()


# ----------------------------------------------------------------------------------------------
# Reductions
# ----------------------------------------------------------------------------------------------


def max_keepdims(a: np.ndarray, axis: int) -> np.ndarray:
    """``a.max(axis, keepdims=True)``: the same numbers, several times faster when ``axis`` is last and short.

    NumPy reduces a short contiguous last axis row by row, without SIMD: for a (4096, 16) array that
    is several times slower (``report()``) than the elementwise maximum of the 16 columns of a
    transposed copy, which is what this does for last axes of up to 32 entries (softmax over a few classes, or over the keys
    of a short sequence). A maximum does not depend on the order it is taken in.
    """
    n = a.shape[axis] if a.ndim else 0
    if 1 < n <= 32 and axis in (-1, a.ndim - 1) and a.size >= 16 * n:
        cols = np.ascontiguousarray(a.reshape(-1, n).T)  # (n, rows): row i of `a` is column i here
        return cols.max(axis=0).reshape(*a.shape[:-1], 1)  # (rows,) -> (..., 1)
    return a.max(axis=axis, keepdims=True)


def max_down(a: np.ndarray) -> np.ndarray:
    """``a.max(axis=-2, keepdims=True)`` for a C-contiguous (..., n, m) array: the same numbers, in two steps.

    NumPy takes the max down the rows of an (n, m) array one row (m entries) at a time. Reading the
    array as (n/g, g*m) first, each step compares g rows at once, and the g partial maxima left are
    then compared as (g, m). A maximum does not depend on the order it is taken in. One thread,
    float32, best of 300: (1, 2048, 128) 0.081 ms -> 0.023 ms (g = 32); (8, 128, 128) 0.040 -> 0.019 ms
    (g = 8); (1, 512, 512) 0.033 -> 0.024 ms (g = 8). g: the largest power of two with g*m <= 4096
    entries and at least 16 groups, that divides n.
    """
    *lead, n, m = a.shape
    g = 1
    while 2 * g * m <= 4096 and n % (2 * g) == 0 and n // (2 * g) >= 16:
        g *= 2
    if g == 1 or not a.flags.c_contiguous:
        return a.max(axis=-2, keepdims=True)
    part = a.reshape(*lead, n // g, g * m).max(axis=-2)  # (..., g*m): the max over every g-th row group
    return part.reshape(*lead, g, m).max(axis=-2, keepdims=True)  # (..., 1, m)


def sum_down(a: np.ndarray) -> np.ndarray:
    """``a.sum(axis=-2, keepdims=True)`` of a (..., n, m) array as ``ones @ a``, a GEMV per matrix."""
    n = a.shape[-2] if a.ndim >= 2 else 0
    if not _blas_ok(a, n):
        return a.sum(axis=-2, keepdims=True)
    return np.expand_dims(_ones(n, a.dtype) @ a, -2)  # (n,) @ (..., n, m) -> (..., m) -> (..., 1, m)


_BLAS_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _ones(n: int, dtype) -> np.ndarray:
    """A read-only vector of n ones (cached: the same few sizes come back every step)."""
    key = (n, np.dtype(dtype))
    v = _ONES.get(key)
    if v is None:
        if len(_ONES) > 256:
            _ONES.clear()
        v = _ONES[key] = np.ones(n, dtype)
        v.flags.writeable = False
    return v


_ONES: dict = {}


def _blas_ok(a: np.ndarray, n: int) -> bool:
    """Whether a sum of ``a`` over a length-n axis is worth a BLAS call (float32/64, contiguous, not tiny)."""
    return a.dtype in _BLAS_FLOATS and n > 1 and a.size >= 256 and a.flags.c_contiguous


def sum_last(a: np.ndarray) -> np.ndarray:
    """``a.sum(-1, keepdims=True)``, as the matrix-vector product ``a @ ones``; the same sum, added in another order.

    NumPy reduces a contiguous last axis with a pairwise loop that is not vectorised across rows;
    OpenBLAS's GEMV is. One thread, float32, best of 7 (``measure_sums()`` reruns it):
    (8, 128, 512): 0.126 ms -> 0.039 ms; (8, 4, 128, 128): 0.180 -> 0.044 ms; (1024, 65): 0.033 -> 0.008 ms
    (SkylakeX kernel; with OPENBLAS_CORETYPE=Haswell np.sum took 0.30 and 0.44 ms for the first two, GEMV
    the same 0.04). Both differ from the exact float64 sum by about 1e-7 of the row's largest sum.
    inf, -inf and NaN propagate as in np.sum (each entry is multiplied by exactly 1).
    """
    n = a.shape[-1] if a.ndim else 0
    if not _blas_ok(a, n):
        return a.sum(axis=-1, keepdims=True)
    return (a.reshape(-1, n) @ _ones(n, a.dtype)).reshape(*a.shape[:-1], 1)  # (rows, n) @ (n,) -> (..., 1)


def sum_along(a: np.ndarray, dim, keepdims: bool = True) -> np.ndarray:
    """``a.sum(axis=dim, keepdims=keepdims)``, by ``sum_last`` when ``dim`` is the last axis (an int or a 1-tuple)."""
    d = dim[0] if isinstance(dim, tuple) and len(dim) == 1 else dim
    if not isinstance(d, (int, np.integer)) or a.ndim == 0 or d not in (-1, a.ndim - 1):
        return np.asarray(a.sum(axis=dim, keepdims=keepdims))
    out = sum_last(a)
    return out if keepdims else out.reshape(a.shape[:-1])


def mean_last(a: np.ndarray) -> np.ndarray:
    """``a.mean(-1, keepdims=True)`` by ``sum_last`` (divided by n, as np.mean does)."""
    return sum_last(a) / a.shape[-1]


def dot_last(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(a * b).sum(-1, keepdims=True)`` for same-shaped a and b, without the (a * b) temporary.

    einsum multiplies and adds in one vectorised pass: (1024, 128) float32: 0.069 ms -> 0.021 ms,
    (1024, 512): 0.168 -> 0.086 ms (one thread, best of 7).
    """
    if a.dtype not in _BLAS_FLOATS or a.shape != b.shape or a.dtype != b.dtype or a.ndim == 0:
        return (a * b).sum(axis=-1, keepdims=True)
    return np.einsum("...i,...i->...", a, b)[..., None]


def sum_rows(a: np.ndarray) -> np.ndarray:
    """``a.sum(axis=0)`` of a matrix (N, F), as ``ones @ a``: a bias's gradient, summed over the rows.

    (1024, 512) float32: 0.070 ms -> 0.036 ms; (1024, 128): 0.029 -> 0.008 ms (one thread, best of 7).
    """
    if a.ndim != 2 or not _blas_ok(a, a.shape[0]):
        return a.sum(axis=0)
    return _ones(a.shape[0], a.dtype) @ a  # (N,) @ (N, F) -> (F,)


def add_at(out: np.ndarray, idx, values: np.ndarray) -> None:
    """``np.add.at(out, idx, values)`` (an index that repeats adds each time), with one fast case: integer
    ``idx`` that picks rows of a C-ordered ``out``, as an embedding lookup's backward does (``add_rows_at``)."""
    if isinstance(idx, np.ndarray) and idx.dtype.kind in "iu" and out.flags.c_contiguous:
        add_rows_at(out, idx, values)
    else:
        np.add.at(out, idx, values)


def add_rows_at(out: np.ndarray, ids: np.ndarray, rows: np.ndarray) -> None:
    """``np.add.at(out, ids, rows)`` for integer ``ids`` that pick rows (the first axis) of a C-ordered ``out``:
    an embedding lookup's backward, where a token that appears twice adds both of its gradients.

    The same numbers bit for bit: each element of ``out`` still adds its contributions one at a time, in
    the order they come. Only the indexing changes: one flat index per element lets ``np.add.at`` take
    NumPy's fast 1-D path instead of adding a whole row per call. (8, 128) token ids into a (65, 128)
    table, float32, one thread: 1.12 ms -> 0.22 ms.
    """
    n, width = out.shape[0], math.prod(out.shape[1:])
    ids = ids.astype(np.intp, copy=False)  # (uint8 or int32 ids: no overflow, no float promotion below)
    ids = np.where(ids < 0, ids + n, ids)  # (negative ids count from the end, as in the forward's a[ids])
    flat = (ids.reshape(-1, 1) * width + np.arange(width)).reshape(-1)  # (len(ids) * width,) element indices
    np.add.at(out.reshape(-1), flat, rows.reshape(-1))


def measure_sums(shapes=((8, 128, 512), (8, 4, 128, 128), (1024, 65)), number: int = 50) -> list[tuple]:
    """(shape, np.sum ms, sum_last ms) for float32 arrays of each shape, the best of 7 rounds each."""
    import timeit

    rng = np.random.default_rng(0)
    out = []
    for shape in shapes:
        a = rng.standard_normal(shape).astype(np.float32)
        plain = min(timeit.repeat(lambda: a.sum(axis=-1, keepdims=True), number=number, repeat=7)) / number
        fast = min(timeit.repeat(lambda: sum_last(a), number=number, repeat=7)) / number
        out.append((shape, plain * 1e3, fast * 1e3))
    return out


def measure(shapes=((4096, 16), (8, 4, 64, 32), (64, 10)), number: int = 200) -> list[tuple[tuple, float, float]]:
    """(shape, plain ms, max_keepdims ms) for float32 arrays of each shape, the best of 5 rounds each."""
    import timeit

    rng = np.random.default_rng(0)
    out = []
    for shape in shapes:
        a = rng.standard_normal(shape).astype(np.float32)
        assert np.array_equal(max_keepdims(a, -1), a.max(axis=-1, keepdims=True))
        plain = min(timeit.repeat(lambda: a.max(axis=-1, keepdims=True), number=number, repeat=5)) / number
        fast = min(timeit.repeat(lambda: max_keepdims(a, -1), number=number, repeat=5)) / number
        out.append((shape, plain * 1e3, fast * 1e3))
    return out


def report() -> None:
    """Print ``measure()``'s and ``measure_sums()``'s figures."""
    for shape, plain, fast in measure():
        print(f"{str(shape):>16}  a.max(-1, keepdims=True) {plain:.4f} ms   max_keepdims {fast:.4f} ms   "
              f"{plain / fast:.1f}x")
    for shape, plain, fast in measure_sums():
        print(f"{str(shape):>16}  a.sum(-1, keepdims=True) {plain:.4f} ms   sum_last {fast:.4f} ms   "
              f"{plain / fast:.1f}x")
