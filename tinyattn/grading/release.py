"""solutions/ -> exercises/: every `### BEGIN SOLUTION` ... `### END SOLUTION` region becomes
`raise NotImplementedError("exNN: implement <function>")`; signatures, docstrings and comments
outside the regions are kept byte for byte. Also writes exercises/classroom/autograding.yml.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from .classroom import WORKFLOW_PATH, autograding_workflow
from .exercises import EXERCISES

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
STUB_RE = re.compile(r'raise NotImplementedError\("(ex\d\d): ')


class ReleaseError(ValueError):
    """A solution file whose regions can not be turned into a stub."""


def _enclosing_functions(source: str) -> dict[int, str]:
    """line number -> qualified name of the innermost function around it ("Class.method")."""
    where: dict[int, str] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    where[line] = name
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return where


def strip_solutions(source: str, ex_id: str, filename: str = "<solution>") -> str:
    """The learner's stub of one solution file (see the module docstring)."""
    where = _enclosing_functions(source)
    out: list[str] = []
    inside, regions = False, 0
    for n, line in enumerate(source.splitlines(keepends=True), start=1):
        text = line.strip()
        if text.startswith(BEGIN):
            if inside:
                raise ReleaseError(f"{filename}:{n}: {BEGIN} inside another solution region")
            indent = line[:len(line) - len(line.lstrip())]
            if not indent or n not in where:
                raise ReleaseError(f"{filename}:{n}: a solution region must sit inside a function body")
            what = text[len(BEGIN):].strip(" :-") or f"implement {where[n]}"
            out.append(f'{indent}raise NotImplementedError("{ex_id}: {what}")\n')
            inside, regions = True, regions + 1
        elif text.startswith(END):
            if not inside:
                raise ReleaseError(f"{filename}:{n}: {END} without a {BEGIN}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ReleaseError(f"{filename}: the last {BEGIN} has no {END}")
    if not regions:
        raise ReleaseError(f"{filename}: no {BEGIN} region")
    stub = "".join(out)
    ast.parse(stub, filename=filename)                 # the stub must still be valid Python
    return stub


def planned(solutions: str | Path = "solutions") -> dict[str, str]:
    """{relative path in exercises/: content} for every generated file."""
    solutions = Path(solutions)
    files = {}
    for ex in EXERCISES:
        src = solutions / ex.filename
        if not src.is_file():
            raise ReleaseError(f"{src} is missing")
        files[ex.filename] = strip_solutions(src.read_text(encoding="utf-8"), ex.id, str(src))
    files[WORKFLOW_PATH] = autograding_workflow()
    return files


def _edited_by_learner(existing: str) -> bool:
    """A stub whose NotImplementedError lines are gone has been worked on: do not overwrite it."""
    return not STUB_RE.search(existing)


def release(solutions: str | Path = "solutions", out: str | Path = "exercises", check: bool = False,
            force: bool = False) -> list[str]:
    """Write (or with check=True only compare) the generated files; returns those that differed.

    Refuses (ReleaseError) to overwrite an exercise file that no longer contains any stub, i.e.
    one a learner has solved, unless force=True.
    """
    out = Path(out)
    changed = []
    files = planned(solutions)
    for rel, content in files.items():
        target = out / rel
        old = target.read_text(encoding="utf-8") if target.is_file() else None
        if old == content:
            continue
        changed.append(rel)
        if check:
            continue
        if old is not None and rel.endswith(".py") and _edited_by_learner(old) and not force:
            raise ReleaseError(f"{target} has no NotImplementedError stub left (someone's work?); "
                               "pass --force to overwrite it")
    if not check:
        for rel in changed:
            target = out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(files[rel], encoding="utf-8")
    return changed
