"""Which dtype an op computes in: PyTorch's type promotion, in one place every op reads.

``promote_types(a, b)`` joins two dtypes; ``result_type(*operands)`` is the dtype of an op on tensors and
Python numbers, with PyTorch's categories (bool < int < float) deciding when a 0-d tensor or a number counts.
"""
from __future__ import annotations

import numpy as np

from tinyattn import autograd, defaults
from tinyattn.compat.args import _as_array


def promote_types(a, b) -> np.dtype:
    """PyTorch's promotion of two dtypes: NumPy's, except that an int or bool with a float gives that
    float (NumPy widens int64 with float32 to float64; PyTorch keeps float32)."""
    a, b = np.dtype(a), np.dtype(b)
    if (a.kind in "fc") != (b.kind in "fc"):  # (and an int or bool with a complex gives that complex)
        return a if a.kind in "fc" else b
    return np.promote_types(a, b)


def _combine(higher, lower):
    """Join two promotion groups (PyTorch's rule): ``lower`` counts only if it is of a higher category
    (bool < int < float) than ``higher``."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    if higher.kind in "fc":  # (bool < int < float < complex; a float with a complex: the complex of the float's width)
        return higher if lower.kind != "c" or higher.kind == "c" else np.promote_types(higher, np.complex64)
    if higher.kind == "b" or lower.kind in "fc":
        return promote_types(higher, lower)
    return higher


def result_type(*operands) -> np.dtype:
    """The dtype PyTorch gives an op on these tensors and Python numbers.

    Tensors with dims decide among themselves. A 0-d tensor, then a Python number, counts only when it
    is of a higher category (bool < int < float) than all of those: float32 + a 0-d float64 tensor is
    float32, int32 + 1 is int32, but int32 + 0.5 is the default float dtype and a bool tensor + 1 is int64.
    """
    dims = zero = wrapped = None
    for x in operands:
        if isinstance(x, autograd.Tensor):
            dt = x._data.dtype
            if x._data.ndim:
                dims = dt if dims is None else promote_types(dims, dt)
            else:
                zero = dt if zero is None else promote_types(zero, dt)
        else:
            if isinstance(x, bool):
                dt = np.dtype(bool)
            elif isinstance(x, int):
                dt = np.dtype(np.int64)
            elif isinstance(x, float):
                dt = np.dtype(defaults.get_default_dtype())
            elif isinstance(x, complex):  # 1j: the complex of the default dtype (complex64), as PyTorch
                dt = np.promote_types(defaults.get_default_dtype(), np.complex64)
            else:  # an array, a NumPy scalar, a list: it becomes a tensor and counts as one
                arr = _as_array(x)
                if arr.ndim:
                    dims = arr.dtype if dims is None else promote_types(dims, arr.dtype)
                else:
                    zero = arr.dtype if zero is None else promote_types(zero, arr.dtype)
                continue
            wrapped = dt if wrapped is None else promote_types(wrapped, dt)
    return _combine(dims, _combine(zero, wrapped))


# ----------------------------------------------------------------------------------------------
# The op table: which dtype each op computes in, and where PyTorch has no kernel for it
# ----------------------------------------------------------------------------------------------
# PyTorch names a dtype in its errors by its C++ scalar type.
_TORCH_NAME = {"b": "Bool", "u1": "Byte", "i1": "Char", "i2": "Short", "i4": "Int", "i8": "Long", "f2": "Half",
               "f4": "Float", "f8": "Double", "c8": "ComplexFloat", "c16": "ComplexDouble"}

_BOOL_SUB = {  # PyTorch refuses - on bools: a bool is a mask, and its "difference" is ^ or ~
    2: "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
       "operator instead.",
    1: "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
       "use the `~` or `logical_not()` operator instead.",
}
NEG_BOOL = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
            "use the `~` or `logical_not()` operator instead.")

# op -> (the kernel's name in PyTorch's error, the dtype kinds it has a kernel for, what an int pair computes in).
# The op's name is its Function's (the class the dispatch applies) or, outside the graph, torch's own.
OPS = {
    "Add": (None, "biufc", None),
    "Sub": (None, "iufc", None),  # (bool is refused above, with its own words)
    "Mul": (None, "biufc", None),
    "Div": (None, "biufc", "default float"),  # int / int divides as floats, as PyTorch's true division
    "Pow": ("pow", "iuf", None),  # bool ** a Python bool is the one bool pow PyTorch computes
    "RoundedDiv": ("div_floor_cpu", "iuf", None),  # (trunc mode shares the rule)
    "Remainder": ("remainder_cpu", "iuf", None),
    "Maximum": (None, "biuf", None),
    "bitwise_and": ("bitwise_and_cpu", "biu", None),
    "bitwise_or": ("bitwise_or_cpu", "biu", None),
    "bitwise_xor": ("bitwise_xor_cpu", "biu", None),
    "compare": ("lt/le/gt/ge", "biuf", None),  # <, ...: both sides in the promoted dtype: u8 < -1 compares with 255
    "equal": (None, "biufc", None),  # == and !=, which complex numbers have too
    "Atan2": (None, "biuf", "default float"),  # (compat/longtail.py's binary ops from here on)
    "Hypot": ("hypot_cpu", "f", None),
    "Fmax": (None, "biuf", None),  # (fmin too)
    "Xlogy": (None, "biuf", "default float"),
    "Xlog1py": (None, "biuf", "default float"),
    "Copysign": (None, "biuf", "default float"),  # (compat/bits_and_signs.py's from here on)
    "Logaddexp": ("logaddexp_cpu", "f", None),
    "Logaddexp2": ("logaddexp2_cpu", "f", None),
    "Nextafter": ("nextafter_cpu", "f", None),
    "lshift": ("lshift_cpu", "iu", None),
    "rshift": ("rshift_cpu", "iu", None),
}


def _is_bool(x) -> bool:
    return isinstance(x, bool) or (isinstance(x, autograd.Tensor) and x._data.dtype == np.bool_)


def op_dtype(op: str, a, b) -> np.dtype:
    """The dtype ``a op b`` computes in, or PyTorch's error where it has none. ``a`` and ``b`` are tensors or
    Python numbers, in the op's order (``2 - x`` is ``op_dtype("Sub", 2, x)``)."""
    dt = result_type(a, b)
    if op == "Sub" and (_is_bool(a) or _is_bool(b)):
        raise RuntimeError(_BOOL_SUB[_is_bool(a) + _is_bool(b)])
    kernel, kinds, int_pair = OPS[op]
    if op == "Pow" and dt.kind in "biu" and isinstance(b, int) and not isinstance(b, bool):
        if b < 0:  # an int tensor to a negative Python int: no integer answer (a tensor exponent computes)
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        if dt.kind != "b" and b > np.iinfo(dt).max:
            raise RuntimeError(f"value cannot be converted to type {dt.name}_t without overflow")
    if dt.kind == "b" and op == "Pow" and isinstance(b, bool):
        return dt  # x ** True is x, x ** False is all True
    if dt.kind not in kinds:
        _shapes_first(op, a, b)
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_TORCH_NAME[_key(dt)]}\'')
    if int_pair == "default float" and dt.kind in "biu":
        return np.dtype(defaults.get_default_dtype())
    return dt


