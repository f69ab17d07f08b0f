"""tinyattn: attention from scratch in NumPy, with PyTorch's names.

``import tinyattn as torch`` and ``import tinyattn.nn.functional as F`` run textbook PyTorch
attention code unchanged. Everything here is a re-export; the code
lives in the submodules.
"""
from .tensor import (
    Function, Generator, Tensor, enable_grad, float32, float64, get_default_dtype, get_rng, is_grad_enabled,
    manual_seed, matmul, no_grad, set_default_dtype,
)
from .autograd import inference_mode, set_grad_enabled
from . import autograd_function  # noqa: F401,E402  (registers tinyattn.autograd.function)
from . import tensor  # noqa: F401  (the engine module, callable as PyTorch's torch.tensor(data) factory)
from .factories import (
    arange, as_tensor, empty, eye, from_numpy, full, full_like, linspace, meshgrid, ones, ones_like, zeros, zeros_like,
)
from .sampling import multinomial, normal, rand, rand_like, randint, randn, randn_like, randperm
from .functions import (
    allclose, argmax, bmm, cat, einsum, exp, log, log_softmax, mean, relu, sigmoid, softmax, sqrt, stack, tanh, topk,
    tril, triu, where,
)
from .functions import max, min, sum  # noqa: F401,A004  (torch.max/min/sum; not in __all__)
from .gradcheck import GradcheckError, gradcheck, numerical_grad
from .special import erf
from . import masks  # noqa: F401
from . import nn  # noqa: F401  (so `torch.nn.Linear` works with `import tinyattn as torch`)
from . import optim  # noqa: F401
from . import utils  # noqa: F401  (torch.utils.data)
from . import amp, backends, cuda  # noqa: F401  (a CPU-only PyTorch's answers)
from . import distributed  # noqa: F401  (one process: the names import, calls that need a group raise)
from .compiler import compile  # noqa: F401,A004  (returns the model itself; not in __all__: shadows the builtin)
from .amp import autocast  # noqa: F401
from .devices import device  # noqa: F401
from .serialization import load, save  # noqa: F401
from . import serialization, storage  # noqa: F401,E402  (torch.serialization / torch.storage)
from .storage import TypedStorage, UntypedStorage, is_storage  # noqa: F401,E402
# names the census of public teaching code uses (tests/data/census_names.csv)
from .factories import empty_like, tril_indices, triu_indices  # noqa: F401
from .functions import trapezoid  # noqa: F401
from .dtypes import dtype, set_default_tensor_type  # noqa: F401
from . import random  # noqa: F401  (torch.random.fork_rng & co.)
from . import distributions  # noqa: F401  (torch.distributions.Categorical)
from .random import get_rng_state, initial_seed, seed, set_rng_state  # noqa: F401
from .defaults import set_printoptions  # noqa: F401
from .backends import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: F401
from . import multiprocessing  # noqa: F401  (one process: `import torch.multiprocessing as mp` imports)
from . import onnx  # noqa: F401  (`import torch.onnx`; export refuses: no tracer)
from math import e, inf, nan, pi  # noqa: F401  (torch.inf, torch.pi, ...: the same Python floats)
newaxis = None  # x[:, torch.newaxis], as NumPy's

# PyTorch's dtype names (`dtype=torch.long`, `torch.ones(T, T, dtype=torch.bool)`) and LongTensor & co.
from .dtypes import (  # noqa: F401,A004
    BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor,
    bfloat16, bool, double, finfo, float, float16, half, iinfo, int, int8, int16, int32, int64, long, short, uint8,
)
# torch.pow, torch.sin, torch.transpose, ...: the top-level function of each Tensor method
from .functions import (  # noqa: F401,A004
    abs, all, amax, amin, any, argmin, argsort, chunk, clamp, clip, cos, cumsum, flatten, gather, masked_fill, neg,
    nonzero, numel, permute, pow, repeat_interleave, reshape, sin, sort, split, square, squeeze, std, transpose,
    unbind, unique, unsqueeze, var,
)
# the rest of torch.*'s arithmetic, rounding, tests and shape helpers (torch.add, torch.flip, ...)
from .functions import (  # noqa: F401,A004
    add, ceil, clamp_max, clamp_min, clone, concat, concatenate, cosh, detach, div, divide, expm1, flip, floor,
    floor_divide, fmod, histogram, index_select, is_floating_point, is_tensor, isfinite, isinf, isnan, log1p, log2,
    logical_and, logical_not, logical_or, logical_xor, logsumexp, maximum, minimum, mm, mul, multiply, narrow, norm,
    outer, reciprocal, remainder, roll, round, rsqrt, sign, sinh, sub, subtract, swapaxes, swapdims, t, true_divide,
    trunc,
)

