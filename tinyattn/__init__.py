"""tinyattn: attention from scratch in NumPy, with PyTorch's names.

``import tinyattn as torch`` and ``import tinyattn.nn.functional as F`` run textbook PyTorch
attention code unchanged. Everything here is a re-export; the code lives in the submodules.
"""
from .tensor import (
    Function, Tensor, arange, cat, enable_grad, exp, float32, float64, full, get_default_dtype, get_rng,
    is_grad_enabled, log, log_softmax, manual_seed, matmul, no_grad, ones, ones_like, rand, randn, relu,
    set_default_dtype, sigmoid, softmax, sqrt, stack, tanh, tensor, tril, triu, where, zeros, zeros_like,
)
from .gradcheck import GradcheckError, gradcheck, numerical_grad
from . import masks  # noqa: F401
from . import nn  # noqa: F401  (so `torch.nn.Linear` works with `import tinyattn as torch`)
from . import optim  # noqa: F401

__version__ = "0.1.0"