def _shapes_first(op: str, a, b) -> None:
    """Shapes that do not broadcast are the error to report before a missing kernel, as PyTorch reports them
    (float | float of shapes (3,) and (4,) is a shape error first)."""
    shapes = [x.shape for x in (a, b) if isinstance(x, autograd.Tensor)]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"{op.lower()}: shapes {shapes[0]} and {shapes[1]} do not broadcast (sizes must match or be 1, "
                         "aligned from the right)") from None


def number_as(x, dt: np.dtype) -> np.ndarray:
    """A Python number as a 0-d array of ``dt``, wrapping round as PyTorch does: uint8 - 1 counts -1 as 255."""
    if isinstance(x, int) and dt.kind in "iu" and not isinstance(x, bool):
        info = np.iinfo(dt)
        x = (x - int(info.min)) % (int(info.max) - int(info.min) + 1) + int(info.min)  # two's complement wrap
    return np.asarray(x, dtype=dt)


def scalar_dtype(op: str, dt: np.dtype, first: bool = False) -> np.dtype:
    """The dtype a binary op of dtype ``dt`` reads a Python number or a 0-d tensor in: ``dt``, except where PyTorch's
    float16 kernels read it in their float32 "opmath" and round only the result (x16 * 1e5 is 4200 at x16 = 0.042, not
    0.042 * inf; x16 / 1e5 is not x16 / inf = 0): a product, or a quotient by it (not of it: 1e5 / x16 is inf / x16).
    Sums, remainders and powers round the number to float16 first (x16 + 65519 is x16 + 65504), as PyTorch's do."""
    if dt == np.float16 and (op == "Mul" or op in ("Div", "RoundedDiv") and not first):
        return np.dtype(np.float32)
    return dt