# issue 40 (surface): comparisons as functions, torch.equal, torch.dot, torch.jit
from .functions import (  # noqa: F401
    dot, eq, equal, ge, greater, greater_equal, gt, le, less, less_equal, lt, ne, not_equal,
)
from .compat.to import channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format  # noqa: F401
from . import jit  # noqa: F401  (script/trace/ignore/export/unused return what they are given, as eager PyTorch runs it)
from .einops_backend import install as _install_einops  # einops, whenever it is imported, takes tinyattn tensors
_install_einops()

# `from tinyattn import *` exports these; `float`, `bool`, `int`, `abs`, `all`, `any`, `pow`, `max`, `min`, `round` and `sum` are left
# out so they never shadow the builtins.
__all__ = [
    "Function", "GradcheckError", "Tensor", "allclose", "arange", "argmax", "bmm", "cat", "double", "enable_grad",
    "erf", "exp", "float32", "float64", "full", "get_default_dtype", "get_rng", "gradcheck", "int32", "int64",
    "is_grad_enabled", "log", "log_softmax", "long", "manual_seed", "masks", "matmul", "mean", "multinomial", "nn",
    "no_grad", "numerical_grad", "ones", "ones_like", "optim", "rand", "randint", "randn", "randperm", "relu",
    "set_default_dtype", "sigmoid", "softmax", "sqrt", "stack", "tanh", "tensor", "topk", "tril", "triu", "where",
    "zeros", "zeros_like",
    "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor", "HalfTensor", "IntTensor", "LongTensor",
    "ShortTensor", "bfloat16", "float16", "half", "int8", "int16", "short", "uint8",
    "amax", "amin", "argmin", "chunk", "clamp", "clip", "cos", "cumsum", "flatten", "gather", "masked_fill", "neg",
    "permute", "repeat_interleave", "reshape", "sin", "split", "square", "squeeze", "std", "transpose", "unbind",
    "unsqueeze", "var", "argsort", "numel", "sort", "unique", "empty", "eye", "from_numpy", "linspace", "meshgrid", "nonzero", "normal",
    "Generator", "einsum", "full_like", "inference_mode", "rand_like", "randn_like", "set_grad_enabled", "finfo",
    "iinfo", "add", "ceil", "clamp_max", "clamp_min", "clone", "concat", "concatenate", "cosh", "detach", "div",
    "divide", "expm1", "flip", "floor", "floor_divide", "fmod", "histogram", "index_select", "is_floating_point",
    "is_tensor", "isfinite", "isinf", "isnan", "log1p", "log2", "logical_and", "logical_not", "logical_or",
    "logical_xor", "logsumexp", "maximum", "minimum", "mm", "mul", "multiply", "narrow", "norm", "outer",
    "reciprocal", "remainder", "roll", "rsqrt", "sign", "sinh", "sub", "subtract", "swapaxes", "swapdims", "t",
    "true_divide", "trunc",
]

# the PyTorch surface that training scripts touch: data loading, checkpoints, devices
__all__ += ["as_tensor", "set_printoptions"]
__all__ += ["amp", "autocast", "backends", "cuda", "device", "load", "save", "utils"]

# issue 40 (surface): comparisons, equal, dot, memory formats, jit
__all__ += ["channels_last", "contiguous_format", "dot", "eq", "equal", "ge", "greater", "greater_equal", "gt", "jit",
            "le", "less", "less_equal", "lt", "memory_format", "ne", "not_equal", "preserve_format"]

