"""An AST check of what a submission imports, done before any of its code runs.

The rules, stated once here and word for word in each exercise's docstring and in the grader's
message (a violation makes the exercise `forbidden`):
"""
from __future__ import annotations

import ast
from pathlib import Path

from . import confine
from .exercises import Exercise, in_tensor_library

NEVER_RULE = "No exercise may import torch, tensorflow, jax, scipy.special or the grader (tinyattn.grading)."
NUMPY_RULE = ("Allowed: NumPy and the Python standard library; nothing from tinyattn (check a gradient "
              "with your own finite differences).")
MODULE_RULE = ("Allowed: NumPy, the Python standard library, tinyattn Tensors and their ops, nn.Module, nn.Linear, "
               "nn.Parameter, nn.Dropout, nn.ModuleList and nn.functional's building blocks (softmax, linear, "
               "dropout, ...); not tinyattn's own attention code (nn.Attention, nn.MultiheadAttention and the other "
               "attention layers, F.scaled_dot_product_attention, F.attention, F.flash_attention, tinyattn.masks): "
               "the sandbox holds a tinyattn without them.")
__doc__ += f"\n* {NEVER_RULE}\n* The NumPy exercises: {NUMPY_RULE}\n* ex08 (a module): {MODULE_RULE}\n" + """
`getattr(x, "name")`, `__import__("name")` and `importlib.import_module("name")` with literal strings
are checked like the statements they stand for; an import whose name is computed is refused. Every
.py file the learner submits with the exercise (helper modules and packages) is checked the same
way. This check is the courtesy that names an honest mistake; the wall is the sandbox, which holds
only what the exercise allows (see exercises.py).
"""

ALWAYS = ("torch", "tensorflow", "jax", "scipy.special", "tinyattn.grading")
ATTENTION_CODE = ("tinyattn.masks", "tinyattn.nn.attention", "tinyattn.nn.sdpa", "tinyattn.nn.flash",
                  "tinyattn.nn.transformer")
FUNCTIONAL = "tinyattn.nn.functional"
# nn.functional's attention functions; everything else in it (softmax, linear, ...) is a building block
ATTENTION_FUNCS = {"attention", "scaled_dot_product_attention", "linear_attention", "flash_attention"}
MODULE_OK_FROM_NN = {"Module", "Linear", "Parameter", "Dropout", "ModuleList", "functional"}
# attribute names that reach tinyattn's attention code whatever the module was imported as
FORBIDDEN_ATTRS = {"scaled_dot_product_attention", "flash_attention", "linear_attention", "Attention", "MultiheadAttention",
                   "grading", "masks", "sdpa", "KVCache", "TransformerBlock", "TransformerLM",
                   "TransformerClassifier", "Seq2SeqTransformer"}
IMPORT_FUNCS = {"__import__", "import_module"}


def rule(ex: Exercise) -> str:
    """The import rule of `ex`, as its docstring states it."""
    return MODULE_RULE if ex.kind == "module" else NUMPY_RULE + (" " + confine.RULE if ex.real_only else "")


def _under(name: str, prefixes) -> str | None:
    """The prefix `name` is (or is inside of), e.g. 'torch' for 'torch.nn'."""
    for p in prefixes:
        if name == p or name.startswith(p + "."):
            return p
    return None


def _is_module(name: str) -> bool:
    """Whether `name` is a module of the tinyattn package (not a function or class in one)."""
    if not _under(name, ("tinyattn",)):
        return False
    base = Path(__file__).resolve().parents[1].joinpath(*name.split(".")[1:])
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def module_violation(name: str, ex: Exercise) -> str | None:
    """Why importing module `name` is not allowed in `ex` (None if it is)."""
    if (p := _under(name, ALWAYS)) is not None:
        return f"{p} is not allowed in any exercise"
    if ex.kind == "numpy" and _under(name, ("tinyattn",)):
        return f"{name}: {ex.id} is plain NumPy (nothing from tinyattn)"
    if ex.kind == "module" and _is_module(name) and not in_tensor_library(name) and not _under(name, ATTENTION_CODE):
        return f"{name} is not part of the tinyattn {ex.id} may use"
    if (p := _under(name, ATTENTION_CODE)) is not None:
        return f"{p} is tinyattn's own attention code: implement it yourself"
    if _under(name, (FUNCTIONAL,)) and name.rsplit(".", 1)[-1] in ATTENTION_FUNCS:
        return f"{name} is tinyattn's own attention code: implement it yourself"
    return None


def check_source(source: str, ex: Exercise, filename: str = "<submission>") -> list[str]:
    """Every forbidden import or attribute in `source`, as 'line N: why' (empty when allowed).

    Raises SyntaxError when the source does not parse (the caller reports it as an error).
    """
    tree = ast.parse(source, filename=filename)
    problems: set[tuple[int, str]] = set()

    def flag(node: ast.AST, why: str) -> None:
        problems.add((getattr(node, "lineno", 0), why))

    # names bound to tinyattn.nn.functional (import ... as F, from tinyattn.nn import functional as F)
    functional_aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            functional_aliases |= {a.asname for a in node.names if a.name == FUNCTIONAL and a.asname}
        elif isinstance(node, ast.ImportFrom) and node.module == "tinyattn.nn" and not node.level:
            functional_aliases |= {a.asname or a.name for a in node.names if a.name == "functional"}
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute) and node.value.attr == "functional":
            functional_aliases |= {t.id for t in node.targets if isinstance(t, ast.Name)}

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
                elif base == "tinyattn" and ex.kind == "numpy":
                    flag(node, f"from tinyattn import {alias.name}: {ex.id} is plain NumPy (nothing from tinyattn)")
                elif base == "scipy" and alias.name == "special":
                    flag(node, "scipy.special is not allowed in any exercise")
        elif isinstance(node, ast.Attribute):
            on_functional = ((isinstance(node.value, ast.Name) and node.value.id in functional_aliases)
                             or (isinstance(node.value, ast.Attribute) and node.value.attr == "functional"))
            if on_functional and node.attr in ATTENTION_FUNCS:
                flag(node, f"F.{node.attr} is tinyattn's own attention code: implement it yourself")
            elif node.attr in FORBIDDEN_ATTRS:
                flag(node, f".{node.attr} reaches tinyattn's own attention code or the grader")
            elif node.attr == "special" and isinstance(node.value, ast.Name) and node.value.id == "scipy":
                flag(node, "scipy.special is not allowed in any exercise")
            elif ex.kind == "numpy" and isinstance(node.value, ast.Name) and node.value.id == "tinyattn":
                flag(node, f"tinyattn.{node.attr}: {ex.id} is plain NumPy (nothing from tinyattn)")
        elif isinstance(node, ast.Call):
            fname = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            literal = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if fname in IMPORT_FUNCS and literal and isinstance(node.args[0], ast.Constant):
                if (why := module_violation(literal[0], ex)):
                    flag(node, why)
            elif fname in IMPORT_FUNCS and node.args:
                flag(node, f"{fname}(...) with a computed name: import modules by name (an import statement)")
            elif fname in ("getattr", "hasattr") and len(literal) >= 1 and literal[0] in FORBIDDEN_ATTRS:
                flag(node, f"getattr(..., {literal[0]!r}) reaches tinyattn's own attention code or the grader")
    if ex.real_only:                          # the language rules of a confined exercise (confine.py)
        return [f"line {line}: {why}" for line, why in sorted(problems)] + confine.problems(source, filename)
    return [f"line {line}: {why}" for line, why in sorted(problems)]
