"""Figures for looking at attention and training: each function returns a matplotlib Figure.

Every plotting function takes `path=` to also save the figure (format from the
suffix: .png, .svg, .pdf). Nothing here calls `plt.show()`: we build
`matplotlib.figure.Figure` objects directly, which needs no GUI backend, so the
same code works in a terminal, in CI (Agg) and in Jupyter (a Figure displays
itself as the last expression of a cell).

The HTML views (head_view, model_view) are in ``views``.
"""

from __future__ import annotations

import itertools
import os
from typing import Any, Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

ArrayLike = Any  # np.ndarray, tinyattn.Tensor, or nested lists

# One colour per model, in every figure (the demo's and the notebooks'), so that a learner who has
# seen attention in blue once can read any later plot without its legend. Keys are model kinds as
# `train.SequenceModel` names them; `model_color` also reads longer labels such as "tanh RNN".
MODEL_COLORS = {
    "attention": "#1f77b4",            # blue: attention, and a transformer of two or more layers
    "gru": "#ff7f0e",                  # orange
    "rnn": "#2ca02c",                  # green: the plain tanh RNN
    "attention, 1 layer": "#9467bd",   # purple: a one-layer transformer beside a deeper one
}
# What the log-scale gradient figure draws in place of an exact zero (log(0) has no place on the axis).
GRAD_FLOOR = 1e-30


def model_color(name: str) -> str:
    """The colour of a model from its label: 'gru', 'rnn' or 'attention' anywhere in it, case ignored.

    "tanh RNN" is the RNN's green, "attention (1 layer)" the attention blue: the kind decides. To tell
    a one-layer transformer from a deeper one in the same figure, use `layer_color`.
    """
    low = str(name).lower()
    for kind in ("gru", "rnn", "attention"):
        if kind in low:
            return MODEL_COLORS[kind]
    if "transformer" in low:
        return MODEL_COLORS["attention"]
    raise ValueError(f"model_color: no colour for {name!r}; the labels name one of {sorted(MODEL_COLORS)}")


def layer_color(n_layers: int) -> str:
    """The colour of a transformer by depth: one layer purple, two or more the attention blue."""
    return MODEL_COLORS["attention, 1 layer"] if n_layers == 1 else MODEL_COLORS["attention"]


def _np(x: ArrayLike, name: str) -> np.ndarray:
    """A Tensor or array-like as a float ndarray (a Tensor's .data, detached)."""
    if not isinstance(x, np.ndarray) and hasattr(x, "data") and isinstance(getattr(x, "data"), np.ndarray):
        x = x._data  # a tinyattn.Tensor
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name} must be an array of numbers, got {type(x).__name__}: {e}") from None
    return a


def _make_folder_for(path: str | os.PathLike) -> None:
    """Create the folder that ``path`` will be written into (nothing to do for a bare file name)."""
    folder = os.path.dirname(os.fspath(path))
    if folder:
        os.makedirs(folder, exist_ok=True)


def _save(fig: Figure, path: str | os.PathLike | None) -> Figure:
    if path is not None:
        _make_folder_for(path)
        fig.savefig(path, dpi=120, bbox_inches="tight")
    return fig


def _check_tokens(tokens: Sequence[str] | None, n: int, what: str, shape: tuple) -> list[str] | None:
    if tokens is None:
        return None
    tokens = [str(t) for t in tokens]
    if len(tokens) != n:
        raise ValueError(f"{what} has {len(tokens)} labels but weights has {n} (weights shape {shape})")
    return tokens


# Token labels on attention maps: 9 pt is about 12 px at 100 dpi, readable at a notebook's width.
# The figures give each token at least TOKEN_INCHES so that neighbouring labels do not overlap.
TOKEN_FONTSIZE = 9
TOKEN_INCHES = 0.15


def _series_color(name: str) -> str | None:
    """The model's colour for a curve labelled `name`, or None (matplotlib's next colour) if it names none."""
    try:
        return model_color(name)
    except ValueError:
        return None


def _attention_image(ax, w: np.ndarray, query_tokens, key_tokens, vmax: float | None = 1.0):
    """Draw one (T, S) attention map on `ax`: rows = queries, cols = keys."""
    im = ax.imshow(w, cmap="viridis", vmin=0.0, vmax=vmax, aspect="auto", interpolation="nearest")
    if key_tokens is not None:
        ax.set_xticks(range(len(key_tokens)), key_tokens, rotation=90, fontsize=TOKEN_FONTSIZE)
    if query_tokens is not None:
        ax.set_yticks(range(len(query_tokens)), query_tokens, fontsize=TOKEN_FONTSIZE)
    return im


