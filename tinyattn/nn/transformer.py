"""Transformer models: one pre-LayerNorm block, and three models made of blocks.

* ``TransformerBlock``: x = x + attn(ln1(x)); [x = x + cross(ln_c(x), context)]; x = x + ffn(ln2(x)).
* ``TransformerLM``: a decoder-only (GPT-style) causal language model with KV-cache generation.
* ``TransformerClassifier``: a bidirectional encoder with a key padding mask and pooling.
* ``Seq2SeqTransformer``: encoder + decoder with cross-attention (Vaswani et al., pre-LN).

Pre-LayerNorm (normalise the *input* of each sublayer, keep the residual path clean) trains
stably without learning-rate warm-up, which is why GPT-2 and most later models use it.
"""
from __future__ import annotations

import math

import numpy as np

from tinyattn import checks
from tinyattn.functions import cat
from tinyattn.tensor import Tensor, get_default_dtype, get_rng, no_grad

from .attention import KVCache, Attention
from .hook_points import add_hook_points, hooked_layer_norm, hooked_mlp
from .hooked import HookedMixin
from .layers import GELU, Dropout, Embedding, Identity, LayerNorm, Linear
from .module import Module, ModuleList, Parameter, Sequential
from .positional import LearnedPositionalEmbedding, PositionalEncoding

__all__ = ["TransformerBlock", "TransformerLM", "TransformerClassifier", "Seq2SeqTransformer"]

_POSITIONAL = ("sinusoidal", "learned", "rope")
_POOLS = ("mean", "cls", "last")


# ---------------------------------------------------------------------------- small helpers
def _positions(kind: str, d_model: int, max_len: int) -> Module:
    """The position module added to the embeddings, named by ``kind``; each has forward(x, offset=0).

    'rope' adds nothing here (Identity): the attention layers rotate their queries and keys instead.
    """
    if kind == "sinusoidal":
        return PositionalEncoding(d_model, max_len)
    if kind == "learned":
        return LearnedPositionalEmbedding(max_len, d_model)
    if kind == "rope":
        return Identity()
    raise ValueError(f"positional must be one of {_POSITIONAL}, got positional={kind!r}")


def _token_ids(idx, name: str, vocab_size: int) -> np.ndarray:
    """idx as an int ndarray (B, T), checked: 2-D, integer, every id in [0, vocab_size)."""
    if idx is None or isinstance(idx, str):
        raise TypeError(f"{name} must be integer token ids of shape (B, T), got {type(idx).__name__}")
    ids = np.asarray(idx._data if isinstance(idx, Tensor) else idx)
    if ids.ndim != 2:
        raise ValueError(f"{name} must be token ids of shape (B, T), got shape {ids.shape}")
    if ids.shape[0] == 0 or ids.shape[1] == 0:
        raise ValueError(f"{name} has shape {ids.shape}: it needs at least one sequence of at least one token "
                         "(B >= 1, T >= 1)")
    ids = checks.ids_in_range(ids, vocab_size, name, n_name="vocab_size")
    return ids.astype(np.int64, copy=False)


def _check_fits(name: str, T: int, offset: int, max_len: int) -> None:
    if offset + T > max_len:
        where = f"T={T} new tokens after {offset} cached ones" if offset else f"T={T} tokens"
        raise ValueError(f"{name}: input has {where}, more than max_len={max_len} positions "
                         "(build the model with a larger max_len or feed a shorter sequence)")


def _key_mask(keep: np.ndarray) -> np.ndarray:
    """(B, S) bool, True = real token -> (B, 1, 1, S): masks keys, the same for every head and query."""
    return keep[:, None, None, :]


def _real_tokens(ids: np.ndarray, lengths, pad_id: int | None, name: str) -> np.ndarray | None:
    """(B, T) bool, True on real tokens, from ``lengths`` (if given) or ``pad_id``; None if neither."""
    B, T = ids.shape
    if lengths is not None:
        lengths = np.asarray(lengths._data if isinstance(lengths, Tensor) else lengths)
        if lengths.shape != (B,) or not np.issubdtype(lengths.dtype, np.integer):
            raise ValueError(f"{name}: lengths must be {B} integers (one per sequence), got "
                             f"shape {lengths.shape} dtype {lengths.dtype}")
        if lengths.min() < 1 or lengths.max() > T:
            raise ValueError(f"{name}: every length must be in [1, T={T}], got lengths={lengths.tolist()}")
        return np.arange(T)[None, :] < lengths[:, None]  # (B, T)
    if pad_id is None:
        return None
    keep = ids != pad_id  # (B, T)
    empty = np.flatnonzero(~keep.any(axis=1))
    if empty.size:
        raise ValueError(f"{name}: sequences {empty.tolist()} are all padding (pad_id={pad_id}); "
                         "each needs at least one real token")
    return keep


