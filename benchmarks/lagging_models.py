"""Three more shapes of tutorial code, each written ONCE against PyTorch's API (``build_*(lib)``), where
PyTorch's lead over NumPy shows most (many small ops, exact GELU, recurrent loops):

=================  ==========================================================================================
``vit``            Vision Transformer: 32x32 RGB images cut into 4x4 patches by ``view``/``permute`` (no
                   convolution), a linear patch embedding, a learned class token and position embedding,
                   pre-norm blocks (LayerNorm, multi-head attention written out with a fused qkv Linear,
                   ``chunk`` and softmax; LayerNorm, Linear, ``nn.GELU()`` (exact), Linear), a head on the
                   class token, cross-entropy over 10 classes
``gru_attn``       sequence-to-sequence translation in the style of the PyTorch "NLP from scratch" tutorial,
                   batched: an ``nn.GRU`` encoder, a decoder that loops over the target with ``nn.GRUCell``,
                   additive (Bahdanau) attention ``v^T tanh(W q + U k)`` over the encoder states at every
                   step, teacher forcing (the decoder reads the true previous token), ``log_softmax`` +
                   ``NLLLoss``
``small_nlp``      a text classifier of many small layers: an embedding, a bidirectional ``nn.GRU`` of
                   width 32, attention pooling (a Linear scores each position, padding masked with -inf,
                   softmax over time, weighted sum), dropout, a two-layer head
=================  ==========================================================================================

The same contract as ``tutorial_models``: ``build_*(lib)`` returns ``(model, make_batch)``, ``make_batch(rng)``
draws the inputs with NumPy, and ``model(*batch)`` returns the scalar loss. Sizes are the tutorials'
small ones (below); ``QUICK`` shrinks every one for smoke tests.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass
class ViTSize:
    image: int = 32      # CIFAR-10-sized RGB images
    patch: int = 4       # 8 x 8 = 64 patches, 65 tokens with the class token
    width: int = 128
    layers: int = 4
    heads: int = 4
    mlp: int = 256
    classes: int = 10
    batch: int = 16
    dropout: float = 0.1


@dataclass
class Seq2SeqSize:
    vocab: int = 1000    # both languages
    hidden: int = 128
    src: int = 10        # the tutorial's MAX_LENGTH
    tgt: int = 10
    batch: int = 32
    dropout: float = 0.1


@dataclass
class SmallNLPSize:
    vocab: int = 2000
    embed: int = 64
    hidden: int = 32     # per direction
    tokens: int = 40
    classes: int = 4
    batch: int = 32
    dropout: float = 0.2


QUICK = {"vit": ViTSize(image=8, patch=4, width=16, layers=1, heads=2, mlp=32, batch=2),
         "gru_attn": Seq2SeqSize(vocab=11, hidden=8, src=4, tgt=3, batch=2),
         "small_nlp": SmallNLPSize(vocab=11, embed=8, hidden=4, tokens=5, batch=2)}


# ------------------------------------------------------------------------------------------------
# Vision Transformer
# ------------------------------------------------------------------------------------------------
def build_vit(lib, s: ViTSize = ViTSize()):
    nn, F = lib.nn, lib.nn.functional
    n_patches, patch_dim = (s.image // s.patch) ** 2, 3 * s.patch * s.patch

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(s.width, 3 * s.width, bias=False)
            self.proj = nn.Linear(s.width, s.width)
            self.drop = nn.Dropout(s.dropout)

        def forward(self, x):
            B, N, C = x.shape
            qkv = self.qkv(x).reshape(B, N, 3, s.heads, C // s.heads).permute(2, 0, 3, 1, 4)  # (3, B, H, N, d_k)
            q, k, v = qkv.unbind(0)  # (B, H, N, d_k) each
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // s.heads))  # (B, H, N, N)
            att = self.drop(att.softmax(dim=-1))
            y = (att @ v).transpose(1, 2).reshape(B, N, C)  # (B, H, N, d_k) -> (B, N, C)
            return self.proj(y)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.attn = nn.LayerNorm(s.width), Attention()
            self.norm2 = nn.LayerNorm(s.width)
            self.mlp = nn.Sequential(nn.Linear(s.width, s.mlp), nn.GELU(), nn.Dropout(s.dropout),
                                     nn.Linear(s.mlp, s.width), nn.Dropout(s.dropout))

        def forward(self, x):  # pre-norm: the shortcut carries the un-normalised stream
            x = x + self.attn(self.norm1(x))
            return x + self.mlp(self.norm2(x))

    class ViT(nn.Module):
        def __init__(self):
            super().__init__()
            self.patch_embed = nn.Linear(patch_dim, s.width)
            self.cls_token = nn.Parameter(lib.zeros(1, 1, s.width))
            self.pos_embed = nn.Parameter(lib.randn(1, n_patches + 1, s.width) * 0.02)
            self.drop = nn.Dropout(s.dropout)
            self.blocks = nn.ModuleList([Block() for _ in range(s.layers)])
            self.norm = nn.LayerNorm(s.width)
            self.head = nn.Linear(s.width, s.classes)

        def patchify(self, img):
            B, C, H, W = img.shape
            p = s.patch
            x = img.view(B, C, H // p, p, W // p, p)  # (B, C, H/p, p, W/p, p)
            x = x.permute(0, 2, 4, 3, 5, 1)  # (B, H/p, W/p, p, p, C)
            return x.reshape(B, (H // p) * (W // p), p * p * C)  # (B, N, patch_dim)

        def forward(self, img, labels):
            x = self.patch_embed(self.patchify(img))  # (B, N, C)
            cls = self.cls_token.expand(x.shape[0], -1, -1)  # (B, 1, C)
            x = self.drop(lib.cat([cls, x], dim=1) + self.pos_embed)  # (B, N + 1, C)
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.norm(x)[:, 0])  # the class token's state -> (B, classes)
            return F.cross_entropy(logits, labels)

    def make_batch(rng):
        img = rng.standard_normal((s.batch, 3, s.image, s.image)).astype(np.float32)
        return lib.from_numpy(img), lib.from_numpy(rng.integers(0, s.classes, size=s.batch))

    return ViT(), make_batch


# ------------------------------------------------------------------------------------------------
# GRU encoder-decoder with additive (Bahdanau) attention, teacher forcing
# ------------------------------------------------------------------------------------------------
def build_gru_attn(lib, s: Seq2SeqSize = Seq2SeqSize()):
    nn, F = lib.nn, lib.nn.functional
    SOS = 1

    class EncoderRNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(s.vocab, s.hidden)
            self.gru = nn.GRU(s.hidden, s.hidden, batch_first=True)
            self.dropout = nn.Dropout(s.dropout)

        def forward(self, src):
            output, hidden = self.gru(self.dropout(self.embedding(src)))  # (B, S, H), (1, B, H)
            return output, hidden

    class BahdanauAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.Wa, self.Ua, self.Va = nn.Linear(s.hidden, s.hidden), nn.Linear(s.hidden, s.hidden), nn.Linear(s.hidden, 1)

        def forward(self, query, keys):  # query (B, 1, H), keys (B, S, H)
            scores = self.Va(lib.tanh(self.Wa(query) + self.Ua(keys)))  # (B, S, 1)
            weights = F.softmax(scores.squeeze(2).unsqueeze(1), dim=-1)  # (B, 1, S)
            return lib.bmm(weights, keys), weights  # (B, 1, H)

    class AttnDecoderRNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(s.vocab, s.hidden)
            self.attention = BahdanauAttention()
            self.cell = nn.GRUCell(2 * s.hidden, s.hidden)
            self.out = nn.Linear(s.hidden, s.vocab)
            self.dropout = nn.Dropout(s.dropout)

        def forward(self, encoder_outputs, encoder_hidden, target):
            B = encoder_outputs.shape[0]
            token = lib.full((B,), SOS, dtype=lib.long)  # (B,)
            hidden = encoder_hidden.squeeze(0)  # (B, H)
            outputs = []
            for t in range(target.shape[1]):
                embedded = self.dropout(self.embedding(token))  # (B, H)
                context, _ = self.attention(hidden.unsqueeze(1), encoder_outputs)  # (B, 1, H)
                hidden = self.cell(lib.cat([embedded, context.squeeze(1)], dim=1), hidden)  # (B, 2H) -> (B, H)
                outputs.append(self.out(hidden))  # (B, vocab)
                token = target[:, t]  # teacher forcing: the next input is the true token
            return F.log_softmax(lib.stack(outputs, dim=1), dim=-1)  # (B, T, vocab)

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder, self.decoder = EncoderRNN(), AttnDecoderRNN()
            self.criterion = nn.NLLLoss()

        def forward(self, src, tgt):
            enc_out, enc_hidden = self.encoder(src)
            logp = self.decoder(enc_out, enc_hidden, tgt)  # (B, T, vocab)
            return self.criterion(logp.view(-1, logp.size(-1)), tgt.view(-1))

    def make_batch(rng):
        src = rng.integers(2, s.vocab, size=(s.batch, s.src))
        tgt = rng.integers(2, s.vocab, size=(s.batch, s.tgt))
        return lib.from_numpy(src), lib.from_numpy(tgt)

    return Seq2Seq(), make_batch


# ------------------------------------------------------------------------------------------------
# A classifier of many small layers: embedding, bidirectional GRU, attention pooling
# ------------------------------------------------------------------------------------------------
def build_small_nlp(lib, s: SmallNLPSize = SmallNLPSize()):
    nn, F = lib.nn, lib.nn.functional
    PAD = 0

    class AttentionPool(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.score = nn.Linear(dim, 1)

        def forward(self, h, pad_mask):  # h (B, T, D), pad_mask (B, T) True = padding
            scores = self.score(h).squeeze(-1).masked_fill(pad_mask, float("-inf"))  # (B, T)
            weights = F.softmax(scores, dim=-1)  # (B, T)
            return (weights.unsqueeze(-1) * h).sum(dim=1)  # (B, D)

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(s.vocab, s.embed, padding_idx=PAD)
            self.rnn = nn.GRU(s.embed, s.hidden, batch_first=True, bidirectional=True)
            self.pool = AttentionPool(2 * s.hidden)
            self.dropout = nn.Dropout(s.dropout)
            self.fc1, self.fc2 = nn.Linear(2 * s.hidden, s.hidden), nn.Linear(s.hidden, s.classes)

        def forward(self, tokens, labels):
            x = self.dropout(self.embedding(tokens))  # (B, T, E)
            h, _ = self.rnn(x)  # (B, T, 2H)
            pooled = self.pool(h, tokens == PAD)  # (B, 2H)
            logits = self.fc2(self.dropout(F.relu(self.fc1(pooled))))  # (B, classes)
            return F.cross_entropy(logits, labels)

    def make_batch(rng):
        tokens = rng.integers(1, s.vocab, size=(s.batch, s.tokens))
        lengths = rng.integers(s.tokens // 2, s.tokens + 1, size=s.batch)
        tokens[np.arange(s.tokens)[None, :] >= lengths[:, None]] = PAD  # right padding
        return lib.from_numpy(tokens), lib.from_numpy(rng.integers(0, s.classes, size=s.batch))

    return Classifier(), make_batch


STYLES = {"vit": build_vit, "gru_attn": build_gru_attn, "small_nlp": build_small_nlp}
ABOUT = {
    "vit": "Vision Transformer, 4x4 patches by view/permute, class token, pre-norm blocks, exact GELU MLP",
    "gru_attn": "GRU encoder-decoder, GRUCell decoder with Bahdanau attention, teacher forcing, NLL loss",
    "small_nlp": "embedding, bidirectional GRU, attention pooling, two-layer head (many small ops)",
}
