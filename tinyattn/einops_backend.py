"""einops on tinyattn tensors: ``rearrange``, ``reduce``, ``repeat``, ``einsum``, ``pack``/``unpack``.

einops finds the backend for a tensor among the subclasses of its ``AbstractBackend`` whose
``framework_name`` is an imported module (``einops/_backends.py``, ``get_backend``). So tinyattn
defines one, ``TinyattnBackend``, whose every method is a tinyattn op: einops' results are ordinary
tensors in the graph, and gradients flow through them.

einops stays optional (``pip install tinyattn[einops]``), and ``import tinyattn`` does not import it:
``install()`` defines the backend at once if einops is already imported; otherwise it leaves a
finder on ``sys.meta_path`` that does nothing until ``einops._backends`` is imported, defines the
backend right after that module has run, and removes itself. Without einops nothing else happens.
"""
from __future__ import annotations

import sys

__all__ = ["install"]

_BACKENDS = "einops._backends"
_defined: list = []  # the backend class, once defined


def _define_backend() -> type:
    """Subclass einops' AbstractBackend (einops is imported by now); defining it registers it."""
    if _defined:
        return _defined[0]
    from einops._backends import AbstractBackend

    import tinyattn
    from tinyattn.tensor import Tensor

    class TinyattnBackend(AbstractBackend):
        """einops' operations as tinyattn ops (einops calls these; each keeps the autograd graph)."""
        framework_name = "tinyattn"

        def is_appropriate_type(self, tensor) -> bool:
            return isinstance(tensor, Tensor)

        def from_numpy(self, x):
            return Tensor(x, requires_grad=x.dtype.kind == "f")  # (einops' own tests only, as torch's backend)

        def to_numpy(self, x):
            return x.detach().numpy()

        def arange(self, start, stop):
            return tinyattn.arange(start, stop, dtype=tinyattn.int64)

        def shape(self, x):
            return tuple(x.shape)

        def reshape(self, x, shape):
            return x.reshape(tuple(shape))

        def transpose(self, x, axes):
            return x.permute(tuple(axes))

        def reduce(self, x, operation, reduced_axes):
            axes = tuple(reduced_axes)
            if operation in ("min", "max"):
                return getattr(x, "a" + operation)(dim=axes)
            if operation in ("sum", "mean"):
                return getattr(x, operation)(dim=axes)
            if operation in ("any", "all"):
                for i in sorted(axes, reverse=True):  # one dim at a time, the highest first
                    x = getattr(x, operation)(dim=i)
                return x
            raise NotImplementedError(f"einops reduction {operation!r} is not available for tinyattn tensors "
                                      "(min, max, sum, mean, any and all are)")

        def stack_on_zeroth_dimension(self, tensors: list):
            return tinyattn.stack(tensors)

        def add_axis(self, x, new_position):
            return x.unsqueeze(new_position)

        def add_axes(self, x, n_axes, pos2len):
            sizes = [-1] * n_axes
            for position, length in pos2len.items():
                x = x.unsqueeze(position)
                sizes[position] = length
            return x.expand(sizes)  # a broadcast view: repeat copies nothing until it must

        def tile(self, x, repeats):
            return x.repeat(tuple(repeats))

        def concat(self, tensors, axis: int):
            return tinyattn.cat(tensors, dim=axis)

        def is_float_type(self, x) -> bool:
            return x.dtype.kind == "f"

        def einsum(self, pattern, *x):
            return tinyattn.einsum(pattern, *x)

        def layers(self):  # einops' Rearrange/Reduce/EinMix as tinyattn Modules
            from tinyattn.nn import einops_layers
            return einops_layers

    _defined.append(TinyattnBackend)
    return TinyattnBackend


class _DefineAfterLoad:
    """The loader of einops._backends, wrapped: after the module has run, define the backend."""

    def __init__(self, loader) -> None:
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)
        sys.modules[module.__name__] = module  # (already there; _define_backend imports from it)
        _define_backend()

    def __getattr__(self, name):  # get_source, is_package, ...: the real loader's
        return getattr(self._loader, name)


class _EinopsFinder:
    """On sys.meta_path: answers for einops._backends only, with the real spec and a wrapped loader."""

    def find_spec(self, fullname, path, target=None):
        if fullname != _BACKENDS:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)  # once is enough; the other finders find the real module
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _DefineAfterLoad(spec.loader)
                return spec
        return None


def install() -> None:
    """Make einops accept tinyattn tensors, now if einops is imported, else when it is."""
    if _BACKENDS in sys.modules:
        _define_backend()
    elif not any(isinstance(f, _EinopsFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _EinopsFinder())
