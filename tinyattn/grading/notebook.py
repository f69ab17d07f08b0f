"""`check("ex04")`: grade an exercise from a notebook, the same way `tinyattn grade` does.

    from tinyattn.grading import check
    check("ex04")                          # grades exercises/ex04_attention.py (found upward from here)
    check("ex04", attention=my_attention)  # grades a function written in a notebook cell
    check("ex01", "ex04")                  # several exercises, one report

The learner's code runs in its own process (the sandbox where the machine has one), exactly as
under `tinyattn grade`; the report is a `CheckReport`: HTML in Jupyter, plain text elsewhere.
A learner's mistake (syntax error, exception, infinite loop, wrong shape, missing source) is
always a report, never an exception.
"""
from __future__ import annotations

import html
import inspect
import os
import secrets
import textwrap
import types
from pathlib import Path

from . import static
from .exercises import BY_ID, get
from .grader import DEFAULT_TIMEOUT, ExerciseResult, GradeReport, _single, grade_file, points_earned, resolve_seed
from .mistakes import hint
from .runner import grade_exercise

LABEL = {"passed": "passed", "failed": "FAILED", "not_attempted": "not attempted", "error": "ERROR",
         "timeout": "TIMEOUT", "forbidden": "FORBIDDEN"}
COLOUR = {"passed": "#1a7f37", "not_attempted": "#6e7781"}        # everything else: red
MAX_SHOWN = 600                                                  # characters of one message in the report


def find_exercises(start: str | os.PathLike | None = None) -> Path | None:
    """The nearest `exercises/` folder in `start` (default: the working directory) or above it.

    A notebook's kernel starts in notebooks/, so the repository's exercises/ is one level up.
    """
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "exercises").is_dir():
            return folder / "exercises"
    return None


class CheckReport(GradeReport):
    """The result of `check(...)`: a GradeReport that shows itself (HTML in Jupyter, text elsewhere)."""

    results = property(lambda self: self.exercises)
    points, max_points, passed = GradeReport.total, GradeReport.max, GradeReport.all_passed

    # ---- plain text ---------------------------------------------------------------------------
    def __str__(self) -> str:
        lines = []
        for r in self.results:
            title = BY_ID[r.id].title if r.id in BY_ID else ""
            lines.append(f"{r.id} · {title}: {LABEL.get(r.status, r.status)} ({r.points}/{r.max_points})")
            if r.status == "not_attempted":
                lines.append("  still raises NotImplementedError: replace it with your code, then run this cell again")
                continue
            for c in r.checks:
                if c["passed"]:
                    lines.append(f"  ✓ {c['name']}")
                elif not c["message"].startswith("not implemented yet"):
                    lines.append(textwrap.fill(f"✗ {c['name']}: {_short(c['message'])}", 96, initial_indent="  ",
                                               subsequent_indent="    "))
                    if c.get("mistake"):
                        lines.append(textwrap.fill(f"likely mistake: {c['mistake']}. {hint(c['mistake'])}", 96,
                                                   initial_indent="    ", subsequent_indent="    "))
                else:
                    lines.append(f"  - {c['name']}: not implemented yet")
            if r.stdout.strip() and r.status != "passed":
                lines.append("  your code printed:")
                lines += ["    " + s for s in _short(r.stdout.strip()).splitlines()[:12]]
        return "\n".join(lines)

    __repr__ = __str__

    # ---- Jupyter ------------------------------------------------------------------------------
    def _repr_html_(self) -> str:
        parts = []
        for r in self.results:
            colour = COLOUR.get(r.status, "#cf222e")
            title = html.escape(BY_ID[r.id].title if r.id in BY_ID else "")
            parts.append(f'<div style="border-left: 4px solid {colour}; padding: 2px 10px; margin: 4px 0">'
                         f'<b>{r.id}</b> · {title}: <b style="color: {colour}">'
                         f'{html.escape(LABEL.get(r.status, r.status))}</b> ({r.points}/{r.max_points})')
            if r.status == "not_attempted":
                parts.append("<br>still raises <code>NotImplementedError</code>: replace it with your code, "
                             "then run this cell again</div>")
                continue
            items = []
            for c in r.checks:
                name = html.escape(c["name"])
                if c["passed"]:
                    items.append(f'<li style="color: #1a7f37">✓ {name}</li>')
                elif c["message"].startswith("not implemented yet"):
                    items.append(f"<li>– {name}: not implemented yet</li>")
                else:
                    items.append(f'<li><span style="color: #cf222e">✗ {name}</span>: '
                                 f'{html.escape(_short(c["message"]))}')
                    if c.get("mistake"):
                        items.append(f'<br><i>likely mistake</i> <code>{html.escape(c["mistake"])}</code>: '
                                     f'{html.escape(hint(c["mistake"]))}')
                    items.append("</li>")
            parts.append("<ul style=\"margin: 2px 0\">" + "".join(items) + "</ul>")
            if r.stdout.strip() and r.status != "passed":
                parts.append(f"your code printed:<pre>{html.escape(_short(r.stdout.strip()))}</pre>")
            parts.append("</div>")
        return "".join(parts)


