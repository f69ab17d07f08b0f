"""PyTorch's indexing rules where they differ from NumPy's, and the index of ``gather``/``scatter_``."""
from __future__ import annotations

import numpy as np

from tinyattn import autograd
from tinyattn.compat.args import _norm_dim


def _index_arg(idx):
    """Unwrap Tensors used as indices (token ids, masks) into arrays. A 0-d integer tensor is read as the int it
    holds, as PyTorch reads it: ``x[torch.tensor(1)]`` is a select, a view of x (a write into it reaches x)."""
    if isinstance(idx, tuple):
        return tuple(_index_arg(i) for i in idx)
    if isinstance(idx, autograd.Tensor):
        a = idx._data
        return int(a) if a.ndim == 0 and a.dtype.kind in "iu" else a
    if isinstance(idx, list):
        arr = np.asarray(idx)
        return arr.astype(np.int64) if arr.size == 0 else arr  # x[[]] selects nothing (NumPy reads [] as float)
    return idx


def _is_int_index(i) -> bool:
    return (isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))) or \
        (isinstance(i, np.ndarray) and i.ndim == 0 and i.dtype.kind in "iu")


def _write_at(arr: np.ndarray, index, value) -> None:
    """arr[index] = value with PyTorch's indexing: an int selects first (a view), then the array indices. The
    value's leading size-1 dims are dropped first, as PyTorch's copy_to does (b[0] = a (1,) tensor, b[mask] = a
    (1, 1) tensor), where NumPy refuses them."""
    if isinstance(value, np.ndarray) and value.ndim and value.shape[0] == 1:
        value = value.reshape(value.shape[next((i for i, n in enumerate(value.shape) if n != 1), value.ndim):])
    steps = _pytorch_index_steps(index, arr.ndim)
    target = arr[steps[0]] if len(steps) == 2 else arr
    target[steps[-1]] = value


def _read_at(arr: np.ndarray, index) -> np.ndarray:
    """arr[index] with PyTorch's indexing (see _pytorch_index_steps)."""
    steps = _pytorch_index_steps(index, arr.ndim)
    return arr[steps[0]][steps[1]] if len(steps) == 2 else arr[steps[0]]


def _pytorch_index_steps(idx, ndim: int) -> tuple:
    """The index as one or two NumPy indexing steps that give PyTorch's result shape.

    PyTorch reads an int as a select: its dim goes away first, and only then are the array indices
    placed (where the first of them stood if they are adjacent, at the front if a slice, None or a
    non-empty Ellipsis separates them). NumPy counts the int as one more array index, so on shape
    (2, 3, 4) ``x[0, :, [1, 2]]`` is (2, 3) in NumPy and (3, 2) in PyTorch. When ints and arrays are
    mixed, step 1 applies the ints (and slices and None) and step 2 the arrays.
    """
    if not isinstance(idx, tuple):  # one index is never both an int and an array: a[3] 6.6 -> 5.1 us per call
        return (idx,)
    items = idx  # (the array test first: basic indexing has none, and it calls nothing; x[:, 3]'s check 3.0 -> 1.0 us)
    if not (any(isinstance(i, np.ndarray) and i.ndim for i in items) and any(_is_int_index(i) for i in items)):
        return (idx,)
    if sum(i is Ellipsis for i in items) > 1:
        return (idx,)  # NumPy's error says it
    used = sum(i.ndim if isinstance(i, np.ndarray) and i.dtype == bool else 1 for i in items
               if i is not None and i is not Ellipsis)  # the dims the index names (a bool mask names its ndim)
    expanded = []
    for i in items:
        expanded += [slice(None)] * max(ndim - used, 0) if i is Ellipsis else [i]
    n_dims = lambda i: i.ndim if isinstance(i, np.ndarray) and i.dtype == bool else 1  # noqa: E731
    first, second = [], []
    for i in expanded:
        if _is_int_index(i):
            first.append(i)  # selected away in step 1
        elif i is None or isinstance(i, slice):
            first.append(i)
            second.append(slice(None))  # the dim step 1 made (None) or cut (slice), kept whole
        else:  # an array index: step 1 keeps its dims whole
            first += [slice(None)] * n_dims(i)
            second.append(i)
    return tuple(first), tuple(second)


