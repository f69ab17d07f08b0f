"""The argument rules of PyTorch's surface, in one place: dims, shapes, NumPy's names, and what becomes an array.

Every Tensor method and top-level function checks its arguments through these, so one rule has one wording.
"""
from __future__ import annotations

import functools
import inspect
import math

import numpy as np

from tinyattn import autograd, defaults


def _as_array(data, dtype=None) -> np.ndarray:
    """The dtype rules: Python floats -> the default dtype, NumPy floats keep theirs, ints stay ints."""
    if isinstance(data, autograd.Tensor):
        arr = data._data
    elif isinstance(data, (np.ndarray, np.generic)):
        arr = np.asarray(data)
    elif isinstance(data, (list, tuple)) and _holds_tensor(data):
        arr = _tensors_as_numbers(data, dtype)
    else:
        try:
            arr = np.asarray(data)
        except ValueError:  # NumPy refuses nested lists of different lengths
            raise ValueError(f"cannot make a tensor from a ragged {type(data).__name__}: "
                             "every nested list must have the same length") from None
        if arr.dtype in (np.float64, np.complex128) and dtype is None:  # Python floats: the default dtype, Python
            least = np.complex64 if arr.dtype.kind == "c" else np.float16  # complex: its complex (dtype=: read exactly)
            arr = arr.astype(np.promote_types(defaults.get_default_dtype(), least))
        elif arr.dtype.kind not in "biufc":
            got = type(data).__name__ if not isinstance(data, (list, tuple)) else f"a {type(data).__name__} holding non-numbers"
            raise TypeError(f"cannot make a tensor from {got}: expected numbers, (nested) lists of numbers, "
                            "an ndarray or a Tensor")
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    return arr


def _binary_extreme(x, other, keepdim, name: str):
    """``max(other)``/``min(other)`` with a tensor where dim goes: PyTorch's elementwise overload (maximum/minimum,
    ties splitting the gradient); a keepdim with it is PyTorch's invalid combination."""
    if keepdim is not False:
        raise TypeError(f"{name}() received an invalid combination of arguments: (Tensor other) takes no keepdim")
    return x.maximum(other) if name == "max" else x.minimum(other)


def _holds_tensor(seq) -> bool:
    """Whether a list holds tensors: any of its items, or along its first item's nesting ([[t, t], ...])."""
    while isinstance(seq, (list, tuple)) and seq:
        if any(isinstance(x, autograd.Tensor) for x in seq):
            return True
        seq = seq[0]
    return False


def _tensors_as_numbers(data, dtype) -> np.ndarray:
    """PyTorch's rule for tensors INSIDE a list (``torch.tensor([pad] * n)`` with ``pad = torch.tensor([0])``):
    each is one number, whatever its shape ((1,) -> a scalar, so [t, t] is (2,), not (2, 1)). Its dtype joins
    the Python numbers' (int -> int64, float -> the default) by type promotion. A tensor of more than one
    element is refused, as PyTorch: TypeError into an integer/bool result (it is read as an index), ValueError
    into a floating one; a floating tensor can not become an integer or bool element either (TypeError)."""
    from tinyattn import promotion

    def scalar_dtype(x):
        if isinstance(x, autograd.Tensor):
            return x._data.dtype
        if isinstance(x, (bool, np.bool_)):
            return np.dtype(np.bool_)
        if isinstance(x, (int, np.integer)):
            return np.dtype(np.int64)
        if isinstance(x, (float, np.floating)):
            return np.dtype(defaults.get_default_dtype())
        return np.promote_types(defaults.get_default_dtype(), np.complex64)

    def leaves(x):
        if isinstance(x, (list, tuple)):
            for y in x:
                yield from leaves(y)
        else:
            yield x

    target = np.dtype(dtype) if dtype is not None else None
    if target is None:
        for x in leaves(data):
            dt = scalar_dtype(x)
            target = dt if target is None else promotion.promote_types(target, dt)

    def number(x):
        if not isinstance(x, autograd.Tensor):
            return x
        if target.kind in "biu" and (x._data.size != 1 or x._data.dtype.kind not in "biu"):
            raise TypeError("only integer tensors of a single element can be converted to an index")
        if x._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return x._data.reshape(()).item()

    def rebuild(x):
        return [rebuild(y) for y in x] if isinstance(x, (list, tuple)) else number(x)

    try:
        return np.array(rebuild(data), dtype=target)
    except ValueError as e:
        if "inhomogeneous" not in str(e) and "sequence" not in str(e):
            raise
        raise ValueError(f"cannot make a tensor from a ragged {type(data).__name__}: "
                         "every nested list must have the same length") from None


