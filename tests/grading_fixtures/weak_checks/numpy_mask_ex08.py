"""The reference module, but the mask applied in NumPy (np.where on scores.numpy(), wrapped back in a Tensor): the
values are right and the graph is cut, so W_q and W_k get no gradient through a masked forward. Earned 15/15 on
every seed 1-20 (no backward check had a mask); now 0/15, mistake graph_cut_by_numpy."""
import math

import numpy as np

import tinyattn
from tinyattn import nn


class MultiHeadAttention(nn.Module):
    """Multi-head self-attention: out = W_o(concat_h softmax(q_h k_hᵀ / sqrt(d_k), masked) v_h).

    Shapes:
        x: Tensor (B, T, C) with C = d_model
        mask: None, or a NumPy bool array broadcastable to (B, H, T, T); True = may attend
        returns: Tensor (B, T, C)
    """

    def __init__(self, d_model: int, n_heads: int) -> None:
        """Create the four projections W_q, W_k, W_v, W_o, each nn.Linear(d_model, d_model) with a bias.

        Raise ValueError (naming both numbers) if d_model is not divisible by n_heads.
        Keep n_heads and d_k = d_model // n_heads as attributes; forward needs them.
        """
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.n_heads, self.d_k = n_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)

    def forward(self, x, mask=None):
        """Self-attention over x (B, T, C) -> (B, T, C).

        Steps:
            1. q, k, v = W_q(x), W_k(x), W_v(x)                        each (B, T, C)
            2. split heads: .view(B, T, H, d_k).transpose(1, 2)        -> (B, H, T, d_k)
            3. scores = q @ k.transpose(-2, -1) / sqrt(d_k)             -> (B, H, T, T)
            4. masked_fill the positions where mask is False with -inf (masked_fill fills where
               ITS argument is True, so pass the negation: ~mask)
            5. weights = scores.softmax(dim=-1); out = weights @ v      -> (B, H, T, d_k)
            6. merge heads: .transpose(1, 2).reshape(B, T, C), then W_o
        Stay in Tensor ops from start to end: a detour through NumPy (.numpy(), np.*) cuts the graph
        and the weights get no gradient.
        """
        B, T, C = x.shape
        H, d_k = self.n_heads, self.d_k
        # (B, T, C) -> (B, T, H, d_k) -> (B, H, T, d_k): heads become a batch dim, tokens stay apart
        q = self.W_q(x).view(B, T, H, d_k).transpose(1, 2)
        k = self.W_k(x).view(B, T, H, d_k).transpose(1, 2)
        v = self.W_v(x).view(B, T, H, d_k).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)          # (B, H, T, d_k) @ (B, H, d_k, T) -> (B, H, T, T)
        if mask is not None:
            # True in `mask` means "may attend"; masked_fill fills where its mask is True, hence ~mask
            # the mask applied in NumPy: the values are right, the graph is cut (W_q and W_k get no gradient)
            scores = tinyattn.tensor(np.where(np.asarray(mask, dtype=bool), scores.numpy(), -np.inf))
        weights = scores.softmax(dim=-1)                           # over the keys
        out = weights @ v                                          # (B, H, T, T) @ (B, H, T, d_k) -> (B, H, T, d_k)
        out = out.transpose(1, 2).reshape(B, T, C)                 # (B, T, H, d_k) -> (B, T, C)
        return self.W_o(out)