def _last(h: Tensor, k: int) -> Tensor:
    """h (B, T, C) -> its last k positions (B, k, C); k = 0 keeps all T."""
    return h[:, -k:] if k else h


def _check_sampling(max_new_tokens, temperature, top_k, vocab_size: int) -> None:
    checks.nonneg_int("max_new_tokens", max_new_tokens)
    if not math.isfinite(checks.number("temperature", temperature, at_least=0)):
        raise ValueError(f"temperature must be finite (0 = greedy), got temperature={temperature}")
    if top_k is not None and checks.positive_int("top_k", top_k) > vocab_size:
        raise ValueError(f"top_k must be None or an int in [1, vocab_size={vocab_size}], got top_k={top_k!r}")


def _pick_next(logits: np.ndarray, temperature: float, top_k: int | None) -> np.ndarray:
    """One next token per row of logits (B, V): argmax if temperature == 0, else a top-k sample."""
    if temperature == 0:
        return logits.argmax(axis=-1)  # (B,) greedy
    z = logits.astype(np.float64) / temperature  # (B, V); float64 so tiny probabilities survive
    if top_k is not None:
        kth = np.sort(z, axis=-1)[:, -top_k][:, None]  # (B, 1) the k-th largest logit of each row
        z = np.where(z < kth, -np.inf, z)  # only the top k (and ties) stay possible
    p = np.exp(z - z.max(axis=-1, keepdims=True))  # (B, V) unnormalised; exp(-inf) = 0
    cdf = np.cumsum(p, axis=-1)
    cdf /= cdf[:, -1:]  # exactly 1 at the end, so every u in [0, 1) lands somewhere
    # Inverse-CDF sampling: one uniform number per row, drawn from the seeded generator.
    u = get_rng().random((logits.shape[0], 1))  # (B, 1)
    return (cdf > u).argmax(axis=-1)  # (B,) the first token whose cumulative probability passes u


