"""F.embedding with PyTorch's options, the one place their rules live (nn.Embedding calls it):

- ``padding_idx``: the rows looked up at that id pass no gradient back (negative counts from the end);
- ``max_norm``: each row looked up whose ``norm_type``-norm is above ``max_norm`` is first scaled down to
  it, in the table itself (PyTorch's renorm: an in-place change of the weight, outside the graph).

``scale_grad_by_freq`` and ``sparse`` are refused: every gradient here is a dense array.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import checks
from ..tensor import Tensor, no_grad

__all__ = ["embedding", "padding_index"]


def padding_index(padding_idx: Any, num_embeddings: int, who: str) -> int | None:
    """``padding_idx`` as a row number in 0..num_embeddings-1 (negative counts from the end), or None."""
    if padding_idx is None:
        return None
    if not isinstance(padding_idx, (int, np.integer)) or isinstance(padding_idx, bool):
        raise TypeError(f"{who}: padding_idx must be an int id or None, got {padding_idx!r}")
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise AssertionError(f"Padding_idx must be within num_embeddings: got padding_idx={padding_idx} "
                             f"for num_embeddings={num_embeddings}")
    return int(padding_idx) % num_embeddings


def embedding(input: Any, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` (num_embeddings, D) picked by integer ids ``input`` (...) -> (..., D)."""
    from .functional import _as_tensor
    weight = _as_tensor(weight, "embedding", "weight")
    if weight._data.ndim != 2:
        raise ValueError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got shape {weight.shape}")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: scale_grad_by_freq and sparse gradients are not supported "
                                  "(every gradient here is a dense array)")
    pad = padding_index(padding_idx, weight.shape[0], "embedding")
    ids = checks.ids_in_range(input, weight.shape[0], "input", "embedding", n_name="num_embeddings")
    if max_norm is not None:
        _renorm(weight, ids, checks.number("max_norm", max_norm, "embedding", above=0), float(norm_type))
    # Integer-array indexing picks rows; its backward adds each row's gradient back
    # (np.add.at, so a token that appears twice gets both contributions).
    out = weight[ids]  # (..., D)
    if pad is None or not out.requires_grad:
        return out
    from ..functions import where
    return where(Tensor(ids != pad)[..., None], out, out.detach())  # the same values; no gradient at padding


def _renorm(weight: Tensor, ids: np.ndarray, max_norm: float, norm_type: float) -> None:
    """Scale each row looked up whose norm passes max_norm down to max_norm (by max_norm / (norm + 1e-7),
    PyTorch's factor), in place and outside the graph."""
    ids = np.unique(ids)
    w = weight._data
    norms = np.linalg.norm(w[ids], ord=norm_type, axis=1)  # (n_ids,)
    big = ids[norms > max_norm]
    if big.size:
        scale = (max_norm / (norms[norms > max_norm] + 1e-7)).astype(w.dtype)
        with no_grad():
            weight[Tensor(big)] = weight[Tensor(big)] * Tensor(scale[:, None])  # (n_big, D)
