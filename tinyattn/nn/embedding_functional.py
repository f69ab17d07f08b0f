"""F.embedding with PyTorch's arguments: rows of a table picked by ids, a padding row that learns nothing,
and max_norm's in-place renormalisation of the rows looked up. nn.Embedding runs it with its own settings;
a LoRA embedding calls it directly with the layer's ``padding_idx``, ``max_norm``, ``norm_type``,
``scale_grad_by_freq`` and ``sparse`` on its low-rank factor."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import checks
from ..tensor import Tensor, no_grad

__all__ = ["embedding"]


def embedding(input: Any, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` (num_embeddings, D) picked by integer ids ``input`` (...) -> (..., D).

    padding_idx: the gradient stops at the positions holding that id (its row is not learned from them).
    max_norm: first, each row looked up whose norm_type-norm passes max_norm is scaled down to it, in the
    table itself and outside the graph (by max_norm / (norm + 1e-7), PyTorch's factor).
    """
    from ..functions import where
    from .functional import _as_tensor
    weight = _as_tensor(weight, "embedding", "weight")
    if weight._data.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got shape {weight.shape}")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq and sparse gradients are not supported "
                                  "(every gradient here is a dense array)")
    n = weight.shape[0]
    ids = checks.ids_in_range(input, n, "input", "embedding", n_name="num_embeddings")
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise AssertionError(f"Padding_idx must be within num_embeddings: got padding_idx={padding_idx} "
                                 f"for num_embeddings={n}")
        padding_idx = int(padding_idx) % n
    if max_norm is not None:
        _renorm(weight, np.unique(ids), float(max_norm), float(norm_type))
    # Integer-array indexing picks rows; its backward adds each row's gradient back
    # (np.add.at, so a token that appears twice gets both contributions).
    out = weight[ids]  # (..., D)
    if padding_idx is None or not out.requires_grad:
        return out
    real = Tensor(ids != padding_idx)[..., None]  # (..., 1): False at padding
    return where(real, out, out.detach())  # the same values; the gradient stops at padding


def _renorm(weight: Tensor, ids: np.ndarray, max_norm: float, norm_type: float) -> None:
    w = weight._data
    norms = np.linalg.norm(w[ids], ord=norm_type, axis=1)  # (n_ids,)
    big = ids[norms > max_norm]
    if big.size:
        scale = (max_norm / (norms[norms > max_norm] + 1e-7)).astype(w.dtype)
        with no_grad():
            weight[Tensor(big)] = weight[Tensor(big)] * Tensor(scale[:, None])  # (n_big, D)