# ---------------------------------------------------------------------------- the block
class TransformerBlock(Module):
    """Pre-LN block: x = x + attn(ln1(x)); [x = x + cross(ln_c(x), context)]; x = x + ffn(ln2(x)).

    x (B, T, d_model) -> (B, T, d_model). FFN: Linear(d_model, d_ff) -> GELU (tanh form) -> Linear(d_ff, d_model),
    d_ff = 4 * d_model by default. causal/window/n_kv_heads configure the self-attention;
    cross_attention=True adds a second attention whose keys/values come from ``context``.
    rope=True gives the self-attention rotary position embeddings (never the cross-attention).
    layer_norm_eps: every LayerNorm's eps (GPT-2 checkpoints give theirs in the config).
    gelu: the FFN's GELU, 'tanh' (GPT-2's "gelu_new", the default here) or 'none' (the exact erf form).
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int | None = None, causal: bool = False,
                 n_kv_heads: int | None = None, window: int | None = None, dropout: float = 0.0,
                 cross_attention: bool = False, backend: str = "sdpa", rope: bool = False,
                 layer_norm_eps: float = 1e-5, gelu: str = "tanh") -> None:
        super().__init__()
        d_model = checks.positive_int("d_model", d_model)
        d_ff = 4 * d_model if d_ff is None else checks.positive_int("d_ff", d_ff)
        self.d_model, self.d_ff, self.causal, self.cross_attention = d_model, d_ff, bool(causal), bool(cross_attention)
        self.ln1 = LayerNorm(d_model, eps=layer_norm_eps)
        self.attn = Attention(d_model, n_heads, n_kv_heads=n_kv_heads, dropout=dropout,
                                       window=window, backend=backend, rope=rope)
        if self.cross_attention:
            self.ln_c = LayerNorm(d_model, eps=layer_norm_eps)
            # No window here: every target position may look at the whole source.
            self.cross = Attention(d_model, n_heads, n_kv_heads=n_kv_heads, dropout=dropout,
                                            backend=backend)
        self.ln2 = LayerNorm(d_model, eps=layer_norm_eps)
        # GELU's tanh form by default, as in GPT-2: a GPT-2 checkpoint loaded into these blocks needs it to give
        # its numbers, and so do the course's trained models (nn.GELU() alone is the exact form, as in PyTorch).
        self.ffn = Sequential(Linear(d_model, d_ff), GELU(approximate=gelu), Linear(d_ff, d_model))
        self.drop = Dropout(dropout)  # on each sublayer's output, before it joins the residual stream
        # TransformerLens's hook points (nn/hook_points.py); ffn is TransformerLens's "mlp".
        add_hook_points(self, "hook_resid_pre", "hook_attn_out", "hook_resid_mid", "hook_mlp_out", "hook_resid_post")
        for ln in (self.ln1, self.ln2):
            add_hook_points(ln, "hook_scale", "hook_normalized")
        add_hook_points(self.ffn, "hook_pre", "hook_post")

    _lens_alias = {"ffn": "mlp"}

    def extra_repr(self) -> str:
        return f"causal={self.causal}" + (", cross_attention=True" if self.cross_attention else "")

    def forward(self, x: Tensor, context: Tensor | None = None, mask=None, context_mask=None,
                kv_cache: KVCache | None = None, return_weights: bool = False, head_mask=None):
        """x (B, T, C) [, context (B, S, C)] -> (B, T, C) [, self-attention weights (B, H, T, S)].

        mask: keys x may attend in self-attention (bool, True = attend; e.g. a (B, 1, 1, T) padding mask).
        context_mask: the same for the cross-attention's keys, broadcastable to (B, H, T, S).
        kv_cache: this layer's KVCache when decoding token by token.
        return_weights: also return the self-attention weights (for plotting attention maps).
        head_mask: (n_heads,) multiplies each self-attention head's output (0 switches a head off).
        """
        if self.cross_attention and context is None:
            raise ValueError("this TransformerBlock has cross_attention=True: pass context (B, S, d_model)")
        if not self.cross_attention and context is not None:
            raise ValueError("context given to a TransformerBlock built with cross_attention=False")
        x = self.hook_resid_pre(x)
        a = self.attn(hooked_layer_norm(self.ln1, x), mask=mask, is_causal=self.causal, kv_cache=kv_cache,
                      return_weights=return_weights, head_mask=head_mask)
        a, weights = a if return_weights else (a, None)  # (B, T, C), (B, H, T, S) or None
        x = self.hook_resid_mid(x + self.hook_attn_out(self.drop(a)))
        if self.cross_attention:
            x = x + self.drop(self.cross(self.ln_c(x), context=context, mask=context_mask))
        m = hooked_mlp(self.ffn, hooked_layer_norm(self.ln2, x))  # (B, T, C), position-wise
        x = x + self.hook_mlp_out(self.drop(m))
        x = self.hook_resid_post(x)
        return (x, weights) if return_weights else x


# ---------------------------------------------------------------------------- decoder-only LM
class TransformerLM(HookedMixin, Module):
    """GPT-style causal LM: tokens + positions -> n_layers causal blocks -> LayerNorm -> Linear head.

    forward(idx (B, T) ints, kv_cache=None) -> logits (B, T, vocab_size); logits[:, t] predicts
    token t+1 from tokens 0..t only. kv_cache: a list of KVCache, one per layer (see ``new_cache``).
    layer_norm_eps and gelu go to every block (see TransformerBlock); tie_weights=True makes the head
    reuse the token embedding matrix, logits = h @ tok_emb.weight^T with no bias (GPT-2's lm_head).
    TransformerLens's hook points and workflow: ``hook_dict``, ``run_with_cache``, ``run_with_hooks``,
    ``hooks()`` (nn/hooked.py); ``ln_f`` is TransformerLens's ``ln_final``.
    """

    _lens_alias = {"ln_f": "ln_final"}

    def __init__(self, vocab_size: int, d_model: int, n_heads: int, n_layers: int, max_len: int,
                 d_ff: int | None = None, n_kv_heads: int | None = None, window: int | None = None,
                 dropout: float = 0.0, positional: str = "sinusoidal", backend: str = "sdpa",
                 layer_norm_eps: float = 1e-5, gelu: str = "tanh", tie_weights: bool = False) -> None:
        super().__init__()
        self.vocab_size = checks.positive_int("vocab_size", vocab_size)
        self.n_layers = checks.positive_int("n_layers", n_layers)
        self.max_len = checks.positive_int("max_len", max_len)
        self.d_model = checks.positive_int("d_model", d_model)
        self.tok_emb = Embedding(vocab_size, d_model)
        self.pos = _positions(positional, d_model, max_len)
        self.drop = Dropout(dropout)
        self.blocks = ModuleList([TransformerBlock(d_model, n_heads, d_ff, causal=True, n_kv_heads=n_kv_heads,
                                                   window=window, dropout=dropout, backend=backend,
                                                   rope=positional == "rope", layer_norm_eps=layer_norm_eps,
                                                   gelu=gelu)
                                  for _ in range(n_layers)])
        self.ln_f = LayerNorm(d_model, eps=layer_norm_eps)
        self.head = Linear(d_model, vocab_size, bias=not tie_weights)
        if tie_weights:  # one Parameter under two names: a gradient from either use reaches it
            self.head.weight = self.tok_emb.weight
        add_hook_points(self, "hook_embed", "hook_pos_embed")
        add_hook_points(self.ln_f, "hook_scale", "hook_normalized")

    def _embed(self, ids: np.ndarray, offset: int = 0) -> Tensor:
        """ids (B, T) -> tokens + positions (B, T, C), through hook_embed and hook_pos_embed."""
        x = self.hook_embed(self.tok_emb(Tensor(ids)))  # (B, T) -> (B, T, C)
        if isinstance(self.pos, Identity) or not self.hook_pos_embed.active:
            return self.pos(x, offset=offset)  # (B, T, C): x + the positions' vectors (rope: x itself)
        pe = self.hook_pos_embed(self.pos(x.detach() * 0, offset=offset))  # (B, T, C): the positions' vectors alone
        return x + pe

    def new_cache(self) -> list[KVCache]:
        """An empty KV cache: one KVCache per layer."""
        return [KVCache() for _ in self.blocks]

    def forward(self, idx, kv_cache: list[KVCache] | None = None, return_weights: bool = False, head_mask=None,
                logits_to_keep: int = 0):
        """idx (B, T) -> logits (B, T, V) [, weights: a list over layers of (B, H, T, S)].

        head_mask: (n_layers, n_heads), or (n_heads,) for every layer; 0 switches a head off.
        logits_to_keep: k > 0 computes only the last k positions' logits, (B, k, V), as Hugging Face's
        argument of that name; 0 (the default) keeps all T.
        """
        ids = _token_ids(idx, "idx", self.vocab_size)  # (B, T)
        logits_to_keep = checks.nonneg_int("logits_to_keep", logits_to_keep)
        if kv_cache is not None and len(kv_cache) != self.n_layers:
            raise ValueError(f"kv_cache has {len(kv_cache)} entries but the model has n_layers={self.n_layers}")
        head_masks = self._layer_head_masks(head_mask)
        # With a cache the new tokens continue a sequence: their positions start after the cached ones.
        offset = 0 if kv_cache is None else kv_cache[0].seq_len
        _check_fits("TransformerLM", ids.shape[1], offset, self.max_len)
        x = self.drop(self._embed(ids, offset))  # (B, T, C)
        weights = []
        for i, block in enumerate(self.blocks):
            x = block(x, kv_cache=None if kv_cache is None else kv_cache[i], return_weights=return_weights,
                      head_mask=head_masks[i])  # (B, T, C)
            if return_weights:
                x, w = x
                weights.append(w)  # (B, H, T, S)
        logits = self.head(_last(hooked_layer_norm(self.ln_f, x), logits_to_keep))  # (B, T, C) -> (B, T or k, V)
        return (logits, weights) if return_weights else logits

    def _layer_head_masks(self, head_mask) -> list:
        """head_mask as one (n_heads,) mask (or None) per layer."""
        if head_mask is None:
            return [None] * self.n_layers
        hm = head_mask if isinstance(head_mask, Tensor) else Tensor(np.asarray(head_mask))
        H = self.blocks[0].attn.n_heads
        if hm.shape == (H,):
            return [hm] * self.n_layers
        if hm.shape != (self.n_layers, H):
            raise ValueError(f"head_mask has shape {hm.shape} but the model has n_layers={self.n_layers} layers of "
                             f"n_heads={H} heads: expected ({self.n_layers}, {H}) or ({H},)")
        return [hm[i] for i in range(self.n_layers)]  # row i: layer i's (n_heads,) mask

    def generate(self, idx, max_new_tokens: int, temperature: float = 1.0, top_k: int | None = None,
                 use_cache: bool = True) -> Tensor:
        """Continue idx (B, T) by max_new_tokens tokens -> (B, T + max_new_tokens) ints (prompt first).

        temperature 0 = greedy (argmax); otherwise sample softmax(logits / temperature), restricted
        to the top_k most likely tokens if top_k is set, with tinyattn's seeded generator.
        use_cache=True feeds only the newest token each step and reuses the cached keys/values;
        use_cache=False recomputes the whole sequence. Both give the same tokens.
        Runs in eval mode (no dropout) under no_grad; the model's mode is restored afterwards.
        """
        ids = _token_ids(idx, "idx", self.vocab_size)  # (B, T)
        _check_sampling(max_new_tokens, temperature, top_k, self.vocab_size)
        T = ids.shape[1]
        # The last new token is only emitted, never fed back in, so T + max_new_tokens - 1 positions are used.
        if T + max_new_tokens - 1 > self.max_len:
            raise ValueError(f"generate: a prompt of T={T} tokens plus max_new_tokens={max_new_tokens} needs "
                             f"{T + max_new_tokens - 1} positions, more than max_len={self.max_len}")
        if max_new_tokens == 0:
            return Tensor(ids.copy())
        was_training = self.training
        self.eval()
        try:
            with no_grad():
                cache = self.new_cache() if use_cache else None
                out = ids
                # The prompt in one pass; only its last position's logits are needed (the head is the largest
                # product: at GPT-2's size, one thread, 20 prompt tokens' logits take 31 ms, the last one's 6 ms).
                logits = self(ids, kv_cache=cache, logits_to_keep=1)._data[:, -1]  # (B, V)
                for step in range(max_new_tokens):
                    nxt = _pick_next(logits, temperature, top_k)  # (B,)
                    out = np.concatenate([out, nxt[:, None]], axis=1)  # (B, T + step + 1)
                    if step == max_new_tokens - 1:
                        break
                    if use_cache:
                        logits = self(nxt[:, None], kv_cache=cache)._data[:, -1]  # feed 1 token: (B, 1) -> (B, V)
                    else:
                        logits = self(out, logits_to_keep=1)._data[:, -1]  # recompute everything: (B, T') -> (B, V)
        finally:
            self.train(was_training)
        return Tensor(out)


# ---------------------------------------------------------------------------- encoder classifier
class TransformerClassifier(Module):
    """Bidirectional encoder + pooling + Linear: idx (B, T) ints -> logits (B, n_classes).

    Padding (from ``lengths`` or ``pad_id``; lengths win if both are given) is masked out as keys in
    every layer and left out of the pooling, so what is written in the pad positions changes nothing.
    pool: 'mean' (masked mean over real tokens), 'cls' (a learned vector prepended at position 0),
    or 'last' (the last real token).
    """

    def __init__(self, vocab_size: int, d_model: int, n_heads: int, n_layers: int, max_len: int, n_classes: int,
                 d_ff: int | None = None, pad_id: int | None = None, pool: str = "mean", dropout: float = 0.0,
                 positional: str = "sinusoidal", backend: str = "sdpa") -> None:
        super().__init__()
        self.vocab_size = checks.positive_int("vocab_size", vocab_size)
        self.max_len = checks.positive_int("max_len", max_len)
        self.n_classes = checks.positive_int("n_classes", n_classes)
        checks.positive_int("n_layers", n_layers)
        if pool not in _POOLS:
            raise ValueError(f"pool must be one of {_POOLS}, got pool={pool!r}")
        if pad_id is not None and not 0 <= pad_id < vocab_size:
            raise ValueError(f"pad_id={pad_id} is outside the vocabulary [0, {vocab_size - 1}]")
        self.pad_id, self.pool = pad_id, pool
        self.tok_emb = Embedding(vocab_size, d_model)
        if pool == "cls":
            # Like ViT's class token: learned, prepended, so it takes one extra position.
            self.cls_token = Parameter((0.02 * get_rng().standard_normal((1, 1, d_model))).astype(get_default_dtype()))
        self.pos = _positions(positional, d_model, max_len + (pool == "cls"))
        self.drop = Dropout(dropout)
        self.blocks = ModuleList([TransformerBlock(d_model, n_heads, d_ff, causal=False, dropout=dropout,
                                                   backend=backend, rope=positional == "rope")
                                  for _ in range(n_layers)])
        self.ln_f = LayerNorm(d_model)
        self.head = Linear(d_model, n_classes)

    def forward(self, idx, lengths=None) -> Tensor:
        ids = _token_ids(idx, "idx", self.vocab_size)  # (B, T)
        B, T = ids.shape
        _check_fits("TransformerClassifier", T, 0, self.max_len)
        keep = _real_tokens(ids, lengths, self.pad_id, "TransformerClassifier")  # (B, T) or None
        if keep is None:
            keep = np.ones((B, T), dtype=bool)
        x = self.tok_emb(Tensor(ids))  # (B, T, C)
        if self.pool == "cls":
            cls = self.cls_token.expand(B, 1, x.shape[-1]).to(x.dtype)  # (B, 1, C)
            x = cat([cls, x], dim=1)  # (B, 1 + T, C)
            keep = np.concatenate([np.ones((B, 1), dtype=bool), keep], axis=1)  # the class token is real
        x = self.drop(self.pos(x))  # (B, T', C)
        mask = _key_mask(keep)  # (B, 1, 1, T'): pad keys get zero weight; pad queries are never read
        for block in self.blocks:
            x = block(x, mask=mask)
        x = self.ln_f(x)  # (B, T', C)
        if self.pool == "mean":
            w = Tensor(keep[..., None].astype(x.dtype))  # (B, T', 1): 1 on real tokens, 0 on padding
            pooled = (x * w).sum(dim=1) / w.sum(dim=1)  # (B, C)
        elif self.pool == "cls":
            pooled = x[:, 0]  # (B, C)
        else:  # 'last': the last real token of each row
            last = T - 1 - keep[:, ::-1].argmax(axis=1)  # (B,) index of the last True
            pooled = x[np.arange(B), last]  # (B, C)
        return self.head(pooled)  # (B, n_classes)


# ---------------------------------------------------------------------------- encoder-decoder
class Seq2SeqTransformer(Module):
    """Encoder-decoder transformer: forward(src (B, S), tgt_in (B, T)) -> logits (B, T, tgt_vocab).

    Encoder: bidirectional blocks over the source. Decoder: causal self-attention over the target
    so far, then cross-attention to the encoder output ("memory"), then the FFN. Source padding
    (src_pad_id or src_lengths) is masked in the encoder and in every cross-attention.
    """

    def __init__(self, src_vocab: int, tgt_vocab: int, d_model: int, n_heads: int, n_layers: int, max_len: int,
                 d_ff: int | None = None, dropout: float = 0.0, src_pad_id: int | None = None,
                 n_kv_heads: int | None = None, positional: str = "sinusoidal", backend: str = "sdpa") -> None:
        super().__init__()
        self.src_vocab = checks.positive_int("src_vocab", src_vocab)
        self.tgt_vocab = checks.positive_int("tgt_vocab", tgt_vocab)
        self.max_len = checks.positive_int("max_len", max_len)
        self.n_layers = checks.positive_int("n_layers", n_layers)
        self.src_pad_id = src_pad_id
        self.src_emb = Embedding(src_vocab, d_model)
        self.tgt_emb = Embedding(tgt_vocab, d_model)
        self.src_pos = _positions(positional, d_model, max_len)
        self.tgt_pos = _positions(positional, d_model, max_len)
        self.drop = Dropout(dropout)
        rope = positional == "rope"
        self.encoder = ModuleList([TransformerBlock(d_model, n_heads, d_ff, causal=False, n_kv_heads=n_kv_heads,
                                                    dropout=dropout, backend=backend, rope=rope)
                                   for _ in range(n_layers)])
        self.enc_ln = LayerNorm(d_model)
        self.decoder = ModuleList([TransformerBlock(d_model, n_heads, d_ff, causal=True, n_kv_heads=n_kv_heads,
                                                    dropout=dropout, cross_attention=True, backend=backend,
                                                    rope=rope)
                                   for _ in range(n_layers)])
        self.dec_ln = LayerNorm(d_model)
        self.head = Linear(d_model, tgt_vocab)

    def encode(self, src, src_lengths=None) -> tuple[Tensor, np.ndarray | None]:
        """src (B, S) -> (memory (B, S, C), key mask (B, 1, 1, S) or None)."""
        ids = _token_ids(src, "src", self.src_vocab)  # (B, S)
        _check_fits("Seq2SeqTransformer (src)", ids.shape[1], 0, self.max_len)
        keep = _real_tokens(ids, src_lengths, self.src_pad_id, "Seq2SeqTransformer")  # (B, S) or None
        mask = None if keep is None else _key_mask(keep)  # (B, 1, 1, S)
        x = self.drop(self.src_pos(self.src_emb(Tensor(ids))))  # (B, S, C)
        for block in self.encoder:
            x = block(x, mask=mask)
        return self.enc_ln(x), mask

    def decode(self, tgt_in, memory: Tensor, src_mask=None, kv_cache: list[KVCache] | None = None) -> Tensor:
        """tgt_in (B, T) and memory (B, S, C) -> logits (B, T, tgt_vocab)."""
        ids = _token_ids(tgt_in, "tgt_in", self.tgt_vocab)  # (B, T)
        if ids.shape[0] != memory.shape[0]:
            raise ValueError(f"tgt_in has batch size {ids.shape[0]} but src has {memory.shape[0]}")
        if kv_cache is not None and len(kv_cache) != self.n_layers:
            raise ValueError(f"kv_cache has {len(kv_cache)} entries but the decoder has n_layers={self.n_layers}")
        offset = 0 if kv_cache is None else kv_cache[0].seq_len
        _check_fits("Seq2SeqTransformer (tgt_in)", ids.shape[1], offset, self.max_len)
        y = self.drop(self.tgt_pos(self.tgt_emb(Tensor(ids)), offset=offset))  # (B, T, C)
        for i, block in enumerate(self.decoder):
            y = block(y, context=memory, context_mask=src_mask, kv_cache=None if kv_cache is None else kv_cache[i])
        return self.head(self.dec_ln(y))  # (B, T, C) -> (B, T, V_tgt)

    def forward(self, src, tgt_in, src_lengths=None) -> Tensor:
        memory, src_mask = self.encode(src, src_lengths)
        return self.decode(tgt_in, memory, src_mask)

    def generate(self, src, bos_id: int, max_new_tokens: int, src_lengths=None, use_cache: bool = True) -> Tensor:
        """Greedy decoding: [bos_id] + max_new_tokens argmax tokens -> (B, 1 + max_new_tokens) ints.

        The source is encoded once; with use_cache the decoder's self-attention keys/values are
        cached too (cross-attention re-projects the memory each step: simple, and cheap at this size).
        """
        if checks.nonneg_int("bos_id", bos_id) >= self.tgt_vocab:
            raise ValueError(f"bos_id={bos_id} is outside the target vocabulary [0, {self.tgt_vocab - 1}]")
        _check_sampling(max_new_tokens, 0.0, None, self.tgt_vocab)
        if max_new_tokens > self.max_len:
            raise ValueError(f"generate: max_new_tokens={max_new_tokens} needs {max_new_tokens} decoder "
                             f"positions, more than max_len={self.max_len}")
        was_training = self.training
        self.eval()
        try:
            with no_grad():
                memory, src_mask = self.encode(src, src_lengths)  # (B, S, C)
                out = np.full((memory.shape[0], 1), bos_id, dtype=np.int64)  # (B, 1)
                cache = [KVCache() for _ in self.decoder] if use_cache else None
                for _ in range(max_new_tokens):
                    feed = out[:, -1:] if use_cache else out  # (B, 1) or (B, t)
                    logits = self.decode(feed, memory, src_mask, kv_cache=cache)._data[:, -1]  # (B, V)
                    out = np.concatenate([out, logits.argmax(axis=-1)[:, None]], axis=1)
        finally:
            self.train(was_training)
        return Tensor(out)
