"""PyTorch's own attention layers, with its names, arguments, layouts, masks and state_dict keys:
nn.MultiheadAttention, TransformerEncoderLayer / TransformerEncoder, TransformerDecoderLayer /
TransformerDecoder and Transformer, so tutorial code built on them runs unchanged.

tinyattn's Attention and TransformerBlock (attention.py, transformer.py) are the course's
layers; these follow PyTorch where the two differ:
  * layout: (T, B, E), sequence first, unless ``batch_first=True``; unbatched (T, E) works too;
  * masks are the other way round from scaled_dot_product_attention's: a bool ``attn_mask`` or
    ``key_padding_mask`` marks with True what may NOT be attended; a float mask is added to the scores
    (``Transformer.generate_square_subsequent_mask(T)`` is 0 on and below the diagonal, -inf above);
  * the projections are packed as PyTorch stores them: ``in_proj_weight`` (3E, E), rows q, k, v;
  * the encoder and decoder layers are post-norm (``norm_first=False``) with ReLU, unless told otherwise.
"""
from __future__ import annotations

import copy
import math
from collections.abc import Callable

import numpy as np

from .. import checks
from ..tensor import Tensor, get_default_dtype
from . import functional as F
from . import init
from .layers import Dropout, LayerNorm, Linear
from .mha_functional import multi_head_attention_forward
from .module import Module, ModuleList, Parameter

__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer",
           "TransformerDecoder", "Transformer"]


