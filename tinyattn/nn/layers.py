"""The basic layers: Linear, Embedding, LayerNorm, Dropout, ReLU, GELU.

Each holds its Parameters and hands the maths to ``nn.functional``; what lives here is
initialisation (PyTorch's, drawn from ``tinyattn.manual_seed``'s generator) and the
shape checks that turn a learner's mistake into a readable error.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import checks
from ..tensor import Tensor, get_default_dtype, get_rng
from . import functional as F
from .embedding_functional import padding_index
from .module import Module, Parameter

__all__ = ["Linear", "LazyLinear", "Embedding", "LayerNorm", "Dropout", "ReLU", "GELU", "Identity"]


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


class Linear(Module):
    """y = x W^T + b:  x (..., in_features) -> (..., out_features); W (out, in), b (out,).

    Init as PyTorch: W and b ~ U(-1/sqrt(in), 1/sqrt(in)), so outputs start with variance ~1/3 of
    the inputs' whatever in_features is.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        self.in_features = checks.positive_int("in_features", in_features, "Linear")
        self.out_features = checks.positive_int("out_features", out_features, "Linear")
        self.weight = Parameter(_uniform_init((self.out_features, self.in_features), self.in_features))
        if bias:
            self.bias = Parameter(_uniform_init((self.out_features,), self.in_features))
        else:
            self.register_parameter("bias", None)
        if type(self).reset_parameters is not Linear.reset_parameters:  # a subclass's own init (nn/reset.py)
            self.reset_parameters()

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)  # F.linear checks x against the weight it really has

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


def _uniform_init(shape: tuple[int, ...], fan_in: int) -> np.ndarray:
    """U(-1/sqrt(fan_in), 1/sqrt(fan_in)) in the default dtype, from tinyattn.manual_seed's generator."""
    bound = 1.0 / math.sqrt(fan_in)
    return get_rng().uniform(-bound, bound, shape).astype(get_default_dtype())


class LazyLinear(Linear):
    """A Linear whose in_features is read from the first input it sees: LazyLinear(out_features, bias=True).

    Until then its weight has shape (out_features, 0). The first forward draws the weights (the same
    init as Linear, from the generator at that moment), fills in the existing Parameter objects, so an
    optimizer built earlier still holds them, and turns the module into a plain Linear.
    """

    def __init__(self, out_features: int, bias: bool = True) -> None:
        Module.__init__(self)
        self.in_features = 0
        self.out_features = checks.positive_int("out_features", out_features, "LazyLinear")
        dt = get_default_dtype()
        self.weight = Parameter(np.zeros((self.out_features, 0), dtype=dt))
        if bias:
            self.bias = Parameter(np.zeros((self.out_features,), dtype=dt))
        else:
            self.register_parameter("bias", None)

    def forward(self, x: Tensor) -> Tensor:
        x = _as_tensor(x)
        if not x.shape or x.shape[-1] == 0:
            raise ValueError(f"LazyLinear needs an input with a non-empty last dim (its in_features), "
                             f"got shape {x.shape}")
        self.in_features = x.shape[-1]
        self.weight.data = _uniform_init((self.out_features, self.in_features), self.in_features)
        if self.bias is not None:
            self.bias.data = _uniform_init((self.out_features,), self.in_features)
        self.__class__ = Linear  # initialised: from now on exactly a Linear (as PyTorch's lazy modules do)
        return self.forward(x)


