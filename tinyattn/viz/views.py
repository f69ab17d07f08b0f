"""Attention as self-contained HTML, in the manner of BertViz: inline CSS and JS, nothing fetched.

* ``head_view(weights, tokens)``: one layer at a time (a selector picks it); queries on the left, keys on
  the right, one colour per head. At rest every line of every shown head is drawn; hovering a token
  keeps only its lines; clicking a head's colour hides or shows that head.
* ``model_view(attentions, tokens)``: a grid of every layer x head, each cell a small drawing of its
  lines; clicking a cell expands it to a full view with the token labels (click again to close).

A line's opacity is its weight divided by the largest weight in the same query's row: each query's
strongest key is drawn solid, so attention spread over many keys is still visible (a raw weight of
1/T would be nearly invisible), and a line's weight relative to its row's others still reads at a
glance. Lines under 3% of their row's largest are not drawn.
"""
from __future__ import annotations

import colorsys
import itertools
import json
import os
from typing import Sequence

import numpy as np

from .figures import ArrayLike, _as_layers, _check_tokens, _make_folder_for

__all__ = ["HeadView", "head_colors", "head_view", "model_view"]

# matplotlib's tab10: distinct and familiar, for up to ten heads.
_TAB10 = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
          "#7f7f7f"]


def head_colors(n_heads: int) -> list[str]:
    """One distinct colour per head: tab10 for up to ten heads, else hues evenly around the colour wheel
    (lightness alternating between neighbours, so adjacent heads differ in two ways)."""
    if n_heads <= len(_TAB10):
        return _TAB10[:n_heads]
    out = []
    for h in range(n_heads):
        r, g, b = colorsys.hls_to_rgb(h / n_heads, 0.3 if h % 2 else 0.42, 0.8)
        out.append("#{:02x}{:02x}{:02x}".format(round(r * 255), round(g * 255), round(b * 255)))
    return out


class HeadView:
    """A self-contained HTML view: ``.html`` (a string), ``save(path)``, and Jupyter display (_repr_html_)."""

    def __init__(self, html_text: str, title: str = "tinyattn head view"):
        self.html = html_text
        self.title = title

    def _repr_html_(self) -> str:
        return self.html

    def save(self, path: str | os.PathLike) -> str:
        """Write a standalone .html page; returns the path."""
        _make_folder_for(path)
        page = f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{self.title}</title></head>\n" \
               f"<body>\n{self.html}\n</body></html>\n"
        with open(path, "w", encoding="utf-8") as f:
            f.write(page)
        return os.fspath(path)


_view_counter = itertools.count()

_CSS = """
#ID {font-family: monospace; font-size: 13px; color: #222;}
#ID .tv-bar {margin-bottom: 6px;}
#ID .tv-head {display: inline-block; width: 16px; height: 12px; margin-right: 3px; cursor: pointer;
  border: 1px solid #555; vertical-align: middle;}
#ID .tv-head.off {opacity: 0.15;}
#ID svg text {cursor: default; fill: #222; font-family: monospace; font-size: 13px;}
#ID svg text.tv-hi {font-weight: bold; fill: #000;}
#ID .tv-note {color: #666; font-size: 11px;}
#ID table.tv-grid {border-collapse: collapse;}
#ID table.tv-grid td, #ID table.tv-grid th {padding: 1px; font-weight: normal; font-size: 11px; color: #555;}
#ID canvas.tv-cell {border: 1px solid #ccc; cursor: pointer; display: block;}
#ID canvas.tv-cell.open {border: 2px solid #000;}
#ID .tv-detail {margin-top: 8px;}
"""

