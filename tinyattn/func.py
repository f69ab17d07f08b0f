"""torch.func, the function transforms, for the forms teaching code uses: ``functional_call`` (run a
module with other parameters: meta-learning, per-sample losses), ``grad`` / ``grad_and_value`` (the
gradient of a scalar function as a function) and ``vmap`` (map a function over a batch dim).

tinyattn's backward computes on arrays and records no graph of its own, so these are not composable
the way PyTorch's are: ``grad(grad(f))`` raises, as ``autograd.grad(create_graph=True)`` does; and
``vmap`` runs ``func`` once per batch entry and stacks the results (the same values, one call at a time).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import autograd
from .tensor import Tensor

__all__ = ["functional_call", "grad", "grad_and_value", "vmap"]


def functional_call(module, parameter_and_buffer_dicts, args=(), kwargs=None, *, tie_weights: bool = True,
                    strict: bool = False):
    """module(*args, **kwargs) with the named parameters and buffers replaced by the given tensors for this call
    only ("fc1.weight" -> tensor; a dict, or a tuple of dicts). Names the module does not have are ignored
    unless strict=True; the module's own tensors are back in place afterwards, even if the call raises."""
    dicts = parameter_and_buffer_dicts if isinstance(parameter_and_buffer_dicts, (tuple, list)) \
        else (parameter_and_buffer_dicts,)
    given: dict[str, Any] = {}
    for d in dicts:
        if not isinstance(d, Mapping):
            raise TypeError(f"functional_call: expected a dict of name -> tensor, got {type(d).__name__}")
        dup = set(given) & set(d)
        if dup:
            raise ValueError(f"{sorted(dup)} appeared in multiple dictionaries; behavior of functional call is "
                             "ambiguous")
        given.update(d)
    swapped = []
    try:
        for name, value in given.items():
            *path, leaf = name.split(".")
            owner = module
            for p in path:
                owner = owner._modules.get(p) if owner is not None else None
            registry = None if owner is None else next(
                (r for r in ("_parameters", "_buffers") if leaf in owner.__dict__[r]), None)
            if registry is None:
                if strict:
                    raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                                       f"Unexpected key(s): '{name}'.")
                continue
            swapped.append((owner, registry, leaf, owner.__dict__[registry][leaf]))
            owner._register(registry, leaf, value)
        if kwargs is None:
            kwargs = {}
        return module(*args, **kwargs) if isinstance(args, tuple) else module(args, **kwargs)
    finally:
        for owner, registry, leaf, old in reversed(swapped):
            owner._register(registry, leaf, old)


def _argnums(argnums, n: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not -n <= a < n:
            raise RuntimeError(f"Got argnums={argnums} but only {n} positional inputs")
    return tuple(a % n for a in nums)


def grad_and_value(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """A function returning (d func / d args[argnums], func(*args)); func must return a scalar tensor, or
    (scalar, aux) with has_aux=True, and then the answer is (grad, (value, aux)), as PyTorch's."""
    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args))
        args = list(args)
        for a in nums:  # fresh leaves, so the gradient is d func / d this argument only
            args[a] = args[a].detach().requires_grad_(True)
        with autograd.enable_grad():
            out = func(*args, **kwargs)
        value, aux = (out[0], out[1]) if has_aux else (out, None)
        if not isinstance(value, Tensor) or value.ndim != 0:
            dims = "a non-Tensor" if not isinstance(value, Tensor) else f"tensor with {value.ndim} dims"
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got {dims}. "
                               "Maybe you wanted to use the vjp or jacrev APIs instead?")
        grads = autograd.grad(value, [args[a] for a in nums], allow_unused=True)
        grads = tuple(g if g is not None else args[a].detach() * 0 for g, a in zip(grads, nums))
        g = grads[0] if isinstance(argnums, int) else grads
        value = value.detach()
        if has_aux:  # the aux output comes back without a graph, as PyTorch's (its inputs were wrapped)
            aux = aux.detach() if isinstance(aux, Tensor) else type(aux)(
                a.detach() if isinstance(a, Tensor) else a for a in aux) if isinstance(aux, (tuple, list)) else aux
        return (g, (value, aux)) if has_aux else (g, value)
    return wrapper


def grad(func: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """A function returning d func / d args[argnums] (a tuple for a tuple of argnums); func returns a scalar."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, rest = gv(*args, **kwargs)
        return (g, rest[1]) if has_aux else g
    return wrapper


def vmap(func: Callable, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None) -> Callable:
    """func mapped over dim in_dims of its inputs (None: that input is shared), outputs stacked along out_dims."""
    def wrapper(*args):
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap: in_dims has {len(dims)} entries but there are {len(args)} inputs")
        sizes = {a.shape[d] for a, d in zip(args, dims) if d is not None}
        if len(sizes) != 1:
            raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sorted(sizes)} for the mapped dimension")
        n = sizes.pop()
        results = [func(*[a if d is None else a.select(d, i) for a, d in zip(args, dims)]) for i in range(n)]
        from .functions import stack
        if isinstance(results[0], tuple):
            outs = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(results[0])
            return tuple(stack([r[k] for r in results], o) for k, o in enumerate(outs))
        return stack(results, out_dims)
    return wrapper
