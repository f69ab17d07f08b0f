"""Activation patching: which activations carry the difference between a clean and a corrupted input.

Run the model on a *clean* input (say, a sequence whose repeated half an induction head can copy) and
cache every activation; run it on a *corrupted* input that differs where it matters (the repeat broken)
and measure a ``metric`` of the logits (the clean answer's log-probability, a logit difference). Then,
one activation at a time, run the corrupted input again with that single activation replaced by its
clean value. If the metric moves back towards its clean value, that activation carries information the
model uses for the answer; if it does not move, whatever that activation holds (however large an
attention weight looks) makes no difference to this answer.

Each helper returns the metric for every patch as a plain NumPy array, one row per layer:

* ``patch_resid_pre``: the residual stream entering each layer, one position at a time -> (n_layers, T);
* ``patch_head_out``: each head's output (``hook_z``, all positions) -> (n_layers, n_heads);
* ``patch_head_pattern``: each head's attention pattern (``hook_pattern``) -> (n_layers, n_heads);
* ``patch_grid``: any hook point, any axis (the three above are this).

``ablate_heads`` is the cruder cousin: replace each head's output by zero, or by its mean over a batch,
and measure the metric; no clean run needed.

Path patching (Wang et al. 2022, "Interpretability in the Wild") asks a narrower question than these:
not "does head A matter?" but "does head A matter *through* head B?". It patches A's clean output, but
lets it reach only B's input (B's queries, keys or values): every other path from A to the logits is held
at its corrupted value, by freezing the other heads' outputs at what they were in the corrupted run.
In hooks: run corrupted and cache; run again with A patched to clean, every other head's ``hook_z``
frozen to the corrupted cache, and cache B's input (``hook_q``/``hook_k``/``hook_v``); a third run
patches only that input of B. The difference from plain patching is exactly the paths not through B.
It is not built here; the three runs above are a good exercise with ``run_with_hooks``.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..nn.act_names import get_act_name
from ..tensor import Tensor, no_grad

__all__ = ["patch_grid", "patch_resid_pre", "patch_head_out", "patch_head_pattern", "ablate_heads"]


def _value(x) -> float:
    """A metric's result (a float, a NumPy scalar or a one-element Tensor) as a float."""
    if isinstance(x, Tensor):
        if x.numel() != 1:
            raise ValueError(f"the metric must return one number, got a Tensor of shape {tuple(x.shape)}")
        return float(x.item())
    return float(x)


def _replace(act: Tensor, new: np.ndarray, index: tuple) -> Tensor:
    """A copy of act with act[index] = new[index]."""
    arr = act.numpy().copy()
    arr[index] = new[index]
    return Tensor(arr)


def patch_grid(model, corrupted_tokens, clean_cache, metric: Callable, name: str, axis: int) -> np.ndarray:
    """metric(logits) of the corrupted run with ``name`` patched from ``clean_cache``, one index of ``axis``
    at a time, in every layer -> (n_layers, size of that axis) float64.

    name: a per-layer short name ("resid_pre", "z", "pattern", "attn_out", "mlp_out", ...).
    axis: the activation's axis to patch along (1 = position for the residual stream, 2 = head for
    hook_z, 1 = head for hook_pattern); all other axes of that index are patched together.
    clean_cache: the ActivationCache of ``model.run_with_cache(clean_tokens)``, same batch and length.
    """
    if not callable(metric):
        raise TypeError(f"metric must be a callable logits -> float, got {type(metric).__name__}")
    n_layers = clean_cache.n_layers
    rows = []
    with no_grad():
        for layer in range(n_layers):
            full = get_act_name(name, layer)
            clean = clean_cache[full].numpy()
            row = []
            for i in range(clean.shape[axis]):
                index = (slice(None),) * axis + (i,)

                def hook(act, hook, index=index):
                    if tuple(act.shape) != clean.shape:
                        raise ValueError(f"patching {hook.name}: the corrupted run's activation has shape "
                                         f"{tuple(act.shape)} but the clean cache's has {clean.shape} (the "
                                         "clean and corrupted inputs need the same batch size and length)")
                    return _replace(act, clean, index)

                row.append(_value(metric(model.run_with_hooks(corrupted_tokens, fwd_hooks=[(full, hook)]))))
            rows.append(row)
    return np.asarray(rows, dtype=np.float64)


def patch_resid_pre(model, corrupted_tokens, clean_cache, metric: Callable) -> np.ndarray:
    """The residual stream entering each layer, patched one position at a time -> (n_layers, T)."""
    return patch_grid(model, corrupted_tokens, clean_cache, metric, "resid_pre", axis=1)


def patch_head_out(model, corrupted_tokens, clean_cache, metric: Callable) -> np.ndarray:
    """Each head's output (hook_z (B, T, H, d_head)) at every position -> (n_layers, n_heads)."""
    return patch_grid(model, corrupted_tokens, clean_cache, metric, "z", axis=2)


def patch_head_pattern(model, corrupted_tokens, clean_cache, metric: Callable) -> np.ndarray:
    """Each head's attention pattern (hook_pattern (B, H, T, S)) -> (n_layers, n_heads)."""
    return patch_grid(model, corrupted_tokens, clean_cache, metric, "pattern", axis=1)


def ablate_heads(model, tokens, metric: Callable, how: str = "zero", reference_tokens=None) -> np.ndarray:
    """metric(logits) with each head's output (hook_z) replaced, one head at a time -> (n_layers, n_heads).

    how="zero": the head's output is 0 at every position (its W_o bias still added).
    how="mean": the head's output is its mean over the batch of ``reference_tokens`` (default: tokens),
    position by position; this keeps the head's typical contribution and removes only what depends on
    the input, so it breaks less than zero does.
    """
    if how not in ("zero", "mean"):
        raise ValueError(f"ablate_heads: how must be 'zero' or 'mean', got how={how!r}")
    if not callable(metric):
        raise TypeError(f"metric must be a callable logits -> float, got {type(metric).__name__}")
    names = [n for n in model.hook_dict if n.endswith(".attn.hook_z") and n.startswith("blocks.")]
    means = {}
    if how == "mean":
        ref = tokens if reference_tokens is None else reference_tokens
        with no_grad():
            _, cache = model.run_with_cache(ref, names_filter=names)
        means = {n: cache[n].numpy().mean(axis=0, keepdims=True) for n in names}  # (1, T, H, d_head)
    grid = []
    with no_grad():
        for name in names:
            row = []
            for h in range(_n_heads(model, name)):
                def hook(act, hook, h=h, name=name):
                    arr = act.numpy().copy()
                    if how == "zero":
                        arr[:, :, h] = 0.0
                    else:
                        m = means[name]
                        if m.shape[1] != arr.shape[1]:
                            raise ValueError(f"ablate_heads: reference_tokens have length {m.shape[1]} but tokens "
                                             f"have {arr.shape[1]}: the mean is taken position by position")
                        arr[:, :, h] = m[:, :, h]
                    return Tensor(arr)

                row.append(_value(metric(model.run_with_hooks(tokens, fwd_hooks=[(name, hook)]))))
            grid.append(row)
    return np.asarray(grid, dtype=np.float64)


def _n_heads(model, name: str) -> int:
    """The number of heads of the attention layer that owns hook point ``name``."""
    layer = int(name.split(".")[1])
    blocks = getattr(model, "blocks", None) or getattr(model, "layers")
    return blocks[layer].attn.n_heads
