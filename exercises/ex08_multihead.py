"""Exercise 08 · a MultiHeadAttention module on tinyattn's autograd.
Points: 15 (ready after notebook 05).

Here you work with tinyattn Tensors, not NumPy arrays, exactly as you would in PyTorch: build the
module from nn.Linear layers and Tensor ops (view/reshape, transpose, @, softmax, masked_fill), and
autograd gives you the backward pass for free.
Allowed: NumPy, the Python standard library, tinyattn Tensors and their ops, nn.Module, nn.Linear,
nn.Parameter, nn.Dropout, nn.ModuleList and nn.functional's building blocks (softmax, linear,
dropout, ...); not tinyattn's own attention code (nn.Attention, nn.MultiheadAttention and the other
attention layers, F.scaled_dot_product_attention, F.attention, F.flash_attention, tinyattn.masks):
the sandbox holds a tinyattn without them. No exercise may import torch, tensorflow, jax,
scipy.special or the grader (tinyattn.grading).
Grade yourself with:  tinyattn grade --only ex08
"""
import math

import numpy as np

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
        raise NotImplementedError("ex08: implement MultiHeadAttention.__init__")

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
        raise NotImplementedError("ex08: implement MultiHeadAttention.forward")
