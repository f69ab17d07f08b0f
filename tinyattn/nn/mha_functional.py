"""F.multi_head_attention_forward: the function nn.MultiheadAttention runs, with PyTorch's arguments.

Code that keeps its own projection weights calls it directly (a CLIP-style attention pool passes
q_proj.weight, k_proj.weight, v_proj.weight with ``use_separate_proj_weight=True`` and the three biases
concatenated). The layout is always sequence first: query (L, B, E), key and value (S, B, E), or
unbatched (L, E) and (S, E). Masks mean what they mean in nn.MultiheadAttention: a bool mask marks with
True what may NOT be attended, a float mask is added to the scores.
"""
from __future__ import annotations

import math

import numpy as np

from .. import masks
from ..tensor import Tensor
from . import functional as F

__all__ = ["multi_head_attention_forward"]

_WHERE = "multi_head_attention_forward"


def multi_head_attention_forward(query, key, value, embed_dim_to_check: int, num_heads: int, in_proj_weight,
                                 in_proj_bias, bias_k, bias_v, add_zero_attn: bool, dropout_p: float,
                                 out_proj_weight, out_proj_bias, training: bool = True, key_padding_mask=None,
                                 need_weights: bool = True, attn_mask=None, use_separate_proj_weight: bool = False,
                                 q_proj_weight=None, k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights: bool = True, is_causal: bool = False) -> tuple:
    """-> (output (L, B, E), weights (B, L, S) averaged over heads, (B, H, L, S), or None)."""
    if bias_k is not None or bias_v is not None or add_zero_attn or static_k is not None or static_v is not None:
        raise NotImplementedError(f"{_WHERE}: bias_k/bias_v, add_zero_attn and static_k/static_v are not supported here")
    q_in, k_in, v_in = (x if isinstance(x, Tensor) else Tensor(x) for x in (query, key, value))
    if q_in.ndim not in (2, 3) or k_in.ndim != q_in.ndim or v_in.ndim != q_in.ndim:
        raise ValueError(f"{_WHERE} expects query, key and value all 3-D (T, B, E) or all 2-D (T, E), got shapes "
                         f"{q_in.shape}, {k_in.shape}, {v_in.shape}")
    if q_in.shape[-1] != embed_dim_to_check:
        raise ValueError(f"{_WHERE}: was expecting embedding dimension of {embed_dim_to_check}, but got {q_in.shape[-1]}")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                           "module method `generate_square_subsequent_mask` to create this mask.")
    unbatched = q_in.ndim == 2
    if unbatched:
        q_in, k_in, v_in = (x.unsqueeze(0) for x in (q_in, k_in, v_in))  # (1, T, E)
    else:
        q_in, k_in, v_in = (x.transpose(0, 1) for x in (q_in, k_in, v_in))  # (T, B, E) -> (B, T, E)
    E = embed_dim_to_check
    if E % num_heads:
        raise ValueError(f"{_WHERE}: embed_dim {E} not divisible by num_heads {num_heads}")
    B, L, S, H, d = q_in.shape[0], q_in.shape[1], k_in.shape[1], num_heads, E // num_heads
    if k_in.shape[:2] != v_in.shape[:2] or k_in.shape[0] != B:
        raise ValueError(f"{_WHERE}: key and value must share batch and length with each other and the batch of "
                         f"query; got query {tuple(query.shape)}, key {tuple(key.shape)}, value {tuple(value.shape)}")
    if use_separate_proj_weight:
        ws = (q_proj_weight, k_proj_weight, v_proj_weight)
        if any(w is None for w in ws):
            raise ValueError(f"{_WHERE}: use_separate_proj_weight is True but q_proj_weight, k_proj_weight or "
                             f"v_proj_weight is None")
    else:
        if in_proj_weight is None:
            raise ValueError(f"{_WHERE}: use_separate_proj_weight is False but in_proj_weight is None")
        ws = tuple(in_proj_weight[i * E:(i + 1) * E] for i in range(3))  # rows q, k, v
    bs = (None,) * 3 if in_proj_bias is None else tuple(in_proj_bias[i * E:(i + 1) * E] for i in range(3))
    q = F.linear(q_in, ws[0], bs[0]).view(B, L, H, d).transpose(1, 2)  # (B, L, E) -> (B, H, L, d)
    k = F.linear(k_in, ws[1], bs[1]).view(B, S, H, d).transpose(1, 2)  # (B, H, S, d)
    v = F.linear(v_in, ws[2], bs[2]).view(B, S, H, d).transpose(1, 2)  # (B, H, S, d)
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d))  # (B, H, L, S)
    bias = _mask(attn_mask, key_padding_mask, B, H, L, S, unbatched, scores.dtype)
    if bias is not None:
        scores = scores + Tensor(bias)
    weights = scores.softmax(-1)  # (B, H, L, S)
    if training and dropout_p > 0:
        weights = F.dropout(weights, dropout_p)
    out = (weights @ v).transpose(1, 2).reshape(B, L, E)  # (B, H, L, d) -> (B, L, E)
    out = F.linear(out, out_proj_weight, out_proj_bias)
    out = out.squeeze(0) if unbatched else out.transpose(0, 1)  # back to (T, B, E)
    if not need_weights:
        return out, None
    w = weights.mean(1) if average_attn_weights else weights  # (B, L, S) or (B, H, L, S)
    return out, (w.squeeze(0) if unbatched else w)


def _mask(attn_mask, key_padding_mask, B: int, H: int, L: int, S: int, unbatched: bool, dtype) -> np.ndarray | None:
    """attn_mask and key_padding_mask in PyTorch's meaning, as one additive (B, H, L, S)-broadcastable array."""
    a = masks.additive_blocked(attn_mask, "attn_mask", dtype)
    p = masks.additive_blocked(key_padding_mask, "key_padding_mask", dtype)
    total = None
    if a is not None:
        if a.shape == (L, S):
            total = a  # the same for every batch and head
        elif a.shape == (B * H, L, S):
            total = a.reshape(B, H, L, S)
        else:
            raise ValueError(f"MultiheadAttention: attn_mask must have shape (L, S) = ({L}, {S}) or "
                             f"(B * num_heads, L, S) = ({B * H}, {L}, {S}), got {a.shape}")
    if p is not None:
        want = (S,) if unbatched else (B, S)
        if p.shape != want:
            raise ValueError(f"MultiheadAttention: key_padding_mask must have shape {want} (True = a padded key), "
                             f"got {p.shape}")
        p = p.reshape(-1, 1, 1, S)  # (B, 1, 1, S): the same keys hidden for every head and query
        total = p if total is None else total + p
    return total
