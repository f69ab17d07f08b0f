"""tinyattn.jit: PyTorch's TorchScript decorators, each returning what it is given.

TorchScript compiles a model into a graph that runs without Python. tinyattn has no compiler: every
model is the Python code you wrote, run eagerly, as PyTorch itself runs it with scripting turned off
(``PYTORCH_JIT=0``). So ``script`` and ``trace`` return the function or module unchanged (calls give
the same values and gradients as before), and the decorators that only tell the compiler what to skip
(``ignore``, ``unused``, ``export``) return the function unchanged, with or without arguments.
``is_scripting()`` and ``is_tracing()`` are False, which is what eager code asks them for.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Final  # noqa: F401  (torch.jit.Final marks a constant attribute; here it is typing's)

__all__ = ["Final", "annotate", "export", "ignore", "is_scripting", "is_tracing", "load", "optimized_execution",
           "save", "script", "script_if_tracing", "trace", "trace_module", "unused"]


def script(obj: Any, optimize: None = None, _frames_up: int = 0, _rcb: Callable | None = None,
           example_inputs: Any = None) -> Any:
    """``torch.jit.script(model)`` / ``@torch.jit.script``: ``obj`` itself (a function, Module or class)."""
    return obj


def trace(func: Any, example_inputs: Any = None, optimize: None = None, check_trace: bool = True,
          check_inputs: Any = None, check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False,
          _module_class: Any = None, _compilation_unit: Any = None, example_kwarg_inputs: Any = None,
          _store_inputs: bool = True) -> Any:
    """``torch.jit.trace(model, example)``: ``func`` itself. A trace records one run's ops for a graph;
    running the Python code again computes the same thing for every input, branches included."""
    if not callable(func):
        raise TypeError(f"trace: expected a function or Module to trace, got {type(func).__name__}")
    return func


def trace_module(mod: Any, inputs: Any, optimize: None = None, check_trace: bool = True, check_inputs: Any = None,
                 check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False,
                 _module_class: Any = None, _compilation_unit: Any = None, example_inputs_is_kwarg: bool = False,
                 _store_inputs: bool = True) -> Any:
    """``torch.jit.trace_module(mod, {'forward': example})``: ``mod`` itself."""
    return trace(mod)


def _decorator(name: str, fn: Any) -> Any:
    if not callable(fn):
        raise TypeError(f"torch.jit.{name} decorates a function or method, got {type(fn).__name__}")
    return fn


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """``@torch.jit.ignore`` or ``@torch.jit.ignore(drop=True)``: leave a method to Python; it is
    returned unchanged (everything here is Python already)."""
    if callable(drop):  # used bare, @ignore: the function came as the first argument
        return drop
    return lambda fn: _decorator("ignore", fn)


def unused(fn: Callable) -> Callable:
    """``@torch.jit.unused``: a method the compiler would replace by an exception; unchanged here."""
    return _decorator("unused", fn)


def export(fn: Callable) -> Callable:
    """``@torch.jit.export``: compile a method besides ``forward``; unchanged here."""
    return _decorator("export", fn)


def script_if_tracing(fn: Callable) -> Callable:
    """``@torch.jit.script_if_tracing``: unchanged (nothing is ever traced here)."""
    return _decorator("script_if_tracing", fn)


def is_scripting() -> bool:
    """False: code runs as Python (PyTorch's answer outside ``torch.jit.script``)."""
    return False


def is_tracing() -> bool:
    """False: no trace is ever being recorded."""
    return False


def annotate(the_type: Any, the_value: Any) -> Any:
    """``torch.jit.annotate(List[int], [])``: the value (the type is for the compiler)."""
    return the_value


@contextlib.contextmanager
def optimized_execution(should_optimize: bool):
    """``with torch.jit.optimized_execution(False):`` changes nothing here."""
    yield


def _no_file(name: str):
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            f"torch.jit.{name}: tinyattn can not read or write TorchScript archives (there is no compiled "
            "graph, only Python). Save the weights with tinyattn.save(model.state_dict(), path) and load them "
            "into the same Python class")
    refuse.__name__ = name
    return refuse


save = _no_file("save")
load = _no_file("load")
