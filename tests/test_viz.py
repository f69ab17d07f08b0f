"""Figures: each function returns a Figure with the right axis labels, saves to path=, and checks its input."""

from html.parser import HTMLParser

import matplotlib

matplotlib.use("Agg")  # no display needed; set here rather than in a conftest

import numpy as np
import pytest
from matplotlib.figure import Figure

import tinyattn
from tinyattn import viz


def _weights(*shape, seed=0):
    """Random attention weights whose last axis sums to 1."""
    return np.random.default_rng(seed).dirichlet(np.ones(shape[-1]), size=shape[:-1])


def test_plot_attention_axes_rows_queries_cols_keys(tmp_path):
    w = _weights(3, 5)  # 3 queries, 5 keys
    fig = viz.plot_attention(w, ["q0", "q1", "q2"], list("abcde"), path=tmp_path / "a.png")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "key" and ax.get_ylabel() == "query"
    assert [t.get_text() for t in ax.get_xticklabels()] == list("abcde")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["q0", "q1", "q2"]
    np.testing.assert_allclose(ax.images[0].get_array(), w)  # rows = queries, not transposed
    assert (tmp_path / "a.png").stat().st_size > 1000


def test_plot_attention_accepts_a_tensor():
    w = tinyattn.tensor(_weights(4, 4))
    fig = viz.plot_attention(w)
    np.testing.assert_allclose(fig.axes[0].images[0].get_array(), w.numpy())


def test_plot_attention_errors():
    with pytest.raises(ValueError, match=r"query_tokens has 2 labels but weights has 3 \(weights shape \(3, 5\)\)"):
        viz.plot_attention(_weights(3, 5), ["a", "b"], list("abcde"))
    with pytest.raises(ValueError, match=r"expects weights of shape \(T_q, T_k\), got \(2, 3, 4, 4\)"):
        viz.plot_attention(_weights(2, 3, 4, 4))


def test_attention_grid_is_layers_by_heads(tmp_path):
    w = [_weights(3, 4, 4, seed=s) for s in range(2)]  # 2 layers of (H=3, T=4, S=4)
    fig = viz.plot_attention_grid(w, tokens=list("wxyz"), path=tmp_path / "g.svg")
    grid = [ax for ax in fig.axes if ax.images]
    assert len(grid) == 6
    titles = [ax.get_title() for ax in grid]
    assert titles[0] == "layer 0 head 0" and titles[-1] == "layer 1 head 2"
    bottom_left = grid[3]
    assert bottom_left.get_xlabel() == "key" and bottom_left.get_ylabel() == "query"
    np.testing.assert_allclose(grid[5].images[0].get_array(), w[1][2])
    assert (tmp_path / "g.svg").read_text().lstrip().startswith("<?xml")
    with pytest.raises(ValueError, match="all the same shape"):
        viz.plot_attention_grid([_weights(3, 4, 4), _weights(2, 4, 4)])


def test_plot_history_one_or_several_runs():
    h = {"step": [1, 2, 3], "loss": [2.0, 1.0, 0.5], "eval_step": [3], "eval_acc": [0.75]}
    fig = viz.plot_history(h, chance=0.25)
    loss_ax, acc_ax = fig.axes
    assert (loss_ax.get_xlabel(), loss_ax.get_ylabel()) == ("step", "loss")
    assert (acc_ax.get_xlabel(), acc_ax.get_ylabel()) == ("step", "accuracy")
    np.testing.assert_allclose(loss_ax.lines[0].get_ydata(), [2.0, 1.0, 0.5])
    fig2 = viz.plot_history({"gru": h, "attention": h})
    assert [l.get_label() for l in fig2.axes[0].lines] == ["gru", "attention"]
    with pytest.raises(ValueError, match="'loss' list"):
        viz.plot_history({"acc": [1.0]})