# ----------------------------------------------------------------------------- attention maps


def plot_attention(weights: ArrayLike, query_tokens: Sequence[str] | None = None,
                   key_tokens: Sequence[str] | None = None, title: str | None = None,
                   path: str | os.PathLike | None = None) -> Figure:
    """Heatmap of one attention matrix `weights` (T_q, T_k): row i = how query i spreads over the keys."""
    w = _np(weights, "weights")
    if w.ndim == 3 and w.shape[0] == 1:
        w = w[0]  # (1, T, S) -> (T, S): a batch or head of one
    if w.ndim != 2:
        raise ValueError(f"plot_attention expects weights of shape (T_q, T_k), got {w.shape}; "
                         "pick one batch element and head, e.g. weights[0, h], or use plot_attention_grid")
    q = _check_tokens(query_tokens, w.shape[0], "query_tokens", w.shape)
    k = _check_tokens(key_tokens, w.shape[1], "key_tokens", w.shape)
    T, S = w.shape
    fig = Figure(figsize=(min(2 + 0.25 * S, 14), min(1.5 + 0.25 * T, 14)))
    ax = fig.add_subplot()
    im = _attention_image(ax, w, q, k)
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    ax.set_title(title or "attention weights (rows sum to 1)")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    return _save(fig, path)


def _as_layers(weights: ArrayLike | Sequence[ArrayLike]) -> np.ndarray:
    """Weights as (L, H, T, S): accepts (L, H, T, S), (H, T, S), or a list over layers of (H, T, S) / (1, H, T, S)."""
    if isinstance(weights, (list, tuple)):
        layers = [_np(w, f"weights[{i}]") for i, w in enumerate(weights)]
        layers = [w[0] if w.ndim == 4 and w.shape[0] == 1 else w for w in layers]  # drop a batch of one
        shapes = {w.shape for w in layers}
        if len(shapes) != 1 or len(next(iter(shapes))) != 3:
            raise ValueError("each layer's weights must be (H, T, S) and all the same shape, "
                             f"got {[w.shape for w in layers]}")
        return np.stack(layers)  # (L, H, T, S)
    w = _np(weights, "weights")
    if w.ndim == 3:
        return w[None]  # (1, H, T, S)
    if w.ndim != 4:
        raise ValueError(f"weights must be (L, H, T, S), (H, T, S) or a list of (H, T, S), got shape {w.shape}")
    return w


def plot_attention_grid(weights: ArrayLike | Sequence[ArrayLike], tokens: Sequence[str] | None = None,
                        title: str | None = None, path: str | os.PathLike | None = None) -> Figure:
    """A layers x heads grid of attention maps; `weights` is (L, H, T, S) or a list over layers of (H, T, S)."""
    w = _as_layers(weights)
    L, H, T, S = w.shape
    q = _check_tokens(tokens, T, "tokens", w.shape)
    k = _check_tokens(tokens, S, "tokens", w.shape) if T == S else None
    # Each panel big enough for its token labels: 2.6 in, or TOKEN_INCHES per token when longer.
    panel = max(2.6, TOKEN_INCHES * max(T, S) + 0.5) if tokens is not None else 2.6
    # At most 16 in a side, unless the labels need more: a big grid (GPT-2's 12 x 12) gets a big figure
    # rather than labels printed over each other.
    # Each panel needs TOKEN_INCHES per token plus about 0.8 in for its title and spacing.
    need = TOKEN_INCHES * max(T, S) + 0.8 if tokens is not None else 0.0
    fig = Figure(figsize=(max(min(1.5 + panel * H, 16), 1.5 + need * H),
                          max(min(1.0 + 0.95 * panel * L, 16), 1.0 + need * L)), layout="constrained")
    axes = fig.subplots(L, H, squeeze=False)
    for (l, h) in itertools.product(range(L), range(H)):
        ax = axes[l, h]
        im = _attention_image(ax, w[l, h], q if h == 0 else None, k if l == L - 1 else None)
        if h != 0:
            ax.set_yticks([])
        if l != L - 1:
            ax.set_xticks([])
        ax.set_title(f"layer {l} head {h}", fontsize=9)
        if l == L - 1:
            ax.set_xlabel("key")
        if h == 0:
            ax.set_ylabel("query")
    fig.colorbar(im, ax=axes, shrink=0.8)
    if title:
        fig.suptitle(title)
    return _save(fig, path)


