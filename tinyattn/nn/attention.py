"""Attention (with GQA/MQA, sliding windows, head masks) and the KVCache for decoding.

One layer, four projections (W_q, W_k, W_v, W_o), and the attention itself done by one of three
backends that give the same numbers:

* ``'reference'``: ``F.attention``, plain Tensor ops (and the only one that can hand back weights),
* ``'sdpa'``: the fused ``_SDPA`` op (the default: fastest here),
* ``'flash'``: ``flash_attention``'s tiles (no (T, S) array; slower in NumPy, far smaller).
"""
from __future__ import annotations

import math

import numpy as np

from .. import autograd, checks, masks
from ..functions import cat
from ..tensor import Tensor
from .flash import _flash
from .functional import dropout
from .hook_points import add_hook_points
from .layers import Linear
from .module import Module
from .positional import RotaryEmbedding
from .sdpa import _attention, _sdpa

__all__ = ["Attention", "KVCache"]


# The three backends take the same arguments and give the same numbers: q (B, H, T, d_k), k and v
# (B, H, S, d_k), the checked masks.Keep, the scale and the dropout probability -> (out, weights or None).
def _reference(q: Tensor, k: Tensor, v: Tensor, keep: masks.Keep, scale: float, p_drop: float):
    out, weights = _attention(q, k, v, keep.dense(q.shape[2], k.shape[2]), scale)  # (B, H, T, d_k), (B, H, T, S)
    if p_drop > 0:
        out = dropout(weights, p_drop, True) @ v  # (B, H, T, S) @ (B, H, S, d_k) -> (B, H, T, d_k)
    return out, weights


def _fused(q: Tensor, k: Tensor, v: Tensor, keep: masks.Keep, scale: float, p_drop: float):
    return _sdpa(q, k, v, keep=keep.dense(q.shape[2], k.shape[2]), scale=scale, dropout_p=p_drop), None


def _tiled(q: Tensor, k: Tensor, v: Tensor, keep: masks.Keep, scale: float, p_drop: float):
    # The band goes in as limits lo <= j - i <= hi, so no (T, S) array is built for it.
    return _flash(q, k, v, scale=scale, lo=keep.lo, hi=keep.hi, keep=keep.mask, dropout_p=p_drop), None


_BACKENDS = {"reference": _reference, "sdpa": _fused, "flash": _tiled}