# The drawing both views share: labels on both sides (their width measured, so long tokens fit), and lines
# whose opacity is the weight over its row's largest. draw(svg, heads, focus): heads = [[T][S] weights, colour].
_DRAW = """
  var NS = root.querySelector("svg") ? root.querySelector("svg").namespaceURI : document.documentElement.namespaceURI;
  function make(tag, attrs, parent) {
    var el = document.createElementNS(NS, tag);
    for (var k in attrs) el.setAttribute(k, attrs[k]);
    parent.appendChild(el); return el;
  }
  function Lines(svg, Q, K) {  // a two-column token view in svg: queries Q on the left, keys K on the right
    var ROW = 18, TOP = 6, GAP = 200, PAD = 6, self = this;
    var labels = make("g", {}, svg), g = make("g", {}, svg);
    var left = Q.map(function (t, i) {
      var el = make("text", {y: TOP + ROW * i + 13, "text-anchor": "end", "class": "tv-left"}, labels);
      el.textContent = t; return el; });
    var right = K.map(function (t, j) {
      var el = make("text", {y: TOP + ROW * j + 13, "class": "tv-right"}, labels);
      el.textContent = t; return el; });
    function widest(els) {  // the longest label's width in pixels, as rendered: long tokens get room
      var w = 0; els.forEach(function (e) { w = Math.max(w, e.getComputedTextLength()); }); return w;
    }
    var XL = PAD + widest(left) + 4, XR = XL + GAP;
    left.forEach(function (e) { e.setAttribute("x", XL - 4); });
    right.forEach(function (e) { e.setAttribute("x", XR + 4); });
    svg.setAttribute("width", XR + widest(right) + 8 + PAD);
    svg.setAttribute("height", TOP + ROW * Math.max(Q.length, K.length) + 6);
    function y(i) { return TOP + ROW * i + 9; }
    this.heads = []; this.focus = {q: -1, k: -1};
    this.render = function () {
      while (g.firstChild) g.removeChild(g.firstChild);
      var f = self.focus, any = f.q >= 0 || f.k >= 0;
      self.heads.forEach(function (hd) {
        if (!hd.on) return;
        for (var i = 0; i < Q.length; i++) {
          if (f.q >= 0 && i !== f.q) continue;
          var row = hd.w[i], m = Math.max.apply(null, row) || 1;
          for (var j = 0; j < K.length; j++) {
            if (f.k >= 0 && j !== f.k) continue;
            var a = row[j] / m;
            if (a < 0.03) continue;
            make("line", {x1: XL + 2, y1: y(i), x2: XR - 2, y2: y(j), stroke: hd.color,
                          "stroke-width": any ? 2.5 : 1.5, "stroke-opacity": (any ? 1 : 0.7) * a}, g);
          }
        }
      });
      left.forEach(function (e, i) { e.classList.toggle("tv-hi", i === f.q); });
      right.forEach(function (e, j) { e.classList.toggle("tv-hi", j === f.k); });
    };
    function hover(q, k) { return function () { self.focus = {q: q, k: k}; self.render(); }; }
    left.forEach(function (e, i) { e.addEventListener("mouseenter", hover(i, -1)); });
    right.forEach(function (e, j) { e.addEventListener("mouseenter", hover(-1, j)); });
    svg.addEventListener("mouseleave", function () { self.focus = {q: -1, k: -1}; self.render(); });
  }
"""

_HEAD_JS = """
(function () {
  var root = document.getElementById("__UID__");
  var D = JSON.parse(root.querySelector("script.tv-data").textContent);  // weights [layer][head][query][key]
  var W = D.w, layer = 0;
__DRAW__
  var view = new Lines(root.querySelector("svg"), D.q, D.k);
  function load() {
    view.heads = W[layer].map(function (w, h) {
      return {w: w, color: D.colors[h], on: !root.querySelectorAll(".tv-head")[h].classList.contains("off")}; });
    view.render();
  }
  root.querySelectorAll(".tv-head").forEach(function (el, h) {
    el.addEventListener("click", function () { el.classList.toggle("off"); load(); });
  });
  var sel = root.querySelector("select");
  if (sel) sel.addEventListener("change", function () { layer = +sel.value; load(); });
  load();
})();
"""

_MODEL_JS = """
(function () {
  var root = document.getElementById("__UID__");
  var D = JSON.parse(root.querySelector("script.tv-data").textContent);  // weights [layer][head][query][key]
  var W = D.w, detail = root.querySelector(".tv-detail"), open = null;
__DRAW__
  function thumb(cv, w, color) {  // the cell: keys' and queries' rows as two columns, lines between
    var c = cv.getContext("2d"), T = w.length, S = w[0].length, H = cv.height - 8;
    c.clearRect(0, 0, cv.width, cv.height); c.strokeStyle = color; c.lineWidth = 1;
    for (var i = 0; i < T; i++) {
      var m = Math.max.apply(null, w[i]) || 1;
      for (var j = 0; j < S; j++) {
        var a = w[i][j] / m;
        if (a < 0.03) continue;
        c.globalAlpha = 0.8 * a; c.beginPath();
        c.moveTo(6, 4 + H * (i + 0.5) / T); c.lineTo(cv.width - 6, 4 + H * (j + 0.5) / S); c.stroke();
      }
    }
  }
  root.querySelectorAll("canvas.tv-cell").forEach(function (cv) {
    var l = +cv.dataset.layer, h = +cv.dataset.head;
    thumb(cv, W[l][h], D.colors[h]);
    cv.addEventListener("click", function () {
      root.querySelectorAll("canvas.tv-cell").forEach(function (o) { o.classList.remove("open"); });
      while (detail.firstChild) detail.removeChild(detail.firstChild);
      if (open === cv) { open = null; return; }
      open = cv; cv.classList.add("open");
      var title = document.createElement("div");
      title.textContent = "layer " + l + ", head " + h + " (hover a token; click the cell again to close)";
      detail.appendChild(title);
      var svg = make("svg", {}, detail);
      var view = new Lines(svg, D.q, D.k);
      view.heads = [{w: W[l][h], color: D.colors[h], on: true}];
      view.render();
    });
  });
})();
"""