# ----------------------------------------------------------------------------- training curves


def _histories(history: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """One history dict, or {label: history}: always return {label: history}."""
    if "loss" in history:
        return {"": history}
    if not history or not all(isinstance(h, Mapping) and "loss" in h for h in history.values()):
        raise ValueError("history must be a dict with a 'loss' list (as fit() returns) "
                         f"or a dict of such dicts, got keys {list(history)}")
    return dict(history)


def plot_history(history: Mapping[str, Any], title: str | None = None, chance: float | None = None,
                 path: str | os.PathLike | None = None) -> Figure:
    """Loss and accuracy curves from fit()'s history (or {label: history} to compare runs)."""
    runs = _histories(history)
    fig = Figure(figsize=(10, 3.6), layout="constrained")
    ax_loss, ax_acc = fig.subplots(1, 2)
    for label, h in runs.items():
        steps = h.get("step", range(1, len(h["loss"]) + 1))
        ax_loss.plot(steps, h["loss"], label=label or "train loss", lw=1)
        if h.get("eval_acc"):
            ax_acc.plot(h.get("eval_step", range(len(h["eval_acc"]))), h["eval_acc"], marker="o", ms=3,
                        label=label or "eval accuracy")
    ax_loss.set_xlabel("step")
    ax_loss.set_ylabel("loss")
    ax_loss.set_yscale("log")
    ax_acc.set_xlabel("step")
    ax_acc.set_ylabel("accuracy")
    ax_acc.set_ylim(-0.02, 1.02)
    if chance is not None:
        ax_acc.axhline(chance, color="gray", ls="--", lw=1, label="chance")
    for ax in (ax_loss, ax_acc):
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    return _save(fig, path)


def _check_curves(results: Mapping[str, Mapping[Any, float]], what: str) -> None:
    if not isinstance(results, Mapping) or not results:
        raise ValueError(f"{what} must be a non-empty dict {{model name: {{x: value}}}}, got {type(results).__name__}")
    for name, curve in results.items():
        if not isinstance(curve, Mapping):
            raise ValueError(f"{what}[{name!r}] must be a dict {{x: value}}, got {type(curve).__name__}")


def plot_accuracy_vs_distance(results: Mapping[str, Mapping[Any, float]], chance: float | None = None,
                              xlabel: str = "distance (tokens)", title: str | None = None,
                              path: str | os.PathLike | None = None) -> Figure:
    """Accuracy per model against distance (or pairs, ...): results = {model: {x: accuracy in [0, 1]}}."""
    _check_curves(results, "results")
    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.add_subplot()
    for name, curve in results.items():
        xs = sorted(curve)
        ax.plot(xs, [curve[x] for x in xs], marker="o", label=name, color=_series_color(name))
    if chance is not None:
        ax.axhline(chance, color="gray", ls="--", lw=1, label="chance")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # distances and pair counts are whole numbers
    ax.set_xlabel(xlabel)
    ax.set_ylabel("accuracy")
    ax.set_ylim(-0.02, 1.05)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title(title or "accuracy vs distance")
    return _save(fig, path)


def plot_grad_norm_vs_distance(norms: Mapping[str, Mapping[int, float]], title: str | None = None,
                               path: str | os.PathLike | None = None) -> Figure:
    """How much gradient reaches a token d steps before the loss: norms = {model: {d: ||dL/dx||}}, log scale."""
    _check_curves(norms, "norms")
    fig = Figure(figsize=(6, 4), layout="constrained")
    ax = fig.add_subplot()
    any_zero = False
    for name, curve in norms.items():
        xs = sorted(curve)
        ys = np.asarray([curve[x] for x in xs], dtype=np.float64)
        any_zero |= bool((ys < GRAD_FLOOR).any())
        # An exact zero has no place on a log axis: draw it at the floor, and say so below.
        ax.plot(xs, np.maximum(ys, GRAD_FLOOR), label=name, color=_series_color(name))
    if any_zero:
        ax.axhline(GRAD_FLOOR, color="gray", ls=":", lw=1, label=f"exact 0 (drawn at {GRAD_FLOOR:g})")
    ax.set_yscale("log")
    ax.set_xlabel("distance (tokens before the loss)")
    ax.set_ylabel("gradient norm")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    ax.set_title(title or "gradient reaching each earlier token")
    return _save(fig, path)
