"""Looking at attention and training.

* ``figures``: matplotlib Figures (attention maps, a layers x heads grid, training curves), each with ``path=``.
* ``views``: self-contained HTML in the manner of BertViz (inline CSS and JS, nothing fetched):
  ``head_view(weights, tokens)`` (every head of one layer, as lines) and ``model_view(attentions, tokens)``
  (a layers x heads grid; click a cell to expand it). Both display in Jupyter and ``.save(path)``.
"""
from .figures import (GRAD_FLOOR, MODEL_COLORS, TOKEN_FONTSIZE, TOKEN_INCHES, layer_color, model_color,  # noqa: F401
                      plot_accuracy_vs_distance, plot_attention, plot_attention_grid, plot_grad_norm_vs_distance,
                      plot_history)
from .views import HeadView, head_colors, head_view, model_view  # noqa: F401

__all__ = ["GRAD_FLOOR", "MODEL_COLORS", "TOKEN_FONTSIZE", "TOKEN_INCHES", "layer_color", "model_color",
           "plot_accuracy_vs_distance", "plot_attention", "plot_attention_grid", "plot_grad_norm_vs_distance",
           "plot_history", "HeadView", "head_colors", "head_view", "model_view"]
