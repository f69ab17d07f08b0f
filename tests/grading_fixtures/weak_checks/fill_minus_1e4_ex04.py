"""Masks with BERT's old finite fill (-10000) instead of -inf: right while every kept score is far above it.

Earned 10/10 before ex04 had masked large logits; now attention 6/6, masks 0/4 (mistake mask_fill_finite)."""
import math

import numpy as np


def attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])       # (..., T, S)
    if mask is not None:
        scores = np.where(mask, scores, -1e4)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights                                         # (..., T, d_v), (..., T, S)