def test_accuracy_vs_distance(tmp_path):
    res = {"attention": {10: 1.0, 40: 1.0}, "rnn": {40: 0.2, 10: 0.9}}
    fig = viz.plot_accuracy_vs_distance(res, chance=0.125, path=tmp_path / "acc.png")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "distance (tokens)" and ax.get_ylabel() == "accuracy"
    rnn = [l for l in ax.lines if l.get_label() == "rnn"][0]
    assert list(rnn.get_xdata()) == [10, 40] and list(rnn.get_ydata()) == [0.9, 0.2]  # sorted by distance
    assert (tmp_path / "acc.png").exists()
    assert viz.plot_accuracy_vs_distance(res, xlabel="pairs").axes[0].get_xlabel() == "pairs"
    with pytest.raises(ValueError, match="non-empty dict"):
        viz.plot_accuracy_vs_distance({})


def test_grad_norm_vs_distance():
    fig = viz.plot_grad_norm_vs_distance({"rnn": {0: 1.0, 5: 1e-3, 9: 0.0}, "attention": {0: 1.0, 9: 0.5}})
    ax = fig.axes[0]
    assert ax.get_ylabel() == "gradient norm" and ax.get_xlabel().startswith("distance")
    assert ax.get_yscale() == "log"
    assert min(ax.lines[0].get_ydata()) > 0  # an exact zero is floored, not dropped from a log axis


def test_grad_norm_floor_is_labelled_only_when_a_zero_is_drawn():
    fig = viz.plot_grad_norm_vs_distance({"rnn": {0: 1.0, 9: 0.0}, "attention": {0: 1.0, 9: 0.5}})
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert labels == ["rnn", "attention", "exact 0 (drawn at 1e-30)"]
    floor = [l for l in fig.axes[0].lines if l.get_label().startswith("exact 0")][0]
    assert list(floor.get_ydata()) == [viz.GRAD_FLOOR, viz.GRAD_FLOOR]
    assert fig.axes[0].lines[0].get_ydata()[-1] == viz.GRAD_FLOOR     # the zero sits on that line
    no_zero = viz.plot_grad_norm_vs_distance({"rnn": {0: 1.0, 9: 1e-8}})
    assert no_zero.axes[0].get_legend_handles_labels()[1] == ["rnn"]


def test_one_colour_per_model_in_every_figure():
    import matplotlib.colors as mcolors
    assert viz.model_color("attention") == viz.model_color("attention (1 layer)") == viz.MODEL_COLORS["attention"]
    assert viz.model_color("tanh RNN") == viz.model_color("rnn") == viz.MODEL_COLORS["rnn"]
    assert viz.model_color("GRU") == viz.MODEL_COLORS["gru"]
    assert viz.layer_color(1) != viz.layer_color(2) == viz.MODEL_COLORS["attention"]
    assert len(set(viz.MODEL_COLORS.values())) == len(viz.MODEL_COLORS)        # no two models share one
    with pytest.raises(ValueError, match="no colour for 'mlp'"):
        viz.model_color("mlp")
    # The same model gets the same colour whatever order the dict lists the models in.
    for res in ({"attention": {1: 1.0}, "gru": {1: 0.5}, "rnn": {1: 0.2}},
                {"rnn": {1: 0.2}, "gru": {1: 0.5}, "attention": {1: 1.0}}):
        for fig in (viz.plot_accuracy_vs_distance(res), viz.plot_grad_norm_vs_distance(res)):
            drawn = {l.get_label(): mcolors.to_hex(l.get_color()) for l in fig.axes[0].lines}
            assert all(drawn[m] == viz.MODEL_COLORS[m] for m in res), drawn
    other = viz.plot_accuracy_vs_distance({"a": {1: 1.0}, "b": {1: 0.5}}).axes[0].lines   # unnamed: the cycle
    assert other[0].get_color() != other[1].get_color()


def test_attention_grid_gives_long_sequences_room_for_their_labels():
    tokens = [f"t{i}" for i in range(20)]
    fig = viz.plot_attention_grid(_weights(2, 2, 20, 20), tokens=tokens)
    ax = [a for a in fig.axes if a.images][0]
    assert all(t.get_fontsize() >= 9 for t in ax.get_yticklabels())
    fig.canvas.draw()
    # Neighbouring query labels must not overlap: the gap between rows exceeds a label's height.
    boxes = [t.get_window_extent() for t in ax.get_yticklabels()]
    rows = sorted(b.y0 for b in boxes)
    assert min(b - a for a, b in zip(rows, rows[1:])) > max(b.height for b in boxes)