class MultiheadAttention(Module):
    """torch.nn.MultiheadAttention: softmax(q k^T / sqrt(d) + masks) v over ``num_heads`` heads of size
    d = embed_dim / num_heads, with the q, k, v projections packed in ``in_proj_weight`` and ``out_proj``.

    forward(query (L, B, E), key (S, B, kdim), value (S, B, vdim), key_padding_mask (B, S)=None,
    need_weights=True, attn_mask (L, S) or (B * num_heads, L, S)=None, average_attn_weights=True,
    is_causal=False) -> (output (L, B, E), weights (B, L, S) averaged over heads, (B, H, L, S), or None).
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False) -> None:
        super().__init__()
        self.embed_dim = checks.positive_int("embed_dim", embed_dim, "MultiheadAttention")
        self.num_heads = checks.positive_int("num_heads", num_heads, "MultiheadAttention")
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim={embed_dim} must be divisible by num_heads={num_heads}")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv and add_zero_attn are not supported here")
        self.dropout = checks.probability("dropout", dropout, "MultiheadAttention")
        self.batch_first, self.head_dim = bool(batch_first), embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else checks.positive_int("kdim", kdim, "MultiheadAttention")
        self.vdim = embed_dim if vdim is None else checks.positive_int("vdim", vdim, "MultiheadAttention")
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        E, dt = embed_dim, get_default_dtype()
        if self._qkv_same_embed_dim:  # one (3E, E) weight, rows [0:E] q, [E:2E] k, [2E:3E] v
            self.in_proj_weight = Parameter(np.empty((3 * E, E), dtype=dt))
            init.xavier_uniform_(self.in_proj_weight)
        else:
            self.register_parameter("in_proj_weight", None)
        for name, n_in in (("q_proj_weight", E), ("k_proj_weight", self.kdim), ("v_proj_weight", self.vdim)):
            # declared either way, None when packed, as PyTorch's (code that walks all four names reads them)
            self.register_parameter(name, None if self._qkv_same_embed_dim else Parameter(np.empty((E, n_in), dtype=dt)))
            if not self._qkv_same_embed_dim:
                init.xavier_uniform_(getattr(self, name))
        if bias:
            self.in_proj_bias = Parameter(np.zeros(3 * E, dtype=dt))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(E, E, bias=bias)
        self.bias_k = self.bias_v = None  # (add_bias_kv is refused above)
        self.add_zero_attn = False
        if bias:
            init.zeros_(self.out_proj.bias)

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True, attn_mask=None,
                average_attn_weights: bool = True, is_causal: bool = False) -> tuple:
        q_in, k_in, v_in = (x if isinstance(x, Tensor) else Tensor(x) for x in (query, key, value))
        if q_in.ndim not in (2, 3) or k_in.ndim != q_in.ndim or v_in.ndim != q_in.ndim:
            raise ValueError(f"MultiheadAttention expects query, key and value all 3-D ({'(B, T, E)' if self.batch_first else '(T, B, E)'}, "
                             f"batch_first={self.batch_first}) or all 2-D (T, E), got shapes {q_in.shape}, "
                             f"{k_in.shape}, {v_in.shape}")
        for x, n, what in ((q_in, self.embed_dim, "query"), (k_in, self.kdim, "key"), (v_in, self.vdim, "value")):
            if x.shape[-1] != n:
                raise ValueError(f"MultiheadAttention: {what} has {x.shape[-1]} features in its last dim, expected {n}")
        batch_first = self.batch_first and q_in.ndim == 3
        if batch_first:
            q_in, k_in, v_in = (x.transpose(0, 1) for x in (q_in, k_in, v_in))  # (B, T, E) -> (T, B, E)
        out, w = multi_head_attention_forward(
            q_in, k_in, v_in, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        return (out.transpose(0, 1) if batch_first else out), w

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, batch_first={self.batch_first}"


def _activation(activation) -> Callable:
    if callable(activation):
        return activation
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise ValueError(f"activation should be relu/gelu (or a callable), not {activation!r}")


class TransformerEncoderLayer(Module):
    """torch.nn.TransformerEncoderLayer: self-attention then a feed-forward block, each with dropout, a
    residual and LayerNorm; post-norm (x = norm(x + f(x))) unless ``norm_first=True`` (x = x + f(norm(x))).

    forward(src (T, B, E), src_mask=None, src_key_padding_mask=None, is_causal=False) -> (T, B, E).
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)
        self.norm_first = bool(norm_first)
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1, self.dropout2 = Dropout(dropout), Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False) -> Tensor:
        x = src if isinstance(src, Tensor) else Tensor(src)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal) -> Tensor:
        out = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                             need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(out)

    def _ff_block(self, x) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """torch.nn.TransformerDecoderLayer: masked self-attention, attention over the encoder's output
    (``memory``), then a feed-forward block; each with dropout, a residual and LayerNorm.

    forward(tgt (T, B, E), memory (S, B, E), tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False) -> (T, B, E).
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)
        self.norm_first = bool(norm_first)
        self.norm1, self.norm2, self.norm3 = (LayerNorm(d_model, eps=layer_norm_eps, bias=bias) for _ in range(3))
        self.dropout1, self.dropout2, self.dropout3 = Dropout(dropout), Dropout(dropout), Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        x = tgt if isinstance(tgt, Tensor) else Tensor(tgt)
        sa = lambda y: self.dropout1(self.self_attn(y, y, y, attn_mask=tgt_mask, key_padding_mask=tgt_key_padding_mask,  # noqa: E731
                                                    need_weights=False, is_causal=tgt_is_causal)[0])
        mha = lambda y: self.dropout2(self.multihead_attn(y, memory, memory, attn_mask=memory_mask,  # noqa: E731
                                                          key_padding_mask=memory_key_padding_mask,
                                                          need_weights=False, is_causal=memory_is_causal)[0])
        ff = lambda y: self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(y)))))  # noqa: E731
        if self.norm_first:
            x = x + sa(self.norm1(x))
            x = x + mha(self.norm2(x))
            return x + ff(self.norm3(x))
        x = self.norm1(x + sa(x))
        x = self.norm2(x + mha(x))
        return self.norm3(x + ff(x))


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` (each starts as an exact copy, as in PyTorch), then ``norm``."""

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(
            checks.positive_int("num_layers", num_layers, "TransformerEncoder"))])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal: bool | None = None) -> Tensor:
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        return out if self.norm is None else self.norm(out)


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer``, then ``norm``."""

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(
            checks.positive_int("num_layers", num_layers, "TransformerDecoder"))])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                        tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return out if self.norm is None else self.norm(out)


class Transformer(Module):
    """torch.nn.Transformer: an encoder and a decoder stack, each ending in LayerNorm; every weight
    matrix re-drawn Xavier-uniform, as PyTorch does.

    forward(src (S, B, E), tgt (T, B, E), src_mask, tgt_mask, memory_mask, src_key_padding_mask,
    tgt_key_padding_mask, memory_key_padding_mask, ...) -> (T, B, E).
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1, activation="relu", custom_encoder=None,
                 custom_decoder=None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True) -> None:
        super().__init__()
        opts = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                    layer_norm_eps=layer_norm_eps, batch_first=batch_first, norm_first=norm_first, bias=bias)
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **opts), num_encoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **opts), num_decoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal: bool = False) -> Tensor:
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """The causal mask as PyTorch's layers want it: (sz, sz) floats, 0 where j <= i and -inf above."""
        sz = checks.positive_int("sz", sz, "generate_square_subsequent_mask")
        upper = np.triu(np.ones((sz, sz), dtype=bool), k=1)  # (sz, sz) True above the diagonal: the future
        return Tensor(np.where(upper, -np.inf, 0.0).astype(dtype or get_default_dtype()))
