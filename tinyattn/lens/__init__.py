"""tinyattn.lens: TransformerLens's workflow (named hook points, caches, hooks, activation patching) in NumPy.

Every transformer tinyattn builds or loads (``nn.TransformerLM``, ``load_gpt2``, ``load_bert``) passes its
activations through hook points named as TransformerLens names them, and has:

    logits, cache = model.run_with_cache(tokens)          # cache["pattern", 0], cache["blocks.0.hook_resid_pre"]
    model.run_with_hooks(tokens, fwd_hooks=[("blocks.0.attn.hook_z", fn)])   # fn(activation, hook) -> None or new
    with model.hooks(fwd_hooks=[...], bwd_hooks=[...]):  # removed on exit, even after an exception
        ...

The pieces live in ``tinyattn.nn`` (nn.hook_points, nn.hooked, nn.act_names), because the models in
``tinyattn.nn`` use them and ``nn`` imports nothing above itself; this package gathers them and adds
activation patching (``patching.py``).
"""
from ..nn.act_names import get_act_name
from ..nn.hook_points import HookPoint, add_hook_points, hooked_layer_norm
from ..nn.hooked import ActivationCache, HookedMixin
from .patching import ablate_heads, patch_grid, patch_head_out, patch_head_pattern, patch_resid_pre

__all__ = ["HookPoint", "HookedMixin", "ActivationCache", "get_act_name", "add_hook_points", "hooked_layer_norm",
           "patch_grid", "patch_resid_pre", "patch_head_out", "patch_head_pattern", "ablate_heads"]