# the long tail the op-surface fuzzer found missing (tests/surface_fuzz.py): torch.prod, torch.bitwise_and, ...
from .functions import (  # noqa: F401,E402
    LONG_TAIL, atan, atan2, bincount, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, count_nonzero, cummax, cummin,
    cumprod, diff, exp2, float_power, fmax, fmin, frac, hypot, index_add, index_fill, isclose, kthvalue, log10, median,
    msort, nan_to_num, nansum, negative, positive, prod, sgn, signbit, tan, trace, xlogy,
)
__all__ += LONG_TAIL
# complex tensors, for Llama-style rotary embeddings (tinyattn/compat/complex.py); `complex` stays out of
# __all__ so it never shadows the builtin
from .dtypes import cdouble, cfloat, complex64, complex128  # noqa: F401
from .compat.complex import angle, complex, conj, imag, is_complex, polar, real, view_as_complex, view_as_real  # noqa: F401,A004
__all__ += ["angle", "cdouble", "cfloat", "complex64", "complex128", "conj", "imag", "is_complex", "polar", "real",
            "view_as_complex", "view_as_real"]

__version__ = "0.1.0"
# names the census of public teaching code uses once (tinyattn/tail_functions.py); `range` stays out of
# __all__ so it never shadows the builtin
from .tail_functions import (  # noqa: F401,E402,A004
    absolute, addmm, bernoulli, bucketize, cartesian_prod, cdist, column_stack, diag, dstack, erfinv, get_num_threads,
    hann_window, hstack, lerp, ravel, searchsorted, set_num_threads, std_mean, take, unflatten, var_mean, vstack,
    addbmm, addcdiv, addcmul, addmv, addr, are_deterministic_algorithms_enabled, argwhere, atleast_1d, atleast_2d,
    atleast_3d, baddbmm, block_diag, broadcast_tensors, broadcast_to, cosine_similarity, diag_embed, diagonal, dist,
    fliplr, flipud, hsplit, inner, is_nonzero, isin, kron, logit, logspace, masked_select, moveaxis, movedim, mv, nanmean,
    pairwise_distance, scatter, scatter_add, scatter_reduce, take_along_dim, tensor_split, tensordot, tile, use_deterministic_algorithms,
    vdot, vsplit,
)
from .tail_functions import range_inclusive as range  # noqa: F401,E402,A004
__all__ += [
            "absolute", "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr",
            "are_deterministic_algorithms_enabled", "argwhere", "atleast_1d", "atleast_2d", "atleast_3d", "baddbmm",
            "bernoulli", "block_diag", "broadcast_tensors", "broadcast_to", "bucketize", "cartesian_prod", "cdist",
            "column_stack", "cosine_similarity", "diag", "diag_embed", "diagonal", "dist", "dstack", "erfinv",
            "fliplr", "flipud", "get_num_threads", "hann_window", "hsplit", "hstack", "inner", "is_nonzero", "isin",
            "kron", "lerp", "logit", "logspace", "masked_select", "moveaxis", "movedim", "mv", "nanmean",
            "pairwise_distance", "ravel", "scatter", "scatter_add", "scatter_reduce", "searchsorted", "set_num_threads",
            "set_printoptions", "std_mean", "take", "take_along_dim", "tensor_split", "tensordot", "tile",
            "unflatten", "use_deterministic_algorithms", "var_mean", "vdot", "vsplit", "vstack"
]
# order statistics, scans and masked writes (tinyattn/compat/statistics.py, compat/scans_and_writes.py)
from .tail_functions import (  # noqa: F401,E402
    combinations, histc, logcumsumexp, masked_scatter, mode, nan_to_num_, nanmedian, nanquantile, quantile, renorm,
    rot90, trapz, unique_consecutive, chain_matmul, diagonal_scatter, frexp, gcd, lcm, ldexp, select_scatter,
    slice_scatter, vander, put, index_put, index_reduce, as_strided,
)
__all__ += ["combinations", "histc", "logcumsumexp", "masked_scatter", "mode", "nan_to_num_", "nanmedian", "nanquantile",
            "quantile", "renorm", "rot90", "trapz", "unique_consecutive", "chain_matmul", "diagonal_scatter", "frexp",
            "gcd", "lcm", "ldexp", "select_scatter", "slice_scatter", "vander", "put", "index_put", "index_reduce",
            "as_strided"]