_C_NAME = {"u1": "uint8_t", "i1": "int8_t", "i2": "int16_t", "i4": "int", "i8": "int64_t"}


def fill_number(v, dt: np.dtype):
    """A number to be stored in a tensor of ``dt`` (full, full_like, fill_, masked_fill, index_fill), checked as
    PyTorch checks it: an integer dtype takes a number in its range, truncated toward 0 (2.5 is 2), and uint8 also
    takes -255..-1, which wrap (-1 is 255); out of range (300 or -0.5 in uint8, NaN in any integer) is PyTorch's
    overflow error, not a silently wrapped value. (Arithmetic differs: u8 + 300 wraps, as number_as does.)"""
    dt = np.dtype(dt)
    v = v.item() if isinstance(v, np.generic) else v
    if dt.kind == "b" and isinstance(v, (int, float)):
        return bool(v)  # (any nonzero number is True, as PyTorch's fill of a bool tensor)
    if dt.kind == "f" and isinstance(v, (int, float)):
        with np.errstate(over="ignore"):  # (1e40 in float16 is inf, silently, as PyTorch's)
            return dt.type(v)
    if dt.kind not in "iu" or isinstance(v, bool) or not isinstance(v, (int, float)):
        return v
    info = np.iinfo(dt)
    lo = (0 if isinstance(v, float) else -int(info.max)) if dt.kind == "u" else int(info.min)
    if not lo <= v <= int(info.max):  # (NaN fails both comparisons)
        raise RuntimeError(f"value cannot be converted to type {_C_NAME[_key(dt)]} without overflow")
    return number_as(int(v), dt).item()


def same_dtype(a, b, names: str = "mat1 and mat2") -> np.dtype:
    """Matrix products (``@``, ``matmul``, ``F.linear``, ``nn.Linear``, ``einsum``) promote nothing, as PyTorch's:
    a float32 input into a float64 layer is an error to see, not a silent float64 result."""
    da, db = a._data.dtype, b._data.dtype
    if da != db:
        raise RuntimeError(f"{names} must have the same dtype, but got {_TORCH_NAME[_key(da)]} and "
                           f"{_TORCH_NAME[_key(db)]}")
    if da.kind == "b":  # (PyTorch: "addmm_impl_cpu_" not implemented for 'Bool')
        raise NotImplementedError(f"{names}: matrix products are not implemented for 'Bool' tensors; cast first "
                                  "(a.long() @ b.long() counts, a.float() @ b.float() for floats)")
    return da


