"""run_with_cache, run_with_hooks and the hooks() context: TransformerLens's workflow on any model.

A model that mixes in ``HookedMixin`` and passes its activations through HookPoints (hook_points.py)
gets:

* ``model.hook_dict``: {name: HookPoint}, TransformerLens's names (a module's ``_lens_alias`` renames
  a child on the way, e.g. ``ln_f`` -> ``ln_final``, ``ffn`` -> ``mlp``);
* ``model.run_with_cache(tokens, names_filter=None)`` -> (output, ActivationCache);
* ``model.run_with_hooks(tokens, fwd_hooks=[(name or filter, fn)], bwd_hooks=[...])``;
* ``with model.hooks(fwd_hooks=..., bwd_hooks=...):`` hooks that are always removed on exit,
  also when the body raises.

A hook is ``fn(activation, hook)``; what it returns (if not None) replaces the activation. A bwd hook
is ``fn(grad, hook)``, called with the gradient with respect to the activation during a backward; it is
put on the forward's activation tensor, so a backward after run_with_hooks has returned still calls it.
"""
from __future__ import annotations

import contextlib
import difflib
import re
from typing import Callable, Iterable

from .act_names import get_act_name
from .hook_points import HookPoint

__all__ = ["HookedMixin", "ActivationCache"]


class ActivationCache:
    """{hook name: activation (a Tensor, detached)}, indexed by full name or TransformerLens's short forms.

    ``cache["blocks.0.attn.hook_pattern"]``, ``cache["pattern", 0]``, ``cache["pattern", -1]`` (the last
    layer), ``cache["scale", 0, "ln1"]``, ``cache["resid_pre", 2]``, ``cache["k6"]``.
    """

    def __init__(self, cache_dict: dict, n_layers: int | None = None) -> None:
        self.cache_dict = dict(cache_dict)
        if n_layers is None:
            layers = [int(m.group(1)) for k in self.cache_dict if (m := re.match(r"blocks\.(\d+)\.", k))]
            n_layers = max(layers) + 1 if layers else 0
        self.n_layers = n_layers

    def _full_name(self, key) -> str:
        if isinstance(key, str):
            return key if key in self.cache_dict else get_act_name(key)
        if isinstance(key, tuple) and key and isinstance(key[0], str):
            if len(key) > 1 and key[1] is not None and key[1] < 0:
                key = (key[0], self.n_layers + key[1], *key[2:])  # -1: the last layer
            return get_act_name(*key)
        raise TypeError(f"ActivationCache keys are names ('blocks.0.attn.hook_pattern') or (name, layer[, type]) "
                        f"tuples ('pattern', 0); got {key!r}")

    def __getitem__(self, key):
        name = self._full_name(key)
        if name not in self.cache_dict:
            close = difflib.get_close_matches(name, list(self.cache_dict), n=3)
            hint = f"; close: {close}" if close else ""
            raise KeyError(f"{key!r} -> {name!r} is not in this cache ({len(self.cache_dict)} activations{hint})")
        return self.cache_dict[name]

    def __contains__(self, key) -> bool:
        try:
            return self._full_name(key) in self.cache_dict
        except TypeError:
            return False

    def __len__(self) -> int:
        return len(self.cache_dict)

    def __iter__(self):
        return iter(self.cache_dict)

    def keys(self):
        return self.cache_dict.keys()

    def values(self):
        return self.cache_dict.values()

    def items(self):
        return self.cache_dict.items()

    def stack(self, name: str):
        """One activation of every layer as a NumPy array (n_layers, ...): ``cache.stack("pattern")``."""
        import numpy as np

        return np.stack([self[name, layer].numpy() for layer in range(self.n_layers)])

    def __repr__(self) -> str:
        return f"ActivationCache with keys {list(self.cache_dict)}"


def _names_filter(names_filter) -> Callable[[str], bool]:
    if names_filter is None:
        return lambda name: True
    if isinstance(names_filter, str):
        return lambda name: name == names_filter
    if callable(names_filter):
        return names_filter
    if isinstance(names_filter, Iterable):
        wanted = set(names_filter)
        if not all(isinstance(n, str) for n in wanted):
            raise TypeError(f"names_filter: a list of hook names must hold str, got {sorted(map(repr, wanted))}")
        return lambda name: name in wanted
    raise TypeError(f"names_filter must be None, a name, a list of names or a callable name -> bool, "
                    f"got {type(names_filter).__name__}")


