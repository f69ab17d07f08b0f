"""Module, Parameter and the two containers, Sequential and ModuleList.

A Module finds its learnable pieces by watching attribute assignment, like PyTorch:
``self.weight = Parameter(...)`` registers a parameter, ``self.proj = Linear(...)``
registers a child module. Everything else (``parameters()``, ``state_dict()``,
``train()``/``eval()``, the printed tree) is a walk over that registry.
"""
from __future__ import annotations

import os
import sys
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any, Callable, NamedTuple

import numpy as np

from tinyattn.tensor import Function, Tensor, get_default_dtype
from tinyattn.compat.hooks import RemovableHandle
from tinyattn.compat.to import check_device as _check_device, parse as _parse_to
from tinyattn.nn.module_devices import DeviceMoves

__all__ = ["Parameter", "Module", "Sequential", "ModuleList", "RemovableHandle"]


def _adopt(value: Any) -> Any:
    """A layer of einops.layers.torch (a torch.nn.Module) becomes einops' same layer on tinyattn; else value."""
    if type(value).__module__ == "einops.layers.torch":
        from tinyattn.nn.einops_layers import adopt
        return adopt(value)
    return value


class Parameter(Tensor):
    """A Tensor a Module learns: always floating point, requires_grad=True by default."""

    def __init__(self, data: Any, requires_grad: bool = True) -> None:
        if isinstance(data, Tensor):
            data = data._data
        arr = np.array(data)  # a copy: the Parameter owns its storage
        if not np.issubdtype(arr.dtype, np.floating):
            arr = arr.astype(get_default_dtype())  # integer or bool data can not be learned; make it float
        super().__init__(arr, requires_grad=requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class _IncompatibleKeys(NamedTuple):
    """What load_state_dict(strict=False) skipped (the same shape PyTorch returns)."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:  # what `print(model.load_state_dict(sd))` shows in a notebook, as in PyTorch
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"


class Module(DeviceMoves):
    """Base class of every layer and model: subclass it, assign parts in __init__, write forward."""

    def __init__(self) -> None:
        # object.__setattr__ because our own __setattr__ reads these three dicts
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)
        # hooks: id -> (hook, with_kwargs), run in this order; not state (state_dict never sees them)
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_hooks", OrderedDict())

    # ---------------------------------------------------------------- registration
    # A registered part lives only in its registry (_parameters, _buffers or _modules: ordered, walked
    # by parameters(), state_dict(), ...), as in PyTorch: `self.weight` is found by __getattr__, so
    # `m._parameters['weight'] = p` and `m.weight = p` can never disagree.
    def _register(self, registry: str, name: str, value: Any) -> None:
        """Put `value` under `name` in one registry."""
        self.__dict__[registry][name] = value

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        value = _adopt(value)
        if isinstance(value, (Parameter, Module)) and params is None:
            kind = "parameter" if isinstance(value, Parameter) else "submodule"
            raise AttributeError(f"cannot assign {kind} '{name}' before Module.__init__() ran: "
                                 f"call super().__init__() first in {type(self).__name__}.__init__")
        if isinstance(value, Parameter):
            self._forget(name, keep="_parameters")  # a replaced parameter keeps its place, as in PyTorch
            self._register("_parameters", name, value)
        elif isinstance(value, Module):
            self._forget(name, keep="_modules")  # (so a torch state_dict's order still lines up)
            self._register("_modules", name, value)
        elif params is not None and name in params:
            if value is not None:  # None is allowed: that is how an optional bias is switched off
                raise TypeError(f"cannot assign {type(value).__name__} to parameter '{name}' of "
                                f"{type(self).__name__}: expected a Parameter or None")
            self._register("_parameters", name, None)
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign {type(value).__name__} to submodule '{name}' of "
                                f"{type(self).__name__}: expected a Module or None")
            self._register("_modules", name, None)
        elif params is not None and name in self._buffers:
            self._register("_buffers", name, value)
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str | None = None) -> None:
        """Drop `name` from every place it could live (but ``keep``, where it is about to be replaced),
        so one name means one thing."""
        self.__dict__.pop(name, None)
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry != keep:
                self.__dict__[registry].pop(name, None)
        self.__dict__.get("_non_persistent", set()).discard(name)  # a re-registered buffer starts persistent

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails, which is always the case for registered parts.
        for registry in ("_parameters", "_buffers", "_modules"):
            d = self.__dict__.get(registry)
            if d is not None and name in d:
                return d[name]
        if name in ("_parameters", "_buffers", "_modules", "training"):
            raise AttributeError(f"{type(self).__name__} has no '{name}': Module.__init__() never ran; "
                                 f"call super().__init__() first in {type(self).__name__}.__init__")
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for registry in ("_parameters", "_buffers", "_modules"):
            d = self.__dict__.get(registry)
            if d is not None and name in d:
                del d[name]
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register `param` (or None, a declared-but-absent parameter such as bias=False) under `name`."""
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter('{name}') expects a Parameter or None, got {type(param).__name__}")
        self._forget(name, keep="_parameters")
        self._register("_parameters", name, param)

    def register_buffer(self, name: str, value: Any, persistent: bool = True) -> None:
        """Register non-learned state (a running mean, a fixed table); it goes into state_dict if persistent."""
        self._forget(name, keep="_buffers")
        self._register("_buffers", name, value)
        if not persistent:
            self.__dict__.setdefault("_non_persistent", set()).add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register a child under a name that need not be an identifier (Sequential uses '0', '1', ...)."""
        module = _adopt(module)
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module('{name}') expects a Module, got {type(module).__name__}")
        self._forget(name, keep="_modules")
        self._register("_modules", name, module)

    # ---------------------------------------------------------------- walking the tree
    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, module) for each direct submodule; one registered under two names is listed once (as PyTorch)."""
        seen: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """(dotted name, module) for self and every descendant, each module once (shared ones too)."""
        seen: set[int] = set()

        def walk(module: Module, prefix: str) -> Iterator[tuple[str, Module]]:
            if id(module) in seen:
                return
            seen.add(id(module))
            yield prefix, module
            for name, child in module.named_children():
                yield from walk(child, f"{prefix}.{name}" if prefix else name)

        yield from walk(self, prefix)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, Parameter) like PyTorch ('blocks.0.attn.W_q.weight'); a tied Parameter is listed once."""
        seen: set[int] = set()
        modules = self.named_modules(prefix) if recurse else iter([(prefix, self)])
        for mod_name, module in modules:
            for name, p in module._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{mod_name}.{name}" if mod_name else name), p

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "") -> Iterator[tuple[str, Any]]:
        for mod_name, module in self.named_modules(prefix):
            for name, b in module._buffers.items():
                if b is not None:
                    yield (f"{mod_name}.{name}" if mod_name else name), b

    def buffers(self) -> Iterator[Any]:
        for _, b in self.named_buffers():
            yield b

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call fn(m) on every submodule and then self (e.g. a custom init); returns self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def num_parameters(self, trainable_only: bool = False) -> int:
        """Number of learned scalars (a tied Parameter counts once)."""
        return sum(p._data.size for p in self.parameters() if p.requires_grad or not trainable_only)

    # ---------------------------------------------------------------- training state
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget accumulated gradients (None, as PyTorch 2 does; or zeros with set_to_none=False)."""
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def train(self, mode: bool = True) -> Module:
        """Set training mode here and in every descendant (Dropout reads it); returns self."""
        if not isinstance(mode, bool):
            raise TypeError(f"train(mode) expects a bool, got {type(mode).__name__}")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        """train(False): dropout off, for evaluation and generation; returns self."""
        return self.train(False)

    def to(self, *args, **kwargs) -> Module:
        """PyTorch's forms: ``to(device)``, ``to(dtype)``, ``to(device=None, dtype=None, non_blocking=False)``,
        ``to(tensor)`` (its dtype), ``to(memory_format=...)``; returns self.

        Floating parameters, their gradients and floating buffers are cast in place: the same Parameter
        objects, as in PyTorch; integer buffers (BatchNorm's num_batches_tracked) keep their dtype. NumPy is
        the only device, so 'cpu' changes nothing and a GPU raises a CPU-only PyTorch's error; the memory
        format changes no value (tinyattn.compat.to)."""
        device, dtype, _copy, _layout, copy_given = _parse_to(args, kwargs)
        if copy_given:
            raise RuntimeError(".to() does not accept copy argument")
        if dtype is not None and np.dtype(dtype).kind not in "fc":
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype=torch.{np.dtype(dtype).name}")
        _check_device(device, args, kwargs, "Module.to")
        if dtype is None:
            return self
        dtype = np.dtype(dtype)
        for t in self.parameters():
            for held in (t, t.grad):
                if held is not None and held._data.dtype.kind in "fc":
                    held._data = held._data.astype(dtype)
        for m in self.modules():
            for name, b in list(m._buffers.items()):
                arr = b._data if isinstance(b, Tensor) else b
                if isinstance(arr, np.ndarray) and arr.dtype.kind in "fc":
                    m._register("_buffers", name, Tensor(arr.astype(dtype)) if isinstance(b, Tensor) else arr.astype(dtype))
        return self

    def double(self) -> Module:
        return self.to(np.float64)

    def float(self) -> Module:
        return self.to(np.float32)

    # ---------------------------------------------------------------- saving and loading
    def _state_items(self, prefix: str = "") -> Iterator[tuple[str, Any]]:
        """Every (key, array holder) that state_dict saves. Unlike parameters(), nothing is deduplicated:
        a tied weight, or a whole submodule registered under two names, appears under each name (as in
        PyTorch), so state dicts move between the two libraries key for key."""
        for name, p in self._parameters.items():
            if p is not None:
                yield prefix + name, p
        skip = self.__dict__.get("_non_persistent", set())
        for name, b in self._buffers.items():
            if b is not None and name not in skip:
                yield prefix + name, b
        for name, m in self._modules.items():  # every name, not named_children(): no dedup here
            if m is not None:
                yield from m._state_items(f"{prefix}{name}.")

    def state_dict(self, *, prefix: str = "", keep_vars: bool = False) -> dict[str, Tensor]:
        """{dotted name: Tensor}, as in PyTorch: each shares memory with its parameter or buffer.

        The values are detached (no grad; ``sd[k].copy_(w)`` under no_grad writes into the model), or
        the Parameters themselves with keep_vars=True. Sharing means later training changes them: keep
        a snapshot with ``copy.deepcopy(model.state_dict())`` or ``{k: v.clone() for k, v in ...}``.
        """
        out = OrderedDict()
        for k, v in self._state_items(prefix):
            if not isinstance(v, Tensor):  # a buffer registered as a plain array: wrapped, still shared
                v = Tensor._make(np.asarray(v))
            out[k] = v if keep_vars else v.detach()
        return out

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> _IncompatibleKeys:
        """Copy arrays into the parameters and buffers (in place). Checks everything before changing anything."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"load_state_dict expects a dict of arrays, got {type(state_dict).__name__}")
        own = dict(self._state_items())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            msg = [f"load_state_dict into {type(self).__name__} failed:"]
            if missing:
                msg.append(f"missing keys {missing}")
            if unexpected:
                msg.append(f"unexpected keys {unexpected}")
            raise ValueError(" ".join(msg))
        arrays = {}
        for k, holder in own.items():
            if k not in state_dict:
                continue
            value = state_dict[k]
            new = np.asarray(value._data if isinstance(value, Tensor) else value)
            target = holder._data if isinstance(holder, Tensor) else np.asarray(holder)
            if new.dtype.kind not in "biuf":  # e.g. None or a string: checked here, before anything is written
                raise TypeError(f"load_state_dict: '{k}' must be a numeric array of shape {target.shape}, "
                                f"got {type(value).__name__} with dtype {new.dtype}")
            if new.shape != target.shape:
                raise ValueError(f"load_state_dict: '{k}' has shape {target.shape} in the model "
                                 f"but {new.shape} in the state dict")
            arrays[k] = new
        for k, new in arrays.items():  # all checks passed: now write
            holder = own[k]
            if isinstance(holder, Tensor):
                holder._data[...] = new  # in place: optimizers keep pointing at the same Parameter
                holder._bump_version()  # (a graph saved before the load can no longer backward)
            else:
                np.asarray(holder)[...] = new
        return _IncompatibleKeys(missing, unexpected)

    def save(self, path: str | os.PathLike) -> None:
        """Write state_dict() to an .npz file (np.savez adds '.npz' if the name lacks it)."""
        np.savez(path, **self.state_dict())

    def load(self, path: str | os.PathLike, strict: bool = True) -> Module:
        """Read an .npz written by save() into this module; returns self."""
        path = os.fspath(path)
        if not os.path.exists(path) and os.path.exists(path + ".npz"):
            path += ".npz"
        with np.load(path) as f:
            self.load_state_dict({k: f[k] for k in f.files}, strict=strict)
        return self

    # ---------------------------------------------------------------- calling and printing
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward(self, ...)")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        d = self.__dict__
        if d.get("_forward_pre_hooks") or d.get("_forward_hooks") or d.get("_backward_hooks"):
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    # ---------------------------------------------------------------- hooks
    # How code reads activations and attention maps out of a model it does not edit. Each register_*
    # returns a handle whose .remove() takes the hook off again (``with handle:`` removes it on exit).
    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` before forward (``hook(module, args, kwargs)`` with_kwargs). A return
        other than None replaces the inputs: a tuple is the new args, one value becomes ``(value,)``; with
        with_kwargs it must be ``(new_args, new_kwargs)``."""
        return self._add_hook("_forward_pre_hooks", hook, prepend, with_kwargs)

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` after forward (``hook(module, args, kwargs, output)`` with_kwargs).
        A return other than None replaces the output. ``always_call`` is accepted (PyTorch runs such a hook
        even when forward raises; here every hook runs only after a forward that returned)."""
        return self._add_hook("_forward_hooks", hook, prepend, with_kwargs)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` once the gradients with respect to the module's
        positional inputs are computed. grad_input has one entry per positional argument (None for one
        that is not a tensor, zeros for a tensor that needs no gradient); grad_output one per output
        tensor (None where the loss did not use it). A returned tuple replaces grad_input. If no input
        needs a gradient, the hook runs when the output gradients are computed, with grad_input all None."""
        return self._add_hook("_backward_hooks", hook, prepend, False)

    def _add_hook(self, registry: str, hook: Callable, prepend: bool, with_kwargs: bool) -> RemovableHandle:
        if not callable(hook):
            raise TypeError(f"{registry[1:-1].replace('_', ' ')}: expected a callable, got {type(hook).__name__}")
        hooks = self.__dict__.get(registry)
        if hooks is None:  # a module made before hooks existed (unpickled from an old save)
            hooks = OrderedDict()
            object.__setattr__(self, registry, hooks)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = (hook, with_kwargs)
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        for hook, with_kwargs in list(self.__dict__.get("_forward_pre_hooks", {}).values()):
            if with_kwargs:
                new = hook(self, args, kwargs)
                if new is not None:
                    if not (isinstance(new, tuple) and len(new) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {new}.")
                    args, kwargs = new
            else:
                new = hook(self, args)
                if new is not None:
                    args = new if isinstance(new, tuple) else (new,)
        backward_hooks = self.__dict__.get("_backward_hooks")
        state = None
        if backward_hooks:
            state = _BackwardHookState(self, args)
            args = state.wrap_inputs(args)
        out = self.forward(*args, **kwargs)
        for hook, with_kwargs in list(self.__dict__.get("_forward_hooks", {}).values()):
            new = hook(self, args, kwargs, out) if with_kwargs else hook(self, args, out)
            if new is not None:
                out = new
        if state is not None:
            out = state.wrap_outputs(out)
        return out

    def extra_repr(self) -> str:
        """The text inside the parentheses of this module's line in repr; layers override it."""
        return ""

    def __repr__(self) -> str:
        # PyTorch's tree: Name(extra) for a leaf; Name(\n  (child): ...\n) otherwise
        lines = [line for line in self.extra_repr().split("\n") if line]
        for name, child in self._modules.items():
            child_repr = repr(child).replace("\n", "\n  ")
            lines.append(f"({name}): {child_repr}")
        if not self._modules:
            return f"{type(self).__name__}({self.extra_repr()})"
        return type(self).__name__ + "(\n  " + "\n  ".join(lines) + "\n)"


