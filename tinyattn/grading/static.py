"""An AST check of what a submission imports, done before any of its code runs.

Rules (a violation makes the exercise `forbidden`):
* nobody may import torch, tensorflow, jax, scipy.special or the grader itself (tinyattn.grading);
* the NumPy exercises may import numpy and the standard library, and from tinyattn only
  tinyattn.gradcheck (to check gradients yourself);
* ex08 ("module") may use tinyattn, tinyattn.nn's Module/Linear/Parameter/Dropout and Tensor ops,
  but none of tinyattn's own attention code (nn.MultiHeadAttention, nn.functional, tinyattn.masks, ...).
`getattr(x, "name")`, `__import__("name")` and `importlib.import_module("name")` with literal strings
are checked like the statements they stand for. The runner also blocks the forbidden third-party
modules at import time, so a disguised import fails there instead.
"""
from __future__ import annotations

import ast

from .exercises import Exercise

ALWAYS = ("torch", "tensorflow", "jax", "scipy.special", "tinyattn.grading")
ATTENTION_CODE = ("tinyattn.nn.functional", "tinyattn.masks", "tinyattn.nn.attention", "tinyattn.nn.sdpa",
                  "tinyattn.nn.flash", "tinyattn.nn.transformer")
MODULE_OK_FROM_NN = {"Module", "Linear", "Parameter", "Dropout", "ModuleList"}
# attribute names that reach tinyattn's attention code whatever the module was imported as
FORBIDDEN_ATTRS = {"scaled_dot_product_attention", "flash_attention", "MultiHeadAttention", "functional",
                   "grading", "masks", "sdpa", "KVCache"}
IMPORT_FUNCS = {"__import__", "import_module"}


def _under(name: str, prefixes) -> str | None:
    """The prefix `name` is (or is inside of), e.g. 'torch' for 'torch.nn'."""
    for p in prefixes:
        if name == p or name.startswith(p + "."):
            return p
    return None


def module_violation(name: str, ex: Exercise) -> str | None:
    """Why importing module `name` is not allowed in `ex` (None if it is)."""
    if (p := _under(name, ALWAYS)) is not None:
        return f"{p} is not allowed in any exercise"
    if (p := _under(name, ATTENTION_CODE)) is not None:
        return f"{p} is tinyattn's own attention code: implement it yourself"
    if ex.kind == "numpy" and _under(name, ("tinyattn",)) and not _under(name, ("tinyattn.gradcheck",)):
        return f"{name}: {ex.id} is plain NumPy (only tinyattn.gradcheck may be imported from tinyattn)"
    return None


def check_source(source: str, ex: Exercise, filename: str = "<submission>") -> list[str]:
    """Every forbidden import or attribute in `source`, as 'line N: why' (empty when allowed).

    Raises SyntaxError when the source does not parse (the caller reports it as an error).
    """
    tree = ast.parse(source, filename=filename)
    problems: set[tuple[int, str]] = set()

    def flag(node: ast.AST, why: str) -> None:
        problems.add((getattr(node, "lineno", 0), why))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (why := module_violation(alias.name, ex)):
                    flag(node, why)
        elif isinstance(node, ast.ImportFrom):
            base = ("." * node.level) + (node.module or "")
            if node.level:
                continue       # relative imports can only reach the learner's own folder
            if base != "tinyattn" and (why := module_violation(base, ex)):
                flag(node, why)
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if (why := module_violation(full, ex)):
                    flag(node, why)
                elif base == "tinyattn.nn" and ex.kind == "module" and alias.name not in MODULE_OK_FROM_NN:
                    flag(node, f"from tinyattn.nn import {alias.name}: {ex.id} may use only "
                               f"{', '.join(sorted(MODULE_OK_FROM_NN))} from tinyattn.nn")
                elif base == "tinyattn" and ex.kind == "numpy" and alias.name != "gradcheck":
                    flag(node, f"from tinyattn import {alias.name}: {ex.id} is plain NumPy "
                               "(only tinyattn.gradcheck may be imported from tinyattn)")
                elif base == "scipy" and alias.name == "special":
                    flag(node, "scipy.special is not allowed in any exercise")
        elif isinstance(node, ast.Attribute):
            if node.attr in FORBIDDEN_ATTRS:
                flag(node, f".{node.attr} reaches tinyattn's own attention code or the grader")
            elif node.attr == "special" and isinstance(node.value, ast.Name) and node.value.id == "scipy":
                flag(node, "scipy.special is not allowed in any exercise")
            elif (ex.kind == "numpy" and isinstance(node.value, ast.Name) and node.value.id == "tinyattn"
                  and node.attr != "gradcheck"):
                flag(node, f"tinyattn.{node.attr}: {ex.id} is plain NumPy (only tinyattn.gradcheck may be used)")
        elif isinstance(node, ast.Call):
            fname = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            literal = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if fname in IMPORT_FUNCS and literal:
                if (why := module_violation(literal[0], ex)):
                    flag(node, why)
            elif fname in ("getattr", "hasattr") and len(literal) >= 1 and literal[0] in FORBIDDEN_ATTRS:
                flag(node, f"getattr(..., {literal[0]!r}) reaches tinyattn's own attention code or the grader")
    return [f"line {line}: {why}" for line, why in sorted(problems)]
