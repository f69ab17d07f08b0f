"""HookPoint: an identity module placed at a named activation, so hooks can read or replace it.

The course's transformers pass every activation an interpretability course talks about through a
HookPoint (TransformerLens's names: ``blocks.0.attn.hook_pattern``, ``blocks.0.hook_resid_pre``, ...).
With no hook registered a HookPoint returns its input, the very same Tensor: the model's numbers do
not change, and the cost is one Python call. Hooks are Module's own forward hooks (``add_hook`` wraps
``register_forward_hook``), so nothing about hooks is written twice.

The hook points are kept in each module's ``__dict__`` but are not registered as child modules:
``state_dict``, ``named_modules``, ``repr`` and ``.to()`` see the model exactly as before. The
models' ``hook_dict`` (see ``hooked.py``) finds them by walking the module tree.
"""
from __future__ import annotations

from typing import Callable

from tinyattn.tensor import Tensor

from .module import Module, RemovableHandle

__all__ = ["HookPoint", "add_hook_points", "hooked_layer_norm", "hooked_mlp"]

_DIRS = ("fwd", "bwd")


class HookPoint(Module):
    """x -> x. ``add_hook(fn)``: fn(activation, hook=self) runs on what passes; a return replaces it.

    ``add_hook(fn, dir="bwd")``: fn(grad, hook=self) runs on the gradient with respect to this
    activation when a backward runs through it (a return replaces that gradient). ``name`` is the
    hook point's TransformerLens name, set when a model's ``hook_dict`` is built.
    """

    def __init__(self) -> None:
        super().__init__()
        self.name: str | None = None

    def forward(self, x):
        return x

    @property
    def active(self) -> bool:
        """Whether any hook is registered here (the models compute some activations only when it is)."""
        d = self.__dict__
        return bool(d.get("_forward_hooks") or d.get("_forward_pre_hooks"))

    def add_hook(self, fn: Callable, dir: str = "fwd", prepend: bool = False) -> RemovableHandle:
        """Register ``fn(activation_or_grad, hook)``; returns a handle whose ``remove()`` takes it off."""
        if not callable(fn):
            raise TypeError(f"HookPoint {self.name!r}: a hook must be callable fn(activation, hook), "
                            f"got {type(fn).__name__}")
        if dir not in _DIRS:
            raise ValueError(f"HookPoint {self.name!r}: dir must be 'fwd' or 'bwd', got dir={dir!r}")
        if dir == "fwd":
            def call(module, args, out):
                return fn(out, hook=self)
        else:
            def call(module, args, out):
                # The gradient hook goes on this forward's activation: a backward through it calls fn.
                if isinstance(out, Tensor) and out.requires_grad:
                    out.register_hook(lambda grad: fn(grad, hook=self))
                return None
        return self.register_forward_hook(call, prepend=prepend)

    def remove_hooks(self) -> None:
        """Take every hook off this point."""
        self._forward_hooks.clear()
        self._forward_pre_hooks.clear()

    def extra_repr(self) -> str:
        return "" if self.name is None else repr(self.name)


def add_hook_points(module: Module, *names: str) -> None:
    """Give ``module`` one HookPoint per name, held outside its registry of children (see the top)."""
    for name in names:
        object.__setattr__(module, name, HookPoint())


def hooked_layer_norm(ln: Module, x: Tensor) -> Tensor:
    """``ln(x)``, through ``ln.hook_scale`` (B, T, 1) and ``ln.hook_normalized`` (B, T, C) when hooked.

    With no hook on either point this is ``ln(x)`` itself (the fused layer norm). Otherwise the same
    maths step by step, as TransformerLens splits it: centre, divide by scale = sqrt(var + eps), then the
    affine weight and bias (hook_normalized is before the affine, as TransformerLens 4.3 measures).
    """
    hs, hn = ln.__dict__.get("hook_scale"), ln.__dict__.get("hook_normalized")
    if hs is None or not (hs.active or hn.active):
        return ln(x)
    xc = x - x.mean(dim=-1, keepdim=True)  # (B, T, C)
    scale = hs(((xc * xc).mean(dim=-1, keepdim=True) + ln.eps).sqrt())  # (B, T, 1)
    out = hn(xc / scale)  # (B, T, C)
    if ln.weight is not None:
        out = out * ln.weight
    if getattr(ln, "bias", None) is not None:
        out = out + ln.bias
    return out


def hooked_mlp(ffn: Module, x: Tensor) -> Tensor:
    """``ffn(x)`` for a Sequential(Linear, activation, Linear), through ``ffn.hook_pre`` (after the first
    Linear) and ``ffn.hook_post`` (after the activation) when either is hooked; else ffn(x) itself."""
    if not (ffn.hook_pre.active or ffn.hook_post.active):
        return ffn(x)
    return ffn[2](ffn.hook_post(ffn[1](ffn.hook_pre(ffn[0](x)))))  # (B, T, C) -> (B, T, d_ff) -> (B, T, C)
