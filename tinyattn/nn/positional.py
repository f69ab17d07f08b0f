"""Position information for attention, which by itself is blind to token order.

The two additive kinds share one interface: forward(x (B, T, C), offset=0) -> x + P[offset : offset + T].
``offset`` is where the chunk starts in the full sequence; a KV-cache decoder feeding
one new token at position t passes offset=t.

RotaryEmbedding (RoPE) works differently: it adds nothing to the embeddings, it rotates the queries
and keys inside each attention layer (forward(q or k (..., T, d_k), offset=0)), so that their dot
product depends on the positions only through their difference.
"""
from __future__ import annotations

import numpy as np

from tinyattn import checks
from tinyattn.functions import cat
from tinyattn.tensor import Tensor, get_default_dtype, get_rng

from .module import Module, Parameter

__all__ = ["PositionalEncoding", "LearnedPositionalEmbedding", "RotaryEmbedding", "sinusoidal_table"]


def sinusoidal_table(max_len: int, d_model: int) -> np.ndarray:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d)),  PE[pos, 2i+1] = cos(pos / 10000^(2i/d));  shape (max_len, d_model)."""
    pos = np.arange(max_len, dtype=np.float64)[:, None]  # (max_len, 1)
    two_i = np.arange(0, d_model, 2, dtype=np.float64)  # (ceil(d/2),) the even column indices 2i
    angle = pos / (10000.0 ** (two_i / d_model))  # (max_len, ceil(d/2)): each pair of columns is one frequency
    pe = np.zeros((max_len, d_model))
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle[:, : d_model // 2])  # an odd d_model has one more sin column than cos columns
    return pe


def _check(name: str, x: Tensor, d_model: int, max_len: int, offset: int) -> None:
    """Clear errors for a wrong shape or dtype, or a sequence that runs past max_len."""
    if x.ndim != 3 or x.shape[-1] != d_model:
        raise ValueError(f"{name}(d_model={d_model}) expects x of shape (B, T, {d_model}), got {tuple(x.shape)}")
    if x.dtype.kind != "f":  # an int x would get the table rounded to ints (all 0 and 1) without a word
        raise TypeError(f"{name} expects float embeddings (B, T, {d_model}), got dtype {x.dtype} "
                        "(token ids? embed them first, e.g. with nn.Embedding)")
    T = x.shape[1]
    offset = checks.nonneg_int("offset", offset, name)
    if offset + T > max_len:
        raise ValueError(f"{name}: sequence positions {offset}..{offset + T - 1} (T={T}, offset={offset}) "
                         f"exceed max_len={max_len}; build the model with a larger max_len or use a shorter input")


class PositionalEncoding(Module):
    """x + PE[offset : offset + T], with the fixed sinusoidal table of Vaswani et al. (2017).

    The table is a buffer (``self.pe``, an ndarray (max_len, d_model)), not a Parameter: it is not trained.
    """

    def __init__(self, d_model: int, max_len: int = 5000) -> None:
        super().__init__()
        self.d_model = checks.positive_int("d_model", d_model, "PositionalEncoding")
        self.max_len = checks.positive_int("max_len", max_len, "PositionalEncoding")
        # A buffer, not a Parameter: saved in state_dict (as PyTorch does), never seen by the optimizer.
        self.register_buffer("pe", sinusoidal_table(self.max_len, self.d_model).astype(get_default_dtype()))

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        if not isinstance(x, Tensor):
            x = Tensor(x)
        _check("PositionalEncoding", x, self.d_model, self.max_len, offset)
        T = x.shape[1]
        pe = self.pe[offset: offset + T].astype(x.dtype)  # (T, C), broadcasts over the batch
        return x + Tensor(pe)  # (B, T, C)

    def __repr__(self) -> str:
        return f"PositionalEncoding(d_model={self.d_model}, max_len={self.max_len})"


class LearnedPositionalEmbedding(Module):
    """x + W[offset : offset + T], with W (max_len, d_model) a trained Parameter (as in GPT-2).

    Initialised N(0, 1) like nn.Embedding, so positions start on the same scale as tokens.
    """

    def __init__(self, max_len: int, d_model: int) -> None:
        super().__init__()
        self.max_len = checks.positive_int("max_len", max_len, "LearnedPositionalEmbedding")
        self.d_model = checks.positive_int("d_model", d_model, "LearnedPositionalEmbedding")
        w = get_rng().standard_normal((self.max_len, self.d_model)).astype(get_default_dtype())
        self.weight = Parameter(w)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        if not isinstance(x, Tensor):
            x = Tensor(x)
        _check("LearnedPositionalEmbedding", x, self.d_model, self.max_len, offset)
        T = x.shape[1]
        return x + self.weight[offset: offset + T]  # (B, T, C) + (T, C); the slice routes gradient to those rows

    def __repr__(self) -> str:
        return f"LearnedPositionalEmbedding(max_len={self.max_len}, d_model={self.d_model})"


class RotaryEmbedding(Module):
    """RoPE (Su et al. 2021): rotate q and k, pair of dims by pair of dims, by angles that grow with the position.

    forward(x (..., T, d_k), offset=0) -> the same shape. Dims i and i + d_k/2 form a pair (the layout of
    GPT-NeoX and of LLaMA in Hugging Face; the RoFormer paper pairs dims 2i and 2i+1 instead, which is
    the same idea with the features in another order). At position m the pair turns by the angle
    m * theta_i, theta_i = base^(-2i / d_k): fast turns for the first pairs, slow ones for the last.

    Why it works: rotating q by m * theta and k by n * theta leaves q . k depending on (n - m) * theta
    only, so attention scores see relative positions, and nothing is added to the token embeddings.
    No parameters: the angles are fixed, and computed for the positions asked for (no max_len).
    """

    def __init__(self, d_k: int, base: float = 10000.0) -> None:
        super().__init__()
        d_k = checks.positive_int("d_k", d_k, "RotaryEmbedding")
        if d_k % 2:
            raise ValueError(f"RotaryEmbedding: d_k must be even (dims are rotated in pairs), got d_k={d_k}")
        self.d_k, self.base = d_k, checks.number("base", base, "RotaryEmbedding", above=1)
        self.inv_freq = self.base ** (-np.arange(0, self.d_k, 2, dtype=np.float64) / self.d_k)  # (d_k/2,) theta_i

    def extra_repr(self) -> str:
        return f"d_k={self.d_k}, base={self.base:g}"

    def angles(self, T: int, offset: int = 0) -> np.ndarray:
        """(T, d_k/2) float64: the angle (offset + t) * theta_i of every pair at every position."""
        return np.arange(offset, offset + T, dtype=np.float64)[:, None] * self.inv_freq[None, :]

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        if not isinstance(x, Tensor):
            x = Tensor(x)
        if x.ndim < 2 or x.shape[-1] != self.d_k:
            raise ValueError(f"RotaryEmbedding(d_k={self.d_k}) expects queries or keys of shape (..., T, {self.d_k}), "
                             f"got {tuple(x.shape)}")
        if x.dtype.kind != "f":
            raise TypeError(f"RotaryEmbedding expects float queries or keys, got dtype {x.dtype}")
        ang = self.angles(x.shape[-2], checks.nonneg_int("offset", offset, "RotaryEmbedding"))  # (T, d_k/2)
        cos = Tensor(np.concatenate([np.cos(ang)] * 2, axis=-1).astype(x.dtype))  # (T, d_k): both halves of a pair
        sin = Tensor(np.concatenate([np.sin(ang)] * 2, axis=-1).astype(x.dtype))  # (T, d_k)
        h = self.d_k // 2
        x1, x2 = x[..., :h], x[..., h:]  # (..., T, d_k/2) each: pair i is (x1[i], x2[i])
        turned = cat([-x2, x1], dim=-1)  # (..., T, d_k): each pair turned by 90 degrees
        # (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin): the 2-D rotation of every pair by its angle
        return x * cos + turned * sin
