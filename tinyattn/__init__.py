"""tinyattn: attention from scratch in NumPy, with PyTorch's names.

``import tinyattn as torch`` and ``import tinyattn.nn.functional as F`` run textbook PyTorch
attention code unchanged. Everything here is a re-export (plus PyTorch's dtype names); the code
lives in the submodules.
"""
from .tensor import (
    Function, Tensor, enable_grad, float32, float64, get_default_dtype, get_rng, is_grad_enabled, manual_seed,
    matmul, no_grad, set_default_dtype,
)
from .factories import arange, full, ones, ones_like, tensor, zeros, zeros_like
from .sampling import multinomial, rand, randint, randn, randperm
from .functions import (
    allclose, argmax, bmm, cat, exp, log, log_softmax, mean, relu, sigmoid, softmax, sqrt, stack, tanh, topk, tril,
    triu, where,
)
from .functions import max, min, sum  # noqa: F401,A004  (torch.max/min/sum; not in __all__)
from .gradcheck import GradcheckError, gradcheck, numerical_grad
from . import masks  # noqa: F401
from . import nn  # noqa: F401  (so `torch.nn.Linear` works with `import tinyattn as torch`)
from . import optim  # noqa: F401

import numpy as _np

# PyTorch's dtype names, as the NumPy dtypes they mean here, so `dtype=torch.long` and
# `torch.ones(T, T, dtype=torch.bool)` run unchanged.
int32 = _np.int32
int64 = long = _np.int64
double = float64
float = float32  # noqa: A001  (torch.float is float32)
bool = _np.bool_  # noqa: A001

# `from tinyattn import *` exports these; `float`, `bool`, `max`, `min` and `sum` are left out so they never
# shadow the builtins.
__all__ = [
    "Function", "GradcheckError", "Tensor", "allclose", "arange", "argmax", "bmm", "cat", "double", "enable_grad",
    "exp", "float32", "float64", "full", "get_default_dtype", "get_rng", "gradcheck", "int32", "int64",
    "is_grad_enabled", "log", "log_softmax", "long", "manual_seed", "masks", "matmul", "mean", "multinomial", "nn",
    "no_grad", "numerical_grad", "ones", "ones_like", "optim", "rand", "randint", "randn", "randperm", "relu",
    "set_default_dtype", "sigmoid", "softmax", "sqrt", "stack", "tanh", "tensor", "topk", "tril", "triu", "where",
    "zeros", "zeros_like",
]

__version__ = "0.1.0"