def _gather_where(shape: tuple, dim: int, index, op: str = "gather") -> tuple:
    """The advanced index that makes ``a[where]`` PyTorch's ``a.gather(dim, index)``.

    Every dim but ``dim`` is indexed by its own position (np.indices), ``dim`` by ``index``:
    out[i, j, k] = a[i, index[i, j, k], k] for dim=1.
    """
    idx = np.asarray(index._data if isinstance(index, autograd.Tensor) else index)
    d = _norm_dim(dim, len(shape), op)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{op}: index must hold integer positions (e.g. int64), got dtype {idx.dtype}")
    if idx.ndim != len(shape):
        raise ValueError(f"{op}: index has shape {idx.shape} but the input has shape {shape}: "
                         "both need the same number of dims")
    if any(n > m for i, (n, m) in enumerate(zip(idx.shape, shape)) if i != d):
        raise ValueError(f"{op}: index of shape {idx.shape} is larger than the input's shape {shape} "
                         f"outside dim {dim}")
    if idx.size and (idx.min() < 0 or idx.max() >= shape[d]):
        bad = int(idx.min() if idx.min() < 0 else idx.max())
        raise IndexError(f"{op}: index holds {bad}, out of range for dim {dim} of size {shape[d]} "
                         f"(valid: 0..{shape[d] - 1})")
    where = list(np.indices(idx.shape, sparse=True))  # position arrays, each broadcastable to idx.shape
    where[d] = idx
    return tuple(where)


def pytorch_index_layout(a: np.ndarray, idx, out: np.ndarray) -> np.ndarray:
    """``out`` (``a[idx]`` for an index with arrays, a new array) laid out in memory as PyTorch's result.

    PyTorch computes an index with a TensorIterator over the source (its indexed dims given stride 0)
    and the index tensors; the result's dims are ordered by those operands' strides (the first operand
    whose strides differ decides; stride 0 says nothing), fastest first, ties in the natural order. So
    ``x[:, idx]`` of a contiguous x is contiguous, and ``x.mT[idx]`` keeps the transposed layout.
    (An index this does not model gives a C-ordered result.)
    """
    items = list(idx) if isinstance(idx, tuple) else [idx]
    if any(isinstance(i, np.ndarray) and i.dtype == bool and i.ndim == 0 for i in items):
        return np.ascontiguousarray(out)
    if any(i is Ellipsis for i in items):
        at = next(j for j, i in enumerate(items) if i is Ellipsis)
        used = sum(i.ndim if isinstance(i, np.ndarray) and i.dtype == bool else 1 for i in items
                   if i is not Ellipsis and i is not None)
        items[at:at + 1] = [slice(None)] * (a.ndim - used)
    dims, index, d = [], [], 0  # dims: ("s", stride, size) per kept dim, or ("a", k) per index array
    for i in items:
        if isinstance(i, np.ndarray) and i.dtype == bool:  # a mask is its nonzero() columns: (n, ndim) rows
            n = int(i.sum())
            index += [((n,), (i.ndim,))] * i.ndim
            dims += [("a",)] * i.ndim
            d += i.ndim
        elif i is None:  # a new dim of size 1 (PyTorch's unsqueeze: the stride of the dims after it)
            dims.append(("s", a.strides[d] // a.itemsize * a.shape[d] if d < a.ndim else 1, 1))
        elif isinstance(i, np.ndarray):
            index.append((i.shape, tuple(s // i.itemsize for s in i.strides)))
            dims.append(("a",))
            d += 1
        else:
            start, stop, step = i.indices(a.shape[d])
            dims.append(("s", a.strides[d] // a.itemsize * step, len(range(start, stop, step))))
            d += 1
    dims += [("s", a.strides[j] // a.itemsize, a.shape[j]) for j in range(d, a.ndim)]
    at = [j for j, e in enumerate(dims) if e[0] == "a"]
    b = np.broadcast_shapes(*(s for s, _ in index))
    slices = [e for e in dims if e[0] == "s"]
    before = [e for e in dims[:at[0]]] if at == list(range(at[0], at[-1] + 1)) else []  # else: index dims go first
    after = slices[len(before):]
    shape = [e[2] for e in before] + list(b) + [e[2] for e in after]
    if tuple(shape) != out.shape:
        return np.ascontiguousarray(out)
    src = [e[1] for e in before] + [0] * len(b) + [e[1] for e in after]
    ops = [src]
    for s, st in index:  # each index broadcast to the result: stride 0 where it was stretched
        pad = len(b) - len(s)
        bs = [0 if k < pad or s[k - pad] == 1 and b[k] != 1 else st[k - pad] for k in range(len(b))]
        ops.append([0] * len(before) + bs + [0] * len(after))

    def should_swap(d0: int, d1: int) -> int:
        for strides in ops:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(len(shape) - 1, -1, -1))  # fastest first; TensorIterator's insertion sort
    for i in range(1, len(perm)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    outer = perm[::-1]
    want, step = [0] * len(shape), out.itemsize  # the strides of that layout, in bytes
    for p in perm:
        want[p], step = step, step * shape[p]
    if all(w == s or n <= 1 for w, s, n in zip(want, out.strides, shape)):
        return out  # NumPy laid it out so already (x[idx], an embedding): skip the copy, which cost 1.7x the
        #             lookup itself for (8, 256) ids into GPT-2's (50257, 768) table (1.3 ms + 2.2 ms, busy machine)
    res = np.empty([shape[p] for p in outer], dtype=out.dtype).transpose(np.argsort(outer))
    res[...] = out
    return res