def norm_affine(x, params) -> None:
    """layer_norm's weight and bias promote nothing either, as PyTorch on the CPU: they share the input's dtype,
    except that a float16 input may take float32 ones (its mixed-precision case; the result stays float16)."""
    dts = [p._data.dtype for p in params]
    if len(set(dts)) > 1:
        raise RuntimeError(f"expected scalar type {_TORCH_NAME[_key(dts[0])]} but found {_TORCH_NAME[_key(dts[1])]}")
    if dts and dts[0] != x._data.dtype and not (x._data.dtype == np.float16 and dts[0] == np.float32):
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype." if x._data.dtype == np.float64
                           else "mixed dtype (CPU): expect parameter to have scalar type of Float")


def _key(dt: np.dtype) -> str:
    return "b" if dt.kind == "b" else dt.str[1:]


def torch_name(a) -> str:
    """PyTorch's name of an array's (or a dtype's) type in its messages: 'Float', 'Long', 'Bool', ..."""
    return _TORCH_NAME[_key(np.dtype(getattr(a, "dtype", a)))]


_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def writable(dt: np.dtype, own: np.dtype) -> None:
    """An in-place op's result of dtype ``dt`` can be written into a tensor of dtype ``own`` unless it is of a
    higher category (bool < int < float < complex): i32.add_(0.5), i64.exp_(), u8.clamp_(0.5) are refused."""
    if _CATEGORY[dt.kind] > _CATEGORY[own.kind]:
        raise RuntimeError(f"result type {_TORCH_NAME[_key(dt)]} can't be cast to the desired output type "
                           f"{_TORCH_NAME[_key(own)]}")


def inplace_operand(op: str, x, other):
    """``other`` ready for ``x op= other`` (``x.add_(other)``): the table's dtype for the pair (a Python number
    wrapped into it, so u8 += -1 wraps), refused where the result could not be written back into x's dtype
    (a bool x += an int, an int x /= anything), as PyTorch refuses."""
    dt = op_dtype(op, x, other)
    writable(dt, x._data.dtype)
    if isinstance(other, (bool, int, float)):
        return number_as(other, scalar_dtype(op, dt))
    other = other._data if isinstance(other, autograd.Tensor) else _as_array(other)
    return other.astype(scalar_dtype(op, dt) if other.ndim == 0 else dt, copy=False)


# ----------------------------------------------------------------------------------------------
# Which dtype a one-tensor op (a function of x, a reduction, a scan) runs in
# ----------------------------------------------------------------------------------------------
# PyTorch decides an op's dtype before the op runs; NumPy decides it inside each ufunc, differently:
# np.exp of int64 is float64, of uint8 or bool float16 (which overflows at e^11), np.sum of uint8 is
# uint64. So the Tensor methods named here pass their input through ``op_input`` first (the Tensor
# class applies it to each of them once, in compat/methods.py), and every such op follows one rule.