def _prepare(weights, tokens, key_tokens, name: str):
    w = _as_layers(weights)  # (L, H, T, S)
    L, H, T, S = w.shape
    q = _check_tokens(tokens, T, "tokens", w.shape)
    k = _check_tokens(key_tokens if key_tokens is not None else tokens, S, "key_tokens", w.shape)
    if q is None:
        raise ValueError(f"{name} needs tokens: one label per query")
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name}: weights contain NaN or inf")
    colors = head_colors(H)
    # JSON inside <script>: escape "</" so a token can never close the tag early.
    data = json.dumps({"w": np.round(w, 4).tolist(), "q": q, "k": k, "colors": colors}, ensure_ascii=False)
    data = data.replace("</", "<\\/")
    return w, colors, data


def _page(uid: str, body: str, data: str, js: str) -> str:
    return (f'<div id="{uid}" class="tinyattn-view">\n'
            f"<style>{_CSS.replace('#ID', '#' + uid)}</style>\n{body}\n"
            f'<script type="application/json" class="tv-data">{data}</script>\n'
            f"<script>{js.replace('__DRAW__', _DRAW).replace('__UID__', uid)}</script>\n"
            "</div>")


def head_view(weights: ArrayLike | Sequence[ArrayLike], tokens: Sequence[str],
              key_tokens: Sequence[str] | None = None) -> HeadView:
    """BertViz-style head view: every head's lines at rest; hover a token to focus it; click a colour to hide a head.

    weights: (H, T, S), (L, H, T, S) or a list over layers of (H, T, S) (a batch of one is dropped),
    e.g. ``outputs.attentions``. tokens: T query labels; key_tokens: S key labels (default: ``tokens``).
    """
    w, colors, data = _prepare(weights, tokens, key_tokens, "head_view")
    L, H = w.shape[:2]
    uid = f"tinyattn-hv-{os.getpid()}-{next(_view_counter)}"
    heads = "".join(f'<span class="tv-head" title="head {h}" style="background:{c}"></span>'
                    for h, c in enumerate(colors))
    layer_select = ""
    if L > 1:
        layer_select = "<select>" + "".join(f'<option value="{l}">layer {l}</option>' for l in range(L)) + "</select> "
    body = (f'<div class="tv-bar">{layer_select}heads: {heads} <span class="tv-note">hover a token (left: query, '
            "right: key); click a colour to hide a head; opacity = weight / its row's largest</span></div>\n"
            '<svg width="10" height="10"></svg>')
    return HeadView(_page(uid, body, data, _HEAD_JS))


def model_view(attentions: ArrayLike | Sequence[ArrayLike], tokens: Sequence[str],
               key_tokens: Sequence[str] | None = None) -> HeadView:
    """BertViz-style model view: a grid of every layer (rows) x head (columns); click a cell to expand it.

    attentions: a tuple over layers of (1, H, T, T) (``outputs.attentions``), or (L, H, T, S) / (H, T, S).
    tokens: T query labels; key_tokens: S key labels (default: ``tokens``).
    """
    w, colors, data = _prepare(attentions, tokens, key_tokens, "model_view")
    L, H = w.shape[:2]
    uid = f"tinyattn-mv-{os.getpid()}-{next(_view_counter)}"
    header = "<tr><th></th>" + "".join(f"<th>head {h}</th>" for h in range(H)) + "</tr>"
    rows = "".join(f"<tr><th>layer {l}</th>" + "".join(
        f'<td><canvas class="tv-cell" width="64" height="64" data-layer="{l}" data-head="{h}" '
        f'title="layer {l}, head {h}"></canvas></td>' for h in range(H)) + "</tr>" for l in range(L))
    body = (f'<div class="tv-note">{L} layers x {H} heads: each cell draws a head\'s attention, queries left, keys '
            "right, opacity = weight / its row's largest. Click a cell to expand it.</div>\n"
            f'<table class="tv-grid">{header}{rows}</table>\n<div class="tv-detail"></div>\n'
            '<svg width="0" height="0" style="position: absolute"></svg>')  # the SVG namespace, for the JS
    return HeadView(_page(uid, body, data, _MODEL_JS), title="tinyattn model view")
