"""The build of tinyattn a Tensor exercise may import, made from the installed package.

A whitelist: the modules in exercises.TENSOR_LIBRARY are copied as they are; every other module of
the package is replaced by a stub that defines the same top-level names, each of which refuses
to be used ("tinyattn.nn.Attention is not part of ex08's tinyattn: ..."), so the package still
imports, and none of the code that would answer the exercise is in the sandbox to be read or
run. Names listed in exercises.TENSOR_REFUSED are cut out of the allowed modules the same way
(nn.functional keeps softmax and linear, not its attention functions). The grading package is
left out entirely. NumPy exercises get no build at all: no tinyattn on their path.
"""
from __future__ import annotations

import ast
import atexit
import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from .exercises import TENSOR_REFUSED, in_tensor_library

PACKAGE = Path(__file__).resolve().parents[1]            # the installed tinyattn/

STUB_HEAD = '''"""Not part of the tinyattn this exercise may use (a stub: every name refuses)."""


class _Refused:
    _what = ""

    def __init__(self, *args, **kwargs):
        raise ImportError(f"{self._what} is not part of the tinyattn this exercise may use: "
                          "write it yourself from Tensor ops")

    def __init_subclass__(cls, **kwargs):
        pass


def _refuse(what):
    return type(what.rsplit(".", 1)[-1], (_Refused,), {"_what": what})

'''


def _module_name(rel: str) -> str:
    name = "tinyattn." + rel[:-3].replace("/", ".")
    return name[:-len(".__init__")] if name.endswith(".__init__") else name


def _top_level_names(tree: ast.Module) -> list[str]:
    """Every name a module binds at its top level (defs, classes, assignments, imports)."""
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                names += [n.id for n in ast.walk(t) if isinstance(n, ast.Name)]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"]
    return [n for n in dict.fromkeys(names) if not (n.startswith("__") and n.endswith("__"))]


def stub(module: str, source: str) -> str:
    """A module that binds the same names as `source`, each one a refusing stub."""
    lines = [STUB_HEAD]
    for name in _top_level_names(ast.parse(source)):
        lines.append(f"{name} = _refuse({module + '.' + name!r})")
    return "\n".join(lines) + "\n"


def cut(module: str, source: str, refused: set[str]) -> str:
    """`source` with the top-level definitions of `refused` names replaced by refusing stubs."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    spans = []
    for node in tree.body:
        name = None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in refused:
            name = node.name
        if name is not None:
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            spans.append((first, node.end_lineno))
    for first, last in sorted(spans, reverse=True):
        del lines[first - 1:last]
    tail = [STUB_HEAD.split("\n\n\n", 1)[1]] + [f"{n} = _refuse({module + '.' + n!r})\n" for n in sorted(refused)]
    return "".join(lines) + "\n\n" + "\n".join(tail)


def build(out: Path) -> Path:
    """Write the Tensor exercises' tinyattn to out/tinyattn; returns out."""
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.split("/")[0] == "grading" or "__pycache__" in rel:
            continue
        module = _module_name(rel)
        source = path.read_text(encoding="utf-8")
        if in_tensor_library(module):
            refused = {n.rsplit(".", 1)[1] for n in TENSOR_REFUSED if n.rsplit(".", 1)[0] == module}
            text = cut(module, source, refused) if refused else source
        else:
            text = stub(module, source)
        target = out / "tinyattn" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    for p in [out, *out.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)            # readable by the sandbox's own uid
    return out


@lru_cache(maxsize=1)
def tensor_library() -> str:
    """The folder holding the build (made once per grading process, removed when it exits)."""
    out = Path(tempfile.mkdtemp(prefix="tinyattn-library-"))
    owner = os.getpid()
    atexit.register(lambda: os.getpid() == owner and shutil.rmtree(out, ignore_errors=True))
    return str(build(out))