def _norm_dim(dim: int, ndim: int, op: str) -> int:
    if type(dim) is int and -ndim <= dim < ndim:  # the common case first: a.transpose(0, 1) 6.8 -> 4.9 us per call
        return dim % ndim
    if not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    n = max(ndim, 1)  # a 0-d tensor takes dim 0 and -1, as in PyTorch
    if not -n <= dim < n:
        raise IndexError(f"{op}: dim={dim} is out of range for a tensor with {ndim} dims")
    return int(dim) % n


_NUMPY_NAMES = (("axis", "dim"), ("keepdims", "keepdim"))


def numpy_names(method):
    """Let a reduction take NumPy's names, as PyTorch's do: ``axis=`` for ``dim=`` and ``keepdims=`` for
    ``keepdim=`` (``x.mean(axis=1)``, ``P.sum(1, keepdims=True)``); both names at once is an error."""
    first, *after_self = list(inspect.signature(method).parameters)  # self (or input), then the rest

    @functools.wraps(method)
    def reduction(*args, **kwargs):  # (no named self: torch.sum(input=x) passes the tensor by keyword)
        rest = args if first in kwargs else args[1:]  # the positional arguments after self
        for numpy_name, name in _NUMPY_NAMES if kwargs else ():  # (no keywords, the common case: nothing to do)
            if numpy_name in kwargs:
                given = name in kwargs or name in after_self and len(rest) > after_self.index(name)
                if given:
                    value = kwargs[name] if name in kwargs else rest[after_self.index(name)]
                    raise TypeError(f"{method.__name__}() got both {name}={value!r} and "
                                    f"{numpy_name}={kwargs[numpy_name]!r}; they are one argument, pass one")
                kwargs[name] = kwargs.pop(numpy_name)
        return method(*args, **kwargs)
    return reduction


def _norm_dims(dim, ndim: int, op: str):
    if dim is None:
        return None
    if ndim == 0:  # a 0-d tensor takes dim 0 or -1 (or (), [0]) and reduces its one element
        for d in (dim if isinstance(dim, (tuple, list)) else (dim,)):
            _norm_dim(d, 0, op)
        return None
    if isinstance(dim, (tuple, list)):
        if not dim:  # dim=() means every dim, as in PyTorch
            return None
        dims = tuple(_norm_dim(d, ndim, op) for d in dim)
        if len(set(dims)) != len(dims):
            raise ValueError(f"{op}: dim={tuple(dim)} names a dim more than once (a tensor with {ndim} dims)")
        return dims
    return _norm_dim(dim, ndim, op)


def _n_reduced(shape: tuple, dim) -> int:
    """How many elements a reduction over ``dim`` (None = all, an int or a tuple of normalized dims) combines."""
    if dim is None:
        return math.prod(shape)
    return math.prod(shape[i] for i in (dim if isinstance(dim, tuple) else (dim,)))


def _var_args(dim, unbiased, correction) -> tuple:
    """var/std's (dim, correction) from PyTorch's two spellings: ``correction=`` (keyword only) or the
    older ``unbiased`` bool, which may even come first (``x.var(False)``)."""
    if isinstance(dim, bool):  # x.var(True): the bool is `unbiased`, over every dim
        if unbiased is not None:
            raise TypeError("var/std: got unbiased twice (a bool in dim's place, and unbiased=)")
        dim, unbiased = None, dim
    if unbiased is not None:
        if correction is not None:
            raise TypeError("var/std: pass correction= or unbiased=, not both")
        if not isinstance(unbiased, (bool, np.bool_)):
            raise TypeError(f"var/std: unbiased must be a bool, got {unbiased!r} (keepdim is keyword-only "
                            "after it: x.var(0, keepdim=True))")
        return dim, int(bool(unbiased))
    return dim, 1 if correction is None else correction