class HookedMixin:
    """Mixed into a Module whose forward passes activations through HookPoints (see the top)."""

    _lens_alias: dict = {}  # child module name -> its TransformerLens name ("" = no level of its own)

    @property
    def hook_dict(self) -> dict[str, HookPoint]:
        """{TransformerLens name: HookPoint} of every hook point in the model, in module order."""
        out: dict[str, HookPoint] = {}

        def walk(module, prefix: str) -> None:
            for key, value in module.__dict__.items():
                if isinstance(value, HookPoint):
                    value.name = prefix + key
                    out[value.name] = value
            alias = getattr(module, "_lens_alias", {})
            for key, child in module._modules.items():
                if child is not None:
                    name = alias.get(key, key)  # "" puts the child's hook points at this module's level
                    walk(child, f"{prefix}{name}." if name else prefix)

        walk(self, "")
        return out

    def _points(self, name_or_filter, points: dict) -> list[HookPoint]:
        if callable(name_or_filter):
            return [hp for name, hp in points.items() if name_or_filter(name)]
        if not isinstance(name_or_filter, str):
            raise TypeError(f"a hook is (name or filter, fn): the name must be a str or a callable name -> bool, "
                            f"got {type(name_or_filter).__name__}")
        name = get_act_name(name_or_filter)
        if name not in points:
            close = difflib.get_close_matches(name, list(points), n=3)
            raise KeyError(f"{type(self).__name__} has no hook point {name!r}"
                           + (f" (close: {close})" if close else f" ({len(points)} hook points, see hook_dict)"))
        return [points[name]]

    @contextlib.contextmanager
    def hooks(self, fwd_hooks=(), bwd_hooks=(), reset_hooks_end: bool = True):
        """``with model.hooks(fwd_hooks=[(name, fn)], bwd_hooks=[...]):`` the hooks live inside the block only.

        Every hook added here is removed when the block ends, however it ends (an exception included);
        hooks added elsewhere are left alone. reset_hooks_end=False keeps them (remove them with
        reset_hooks()).
        """
        points = self.hook_dict
        handles = []
        try:
            for direction, pairs in (("fwd", fwd_hooks), ("bwd", bwd_hooks)):
                for pair in pairs:
                    if not (isinstance(pair, tuple) and len(pair) == 2):
                        raise TypeError(f"{direction}_hooks must be a list of (name or filter, fn) pairs, "
                                        f"got {pair!r}")
                    for hp in self._points(pair[0], points):
                        handles.append(hp.add_hook(pair[1], dir=direction))
            yield self
        finally:
            if reset_hooks_end:
                for handle in handles:
                    handle.remove()

    def reset_hooks(self) -> None:
        """Remove every hook from every hook point of the model."""
        for hp in self.hook_dict.values():
            hp.remove_hooks()

    def run_with_hooks(self, *args, fwd_hooks=(), bwd_hooks=(), reset_hooks_end: bool = True, **kwargs):
        """``self(*args, **kwargs)`` with these hooks on for the one call."""
        with self.hooks(fwd_hooks=fwd_hooks, bwd_hooks=bwd_hooks, reset_hooks_end=reset_hooks_end):
            return self(*args, **kwargs)

    def run_with_cache(self, *args, names_filter=None, remove_batch_dim: bool = False, **kwargs):
        """``self(*args, **kwargs)`` -> (output, ActivationCache of every hook point names_filter keeps).

        names_filter: None (all), a name, a list of names, or a callable name -> bool. The cached
        activations are detached (no graph); remove_batch_dim=True drops a batch dim of size 1.
        """
        keep = _names_filter(names_filter)
        store: dict = {}

        def save(act, hook):
            act = act.detach()
            store[hook.name] = act[0] if remove_batch_dim else act

        if remove_batch_dim and args and getattr(args[0], "shape", (1,))[0] != 1:
            raise ValueError(f"run_with_cache: remove_batch_dim=True needs a batch of 1, got input shape "
                             f"{tuple(args[0].shape)}")
        pairs = [(name, save) for name in self.hook_dict if keep(name)]
        with self.hooks(fwd_hooks=pairs):
            out = self(*args, **kwargs)
        n_layers = getattr(self, "n_layers", None)
        return out, ActivationCache(store, n_layers)  # in the order the forward reached them
