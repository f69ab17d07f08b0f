"""Two measurable head behaviours, scored for every layer and head.

* A previous-token head puts its attention on the token just before the query:
  score = mean over queries t >= 1 of w[t, t-1].
* An induction head continues a pattern it has seen: in a sequence [r_0 .. r_{n-1}, r_0 .. r_{n-1}] of
  random tokens, a query at r_i in the second copy attends to the token that FOLLOWED r_i in the first
  copy, n - 1 positions back: score = mean over the second copy's queries t of w[t, t - n + 1].
  Random tokens mean no language statistics can predict them; only copying can.

Scores are in [0, 1]; uniform attention over T keys scores about 1/T. Whether a head of a given model
is one or the other is a measurement on that model, not something this module assumes.
"""
from __future__ import annotations

import numpy as np

from .. import get_rng, no_grad

__all__ = ["attention_weights", "previous_token_scores", "induction_scores", "repeated_random_tokens"]


def attention_weights(model, ids) -> np.ndarray:
    """Every layer's and head's attention weights for one sequence of ids: (L, H, T, T)."""
    ids = np.asarray(ids, dtype=np.int64).reshape(1, -1)  # (1, T)
    with no_grad():
        _, weights = model(ids, return_weights=True)  # a list over layers of (1, H, T, T)
    return np.stack([w.numpy()[0] for w in weights])  # (L, H, T, T)


def _check(w: np.ndarray) -> np.ndarray:
    w = np.asarray(w)
    if w.ndim != 4 or w.shape[-1] != w.shape[-2]:
        raise ValueError(f"expected self-attention weights (L, H, T, T), got shape {w.shape}")
    return w


def previous_token_scores(weights) -> np.ndarray:
    """(L, H, T, T) -> (L, H): the mean weight each head puts on the previous token (queries 1..T-1)."""
    w = _check(weights)
    T = w.shape[-1]
    if T < 2:
        raise ValueError("previous_token_scores needs at least 2 tokens")
    t = np.arange(1, T)
    return w[:, :, t, t - 1].mean(axis=-1)  # (L, H, T-1) -> (L, H)


def induction_scores(weights, n: int, start: int = 0) -> np.ndarray:
    """(L, H, T, T) of a sequence whose positions start..start+2n-1 are n random tokens twice -> (L, H)."""
    w = _check(weights)
    if start + 2 * n > w.shape[-1] or n < 2:
        raise ValueError(f"induction_scores: n={n} repeated twice from position {start} needs "
                         f"{start + 2 * n} positions (n >= 2), the weights have {w.shape[-1]}")
    t = np.arange(start + n, start + 2 * n)  # the queries of the second copy
    return w[:, :, t, t - n + 1].mean(axis=-1)  # the key right after the query's first occurrence


def repeated_random_tokens(vocab_size: int, n: int, bos: int | None = None) -> np.ndarray:
    """[bos] + r + r with r n distinct random ids drawn from tinyattn's seeded generator (manual_seed)."""
    pool = np.arange(vocab_size) if bos is None else np.delete(np.arange(vocab_size), bos)  # never bos itself
    if n > pool.size:
        raise ValueError(f"repeated_random_tokens: n={n} distinct tokens from a vocabulary of {pool.size}")
    r = get_rng().choice(pool, size=n, replace=False)  # distinct, so each token's next one is unambiguous
    head = [] if bos is None else [bos]
    return np.array(head + list(r) + list(r), dtype=np.int64)
