"""A nanoGPT-shaped model written ONCE against PyTorch's API, so the same code runs on tinyattn and on torch.

``build(lib)`` takes the library module (``tinyattn`` or ``torch``) and returns the model class: the
benchmark times the very same lines on both sides, and a learner can read it as plain PyTorch.
Pre-LN blocks: x = x + proj(attention(ln1(x))), x = x + mlp(ln2(x)); one Linear makes q, k and v
together (a (C, 3C) weight); causal attention through F.scaled_dot_product_attention; exact GELU
(nn.GELU()'s default in both libraries); weight tying is left out to keep the state dicts one-to-one.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class GPTConfig:
    vocab_size: int = 65  # a character-level vocabulary, as nanoGPT's shakespeare_char
    block_size: int = 128
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128


def build(lib):
    """The GPT class on top of ``lib`` (tinyattn or torch): ``GPT(config)(idx (B, T), targets (B, T)) -> loss``."""
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self, cfg: GPTConfig) -> None:
            super().__init__()
            self.n_head = cfg.n_head
            self.ln_1 = nn.LayerNorm(cfg.n_embd)
            self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)  # q, k and v in one matmul
            self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd)
            self.ln_2 = nn.LayerNorm(cfg.n_embd)
            self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
            self.gelu = nn.GELU()
            self.mlp_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)  # (B, T, 3C) -> 3 x (B, T, C)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, H, T, d_k)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, H, T, d_k)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, H, T, d_k)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, d_k)
            y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, H, d_k) -> (B, T, C)
            x = x + self.c_proj(y)
            return x + self.mlp_proj(self.gelu(self.c_fc(self.ln_2(x))))  # (B, T, 4C) inside

    class GPT(nn.Module):
        def __init__(self, cfg: GPTConfig) -> None:
            super().__init__()
            self.cfg = cfg
            self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
            self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
            self.h = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)])
            self.ln_f = nn.LayerNorm(cfg.n_embd)
            self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)

        def forward(self, idx, targets):
            B, T = idx.shape
            x = self.wte(idx) + self.wpe(lib.arange(T))  # (B, T, C)
            for block in self.h:
                x = block(x)
            logits = self.lm_head(self.ln_f(x))  # (B, T, vocab)
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    return GPT
