"""The model wrapper the course trains on the synthetic tasks: attention, a tanh RNN or a GRU, one interface.

    model = SequenceModel("attention", task.vocab_size, max_len=task.seq_len)   # or "gru", "rnn"

Embedding -> encoder -> Linear head, with an "lm" head (logits at every position) or a "cls" head
(one label read off the last position). ``tinyattn.train.fit`` trains it.
"""
from __future__ import annotations

import numpy as np

import tinyattn
import tinyattn.nn as nn
from tinyattn import checks
from tinyattn.tensor import Tensor

KINDS = ("attention", "rnn", "gru")
HEADS = ("lm", "cls")


class SequenceModel(nn.Module):
    """Embedding -> encoder (attention blocks | tanh RNN | GRU) -> Linear head.

    forward(idx (B, T) int) -> logits (B, T, n_out) with head="lm", or (B, n_out)
    read off the last position with head="cls". n_out defaults to vocab_size,
    because task targets are token ids of the task's vocabulary.
    """

    def __init__(self, kind: str, vocab_size: int, d_model: int = 32, n_layers: int = 1, n_heads: int = 2,
                 max_len: int = 256, head: str = "lm", n_out: int | None = None, causal: bool = True,
                 d_ff: int | None = None) -> None:
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"unknown model kind {kind!r}; choose from: {', '.join(KINDS)}")
        if head not in HEADS:
            raise ValueError(f"unknown head {head!r}; choose from: {', '.join(HEADS)}")
        for name, value in (("vocab_size", vocab_size), ("d_model", d_model), ("n_layers", n_layers),
                            ("n_heads", n_heads), ("max_len", max_len)):
            checks.positive_int(name, value)
        n_out = vocab_size if n_out is None else checks.positive_int("n_out", n_out)
        if kind != "attention" and not causal:
            raise ValueError(f"a {kind} reads left to right; causal=False needs kind='attention'")
        # Everything needed to rebuild this model from a checkpoint.
        self.config = dict(kind=kind, vocab_size=vocab_size, d_model=d_model, n_layers=n_layers, n_heads=n_heads,
                           max_len=max_len, head=head, n_out=n_out, causal=causal, d_ff=d_ff)
        self.kind, self.head_type, self.causal, self.max_len = kind, head, causal, max_len
        self.embedding = nn.Embedding(vocab_size, d_model)
        if kind == "attention":
            self.pos = nn.PositionalEncoding(d_model, max_len)
            self.blocks = nn.ModuleList([nn.TransformerBlock(d_model, n_heads, d_ff=d_ff, causal=causal)
                                         for _ in range(n_layers)])
            self.norm = nn.LayerNorm(d_model)  # pre-LN blocks leave the residual stream un-normalized
        else:
            cell = nn.GRU if kind == "gru" else nn.RNN
            self.rnns = nn.ModuleList([cell(d_model, d_model, batch_first=True) for _ in range(n_layers)])
        self.head = nn.Linear(d_model, n_out)

    def embed(self, idx: Tensor | np.ndarray) -> Tensor:
        """Token ids (B, T) -> embeddings (B, T, C), checking ids and length at the surface."""
        idx = idx._data if isinstance(idx, Tensor) else np.asarray(idx)
        if idx.ndim != 2:
            raise ValueError(f"{type(self).__name__} expects integer token ids of shape (B, T), got shape {idx.shape}")
        T = idx.shape[1]
        if self.kind == "attention" and T > self.max_len:
            raise ValueError(f"sequence length {T} is longer than the model's max_len={self.max_len}; "
                             f"build the model with max_len >= {T}")
        idx = checks.ids_in_range(idx, self.config["vocab_size"], "idx", type(self).__name__, n_name="vocab_size")
        return self.embedding(Tensor(idx))  # (B, T, C)

    def encode(self, x: Tensor) -> Tensor:
        """Embeddings (B, T, C) -> features (B, T, C): the part that is attention or recurrence."""
        if self.kind == "attention":
            x = self.pos(x)  # add sinusoidal positions: attention alone does not know token order
            for block in self.blocks:
                x = block(x)  # (B, T, C)
            return self.norm(x)
        for rnn in self.rnns:
            x, _ = rnn(x)  # (B, T, C): every step's hidden state, so the lm head can read any position
        return x

    def forward(self, idx: Tensor | np.ndarray) -> Tensor:
        return self.logits_from_embeddings(self.embed(idx))

    def logits_from_embeddings(self, x: Tensor) -> Tensor:
        """Embeddings (B, T, C) -> logits: (B, T, n_out) for head='lm', (B, n_out) for head='cls'."""
        h = self.encode(x)  # (B, T, C)
        if self.head_type == "cls":
            h = h[:, -1]  # (B, C): the last position has seen the whole sequence (causal or not)
        return self.head(h)

    def attention_weights(self, idx: Tensor | np.ndarray) -> list[np.ndarray]:
        """Per layer, the attention weights (B, H, T, T) on input `idx` (attention models only)."""
        if self.kind != "attention":
            raise ValueError(f"a {self.kind} model has no attention weights")
        with tinyattn.no_grad():
            x = self.pos(self.embed(idx))
            maps = []
            for block in self.blocks:
                x, w = block(x, return_weights=True)  # (B, T, C), (B, H, T, T)
                maps.append(np.array(w._data))  # (B, H, T, T)
        return maps

    def extra_repr(self) -> str:
        c = self.config
        return f"kind={c['kind']!r}, head={c['head']!r}, d_model={c['d_model']}, n_layers={c['n_layers']}"
