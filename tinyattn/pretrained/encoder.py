"""BERT and DistilBERT, written with the course's own modules: a bidirectional, post-LayerNorm encoder.

Where GPT-2 (a decoder) lets token t see only tokens 0..t, an encoder lets every token attend to every
other token in both directions; only padding is masked. BERT (Devlin et al. 2019) in four parts:

1. Embeddings: token + learned position (+ segment, "token type", for BERT: 0 for the first text of a
   pair, 1 for the second), then LayerNorm.
2. L encoder layers, each *post*-LayerNorm (the original Transformer's order; GPT-2 and the course's
   TransformerBlock normalise *before* each sublayer instead):
       x = LayerNorm(x + Attention(x))
       x = LayerNorm(x + Linear(GELU(Linear(x))))      GELU: the exact erf form
3. The masked-LM head (optional): Linear -> GELU -> LayerNorm, then a projection onto the vocabulary
   that reuses the word-embedding matrix (tied), plus a bias of one number per token.
4. DistilBERT is the same encoder with half the layers and no token types.
"""
from __future__ import annotations

import numpy as np

from .. import Tensor, arange, checks
from ..nn import GELU, Attention, Embedding, LayerNorm, Linear, Module, ModuleList, Sequential, init
from ..nn.hook_points import add_hook_points, hooked_layer_norm, hooked_mlp
from ..nn.hooked import HookedMixin
from .outputs import ModelOutput, model_inputs

__all__ = ["BertEmbeddings", "EncoderLayer", "MaskedLMHead", "BertModel"]


class BertEmbeddings(Module):
    """ids (B, T) [, token types (B, T)] -> LayerNorm(word + position [+ token type]) (B, T, C)."""

    def __init__(self, vocab_size: int, max_len: int, d_model: int, type_vocab_size: int, eps: float) -> None:
        super().__init__()
        self.word = Embedding(vocab_size, d_model)
        self.position = Embedding(max_len, d_model)
        self.token_type = Embedding(type_vocab_size, d_model) if type_vocab_size else None  # DistilBERT: none
        self.norm = LayerNorm(d_model, eps=eps)
        # TransformerLens's names (its BERT bridge): the three embeddings, and embed_ln for the LayerNorm.
        add_hook_points(self, "hook_embed", "hook_pos_embed", "hook_token_type_embed")
        add_hook_points(self.norm, "hook_scale", "hook_normalized")

    _lens_alias = {"norm": "embed_ln"}

    def forward(self, ids: Tensor, token_type_ids: Tensor | None = None) -> Tensor:
        T = ids.shape[1]
        pos = self.position(arange(T))  # (T, C): position t's row
        if self.hook_pos_embed.active:
            pos = self.hook_pos_embed(pos.expand(ids.shape[0], T, pos.shape[-1]))  # (B, T, C) for the hook
        x = self.hook_embed(self.word(ids)) + pos  # (B, T, C) + (T, C): the same rows for every sequence
        if self.token_type is not None:
            x = x + self.hook_token_type_embed(self.token_type(token_type_ids))  # (B, T, C): which text of a pair
        return hooked_layer_norm(self.norm, x)