# ---------------------------------------------------------------- full backward hooks
# The module's tensor inputs (and then its outputs) go through two identity ops: _Pack joins them into
# one flat array, and _Unpack hands each its own piece back. The graph then holds one node (_Pack)
# whose backward sees every input's gradient at once: there the hook runs, and what it returns is what
# flows on. Everything is a Function.apply, so the engine needs to know nothing about hooks.
class _Pack(Function):
    """The tensors, flattened and joined;  d(each) = its piece of g, reshaped."""
    @staticmethod
    def forward(ctx, *arrays, state, side):
        ctx.state, ctx.side = state, side
        ctx.shapes = [(a.shape, a.dtype) for a in arrays]
        return np.concatenate([a.ravel() for a in arrays])

    @staticmethod
    def backward(ctx, g):
        grads, start = [], 0
        for shape, dtype in ctx.shapes:
            n = int(np.prod(shape))
            grads.append(g[start:start + n].reshape(shape).astype(dtype, copy=False))
            start += n
        return tuple(ctx.state.backward(ctx.side, grads))


class _Unpack(Function):
    """One tensor's piece of the flat array;  d(flat) = g in that piece, 0 elsewhere."""
    @staticmethod
    def forward(ctx, flat, start, shape, dtype, state, side, index):
        ctx.start, ctx.n, ctx.size, ctx.dtype = start, int(np.prod(shape)), flat.shape[0], flat.dtype
        ctx.state, ctx.side, ctx.index = state, side, index
        return flat[start:start + ctx.n].reshape(shape).astype(dtype)  # (a copy: no view of the pack)

    @staticmethod
    def backward(ctx, g):
        ctx.state.used[ctx.side].add(ctx.index)  # an output the loss did not reach keeps grad_output None
        full = np.zeros(ctx.size, dtype=ctx.dtype)
        full[ctx.start:ctx.start + ctx.n] = g.ravel()
        return full