from . import accelerator  # noqa: F401,E402  (torch.accelerator: no accelerator, as a CPU-only PyTorch)

_DEPRECATED_FLAGS = {"has_mps": (False, "torch.backends.mps.is_built()"),
                     "has_cuda": (False, "torch.backends.cuda.is_built()")}


def __getattr__(name: str):
    """torch.has_mps / has_cuda: PyTorch's deprecated build flags, False here, with PyTorch's warning."""
    if name in _DEPRECATED_FLAGS:
        import warnings
        value, instead = _DEPRECATED_FLAGS[name]
        warnings.warn(f"'{name}' is deprecated, please use '{instead}'", UserWarning, stacklevel=2)
        return value
    raise AttributeError(f"module 'tinyattn' has no attribute '{name}'")
from . import func  # noqa: F401,E402  (torch.func: functional_call, grad, grad_and_value, vmap)
from . import linalg  # noqa: F401,E402  (torch.linalg: norms, inv, det, slogdet, solve, cholesky)
from .linalg import cholesky_inverse, det, inverse, logdet, matrix_exp  # noqa: F401,E402
__all__ += ["cholesky_inverse", "det", "inverse", "logdet", "matrix_exp"]
from . import hub  # noqa: F401,E402  (torch.hub.load_state_dict_from_url & co.)
from .nn.functional import celu_, relu_, selu_  # noqa: F401,E402  (torch.relu_, selu_, celu_: in place)
from . import xpu  # noqa: F401,E402  (no Intel GPU, as a build without XPU)
from .signs_and_statistics import (  # noqa: F401,E402  (shifts, sign arithmetic, cov/corrcoef, running trapezoid)
    bitwise_left_shift, bitwise_right_shift, copysign, corrcoef, cov, cumulative_trapezoid, heaviside, logaddexp,
    logaddexp2, nextafter,
)
__all__ += ["bitwise_left_shift", "bitwise_right_shift", "copysign", "corrcoef", "cov", "cumulative_trapezoid",
            "heaviside", "logaddexp", "logaddexp2", "nextafter"]
from .nn.channels_and_local import channel_shuffle, channel_shuffle as native_channel_shuffle  # noqa: F401,E402
from . import sparse_coo as _sparse_coo  # noqa: F401,E402  (Tensor.to_sparse: indices and values)
from .sparse_coo import sparse_coo  # noqa: F401,E402
from .spectral import stft  # noqa: F401,E402  (torch.stft: unfold, window, DFT tables)
from .compat.deprecated_overloads import add, addcdiv, addcmul, sub  # noqa: F401,E402  (add(x, alpha, y) & co.)
from . import quiet  # noqa: F401,E402  (the forwards that meet log 0 or 0 / 0 run silently, as PyTorch's)
from .special_names import digamma, erfc, i0, lgamma, mvlgamma, polygamma, sinc  # noqa: F401,E402
__all__ += ["digamma", "erfc", "i0", "lgamma", "mvlgamma", "polygamma", "sinc"]
from .compat.cross_and_powers import (  # noqa: F401,E402
    aminmax_fn as aminmax, cross, deg2rad, diagflat, matrix_power, rad2deg, randint_like,
)
__all__ += ["aminmax", "cross", "deg2rad", "diagflat", "matrix_power", "rad2deg", "randint_like"]
from .special_names import deg2rad_, erfc_, i0_, rad2deg_, sinc_  # noqa: F401,E402  (in place)
from .nn.functional import pdist, poisson_nll_loss, rrelu, rrelu_  # noqa: F401,E402  (torch.* names of the same)
__all__ += ["deg2rad_", "erfc_", "i0_", "pdist", "poisson_nll_loss", "rad2deg_", "rrelu", "rrelu_", "sinc_"]