class Embedding(Module):
    """A lookup table: integer ids (...) -> rows of W (..., embedding_dim); W ~ N(0, 1) as PyTorch.

    padding_idx: the id of padding. Its row starts at zero and never gets a gradient, so a padded
    position contributes nothing and learns nothing (negative counts from the end, as an index).
    max_norm: each row looked up whose norm_type-norm is above max_norm is first scaled down to it,
    in the table itself (PyTorch's renorm: an in-place change of the weight, outside the graph).
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Any = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        checks.device(device)
        self.num_embeddings = checks.positive_int("num_embeddings", num_embeddings, "Embedding")
        self.embedding_dim = checks.positive_int("embedding_dim", embedding_dim, "Embedding")
        padding_idx = padding_index(padding_idx, self.num_embeddings, "Embedding")
        if scale_grad_by_freq or sparse:
            raise NotImplementedError("Embedding: scale_grad_by_freq and sparse gradients are not supported "
                                      "(every gradient here is a dense array)")
        self.padding_idx = padding_idx
        self.max_norm = None if max_norm is None else checks.number("max_norm", max_norm, "Embedding", above=0)
        self.norm_type, self.scale_grad_by_freq, self.sparse = float(norm_type), False, False
        if _weight is None:
            w = get_rng().standard_normal((self.num_embeddings, self.embedding_dim)).astype(dtype or get_default_dtype())
            if padding_idx is not None:
                w[padding_idx] = 0  # PyTorch's init: the padding row starts at zero
        else:
            w = np.array(_weight._data if isinstance(_weight, Tensor) else _weight, dtype=dtype)
            if w.shape != (self.num_embeddings, self.embedding_dim):
                raise ValueError(f"Embedding: _weight must have shape ({num_embeddings}, {embedding_dim}), got {w.shape}")
        self.weight = Parameter(w, requires_grad=not _freeze)
        if type(self).reset_parameters is not Embedding.reset_parameters:  # a subclass's own init (nn/reset.py)
            self.reset_parameters()

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> "Embedding":
        """An Embedding holding ``embeddings`` (num_embeddings, embedding_dim) as they are (the padding row
        included); ``freeze=True`` (the default) keeps them fixed: the weight requires no gradient."""
        arr = embeddings._data if isinstance(embeddings, Tensor) else np.asarray(embeddings)
        if arr.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-D (num_embeddings, embedding_dim), "
                             f"got shape {arr.shape}")
        return cls(arr.shape[0], arr.shape[1], padding_idx=padding_idx, max_norm=max_norm, norm_type=norm_type,
                   scale_grad_by_freq=scale_grad_by_freq, sparse=sparse, _weight=arr, _freeze=freeze)

    def forward(self, idx: Any) -> Tensor:
        return F.embedding(idx, self.weight, self.padding_idx, self.max_norm, self.norm_type)  # (..., embedding_dim)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2.0:
            s += f", norm_type={self.norm_type}"
        return s


class LayerNorm(Module):
    """Normalize the trailing dims to mean 0, variance 1, then * weight (ones) + bias (zeros)."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
        for n in shape:
            checks.positive_int("every entry of normalized_shape", n, "LayerNorm")
        if not shape:
            raise ValueError("LayerNorm: normalized_shape must name at least one dim")
        eps = checks.number("eps", eps, "LayerNorm", above=0)
        self.normalized_shape, self.eps = tuple(int(n) for n in shape), eps
        if elementwise_affine:  # bias=False keeps the scale and drops the shift (PyTorch 2.1's option)
            self.weight = Parameter(np.ones(self.normalized_shape, dtype=get_default_dtype()))
            if bias:
                self.bias = Parameter(np.zeros(self.normalized_shape, dtype=get_default_dtype()))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)  # (F checks the shapes)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.weight is not None}"


class Dropout(Module):
    """Zero each element with probability p in training (scaling the rest by 1/(1-p)); identity in eval()."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = checks.probability("p", p, "Dropout")

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class ReLU(Module):
    """max(x, 0) elementwise; ``inplace=True`` writes it into x (``F.relu(x, inplace=True)``), as PyTorch."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x, inplace=self.inplace)


class Tanh(Module):
    """tanh(x) elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


class Sigmoid(Module):
    """1 / (1 + exp(-x)) elementwise."""

    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)


class SiLU(Module):
    """x sigmoid(x) elementwise (also called swish)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.silu(x)


class Softmax(Module):
    """softmax over ``dim`` (name it: PyTorch's implicit choice of dim is deprecated)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.softmax(x, _module_dim(self.dim, "Softmax"))

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """log softmax over ``dim``: what NLLLoss takes."""

    def forward(self, x: Tensor) -> Tensor:
        return F.log_softmax(x, _module_dim(self.dim, "LogSoftmax"))


def _module_dim(dim: int | None, layer: str) -> int:
    if dim is None:
        raise TypeError(f"{layer}() needs the dim to normalise over, e.g. nn.{layer}(dim=-1)")
    return dim


class Flatten(Module):
    """x.flatten(start_dim, end_dim); the defaults keep the batch dim: (B, C, H, W) -> (B, C*H*W)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)


class GELU(Module):
    """x Phi(x) elementwise; approximate='none' (exact, via erf; the default, as in PyTorch) or 'tanh' (GPT-2's)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("tanh", "none"):
            raise ValueError(f"GELU: approximate must be 'tanh' or 'none', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Identity(Module):
    """forward(x, *args, **kwargs) -> x: a placeholder layer that changes nothing (PyTorch's nn.Identity)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # arguments accepted and ignored, as in PyTorch
        super().__init__()

    def forward(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        return x