_FIRES_ON_OUTPUTS = ("Full backward hook is firing when gradients are computed with respect to module outputs "
                     "since no inputs require gradients.")


def _caller_outside_tinyattn() -> int:
    """The stacklevel of the first frame outside tinyattn (the user's ``loss.backward()`` line)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    return level


class _BackwardHookState:
    """One forward call's record for its module's full backward hooks."""

    def __init__(self, module: Module, args: tuple) -> None:
        self.module, self.n_args = module, len(args)
        self.hooks = [hook for hook, _ in module._backward_hooks.values()]  # those registered at forward, as PyTorch
        self.used = {"in": set(), "out": set()}
        self.grad_output: tuple = ()
        self.inputs_need_grad = False

    def _wrap(self, values: list, side: str) -> tuple[list, list]:
        """values with each tensor that requires grad replaced by its unpacked copy; where they were."""
        where = [i for i, v in enumerate(values) if isinstance(v, Tensor) and v.requires_grad]
        if not where:
            return values, where
        flat = _Pack.apply(*(values[i] for i in where), state=self, side=side)
        values, start = list(values), 0
        for k, i in enumerate(where):
            v = values[i]
            values[i] = _Unpack.apply(flat, start=start, shape=v.shape, dtype=v._data.dtype, state=self,
                                      side=side, index=k)
            start += v.numel()
        return values, where

    def wrap_inputs(self, args: tuple) -> tuple:
        self.args = args
        new, self.in_where = self._wrap(list(args), "in")
        self.inputs_need_grad = bool(self.in_where)
        return tuple(new)

    def wrap_outputs(self, out: Any) -> Any:
        single = isinstance(out, Tensor)
        values = [out] if single else list(out) if isinstance(out, (tuple, list)) else None
        if values is None:
            return out
        self.out_tensors = values
        new, self.out_where = self._wrap(values, "out")
        if not self.out_where:
            return out
        return new[0] if single else type(out)(new)

    def backward(self, side: str, grads: list) -> list:
        if side == "out":
            go = [None] * len(self.out_tensors)
            for k, i in enumerate(self.out_where):
                if k in self.used["out"]:
                    go[i] = Tensor(grads[k])
            self.grad_output = tuple(go)
            if not self.inputs_need_grad:
                warnings.warn(_FIRES_ON_OUTPUTS, UserWarning, stacklevel=_caller_outside_tinyattn())
                self._run((None,) * self.n_args)
            return grads
        gi = []
        for i, a in enumerate(self.args):
            if i in self.in_where:
                gi.append(Tensor(grads[self.in_where.index(i)]))
            elif isinstance(a, Tensor) and a._data.dtype.kind == "f":
                gi.append(Tensor(np.zeros_like(a._data)))
            else:
                gi.append(None)
        gi = self._run(tuple(gi))
        return [None if gi[i] is None else np.asarray(gi[i]._data if isinstance(gi[i], Tensor) else gi[i])
                for i in self.in_where]

    def _run(self, grad_input: tuple) -> tuple:
        for hook in self.hooks:
            new = hook(self.module, grad_input, self.grad_output)
            if new is not None:
                new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
                if len(new) != len(grad_input):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(new)}, "
                                       f"but expected {len(grad_input)}")
                grad_input = new
        return grad_input


class Sequential(Module):
    """Sequential(m0, m1, ...)(x) = ...m1(m0(x)); children named '0', '1', ... (or by an OrderedDict)."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], dict):
            items = list(modules[0].items())
        else:
            items = [(str(i), m) for i, m in enumerate(modules)]
        for name, m in items:
            m = _adopt(m)
            if not isinstance(m, Module):
                raise TypeError(f"Sequential expects Modules, got {type(m).__name__} at position {name}")
            self.add_module(name, m)

    def forward(self, x: Any) -> Any:
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, idx: int | slice) -> Module:
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return Sequential(OrderedDict(items[idx]))
        return items[_check_index(idx, len(items), "Sequential")][1]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list whose Modules are registered (so their parameters are found); it has no forward."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def append(self, module: Module) -> ModuleList:
        module = _adopt(module)
        if not isinstance(module, Module):
            raise TypeError(f"ModuleList holds Modules, got {type(module).__name__}")
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for m in modules:
            self.append(m)
        return self

    def __getitem__(self, idx: int | slice) -> Module | ModuleList:
        return _list_item(self, self._modules, idx)

    def __setitem__(self, idx: int, module: Module) -> None:
        i = _check_index(idx, len(self), "ModuleList")
        module = _adopt(module)
        if not isinstance(module, Module):
            raise TypeError(f"ModuleList holds Modules, got {type(module).__name__}")
        self._register("_modules", str(i), module)  # an existing key keeps its place in the ordered dict

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ModuleList has no forward: loop over it, e.g. `for block in self.blocks: x = block(x)`")


def _list_item(container: Module, store: dict[str, Any], idx: int | slice) -> Any:
    """container[idx] for the list-shaped containers: one entry, or a new container of the same kind for a slice."""
    items = list(store.values())
    if isinstance(idx, slice):
        return type(container)(items[idx])
    return items[_check_index(idx, len(items), type(container).__name__)]


def _check_index(idx: int, n: int, name: str) -> int:
    """A Python-style index (negatives count from the end) with a clear IndexError."""
    if not isinstance(idx, (int, np.integer)):
        raise TypeError(f"{name} indices must be integers or slices, got {type(idx).__name__}")
    if not -n <= idx < n:
        raise IndexError(f"{name} index {idx} is out of range for length {n}")
    return int(idx) % n
