"""Seven ways tutorials write a transformer, each written ONCE against PyTorch's API (``build_*(lib)``).

``lib`` is the library module, ``tinyattn`` or ``torch``: the benchmark ``tutorial_styles`` times the
very same lines on both, the way a learner would run a tutorial after ``import tinyattn as torch``.
These are this project's own renderings of common styles, not copies of any tutorial:

=================  ==========================================================================================
``gelu_masked``    GPT whose GELU is written out (tanh form, ``pow(x, 3)``) and whose causal attention is
                   ``masked_fill`` on a ``tril`` buffer, then ``F.softmax``
``sdpa``           nanoGPT-like GPT on ``F.scaled_dot_product_attention(is_causal=True)`` (``gpt_model.py``)
``heads``          "build a GPT from scratch" style: every head its own module with its own key, query and
                   value Linear, heads concatenated, ReLU MLP, dropout everywhere
``bmm_encdec``     encoder-decoder whose attention is ``bmm`` over (B*H, T, d_k) and whose masked softmax is
                   written by hand (exp of the shifted scores, times the mask, over its row sum)
``book``           book-style GPT: an upper-triangular bool buffer filled with -inf, LayerNorm and GELU
                   written as modules of their own, dropout on embeddings, attention and shortcuts (the book
                   fills in place, ``masked_fill_``, which tinyattn refuses on a tensor already in the graph;
                   this one fills out of place)
``annotated``      encoder-decoder in the style of the Annotated Transformer: ``clones`` by deepcopy, an
                   ``attention()`` function, LayerNorm with an unbiased std, label-smoothed KL-divergence loss
``nn_transformer`` the translation-tutorial style on ``nn.Transformer`` with a square subsequent mask,
                   padding masks and ``CrossEntropyLoss(ignore_index=PAD)``
=================  ==========================================================================================

Every ``build_*(lib)`` returns ``(model, make_batch)``: ``make_batch(rng)`` turns a NumPy Generator into the
model's inputs (the same integers on both sides), and ``model(*batch)`` returns the scalar loss.
Sizes are each codebase's realistic small size: GPTs of 4 layers, 4 heads, width 128, block 128,
batch 8 (a character-level model); encoder-decoders of 2 + 2 layers, width 128, 4 heads, batch 16,
sources and targets of 32 tokens.
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np


@dataclass
class Size:
    vocab: int = 65        # GPTs: a character vocabulary; encoder-decoders: both vocabularies
    block: int = 128       # GPTs: context length; encoder-decoders: source and target length
    layers: int = 4        # GPTs: blocks; encoder-decoders: encoder layers (and as many decoder layers)
    heads: int = 4
    width: int = 128
    batch: int = 8
    dropout: float = 0.1


GPT_SIZE = Size()
ENCDEC_SIZE = Size(vocab=1000, block=32, layers=2, batch=16)
QUICK_SIZE = Size(vocab=11, block=8, layers=1, heads=2, width=16, batch=2)


def _lm_batch(lib, s: Size):
    def make_batch(rng):
        idx = rng.integers(0, s.vocab, size=(s.batch, s.block + 1))
        return lib.from_numpy(idx[:, :-1].copy()), lib.from_numpy(idx[:, 1:].copy())  # (B, T) inputs, next tokens
    return make_batch


def _pair_batch(lib, s: Size, pad: int = 0):
    def make_batch(rng):
        src = rng.integers(1, s.vocab, size=(s.batch, s.block))
        tgt = rng.integers(1, s.vocab, size=(s.batch, s.block + 1))
        src[: s.batch // 2, -s.block // 4:] = pad  # half the sentences end in padding
        tgt[: s.batch // 2, -s.block // 4:] = pad
        return lib.from_numpy(src), lib.from_numpy(tgt)
    return make_batch


# ------------------------------------------------------------------------------------------------
# 1. GPT with a written-out GELU and masked_fill + softmax causal attention
# ------------------------------------------------------------------------------------------------
def build_gelu_masked(lib, s: Size = GPT_SIZE):
    nn, F = lib.nn, lib.nn.functional

    class NewGELU(nn.Module):
        def forward(self, x):  # the tanh approximation, spelled out
            return 0.5 * x * (1.0 + lib.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * lib.pow(x, 3.0))))

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(s.width, 3 * s.width)
            self.c_proj = nn.Linear(s.width, s.width)
            self.register_buffer("bias", lib.tril(lib.ones(s.block, s.block)).view(1, 1, s.block, s.block))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(C, dim=2)  # 3 x (B, T, C)
            k = k.view(B, T, s.heads, C // s.heads).transpose(1, 2)  # (B, H, T, d_k)
            q = q.view(B, T, s.heads, C // s.heads).transpose(1, 2)  # (B, H, T, d_k)
            v = v.view(B, T, s.heads, C // s.heads).transpose(1, 2)  # (B, H, T, d_k)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # (B, H, T, T)
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ v  # (B, H, T, d_k)
            y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, H, d_k) -> (B, T, C)
            return self.c_proj(y)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn = nn.LayerNorm(s.width), CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(s.width)
            self.c_fc, self.act, self.c_proj = nn.Linear(s.width, 4 * s.width), NewGELU(), nn.Linear(4 * s.width, s.width)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.c_proj(self.act(self.c_fc(self.ln_2(x))))  # (B, T, 4C) inside

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(s.vocab, s.width), nn.Embedding(s.block, s.width)
            self.h = nn.ModuleList([Block() for _ in range(s.layers)])
            self.ln_f = nn.LayerNorm(s.width)
            self.lm_head = nn.Linear(s.width, s.vocab, bias=False)

        def forward(self, idx, targets):
            B, T = idx.size()
            x = self.wte(idx) + self.wpe(lib.arange(0, T))  # (B, T, C)
            for block in self.h:
                x = block(x)
            logits = self.lm_head(self.ln_f(x))  # (B, T, vocab)
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    return GPT(), _lm_batch(lib, s)


# ------------------------------------------------------------------------------------------------
# 2. nanoGPT-like GPT on F.scaled_dot_product_attention (the torch_cpu benchmark's model)
# ------------------------------------------------------------------------------------------------
def build_sdpa(lib, s: Size = GPT_SIZE):
    from .gpt_model import GPTConfig, build
    cfg = GPTConfig(vocab_size=s.vocab, block_size=s.block, n_layer=s.layers, n_head=s.heads, n_embd=s.width)
    return build(lib)(cfg), _lm_batch(lib, s)


# ------------------------------------------------------------------------------------------------
# 3. every head its own module ("build a GPT from scratch" style)
# ------------------------------------------------------------------------------------------------
def build_heads(lib, s: Size = GPT_SIZE):
    nn, F = lib.nn, lib.nn.functional
    head_size = s.width // s.heads

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.key = nn.Linear(s.width, head_size, bias=False)
            self.query = nn.Linear(s.width, head_size, bias=False)
            self.value = nn.Linear(s.width, head_size, bias=False)
            self.register_buffer("tril", lib.tril(lib.ones(s.block, s.block)))
            self.dropout = nn.Dropout(s.dropout)

        def forward(self, x):
            B, T, C = x.shape
            k, q = self.key(x), self.query(x)  # (B, T, hs)
            wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5  # (B, T, hs) @ (B, hs, T) -> (B, T, T)
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
            wei = self.dropout(F.softmax(wei, dim=-1))
            return wei @ self.value(x)  # (B, T, T) @ (B, T, hs) -> (B, T, hs)

    class MultiHeadAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleList([Head() for _ in range(s.heads)])
            self.proj = nn.Linear(s.width, s.width)
            self.dropout = nn.Dropout(s.dropout)

        def forward(self, x):
            out = lib.cat([h(x) for h in self.heads], dim=-1)  # (B, T, H * hs)
            return self.dropout(self.proj(out))

    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(s.width, 4 * s.width), nn.ReLU(), nn.Linear(4 * s.width, s.width),
                                     nn.Dropout(s.dropout))

        def forward(self, x):
            return self.net(x)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.sa, self.ffwd = MultiHeadAttention(), FeedForward()
            self.ln1, self.ln2 = nn.LayerNorm(s.width), nn.LayerNorm(s.width)

        def forward(self, x):
            x = x + self.sa(self.ln1(x))
            return x + self.ffwd(self.ln2(x))

    class GPTLanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.token_embedding_table = nn.Embedding(s.vocab, s.width)
            self.position_embedding_table = nn.Embedding(s.block, s.width)
            self.blocks = nn.Sequential(*[Block() for _ in range(s.layers)])
            self.ln_f = nn.LayerNorm(s.width)
            self.lm_head = nn.Linear(s.width, s.vocab)

        def forward(self, idx, targets):
            B, T = idx.shape
            x = self.token_embedding_table(idx) + self.position_embedding_table(lib.arange(T))  # (B, T, C)
            logits = self.lm_head(self.ln_f(self.blocks(x)))  # (B, T, vocab)
            B, T, C = logits.shape
            return F.cross_entropy(logits.view(B * T, C), targets.view(B * T))

    return GPTLanguageModel(), _lm_batch(lib, s)


# ------------------------------------------------------------------------------------------------
# 4. encoder-decoder with bmm and a masked softmax written by hand
# ------------------------------------------------------------------------------------------------
def _sinusoids(lib, n: int, d: int):
    pos = np.arange(n)[:, None] / np.power(10000.0, np.arange(0, d, 2) / d)  # (n, d/2)
    pe = np.zeros((n, d), np.float32)
    pe[:, 0::2], pe[:, 1::2] = np.sin(pos), np.cos(pos)
    return lib.from_numpy(pe)  # (n, d)


def build_bmm_encdec(lib, s: Size = ENCDEC_SIZE):
    nn, F = lib.nn, lib.nn.functional
    PAD = 0

    def masked_softmax(scores, mask):
        """softmax over the last axis where mask is 1; (B*H, Tq, Tk) scores, mask broadcastable to them."""
        e = lib.exp(scores - scores.max(dim=-1, keepdim=True).values) * mask
        return e / e.sum(dim=-1, keepdim=True)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.W_q, self.W_k = nn.Linear(s.width, s.width), nn.Linear(s.width, s.width)
            self.W_v, self.W_o = nn.Linear(s.width, s.width), nn.Linear(s.width, s.width)

        def split(self, x):  # (B, T, C) -> (B*H, T, d_k)
            B, T, C = x.shape
            return x.reshape(B, T, s.heads, C // s.heads).permute(0, 2, 1, 3).reshape(B * s.heads, T, C // s.heads)

        def forward(self, x, mem, mask):  # mask (B*H, Tq or 1, Tk) of 0/1
            B, T, C = x.shape
            q, k, v = self.split(self.W_q(x)), self.split(self.W_k(mem)), self.split(self.W_v(mem))
            scores = lib.bmm(q, k.transpose(1, 2)) / math.sqrt(C // s.heads)  # (B*H, Tq, Tk)
            out = lib.bmm(masked_softmax(scores, mask), v)  # (B*H, Tq, d_k)
            out = out.reshape(B, s.heads, T, C // s.heads).permute(0, 2, 1, 3).reshape(B, T, C)  # (B, T, C)
            return self.W_o(out)

    class FFN(nn.Module):
        def __init__(self):
            super().__init__()
            self.dense1, self.relu, self.dense2 = nn.Linear(s.width, 4 * s.width), nn.ReLU(), nn.Linear(4 * s.width, s.width)

        def forward(self, x):
            return self.dense2(self.relu(self.dense1(x)))

    class AddNorm(nn.Module):  # post-norm residual
        def __init__(self):
            super().__init__()
            self.dropout, self.ln = nn.Dropout(s.dropout), nn.LayerNorm(s.width)

        def forward(self, x, y):
            return self.ln(self.dropout(y) + x)

    class EncoderLayer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn, self.an1, self.ffn, self.an2 = Attention(), AddNorm(), FFN(), AddNorm()

        def forward(self, x, mask):
            y = self.an1(x, self.attn(x, x, mask))
            return self.an2(y, self.ffn(y))

    class DecoderLayer(nn.Module):
        def __init__(self):
            super().__init__()
            self.self_attn, self.an1, self.cross, self.an2 = Attention(), AddNorm(), Attention(), AddNorm()
            self.ffn, self.an3 = FFN(), AddNorm()

        def forward(self, x, mem, self_mask, cross_mask):
            y = self.an1(x, self.self_attn(x, x, self_mask))
            z = self.an2(y, self.cross(y, mem, cross_mask))
            return self.an3(z, self.ffn(z))

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_emb, self.tgt_emb = nn.Embedding(s.vocab, s.width), nn.Embedding(s.vocab, s.width)
            self.register_buffer("pe", _sinusoids(lib, 512, s.width))
            self.enc = nn.ModuleList([EncoderLayer() for _ in range(s.layers)])
            self.dec = nn.ModuleList([DecoderLayer() for _ in range(s.layers)])
            self.out = nn.Linear(s.width, s.vocab)
            self.dropout = nn.Dropout(s.dropout)

        def forward(self, src, tgt):
            tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
            B, S = src.shape
            T = tgt_in.shape[1]
            keys_ok = (src != PAD).float().repeat_interleave(s.heads, dim=0).unsqueeze(1)  # (B*H, 1, S)
            causal = lib.tril(lib.ones(T, T)).unsqueeze(0)  # (1, T, T)
            x = self.dropout(self.src_emb(src) * math.sqrt(s.width) + self.pe[:S])  # (B, S, C)
            for layer in self.enc:
                x = layer(x, keys_ok)
            y = self.dropout(self.tgt_emb(tgt_in) * math.sqrt(s.width) + self.pe[:T])  # (B, T, C)
            for layer in self.dec:
                y = layer(y, x, causal, keys_ok)
            logits = self.out(y)  # (B, T, vocab)
            return F.cross_entropy(logits.reshape(-1, s.vocab), tgt_out.reshape(-1), ignore_index=PAD)

    return Seq2Seq(), _pair_batch(lib, s, PAD)


# ------------------------------------------------------------------------------------------------
# 5. book-style GPT: masked_fill_, LayerNorm and GELU as modules of their own, dropout throughout
# ------------------------------------------------------------------------------------------------
def build_book(lib, s: Size = GPT_SIZE):
    nn = lib.nn

    class MultiHeadAttention(nn.Module):
        def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
            super().__init__()
            self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
            self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
            self.out_proj = nn.Linear(d_out, d_out)
            self.dropout = nn.Dropout(dropout)
            self.register_buffer("mask", lib.triu(lib.ones(context_length, context_length), diagonal=1))

        def forward(self, x):
            b, num_tokens, d_in = x.shape
            keys = self.W_key(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)  # (b, H, T, hd)
            queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
            values = self.W_value(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
            attn_scores = queries @ keys.transpose(2, 3)  # (b, H, T, T)
            mask_bool = self.mask.bool()[:num_tokens, :num_tokens]
            # The book fills in place (attn_scores.masked_fill_), which tinyattn refuses on a tensor that is
            # already part of the graph; the out-of-place fill computes the same thing in both libraries.
            attn_scores = attn_scores.masked_fill(mask_bool, float("-inf"))
            attn_weights = lib.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
            attn_weights = self.dropout(attn_weights)
            context = (attn_weights @ values).transpose(1, 2)  # (b, T, H, hd)
            context = context.contiguous().view(b, num_tokens, self.d_out)  # (b, T, d_out)
            return self.out_proj(context)

    class LayerNorm(nn.Module):
        def __init__(self, emb_dim):
            super().__init__()
            self.eps = 1e-5
            self.scale = nn.Parameter(lib.ones(emb_dim))
            self.shift = nn.Parameter(lib.zeros(emb_dim))

        def forward(self, x):
            mean = x.mean(dim=-1, keepdim=True)
            var = x.var(dim=-1, keepdim=True, unbiased=False)
            return self.scale * ((x - mean) / lib.sqrt(var + self.eps)) + self.shift

    class GELU(nn.Module):
        def forward(self, x):
            return 0.5 * x * (1 + lib.tanh(lib.sqrt(lib.tensor(2.0 / math.pi)) * (x + 0.044715 * lib.pow(x, 3))))

    class FeedForward(nn.Module):
        def __init__(self, emb_dim):
            super().__init__()
            self.layers = nn.Sequential(nn.Linear(emb_dim, 4 * emb_dim), GELU(), nn.Linear(4 * emb_dim, emb_dim))

        def forward(self, x):
            return self.layers(x)

    class TransformerBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.att = MultiHeadAttention(s.width, s.width, s.block, s.dropout, s.heads)
            self.ff = FeedForward(s.width)
            self.norm1, self.norm2 = LayerNorm(s.width), LayerNorm(s.width)
            self.drop_shortcut = nn.Dropout(s.dropout)

        def forward(self, x):
            x = self.drop_shortcut(self.att(self.norm1(x))) + x
            return self.drop_shortcut(self.ff(self.norm2(x))) + x

    class GPTModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_emb, self.pos_emb = nn.Embedding(s.vocab, s.width), nn.Embedding(s.block, s.width)
            self.drop_emb = nn.Dropout(s.dropout)
            self.trf_blocks = nn.Sequential(*[TransformerBlock() for _ in range(s.layers)])
            self.final_norm = LayerNorm(s.width)
            self.out_head = nn.Linear(s.width, s.vocab, bias=False)

        def forward(self, in_idx, target):
            batch_size, seq_len = in_idx.shape
            x = self.drop_emb(self.tok_emb(in_idx) + self.pos_emb(lib.arange(seq_len)))  # (b, T, C)
            logits = self.out_head(self.final_norm(self.trf_blocks(x)))  # (b, T, vocab)
            return lib.nn.functional.cross_entropy(logits.flatten(0, 1), target.flatten())

    return GPTModel(), _lm_batch(lib, s)


# ------------------------------------------------------------------------------------------------
# 6. Annotated-Transformer-style encoder-decoder
# ------------------------------------------------------------------------------------------------
def build_annotated(lib, s: Size = ENCDEC_SIZE):
    nn, F = lib.nn, lib.nn.functional
    PAD = 0

    def clones(module, N):
        return nn.ModuleList([copy.deepcopy(module) for _ in range(N)])

    def attention(query, key, value, mask=None, dropout=None):
        d_k = query.size(-1)
        scores = lib.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)  # (B, H, Tq, Tk)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        p_attn = scores.softmax(dim=-1)
        if dropout is not None:
            p_attn = dropout(p_attn)
        return lib.matmul(p_attn, value), p_attn  # (B, H, Tq, d_k)

    class MultiHeadedAttention(nn.Module):
        def __init__(self, h, d_model, dropout=0.1):
            super().__init__()
            self.d_k, self.h = d_model // h, h
            self.linears = clones(nn.Linear(d_model, d_model), 4)
            self.dropout = nn.Dropout(p=dropout)

        def forward(self, query, key, value, mask=None):
            if mask is not None:
                mask = mask.unsqueeze(1)  # the same mask for every head
            nbatches = query.size(0)
            query, key, value = [lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)  # (B, H, T, d_k)
                                 for lin, x in zip(self.linears, (query, key, value))]
            x, _ = attention(query, key, value, mask=mask, dropout=self.dropout)
            x = x.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)  # (B, T, C)
            return self.linears[-1](x)

    class LayerNorm(nn.Module):
        def __init__(self, features, eps=1e-6):
            super().__init__()
            self.a_2, self.b_2, self.eps = nn.Parameter(lib.ones(features)), nn.Parameter(lib.zeros(features)), eps

        def forward(self, x):
            mean, std = x.mean(-1, keepdim=True), x.std(-1, keepdim=True)
            return self.a_2 * (x - mean) / (std + self.eps) + self.b_2

    class SublayerConnection(nn.Module):
        def __init__(self, size, dropout):
            super().__init__()
            self.norm, self.dropout = LayerNorm(size), nn.Dropout(dropout)

        def forward(self, x, sublayer):
            return x + self.dropout(sublayer(self.norm(x)))

    class PositionwiseFeedForward(nn.Module):
        def __init__(self, d_model, d_ff, dropout=0.1):
            super().__init__()
            self.w_1, self.w_2, self.dropout = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model), nn.Dropout(dropout)

        def forward(self, x):
            return self.w_2(self.dropout(self.w_1(x).relu()))

    class EncoderLayer(nn.Module):
        def __init__(self, size, self_attn, feed_forward, dropout):
            super().__init__()
            self.self_attn, self.feed_forward = self_attn, feed_forward
            self.sublayer, self.size = clones(SublayerConnection(size, dropout), 2), size

        def forward(self, x, mask):
            x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, mask))
            return self.sublayer[1](x, self.feed_forward)

    class DecoderLayer(nn.Module):
        def __init__(self, size, self_attn, src_attn, feed_forward, dropout):
            super().__init__()
            self.size, self.self_attn, self.src_attn, self.feed_forward = size, self_attn, src_attn, feed_forward
            self.sublayer = clones(SublayerConnection(size, dropout), 3)

        def forward(self, x, memory, src_mask, tgt_mask):
            m = memory
            x = self.sublayer[0](x, lambda x: self.self_attn(x, x, x, tgt_mask))
            x = self.sublayer[1](x, lambda x: self.src_attn(x, m, m, src_mask))
            return self.sublayer[2](x, self.feed_forward)

    class Stack(nn.Module):
        def __init__(self, layer, N):
            super().__init__()
            self.layers, self.norm = clones(layer, N), LayerNorm(layer.size)

        def forward(self, x, *args):
            for layer in self.layers:
                x = layer(x, *args)
            return self.norm(x)

    class Embeddings(nn.Module):
        def __init__(self, d_model, vocab):
            super().__init__()
            self.lut, self.d_model = nn.Embedding(vocab, d_model), d_model

        def forward(self, x):
            return self.lut(x) * math.sqrt(self.d_model)

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout, max_len=512):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            self.register_buffer("pe", _sinusoids(lib, max_len, d_model).unsqueeze(0))  # (1, max_len, C)

        def forward(self, x):
            return self.dropout(x + self.pe[:, : x.size(1)].requires_grad_(False))

    class Generator(nn.Module):
        def __init__(self, d_model, vocab):
            super().__init__()
            self.proj = nn.Linear(d_model, vocab)

        def forward(self, x):
            return F.log_softmax(self.proj(x), dim=-1)

    class LabelSmoothing(nn.Module):
        def __init__(self, size, padding_idx, smoothing=0.1):
            super().__init__()
            self.criterion = nn.KLDivLoss(reduction="sum")
            self.padding_idx, self.confidence, self.smoothing, self.size = padding_idx, 1.0 - smoothing, smoothing, size

        def forward(self, x, target):  # x (N, vocab) log-probabilities, target (N,)
            true_dist = x.detach().clone()
            true_dist.fill_(self.smoothing / (self.size - 2))
            true_dist.scatter_(1, target.unsqueeze(1), self.confidence)
            true_dist[:, self.padding_idx] = 0
            true_dist = true_dist * (target != self.padding_idx).float().unsqueeze(1)  # padded rows score nothing
            return self.criterion(x, true_dist.detach())

    class EncoderDecoder(nn.Module):
        def __init__(self, N, d_model, d_ff, h, dropout):
            super().__init__()
            c = copy.deepcopy
            attn, ff = MultiHeadedAttention(h, d_model), PositionwiseFeedForward(d_model, d_ff, dropout)
            position = PositionalEncoding(d_model, dropout)
            self.encoder = Stack(EncoderLayer(d_model, c(attn), c(ff), dropout), N)
            self.decoder = Stack(DecoderLayer(d_model, c(attn), c(attn), c(ff), dropout), N)
            self.src_embed = nn.Sequential(Embeddings(d_model, s.vocab), c(position))
            self.tgt_embed = nn.Sequential(Embeddings(d_model, s.vocab), c(position))
            self.generator = Generator(d_model, s.vocab)
            self.criterion = LabelSmoothing(s.vocab, PAD)

        def forward(self, src, tgt):
            tgt_in, tgt_y = tgt[:, :-1], tgt[:, 1:]
            src_mask = (src != PAD).unsqueeze(-2)  # (B, 1, S)
            T = tgt_in.size(-1)
            subsequent = lib.triu(lib.ones((1, T, T)), diagonal=1) == 0  # (1, T, T)
            tgt_mask = (tgt_in != PAD).unsqueeze(-2) & subsequent  # (B, T, T)
            memory = self.encoder(self.src_embed(src), src_mask)
            out = self.decoder(self.tgt_embed(tgt_in), memory, src_mask, tgt_mask)
            x = self.generator(out)  # (B, T, vocab) log-probabilities
            ntokens = (tgt_y != PAD).sum()
            return self.criterion(x.contiguous().view(-1, x.size(-1)), tgt_y.contiguous().view(-1)) / ntokens

    model = EncoderDecoder(s.layers, s.width, 4 * s.width, s.heads, s.dropout)
    for p in model.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)
    return model, _pair_batch(lib, s, PAD)


# ------------------------------------------------------------------------------------------------
# 7. translation-tutorial style on nn.Transformer
# ------------------------------------------------------------------------------------------------
def build_nn_transformer(lib, s: Size = ENCDEC_SIZE):
    nn = lib.nn
    PAD = 0

    class PositionalEncoding(nn.Module):
        def __init__(self, emb_size, dropout, maxlen=512):
            super().__init__()
            self.dropout = nn.Dropout(dropout)
            self.register_buffer("pos_embedding", _sinusoids(lib, maxlen, emb_size).unsqueeze(0))  # (1, maxlen, E)

        def forward(self, token_embedding):
            return self.dropout(token_embedding + self.pos_embedding[:, : token_embedding.size(1), :])

    class TokenEmbedding(nn.Module):
        def __init__(self, vocab_size, emb_size):
            super().__init__()
            self.embedding, self.emb_size = nn.Embedding(vocab_size, emb_size), emb_size

        def forward(self, tokens):
            return self.embedding(tokens.long()) * math.sqrt(self.emb_size)

    class Seq2SeqTransformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.Transformer(d_model=s.width, nhead=s.heads, num_encoder_layers=s.layers,
                                              num_decoder_layers=s.layers, dim_feedforward=4 * s.width,
                                              dropout=s.dropout, batch_first=True)
            self.generator = nn.Linear(s.width, s.vocab)
            self.src_tok_emb, self.tgt_tok_emb = TokenEmbedding(s.vocab, s.width), TokenEmbedding(s.vocab, s.width)
            self.positional_encoding = PositionalEncoding(s.width, dropout=s.dropout)
            self.loss_fn = nn.CrossEntropyLoss(ignore_index=PAD)

        def forward(self, src, tgt):
            tgt_input, tgt_out = tgt[:, :-1], tgt[:, 1:]
            T = tgt_input.shape[1]
            tgt_mask = nn.Transformer.generate_square_subsequent_mask(T)  # (T, T) float, -inf above the diagonal
            src_padding_mask, tgt_padding_mask = src == PAD, tgt_input == PAD  # (B, S), (B, T) True = padding
            src_emb = self.positional_encoding(self.src_tok_emb(src))  # (B, S, E)
            tgt_emb = self.positional_encoding(self.tgt_tok_emb(tgt_input))  # (B, T, E)
            outs = self.transformer(src_emb, tgt_emb, None, tgt_mask, None, src_padding_mask, tgt_padding_mask,
                                    src_padding_mask)  # (B, T, E)
            logits = self.generator(outs)  # (B, T, vocab)
            return self.loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))

    return Seq2SeqTransformer(), _pair_batch(lib, s, PAD)


STYLES = {
    "gelu_masked": build_gelu_masked,
    "sdpa": build_sdpa,
    "heads": build_heads,
    "bmm_encdec": build_bmm_encdec,
    "book": build_book,
    "annotated": build_annotated,
    "nn_transformer": build_nn_transformer,
}