def _shape_arg(shape) -> tuple:
    """Accept both ``f(2, 3)`` and ``f((2, 3))``, as PyTorch does."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"a shape needs ints, got {shape}")
    return tuple(map(int, shape))  # (np.int64 -> int; map, not a generator: 0.42 -> 0.24 us per call)


def _sized(op: str, shape: tuple, size) -> tuple:
    """A factory's sizes given as ``f(2, 3)``, ``f((2, 3))`` or PyTorch's keyword ``f(size=(2, 3))`` (one way only)."""
    if size is None:
        if not shape:
            raise TypeError(f'{op}() missing 1 required positional arguments: "size"')
        return shape
    if shape:
        raise TypeError(f"{op}() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{op}(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    return (tuple(size),)


def _new_shape(shape) -> tuple:
    """The shape of a new tensor (zeros, ones, randn, rand): ints >= 0."""
    shape = _shape_arg(shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"a new tensor's shape needs sizes >= 0, got {shape}")
    return shape



def _infer_shape(shape: tuple, old: tuple, op: str) -> tuple:
    size = math.prod(old)
    if shape.count(-1) > 1:
        raise ValueError(f"{op}: only one dim can be -1, got {shape}")
    if -1 in shape:  # (no generators here: a.reshape(-1) 6.7 -> 6.0 us per call)
        rest = -math.prod(shape)  # the product of the other sizes: shape holds one -1
        if rest == 0 or size % rest:
            raise ValueError(f"{op}: cannot {op} a tensor of shape {old} ({size} elements) as {shape}")
        shape = shape[:(i := shape.index(-1))] + (size // rest,) + shape[i + 1:]
    if math.prod(shape) != size or shape and min(shape) < 0:
        raise ValueError(f"{op}: cannot {op} a tensor of shape {old} ({size} elements) "
                         f"as {shape} ({math.prod(shape)} elements)")
    return shape


def _clamp_bound(v, name: str) -> float:
    """A clamp bound: a number (or a one-element tensor), not a string or an array."""
    if isinstance(v, autograd.Tensor) and v.numel() == 1:
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float, np.number)):
        raise TypeError(f"clamp: {name} must be a number, got {type(v).__name__}")
    return v


def no_extreme(op: str, dim) -> Exception:
    """PyTorch's error for a max/min/argmax/argmin over nothing (an empty tensor, or an empty ``dim``). Its type
    is PyTorch's: amax()/amin() of an empty tensor is a RuntimeError, the rest IndexErrors."""
    if dim is None:
        return (RuntimeError if op in ("amax", "amin") else IndexError)(
            f"{op}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim "
            "with the 'dim' argument.")
    return IndexError(f"{op}(): Expected reduction dim {dim} to have non-zero size.")


def _number(v, op: str):
    """A fill value: a number, or a tensor with one element."""
    if isinstance(v, autograd.Tensor):
        if v.numel() != 1:
            raise ValueError(f"{op}: the value must be a number or a one-element tensor, got a tensor of shape {v.shape}")
        return v.item()
    if not isinstance(v, (int, float, complex, np.number, np.bool_)):
        raise TypeError(f"{op}: the value must be a number, got {type(v).__name__}")
    return v


def _array_of(x):
    """A tensor's array; a number as it is (so x32.mul_(0.5) computes in float32); anything else as an array."""
    if isinstance(x, autograd.Tensor):
        return x._data
    return x if isinstance(x, (int, float, np.number)) else np.asarray(x)


def _alpha(alpha, dtype: np.dtype):
    """add/sub's ``alpha``, checked as PyTorch's: a float alpha can not scale an integer or bool result, nor a
    bool alpha (True == 1 to Python) an integer or float one."""
    if isinstance(alpha, (bool, np.bool_)) and dtype.kind != "b":
        raise RuntimeError(f"Boolean alpha only supported for Boolean results (got alpha={alpha} for dtype {dtype}).")
    if dtype.kind in "biu" and isinstance(alpha, (float, np.floating)):
        raise RuntimeError(f"For integral input tensors, argument alpha must not be a floating point number "
                           f"(got alpha={alpha} for dtype {dtype}).")
    if dtype.kind == "b":  # PyTorch casts alpha to the result's dtype: add(True, True, alpha=-1) is True
        return bool(alpha)
    if dtype.kind == "u" and alpha < 0:  # ... and wraps it: u8 x + (-1) y is x - y mod 256 (NumPy refuses -1 in u8)
        return dtype.type(int(alpha) % (int(np.iinfo(dtype).max) + 1))
    return alpha