class _Checker(HTMLParser):
    """Well-formedness: every opened non-void tag is closed in order."""

    VOID = {"br", "hr", "img", "input", "meta", "link", "line", "option"}

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.tags = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in self.VOID and tag == "option":
            return
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(tag)


def _data(text):
    import json
    import re

    return json.loads(re.search(r'class="tv-data">(.*?)</script>', text, re.S).group(1).replace("<\\/", "</"))


@pytest.mark.parametrize("make", [viz.head_view, viz.model_view], ids=["head_view", "model_view"])
def test_views_are_well_formed_and_self_contained(tmp_path, make):
    w = _weights(2, 3, 4, 4)  # (L, H, T, S)
    tokens = ["the", "<cat>", "</script><b>", "&"]
    view = make(w, tokens)
    text = view._repr_html_()
    assert text == view.html
    checker = _Checker()
    checker.feed(text)
    checker.close()
    assert checker.errors == [] and checker.stack == []
    assert "http" not in text and "src=" not in text and "<link" not in text  # nothing fetched from anywhere
    tags = [t for t, _ in checker.tags]
    assert tags.count("script") == 2  # the data, then the code
    assert "</script><b>" not in text  # a token can't close the data block or inject markup
    data = _data(text)
    assert data["q"] == tokens and data["k"] == tokens and data["colors"] == viz.head_colors(3)
    np.testing.assert_allclose(np.array(data["w"]), w, atol=1e-4)  # the weights travel intact (4 decimals)
    page = tmp_path / "v.html"
    view.save(page)
    assert page.read_text().startswith("<!DOCTYPE html>")


def test_head_view_has_a_layer_selector_and_a_colour_per_head():
    view = viz.head_view(_weights(2, 3, 4, 4), list("abcd"))
    checker = _Checker()
    checker.feed(view.html)
    tags = [t for t, _ in checker.tags]
    assert tags.count("option") == 2  # a layer selector
    assert sum(1 for t, a in checker.tags if t == "span" and a.get("class") == "tv-head") == 3
    one = viz.head_view(_weights(3, 4, 4), list("abcd")).html  # (H, T, S): one layer, no selector
    assert "<select>" not in one


def test_model_view_is_a_grid_of_every_layer_and_head():
    view = viz.model_view([_weights(1, 3, 5, 5), _weights(1, 3, 5, 5)], list("abcde"))  # outputs.attentions' form
    checker = _Checker()
    checker.feed(view.html)
    cells = [(int(a["data-layer"]), int(a["data-head"])) for t, a in checker.tags if t == "canvas"]
    assert cells == [(l, h) for l in range(2) for h in range(3)]
    assert "tv-detail" in view.html  # where a clicked cell expands


def test_more_than_ten_heads_get_distinct_colours():
    for H in (1, 10, 12, 16, 32):
        colours = viz.head_colors(H)
        assert len(colours) == H and len(set(colours)) == H
    assert viz.head_colors(10)[:2] == ["#1f77b4", "#ff7f0e"]  # matplotlib's tab10 up to ten heads


def test_attention_grid_at_twelve_by_twelve_keeps_labels_apart():
    tokens = [f"tok{i}" for i in range(9)]
    fig = viz.plot_attention_grid(_weights(12, 12, 9, 9), tokens=tokens)
    fig.draw_without_rendering()  # runs the constrained layout, as saving does
    axes = [a for a in fig.axes if a.images]
    left, bottom = axes[-12], axes[-1]  # the last row's first and last panels carry the labels
    for labels, coord, size in ((left.get_yticklabels(), "y0", "height"), (bottom.get_xticklabels(), "x0", "width")):
        boxes = [t.get_window_extent() for t in labels]
        pos = sorted(getattr(b, coord) for b in boxes)
        assert min(b - a for a, b in zip(pos, pos[1:])) > max(getattr(b, size) for b in boxes)


def test_head_view_errors():
    with pytest.raises(ValueError, match="tokens has 3 labels but weights has 4"):
        viz.head_view(_weights(2, 4, 4), ["a", "b", "c"])
    with pytest.raises(ValueError, match="NaN or inf"):
        viz.head_view(np.full((1, 2, 2), np.nan), ["a", "b"])
    with pytest.raises(ValueError, match="model_view needs tokens"):
        viz.model_view(_weights(2, 4, 4), None)
