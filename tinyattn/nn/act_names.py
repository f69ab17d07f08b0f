"""TransformerLens's short activation names: ``("pattern", 3)`` -> ``"blocks.3.attn.hook_pattern"``.

The same rules as TransformerLens's ``utils.get_act_name`` (checked against it in tests/oracle):

* a full name (it has a dot or starts with ``hook_``) is returned as it is;
* ``"k6"`` is ``("k", 6)`` and ``"scale4ln1"`` is ``("scale", 4, "ln1")``: the first digits are the layer;
* aliases: attn -> pattern, attn_logits -> attn_scores, key/query/value -> k/q/v,
  mlp_pre/mlp_mid/mlp_post -> pre/mid/post; layer types a -> attn, m -> mlp, b/block/blocks -> none;
* q, k, v, z, rot_q, rot_k, result, pattern, attn_scores live in ``attn``; pre, post, mid, pre_linear
  in ``mlp``; scale and normalized need the layer norm's name (ln1, ln2), and without a layer they
  are the final layer norm's (``ln_final.hook_scale``).
"""
from __future__ import annotations

import re

__all__ = ["get_act_name"]

_NAME_ALIAS = {"attn": "pattern", "attn_logits": "attn_scores", "key": "k", "query": "q", "value": "v",
               "mlp_pre": "pre", "mlp_mid": "mid", "mlp_post": "post"}
_TYPE_ALIAS = {"a": "attn", "m": "mlp", "b": "", "block": "", "blocks": "", "attention": "attn"}
_IN_ATTN = ("k", "v", "q", "z", "rot_k", "rot_q", "result", "pattern", "attn_scores")
_IN_MLP = ("pre", "post", "mid", "pre_linear")
_LAYER_NORM = ("scale", "normalized")


def get_act_name(name: str, layer: int | str | None = None, layer_type: str | None = None) -> str:
    """A short name (and layer, and layer type) -> the hook point's full name."""
    if not isinstance(name, str):
        raise TypeError(f"get_act_name: name must be a str such as 'pattern' or 'resid_pre', got {name!r}")
    if ("." in name or name.startswith("hook_")) and layer is None and layer_type is None:
        return name  # already a full name
    m = re.match(r"([a-z]+)(\d+)([a-z]?.*)", name)
    if m is not None:
        name, layer, layer_type = m.groups()
    name = _NAME_ALIAS.get(name, name)
    if name in _IN_ATTN:
        layer_type = "attn"
    elif name in _IN_MLP:
        layer_type = "mlp"
    elif layer_type in _TYPE_ALIAS:
        layer_type = _TYPE_ALIAS[layer_type]
    full = "" if layer is None else f"blocks.{layer}."
    if layer_type:
        full += f"{layer_type}."
    full += f"hook_{name}"
    if name in _LAYER_NORM and layer is None:
        full = f"ln_final.{full}"
    return full