# Ops whose result is a real number: an integer or bool input is computed in the default float dtype.
FLOAT_RESULT = frozenset({
    "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan",
    "atan", "sinh", "cosh", "tanh", "sigmoid", "erf", "logsumexp", "lgamma", "digamma", "i0", "sinc",
    "mean", "nanmean",  # (PyTorch raises on an integer mean; tinyattn keeps (pred == y).mean(), see docs/pytorch.md)
})
# Sums and products: an integer or bool input accumulates in int64 (a sum of uint8 is no uint8).
LONG_RESULT = frozenset({"sum", "nansum", "prod", "cumsum", "cumprod"})
# Ops that take ``dtype=``: the input is cast to it before the op runs (x.sum(dtype=torch.float64)).
DTYPE_ARGUMENT = frozenset({"sum", "nansum", "mean", "nanmean", "prod", "cumsum", "cumprod", "softmax", "log_softmax"})
# Ops with no integer kernel in PyTorch: an integer or bool input (or dtype=) raises PyTorch's error (for an op
# also in FLOAT_RESULT, only an integer dtype= does).
FLOAT_ONLY = {
    "mean": (RuntimeError, "mean(): could not infer output dtype. {which} dtype must be either a floating point "
                           "or complex dtype. Got: {name}"),
    "nanmean": (RuntimeError, "nanmean(): could not infer output dtype. {which} dtype must be either a floating "
                              "point or complex dtype. Got: {name}"),
    "softmax": (NotImplementedError, '"softmax_lastdim_kernel_impl" not implemented for \'{name}\''),
    "log_softmax": (NotImplementedError, '"log_softmax_lastdim_kernel_impl" not implemented for \'{name}\''),
    "var": (RuntimeError, "std and var only support floating point and complex dtypes"),
    "std": (RuntimeError, "std and var only support floating point and complex dtypes"),
    "norm": (RuntimeError, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {name}"),
}
# Ops with no bool kernel in PyTorch (a mask has no magnitude, rounding or order to rank): a bool input raises
# PyTorch's error, where NumPy would compute (np.argmax of a mask is its first True).
NO_BOOL = {
    "abs": (NotImplementedError, '"abs_cpu" not implemented for \'Bool\''),
    "floor": (NotImplementedError, '"floor_vml_cpu" not implemented for \'Bool\''),
    "ceil": (NotImplementedError, '"ceil_vml_cpu" not implemented for \'Bool\''),
    "round": (NotImplementedError, '"round_vml_cpu" not implemented for \'Bool\''),
    "trunc": (NotImplementedError, '"trunc_vml_cpu" not implemented for \'Bool\''),
    "relu": (RuntimeError, "Boolean inputs not supported for relu"),
    "argmax": (RuntimeError, "argmax(): does not support bool input"),
    "argmin": (RuntimeError, "argmin(): does not support bool input"),
    "topk": (RuntimeError, "topk does not support bool dtypes on CPU"),
}
ONE_TENSOR_OPS = FLOAT_RESULT | LONG_RESULT | DTYPE_ARGUMENT | set(FLOAT_ONLY) | set(NO_BOOL)


def op_input(op: str, x, dtype=None):
    """``x`` as the one-tensor op ``op`` computes on it (see the tables above): cast to ``dtype`` when one is
    given, an integer or bool ``x`` cast to the default float dtype (FLOAT_RESULT) or to int64 (LONG_RESULT),
    PyTorch's error where it has no kernel (FLOAT_ONLY); otherwise ``x`` itself."""
    if dtype is None and x._data.dtype.kind in "fc":
        return x  # (the common case, first: a float input is computed as it is)
    target = x._data.dtype if dtype is None else np.dtype(dtype)
    if target.kind == "b" and (op in NO_BOOL or dtype is not None and op in ("cumsum", "cumprod") and x._data.size):
        exc, msg = NO_BOOL.get(op, (NotImplementedError, f'"{op}_out_cpu" not implemented for \'Bool\''))
        raise exc(msg)
    if target.kind not in "fc":
        if op in FLOAT_ONLY and (dtype is not None or op not in FLOAT_RESULT):
            exc, msg = FLOAT_ONLY[op]
            raise exc(msg.format(which="Input" if dtype is None else "Optional", name=_TORCH_NAME[_key(target)]))
        if dtype is not None and x._rg and autograd.is_grad_enabled():  # an integer result has no gradient
            raise RuntimeError(f"Autograd not support dtype: {_TORCH_NAME[_key(target)]}")
        if dtype is None and op in FLOAT_RESULT:
            target = np.dtype(defaults.get_default_dtype())
        elif dtype is None and op in LONG_RESULT:
            target = np.dtype(np.int64)
    return x if target == x._data.dtype else x.to(target)


def op_output(op: str, out, dtype):
    """The result of a sum, product or scan in ``dtype``, its input's: NumPy widens an int32 or uint8 sum
    to int64 or uint64, PyTorch's ``dtype=`` keeps it (the values wrap alike: both are modular)."""
    if op in LONG_RESULT and isinstance(out, autograd.Tensor) and out._data.dtype != dtype:
        return out.to(dtype)
    return out