def _short(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + f"... ({len(text) - MAX_SHOWN} more characters)"


# ---- functions written in a notebook cell -----------------------------------------------------------

def _source_of(functions: dict, ex) -> str:
    """A module's source made of the given functions/classes, the helpers they use from the same
    notebook, and the imports those use (`np` -> `import numpy as np`). OSError when a source is missing."""
    lines, done, order = [], set(), []

    def add(obj, seen_from: dict):
        if id(obj) in done:
            return
        done.add(id(obj))
        if getattr(obj, "__name__", "") == "<lambda>":
            raise OSError("a lambda has no source of its own")
        src = textwrap.dedent(inspect.getsource(obj))        # OSError / TypeError: no source (say so)
        code = getattr(obj, "__code__", None)
        names = set(_names(code)) if code is not None else set()
        if isinstance(obj, type):
            for member in vars(obj).values():
                names |= set(_names(getattr(member, "__code__", None)))
        for name in sorted(names):
            value = seen_from.get(name)
            if isinstance(value, types.ModuleType):
                line = f"import {value.__name__} as {name}" if value.__name__ != name else f"import {name}"
                if line not in lines:
                    lines.append(line)
            elif isinstance(value, (types.FunctionType, type)) and getattr(value, "__module__", None) == \
                    seen_from.get("__name__") and name not in functions:
                add(value, seen_from)
        order.append(src)

    for name, obj in functions.items():
        add(obj, getattr(obj, "__globals__", None) or vars(inspect.getmodule(obj) or types.ModuleType("m")))
    aliases = [f"{name} = {obj.__name__}" for name, obj in functions.items() if obj.__name__ != name]
    return "\n".join(lines + [""] + order + aliases) + "\n"


def _names(code) -> list[str]:
    if code is None:
        return []
    out = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out += _names(const)
    return out


def _check_functions(ex, functions: dict, seed: int, timeout: float) -> ExerciseResult:
    unknown = [n for n in functions if n not in ex.functions]
    if unknown:
        return _single(ex, "error", "arguments", f"{ex.id} defines {', '.join(ex.functions)}; check() got "
                                                 f"{', '.join(unknown)}")
    try:
        source = _source_of(functions, ex)
    except (OSError, TypeError) as e:
        return _single(ex, "error", "source available",
                       f"can not read the source of the function you passed ({e}); define it with `def` in a "
                       "notebook cell or a file, then run that cell again")
    origin = f"<notebook>/{ex.filename}"
    try:
        problems = static.check_source(source, ex, origin)
    except SyntaxError as e:
        return _single(ex, "error", "parses", f"syntax error, line {e.lineno}: {e.msg}")
    if problems:
        return _single(ex, "forbidden", "allowed imports only", "; ".join(problems))
    data = grade_exercise(ex.id, {ex.filename: source}, origin, seed, timeout)
    return ExerciseResult(ex.id, data["status"], points_earned(ex, data["checks"]), ex.points, data["checks"], 0.0,
                          data["isolation"], data.get("stdout", ""))


def check(*exercises: str, path: str | os.PathLike | None = None, seed: int | None = None,
          timeout: float = DEFAULT_TIMEOUT, **functions) -> CheckReport:
    """Grade exercises from a notebook: `check("ex04")`, or `check("ex04", attention=my_attention)`.

    path: the exercises folder (default: exercises/ found upward from the working directory).
    functions: the exercise's functions written in the notebook, by the name the exercise expects.
    """
    results = []
    try:
        seed = resolve_seed(seed)
    except ValueError:                       # a broken $TINYATTN_GRADE_SEED: grade with a fresh seed anyway
        seed = secrets.randbits(63)
    folder = Path(path) if path is not None else find_exercises()
    for ex_id in exercises or ("",):
        try:
            ex = get(ex_id)
        except ValueError as e:
            results.append(ExerciseResult(str(ex_id), "error", 0, 0, [{"name": "exercise id", "passed": False,
                                                                      "message": str(e), "mistake": None}]))
            continue
        try:
            if functions:
                if len(exercises) != 1:
                    raise ValueError("pass functions with exactly one exercise id")
                results.append(_check_functions(ex, functions, seed, timeout))
            elif folder is None:
                results.append(_single(ex, "error", "file exists", "no exercises/ folder here or in any folder "
                                       "above; pass path='...' to check()"))
            else:
                results.append(grade_file(folder / ex.filename, ex, seed, timeout))
        except Exception as e:  # noqa: BLE001 - a report, never an exception
            results.append(_single(ex, "error", "grader", f"{type(e).__name__}: {e}"))
    return CheckReport(str(folder) if folder else "", seed, results)