class KVCache:
    """The keys and values of the positions seen so far, for one attention layer.

    Decoding one token at a time, step t needs the keys/values of positions 0..t. Recomputing them
    costs O(t) projections per step; caching them costs memory instead:
    ``nbytes = 2 (K and V) * B * n_kv_heads * d_k * positions held * itemsize``. Storing n_kv_heads
    heads rather than n_heads is the whole point of GQA/MQA: the cache shrinks by n_heads / n_kv_heads.
    A layer with a causal sliding window of W never looks further back than W-1 positions, so after
    each call it keeps only those (``keep_last``): its cache stops growing at W-1 positions
    (Mistral's rolling buffer), however long the sequence.
    """

    def __init__(self) -> None:
        self.k: Tensor | None = None  # (B, H_kv, positions held, d_k): the most recent positions
        self.v: Tensor | None = None  # (B, H_kv, positions held, d_k)
        self._seen = 0  # positions seen so far, held or already dropped
        self._bufs = None  # outside the graph: [k buffer, v buffer, the k and v views last returned] (_grow)

    def update(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Append this step's keys/values (B, H_kv, T, d_k) and return all those held (B, H_kv, held + T, d_k)."""
        if self.k is None:
            self.k, self.v = k, v
        else:
            if k.shape[:2] != self.k.shape[:2] or k.shape[3] != self.k.shape[3]:
                raise ValueError(f"KVCache holds keys of shape {self.k.shape} but got {k.shape}: batch, heads and "
                                 "d_k must match (use a new KVCache for a new batch or layer)")
            grown = self._grow(k, v)  # (B, H_kv, held + T, d_k) each, or None: then cat
            self.k, self.v = grown if grown else (cat([self.k, k], dim=2), cat([self.v, v], dim=2))
        self._seen += k.shape[2]
        return self.k, self.v

    def _grow(self, k: Tensor, v: Tensor):
        """Decoding outside the graph: append into buffers with room to spare (doubling), instead of a cat
        that copies every held position each step; the same values, as views of the buffers. None where a
        gradient may flow or the dtypes differ (then cat, recorded in the graph as usual).
        GPT-2 (124M, random weights) greedy generation of 20 tokens after 20, one thread, alternating
        processes on a loaded machine: 695-767 -> 652-727 ms (the same tokens)."""
        if autograd.is_grad_enabled() or k.dtype != self.k.dtype or v.dtype != self.v.dtype:
            return None
        held, new = self.k.shape[2], k.shape[2]
        bufs = getattr(self, "_bufs", None)
        if bufs is None or bufs[2] is not self.k or bufs[3] is not self.v or held + new > bufs[0].shape[2]:
            cap = max(64, 2 * (held + new))  # (no room, or k and v are no longer the views last returned)
            bufs = [np.empty((*a.shape[:2], cap, a.shape[3]), a.dtype) for a in (self.k, self.v)]
            for buf, a in zip(bufs, (self.k, self.v)):
                buf[:, :, :held] = a._data
        out = []
        for buf, a in zip(bufs[:2], (k, v)):
            buf[:, :, held:held + new] = a._data
            out.append(Tensor._make(buf[:, :, :held + new]))  # (B, H_kv, held + T, d_k), a view of the buffer
        self._bufs = [*bufs[:2], *out]
        return out

    def keep_last(self, n: int) -> None:
        """Drop all but the last ``n`` positions (their keys and values are never attended again)."""
        n = checks.nonneg_int("n", n, "keep_last")
        if self.k is not None and self.k.shape[2] > n:
            start = self.k.shape[2] - n
            self.k = self.k[:, :, start:]  # (B, H_kv, n, d_k); the next update copies it into a new array
            self.v = self.v[:, :, start:]

    @property
    def seq_len(self) -> int:
        """How many positions this cache has seen: the position of the next token."""
        return self._seen

    @property
    def held(self) -> int:
        """How many positions' keys and values are held (seq_len, or fewer after keep_last)."""
        return 0 if self.k is None else self.k.shape[2]

    @property
    def nbytes(self) -> int:
        """Bytes held by the cached keys and values."""
        return 0 if self.k is None else self.k._data.nbytes + self.v._data.nbytes

    def reset(self) -> None:
        """Forget everything (start a new sequence)."""
        self.k = self.v = self._bufs = None
        self._seen = 0

    def __repr__(self) -> str:
        shape = None if self.k is None else tuple(self.k.shape)
        return f"KVCache(seq_len={self.seq_len}, held={self.held}, k_shape={shape}, nbytes={self.nbytes})"


class Attention(Module):
    """out = W_o concat_h softmax(q_h k_h^T / sqrt(d_k)) v_h, with q = x W_q, k = c W_k, v = c W_v.

    x (B, T, d_model) -> (B, T, d_model). H = n_heads heads of size d_k = d_model / H.
    n_kv_heads (default H): how many key/value heads; H/n_kv_heads query heads share each one
      (GQA; n_kv_heads=1 is MQA). W_k and W_v then output n_kv_heads * d_k features.
    window: sliding-window attention, each query sees only keys within ``window`` positions
      (itself and window-1 earlier keys when causal, window-1 on each side otherwise).
    dropout: on the attention weights, in training mode only.
    backend: 'reference', 'sdpa' (default) or 'flash'; same numbers, different cost.
    rope: rotate q and k by their positions (RotaryEmbedding, as in LLaMA) before the scores, so the
      scores see relative positions; self-attention only. With a KV cache the new tokens' positions
      continue from kv_cache.seq_len, and the cache holds the keys already rotated.
    """

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int | None = None, bias: bool = True,
                 dropout: float = 0.0, window: int | None = None, backend: str = "sdpa", rope: bool = False) -> None:
        super().__init__()
        d_model = checks.positive_int("d_model", d_model, "Attention")
        n_heads = checks.positive_int("n_heads", n_heads, "Attention")
        n_kv_heads = n_heads if n_kv_heads is None else checks.positive_int("n_kv_heads", n_kv_heads, "Attention")
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        if n_heads % n_kv_heads:
            raise ValueError(f"n_heads={n_heads} is not divisible by n_kv_heads={n_kv_heads} "
                             "(each key/value head serves the same number of query heads)")
        dropout = checks.probability("dropout", dropout, "Attention")
        window = None if window is None else checks.positive_int("window", window, "Attention")
        if backend not in _BACKENDS:
            raise ValueError(f"backend must be one of {tuple(_BACKENDS)}, got backend={backend!r}")
        self.d_model, self.n_heads, self.n_kv_heads = d_model, n_heads, n_kv_heads
        self.d_k = self.d_model // self.n_heads
        self.dropout, self.window, self.backend = dropout, window, backend
        self.W_q = Linear(d_model, d_model, bias=bias)
        self.W_k = Linear(d_model, self.n_kv_heads * self.d_k, bias=bias)
        self.W_v = Linear(d_model, self.n_kv_heads * self.d_k, bias=bias)
        self.W_o = Linear(d_model, d_model, bias=bias)
        if rope and self.d_k % 2:
            raise ValueError(f"rope=True rotates pairs of dims, so the head size d_k = d_model / n_heads must be even; "
                             f"got d_k = {self.d_model} / {self.n_heads} = {self.d_k}")
        self.rope = RotaryEmbedding(self.d_k) if rope else None
        # TransformerLens's hook points (hook_points.py): q, k, v, z (B, T, heads, d_k); scores and pattern
        # (B, H, T, S), computed step by step only while one of those two is hooked.
        add_hook_points(self, "hook_q", "hook_k", "hook_v", "hook_attn_scores", "hook_pattern", "hook_z")
        if rope:  # q and k after the rotation, (B, T, heads, d_k)
            add_hook_points(self, "hook_rot_q", "hook_rot_k")

    def extra_repr(self) -> str:
        kv = f", n_kv_heads={self.n_kv_heads}" if self.n_kv_heads != self.n_heads else ""
        win = f", window={self.window}" if self.window is not None else ""
        return f"d_model={self.d_model}, n_heads={self.n_heads}{kv}{win}, backend='{self.backend}'"

    # ------------------------------------------------------------------ checks
    def _check_input(self, x, name: str) -> Tensor:
        if x is None:
            raise TypeError(f"{name} must be a float Tensor (B, T, {self.d_model}), got None")
        x = x if isinstance(x, Tensor) else Tensor(x)
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"{name} has shape {x.shape} but Attention(d_model={self.d_model}) "
                             f"expects (B, T, {self.d_model})")
        if x.dtype.kind != "f":
            raise TypeError(f"{name} has dtype {x.dtype} but Attention expects floats (B, T, {self.d_model}) "
                            "(token ids? embed them first, e.g. with nn.Embedding)")
        return x

    def _head_mask(self, head_mask, dtype) -> Tensor:
        hm = head_mask if isinstance(head_mask, Tensor) else Tensor(np.asarray(head_mask))
        if hm.shape != (self.n_heads,):
            raise ValueError(f"head_mask has shape {hm.shape} but there are n_heads={self.n_heads} heads: "
                             f"expected ({self.n_heads},)")
        if not np.issubdtype(hm.dtype, np.floating):
            return Tensor(hm._data.astype(dtype))  # bool / 0-1 ints: constants
        return hm if hm.dtype == dtype else hm.to(dtype)  # a float mask may require grad (head importance)

    # ------------------------------------------------------------------ forward
    def forward(self, x, context=None, mask=None, is_causal: bool = False, return_weights: bool = False,
                kv_cache: KVCache | None = None, head_mask=None):
        """x (B, T, d_model) [, context (B, S, d_model)] -> (B, T, d_model) [, weights (B, H, T, S)].

        context: keys/values come from it (cross-attention); None = self-attention.
        mask: bool or 0/1, broadcastable to (B, H, T, S), True = attend (e.g. masks.padding_mask).
        is_causal: query i sees keys j <= i + S - T (bottom-right: with a KV cache the T queries are
          the last T positions of the S keys; for plain self-attention S == T and this is j <= i).
        kv_cache: a KVCache; this call's keys/values are appended to it and all it holds are attended.
          With a causal window W, only the last W-1 positions are kept afterwards (all a later query sees).
        head_mask: (H,) 0/1, bool or float; multiplies each head's output (0 switches a head off).
        return_weights: also return the attention weights, computed by the reference path.
        """
        x = self._check_input(x, "x")
        src = x if context is None else self._check_input(context, "context")
        if src.shape[0] != x.shape[0]:
            raise ValueError(f"x has batch size {x.shape[0]} but context has {src.shape[0]}")
        if kv_cache is not None and not isinstance(kv_cache, KVCache):
            raise TypeError(f"kv_cache must be one KVCache (this layer's), got {type(kv_cache).__name__}; "
                            "a model's new_cache() list holds one per layer")
        if kv_cache is not None and context is not None:
            raise ValueError("kv_cache is for self-attention decoding; pass context=None with a kv_cache")
        if self.rope is not None and context is not None:
            raise ValueError("this Attention has rope=True, which rotates queries and keys by their positions "
                             "in ONE sequence; cross-attention (context given) needs rope=False")
        B, T, _ = x.shape
        H, H_kv, d_k = self.n_heads, self.n_kv_heads, self.d_k
        q = self.hook_q(self.W_q(x).view(B, T, H, d_k)).transpose(1, 2)  # (B, T, H, d_k) -> (B, H, T, d_k)
        k = self.hook_k(self.W_k(src).view(B, src.shape[1], H_kv, d_k)).transpose(1, 2)  # (B, H_kv, S_new, d_k)
        v = self.hook_v(self.W_v(src).view(B, src.shape[1], H_kv, d_k)).transpose(1, 2)  # (B, H_kv, S_new, d_k)
        if self.rope is not None:  # positions continue after the cached ones; rotate k BEFORE caching it
            start = 0 if kv_cache is None else kv_cache.seq_len
            q, k = self.rope(q, offset=start), self.rope(k, offset=start)  # shapes unchanged
            q = self.hook_rot_q(q.transpose(1, 2)).transpose(1, 2)  # hooked as (B, T, H, d_k)
            k = self.hook_rot_k(k.transpose(1, 2)).transpose(1, 2)  # hooked as (B, S_new, H_kv, d_k)
        if kv_cache is not None:
            k, v = kv_cache.update(k, v)  # (B, H_kv, S, d_k): the cache keeps H_kv heads, not H
        S = k.shape[2]
        if H_kv != H:  # GQA/MQA: query head h reads key/value head h // (H / H_kv), as PyTorch's enable_gqa
            k = k.repeat_interleave(H // H_kv, dim=1)  # (B, H_kv, S, d_k) -> (B, H, S, d_k)
            v = v.repeat_interleave(H // H_kv, dim=1)  # (B, H_kv, S, d_k) -> (B, H, S, d_k)

        # The mask, the causal rule and the window, checked once (bottom-right aligned when S > T).
        keep = masks.keep(mask, (B, H, T, S), causal=is_causal, window=self.window)
        p_drop = self.dropout if self.training else 0.0
        if self.hook_attn_scores.active or self.hook_pattern.active:
            out, weights = self._hooked(q, k, v, keep, 1.0 / math.sqrt(d_k), p_drop)
        else:
            backend = _BACKENDS["reference" if return_weights else self.backend]  # only the reference gives weights
            out, weights = backend(q, k, v, keep, 1.0 / math.sqrt(d_k), p_drop)  # (B, H, T, d_k), (B, H, T, S)|None

        if head_mask is not None:
            hm = self._head_mask(head_mask, out.dtype)
            out = out * hm.view(1, H, 1, 1)  # (B, H, T, d_k) * (1, H, 1, 1): a zero head adds nothing
        if kv_cache is not None and self.window is not None and is_causal:
            kv_cache.keep_last(self.window - 1)  # later queries never reach further back: memory stays bounded
        z = self.hook_z(out.transpose(1, 2))  # (B, H, T, d_k) -> (B, T, H, d_k): each head's output
        out = z.reshape(B, T, H * d_k)  # (B, T, H, d_k) -> (B, T, d_model)
        out = self.W_o(out)  # (B, T, d_model)
        return (out, weights) if return_weights else out

    def _hooked(self, q: Tensor, k: Tensor, v: Tensor, keep: masks.Keep, scale: float, p_drop: float):
        """The reference path, through hook_attn_scores (masked scores are -inf) and hook_pattern."""
        scores = (q @ k.transpose(-2, -1)) * scale  # (B, H, T, d_k) @ (B, H, d_k, S) -> (B, H, T, S)
        dense = keep.dense(q.shape[2], k.shape[2])
        if dense is not None:
            scores = scores.masked_fill(~dense, float("-inf"))  # (B, H, T, S): a masked key gets no weight
        pattern = self.hook_pattern(self.hook_attn_scores(scores).softmax(dim=-1))  # (B, H, T, S)
        weights = dropout(pattern, p_drop, True) if p_drop > 0 else pattern
        return weights @ v, pattern  # (B, H, T, S) @ (B, H, S, d_k) -> (B, H, T, d_k)

# ---------------------------------------------------------------- torch.nn.attention's kernel choice
import contextlib as _contextlib  # noqa: E402
import enum as _enum  # noqa: E402


class SDPBackend(_enum.IntEnum):
    """The kernels PyTorch's scaled_dot_product_attention may pick (its names and values). tinyattn has one
    NumPy computation for all of them, so choosing one changes no number here."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


@_contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """``with sdpa_kernel(SDPBackend.MATH):`` restricts PyTorch's SDPA kernels; here it checks its argument
    (PyTorch's rule and message) and runs the block unchanged."""
    items = backends if isinstance(backends, (list, tuple)) else [backends]
    if not all(isinstance(b, SDPBackend) for b in items):
        bad = next(b for b in items if not isinstance(b, SDPBackend))
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
                             f"got {type(bad).__name__}")
    yield