class EncoderLayer(Module):
    """Post-LN encoder layer: x = ln1(x + attn(x)); x = ln2(x + ffn(x)). x (B, T, C) -> (B, T, C)."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, eps: float, gelu: str = "none") -> None:
        super().__init__()
        self.attn = Attention(d_model, n_heads)  # W_q, W_k, W_v, W_o: BERT's query, key, value, output.dense
        self.ln1 = LayerNorm(d_model, eps=eps)
        self.ffn = Sequential(Linear(d_model, d_ff), GELU(approximate=gelu), Linear(d_ff, d_model))
        self.ln2 = LayerNorm(d_model, eps=eps)
        # TransformerLens's names; post-LN: resid_mid = resid_pre + attn_out is what ln1 normalises,
        # resid_post = ln1's output + mlp_out is what ln2 normalises.
        add_hook_points(self, "hook_resid_pre", "hook_attn_out", "hook_resid_mid", "hook_mlp_out", "hook_resid_post")
        for ln in (self.ln1, self.ln2):
            add_hook_points(ln, "hook_scale", "hook_normalized")
        add_hook_points(self.ffn, "hook_pre", "hook_post")

    _lens_alias = {"ffn": "mlp"}

    def forward(self, x: Tensor, mask=None, return_weights: bool = False):
        """mask: (B, 1, 1, T) bool, True on real tokens (keys that may be attended); None = no padding."""
        x = self.hook_resid_pre(x)
        a = self.attn(x, mask=mask, return_weights=return_weights)  # bidirectional: no causal mask
        a, w = a if return_weights else (a, None)  # (B, T, C), (B, H, T, T)
        # post-LN: normalise the sum, so the residual stream itself is normalised
        x = hooked_layer_norm(self.ln1, self.hook_resid_mid(x + self.hook_attn_out(a)))
        m = hooked_mlp(self.ffn, x)  # (B, T, C), position-wise
        x = hooked_layer_norm(self.ln2, self.hook_resid_post(x + self.hook_mlp_out(m)))  # (B, T, C)
        return x, w


class MaskedLMHead(Module):
    """(B, T, C) -> logits (B, T, V) = norm(gelu(dense(h))) @ word_embeddings^T + bias."""

    def __init__(self, word: Embedding, eps: float, gelu: str = "none") -> None:
        super().__init__()
        V, C = word.weight.shape
        self.dense = Linear(C, C)
        self.act = GELU(approximate=gelu)
        self.norm = LayerNorm(C, eps=eps)
        self.decoder = Linear(C, V)
        self.decoder.weight = word.weight  # tied: one Parameter, the word-embedding matrix (V, C)
        init.zeros_(self.decoder.bias)
        add_hook_points(self.norm, "hook_scale", "hook_normalized")

    _lens_alias = {"norm": "ln_final"}  # TransformerLens's BERT bridge names the head's LayerNorm so

    def forward(self, h: Tensor) -> Tensor:
        return self.decoder(hooked_layer_norm(self.norm, self.act(self.dense(h))))  # (B, T, C) -> (B, T, V)


class BertModel(HookedMixin, Module):
    """A BERT or DistilBERT encoder (``family``), with the masked-LM head if ``mlm_head``.

    forward(input_ids (B, T), attention_mask=None (B, T) 0/1, token_type_ids=None (B, T) (BERT only),
    output_attentions=False, output_hidden_states=False) -> ModelOutput with last_hidden_state (B, T, C),
    attentions (a tuple of L (B, H, T, T)) if asked, hidden_states (L + 1 of (B, T, C)) if asked, and
    logits (B, T, V) if the model has the head.
    """

    def __init__(self, family: str, vocab_size: int, max_len: int, d_model: int, n_heads: int, n_layers: int,
                 d_ff: int, type_vocab_size: int, eps: float, gelu: str = "none", mlm_head: bool = True,
                 head_eps: float | None = None) -> None:
        super().__init__()
        self.family, self.vocab_size, self.max_len = family, vocab_size, max_len
        self.embeddings = BertEmbeddings(vocab_size, max_len, d_model, type_vocab_size, eps)
        self.layers = ModuleList([EncoderLayer(d_model, n_heads, d_ff, eps, gelu) for _ in range(n_layers)])
        self.head = MaskedLMHead(self.embeddings.word, eps if head_eps is None else head_eps, gelu) if mlm_head \
            else None

    # TransformerLens's names: layers -> blocks; the embeddings' and the head's hook points at the top level.
    _lens_alias = {"embeddings": "", "layers": "blocks", "head": ""}

    @property
    def n_layers(self) -> int:
        return len(self.layers)

    def extra_repr(self) -> str:
        return f"family={self.family!r}"

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, output_attentions: bool = False,
                output_hidden_states: bool = False, return_dict=None) -> ModelOutput:
        where = "BertModel" if self.family == "bert" else "DistilBertModel"
        ids, keep = model_inputs(input_ids, attention_mask, self.vocab_size, self.max_len, where)
        types = None
        if self.embeddings.token_type is not None:  # DistilBERT has none: it accepts token_type_ids and, as
            # Hugging Face's DistilBERT does, does not use them (a BERT tokenizer's output can be passed as it is)
            types = np.zeros_like(ids) if token_type_ids is None else np.asarray(getattr(token_type_ids, "_data",
                                                                                          token_type_ids))
            if types.shape != ids.shape:
                raise ValueError(f"{where}: token_type_ids has shape {types.shape} but input_ids has {ids.shape}")
            n_types = self.embeddings.token_type.weight.shape[0]
            types = checks.ids_in_range(types, n_types, "token_type_ids", where, n_name="type_vocab_size")
            types = Tensor(types.astype(np.int64, copy=False))
        mask = None if keep is None else keep[:, None, None, :]  # (B, 1, 1, T): padded keys masked for every query
        x = self.embeddings(Tensor(ids), types)  # (B, T, C)
        hidden, attentions = [x], []
        for layer in self.layers:
            x, w = layer(x, mask=mask, return_weights=output_attentions)  # (B, T, C), (B, H, T, T) or None
            hidden.append(x)
            attentions.append(w)
        return ModelOutput(last_hidden_state=x, logits=None if self.head is None else self.head(x),
                           attentions=tuple(attentions) if output_attentions else None,
                           hidden_states=tuple(hidden) if output_hidden_states else None)
