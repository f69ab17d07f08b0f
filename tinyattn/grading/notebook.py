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

import difflib
import html
import inspect
import os
import secrets
import textwrap
import types
from pathlib import Path

from ..course import course_root
from . import static
from .exercises import BY_ID, get
from .grader import DEFAULT_TIMEOUT, EXERCISE_FILES, ExerciseResult, GradeReport, _single, grade_file, points_earned, resolve_seed
from .mistakes import hint
from .report import stdout_tail
from .runner import grade_exercise, submission_files

LABEL = {"passed": "passed", "failed": "FAILED", "not_attempted": "not attempted", "error": "ERROR",
         "timeout": "TIMEOUT", "forbidden": "FORBIDDEN"}
COLOUR = {"passed": "#1a7f37", "not_attempted": "#6e7781"}        # everything else: red
MAX_SHOWN = 600                                                  # characters of one message in the report


def find_exercises(start: str | os.PathLike | None = None) -> Path | None:
    """The nearest `exercises/` folder in `start` (default: the working directory) or above it.

    A notebook's kernel may start in notebooks/, so the repository's exercises/ is one level up.
    """
    root = course_root(start)
    return None if root is None else root / "exercises"


class CheckReport(GradeReport):
    """The result of `check(...)`: a GradeReport that shows itself (HTML in Jupyter, text elsewhere).

    A hint is shown once per exercise (at the first check it explains), however many checks it explains."""

    results = property(lambda self: self.exercises)
    points, max_points, passed = GradeReport.total, GradeReport.max, GradeReport.all_passed

    # ---- plain text ---------------------------------------------------------------------------
    def __str__(self) -> str:
        lines = []
        for r in self.results:
            if r.id not in BY_ID:                        # not an exercise: say so, and what the ids are
                lines.append(f"check({r.id!r}): {r.checks[0]['message'] if r.checks else 'unknown exercise'}")
                continue
            lines.append(f"{r.id} · {BY_ID[r.id].title}: {LABEL.get(r.status, r.status)} ({r.points}/{r.max_points})")
            if len(r.parts) > 1 and r.status not in ("passed", "not_attempted"):
                lines.append("  parts: " + " · ".join(f"{n} {p}/{m}" for n, p, m in r.parts))
            if r.status == "not_attempted":
                lines.append("  still raises NotImplementedError: replace it with your code, then run this cell again")
                continue
            hinted = set()
            for c in r.checks:
                if c["passed"]:
                    lines.append(f"  ✓ {c['name']}")
                elif not c["message"].startswith("not implemented yet"):
                    lines.append(textwrap.fill(f"✗ {c['name']}: {_short(c['message'])}", 96, initial_indent="  ",
                                               subsequent_indent="    "))
                    m = c.get("mistake")
                    if m and m not in hinted:
                        hinted.add(m)
                        lines.append(textwrap.fill(f"likely mistake: {m}. {hint(m)}", 96,
                                                   initial_indent="    ", subsequent_indent="    "))
                    elif m:
                        lines.append(f"    likely mistake: {m} (see above)")
                else:
                    lines.append(f"  - {c['name']}: not implemented yet")
            if r.stdout.strip() and r.status != "passed":           # its end, as the terminal's report shows it
                keep, how_much = stdout_tail(r.stdout)
                lines += [f"  your code printed ({how_much}):"] + ["    " + s for s in keep]
        return "\n".join(lines)

    __repr__ = __str__

    # ---- Jupyter ------------------------------------------------------------------------------
    def _repr_html_(self) -> str:
        parts = []
        for r in self.results:
            if r.id not in BY_ID:
                msg = r.checks[0]["message"] if r.checks else "unknown exercise"
                parts.append(f'<div style="border-left: 4px solid #cf222e; padding: 2px 10px; margin: 4px 0">'
                             f'<code>check({html.escape(repr(r.id))})</code>: {html.escape(msg)}</div>')
                continue
            colour = COLOUR.get(r.status, "#cf222e")
            title = html.escape(BY_ID[r.id].title)
            parts.append(f'<div style="border-left: 4px solid {colour}; padding: 2px 10px; margin: 4px 0">'
                         f'<b>{r.id}</b> · {title}: <b style="color: {colour}">'
                         f'{html.escape(LABEL.get(r.status, r.status))}</b> ({r.points}/{r.max_points})')
            if len(r.parts) > 1 and r.status not in ("passed", "not_attempted"):
                parts.append("<br>parts: " + " · ".join(f"{html.escape(n)} {p}/{m}" for n, p, m in r.parts))
            if r.status == "not_attempted":
                parts.append("<br>still raises <code>NotImplementedError</code>: replace it with your code, "
                             "then run this cell again</div>")
                continue
            items, hinted = [], set()
            for c in r.checks:
                name = html.escape(c["name"])
                if c["passed"]:
                    items.append(f'<li style="color: #1a7f37">✓ {name}</li>')
                elif c["message"].startswith("not implemented yet"):
                    items.append(f"<li>– {name}: not implemented yet</li>")
                else:
                    items.append(f'<li><span style="color: #cf222e">✗ {name}</span>: '
                                 f'{html.escape(_short(c["message"]))}')
                    m = c.get("mistake")
                    if m and m not in hinted:
                        hinted.add(m)
                        items.append(f'<br><i>likely mistake</i> <code>{html.escape(m)}</code>: '
                                     f'{html.escape(hint(m))}')
                    elif m:
                        items.append(f'<br><i>likely mistake</i> <code>{html.escape(m)}</code> (see above)')
                    items.append("</li>")
            parts.append("<ul style=\"margin: 2px 0\">" + "".join(items) + "</ul>")
            if r.stdout.strip() and r.status != "passed":
                keep, how_much = stdout_tail(r.stdout)
                parts.append(f"your code printed ({how_much}):<pre>{html.escape(chr(10).join(keep))}</pre>")
            parts.append("</div>")
        return "".join(parts)


def _shown_by_caller() -> bool:
    """True where the returned report is displayed anyway: IPython/Jupyter, or Python's interactive prompt."""
    import sys
    if hasattr(sys, "ps1") or sys.flags.interactive:
        return True
    ipython = sys.modules.get("IPython")
    return ipython is not None and getattr(ipython, "get_ipython", lambda: None)() is not None


def _short(text: str) -> str:
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + f"... ({len(text) - MAX_SHOWN} more characters)"


# ---- functions written in a notebook cell -----------------------------------------------------------

CELL_MODULE = "notebook_cells"  # the file the notebook's functions travel in (beside the exercise; a name a learner
# may import: the confined exercises refuse modules that begin with an underscore)
LITERALS = (bool, int, float, complex, str, bytes, type(None))


class Unsendable(ValueError):
    """A global a notebook function uses that can not be written into its source (say which, and why)."""


def _global_names(obj) -> list[str]:
    """The global names a function or class reads: LOAD_GLOBAL in its code (and nested code: comprehensions,
    inner functions, methods) and the names its `def`/`class` line evaluates (defaults, annotations,
    decorators, base classes)."""
    import ast
    import dis
    names: list[str] = []

    def code_names(code) -> None:
        for ins in dis.get_instructions(code):
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and isinstance(ins.argval, str):
                names.append(ins.argval)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                code_names(const)

    members = [obj] if not isinstance(obj, type) else [m for m in vars(obj).values()]
    for m in members:
        m = getattr(m, "__func__", m)                               # staticmethod / classmethod
        for f in (m, getattr(m, "fget", None), getattr(m, "fset", None)):   # and properties
            if getattr(f, "__code__", None) is not None:
                code_names(f.__code__)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
    except (OSError, TypeError, SyntaxError):
        return names
    node = tree.body[0] if tree.body else None

    def outside_bodies(n) -> None:
        """Names evaluated when the def/class statement runs (not when the function is called)."""
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            names.append(n.id)
        for field, value in ast.iter_fields(n):
            if field == "body" and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    outside_bodies(child)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        outside_bodies(node)
    return names


def _literal(value) -> str | None:
    """Source text that rebuilds `value` (plain numbers, strings, tuples/lists/dicts/sets of them, NumPy
    arrays and scalars of a plain dtype); None when there is none."""
    import numpy as np
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return f"__import__('numpy').{value.dtype.name}({_literal(value.item())})"
    if isinstance(value, np.generic):
        return None
    if isinstance(value, (float, complex)):
        return repr(value) if np.isfinite(value) else f"{type(value).__name__}({str(value)!r})"   # inf, nan
    if isinstance(value, LITERALS):
        return repr(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufc" and value.size <= 10_000:
        return (f"__import__('numpy').array({_literal(value.tolist())}, dtype='{value.dtype.str}')"
                f".reshape({value.shape!r})")
    if type(value) in (tuple, list, set, frozenset):
        items = [_literal(v) for v in value]
        if None in items:
            return None
        body = ", ".join(items)
        return {tuple: f"({body}{',' if len(items) == 1 else ''})", list: f"[{body}]",
                set: f"{{{body}}}" if items else "set()", frozenset: f"frozenset([{body}])"}[type(value)]
    if type(value) is dict:
        pairs = [(_literal(k), _literal(v)) for k, v in value.items()]
        if any(k is None or v is None for k, v in pairs):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    return None


def _importable(value, name: str) -> str | None:
    """`from MODULE import NAME as name` when `value` is an installed library's own object
    (numpy.exp, math.sqrt, tinyattn.nn): never for code defined in the notebook or beside it."""
    import importlib
    import sys
    for mod in (getattr(value, "__module__", None), "numpy", "math"):
        qual = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
        if not isinstance(mod, str) or not isinstance(qual, str) or "." in qual or "<" in qual:
            continue
        top = mod.split(".")[0]
        if top not in ("numpy", "tinyattn") and top not in sys.stdlib_module_names:
            continue
        try:
            if getattr(importlib.import_module(mod), qual, None) is value:
                return f"from {mod} import {qual}" + (f" as {name}" if qual != name else "")
        except ImportError:
            continue
    return None


def _source_of(functions: dict) -> str:
    """A module's source made of the given functions/classes and what they read from the notebook:
    its imports (`np` -> `import numpy as np`, `sqrt` -> `from math import sqrt`), its helper functions
    and classes, and its constants (numbers, strings, small arrays...). The functions get a namespace
    built from the notebook's globals, as if the cells were one file.

    OSError when a source is missing; Unsendable for a global that can not be written as source."""
    header, done, order = [], set(), []

    def add(obj, seen_from: dict) -> None:
        if id(obj) in done:
            return
        done.add(id(obj))
        if getattr(obj, "__name__", "") == "<lambda>":
            raise OSError("a lambda has no source of its own")
        src = textwrap.dedent(inspect.getsource(obj))        # OSError / TypeError: no source (say so)
        for name in dict.fromkeys(_global_names(obj)):
            if name not in seen_from or name in functions:
                continue                                      # a builtin, a parameter, or one of the functions
            value = seen_from[name]
            if isinstance(value, types.ModuleType):
                line = f"import {value.__name__} as {name}" if value.__name__ != name else f"import {name}"
            elif (line := _importable(value, name)) is not None:
                pass
            elif isinstance(value, (types.FunctionType, type)):
                add(value, getattr(value, "__globals__", None) or
                    vars(inspect.getmodule(value) or types.ModuleType("m")))
                if value.__name__ != name:
                    order.append(f"{name} = {value.__name__}")
                continue
            elif (text := _literal(value)) is not None:
                line = f"{name} = {text}"
            else:
                raise Unsendable(f"{getattr(obj, '__name__', obj)} uses the notebook's {name!r} (a "
                                 f"{type(value).__name__}), which check() can not send to the grader: define it "
                                 "inside the function, or as a number, string, tuple or NumPy array in a cell")
            if line not in header:
                header.append(line)
        order.append(src)

    for name, obj in functions.items():
        add(obj, getattr(obj, "__globals__", None) or vars(inspect.getmodule(obj) or types.ModuleType("m")))
    aliases = [f"{name} = {obj.__name__}" for name, obj in functions.items() if obj.__name__ != name]
    return "\n".join(header + [""] + order + aliases) + "\n"


def _check_functions(ex, functions: dict, seed: int, timeout: float, folder: Path | None) -> ExerciseResult:
    """Grade functions from the notebook; the exercise's other functions come from its file (when there is
    one), so `check("ex02", softmax=f)` still grades the file's softmax_backward."""
    unknown = [n for n in functions if n not in ex.functions]
    if unknown:                     # name what was wrong (one typo among right names included) and the fix
        close = [difflib.get_close_matches(n, ex.functions, 1) for n in unknown]
        said = "; ".join(f"{n} (did you mean {c[0]}?)" if c else n for n, c in zip(unknown, close))
        return _single(ex, "error", "arguments", f"{ex.id} has no function named {said}: pass each function by "
                                                 f"the name the exercise gives it, as in check(\"{ex.id}\", "
                                                 f"{ex.functions[0]}=my_{ex.functions[0]})")
    try:
        cells = _source_of(functions)
    except (OSError, TypeError) as e:
        return _single(ex, "error", "source available",
                       f"can not read the source of the function you passed ({e}); define it with `def` in a "
                       "notebook cell or a file, then run that cell again")
    except Unsendable as e:
        return _single(ex, "error", "source available", str(e))
    rest = [n for n in ex.functions if n not in functions]
    path = folder / ex.filename if folder is not None else None
    if rest and path is not None and path.is_file():
        # the file, then the notebook's functions imported over its own: the file's other functions
        # (and the file's helpers) call the notebook's versions, as the names now say
        try:
            files = submission_files(path)
        except (OSError, UnicodeDecodeError) as e:
            return _single(ex, "error", "readable", f"can not read {path}: {e}")
        files = {**files, f"{CELL_MODULE}.py": cells}
        files[ex.filename] += f"\n\nfrom {CELL_MODULE} import {', '.join(functions)}  # check(): the notebook's\n"
        origin = str(path.resolve())
    else:
        # no file to take the others from: each says so when a check calls it (as a stub would)
        where = f"no {path} was found" if path is not None else "no exercises/ folder was found"
        cells += "".join(f"\n\ndef {name}(*args, **kwargs):\n    raise NotImplementedError(\"{ex.id}: {name} was not "
                         f"passed to check() and {where}\")\n" for name in rest)
        files, origin = {ex.filename: cells}, f"<notebook>/{ex.filename}"
    # what is judged: the functions passed, the exercise's own file and its helpers; never another
    # exercise's file beside it (each is judged as its own exercise, under its own import rules)
    judged = {name: text for name, text in files.items() if name == ex.filename or name not in EXERCISE_FILES}
    try:
        problems = []
        for name, text in judged.items():
            shown = "your notebook's functions" if name in (CELL_MODULE + ".py",) or origin.startswith("<") \
                else (str(path) if name == ex.filename else name)
            problems += [f"{shown}, {p}" for p in static.check_source(text, ex, name)]
    except SyntaxError as e:
        where = "your notebook's functions" if e.filename == CELL_MODULE + ".py" or origin.startswith("<") \
            else e.filename
        return _single(ex, "error", "parses", f"syntax error in {where}, line {e.lineno}: {e.msg}")
    if problems:
        return _single(ex, "forbidden", "allowed imports only", "; ".join(problems) + ". " + static.rule(ex))
    data = grade_exercise(ex.id, files, origin, seed, timeout)
    return ExerciseResult(ex.id, data["status"], points_earned(ex, data["checks"]), ex.points, data["checks"], 0.0,
                          data["isolation"], data.get("stdout", ""))


def check(*exercises: str, path: str | os.PathLike | None = None, seed: int | None = None,
          timeout: float = DEFAULT_TIMEOUT, show: bool | None = None, **functions) -> CheckReport:
    """Grade exercises from a notebook: `check("ex04")`, or `check("ex04", attention=my_attention)`.

    path: the exercises folder (default: exercises/ found upward from the working directory).
    show: print the report as plain text; by default only where nothing else shows it (a plain
        `python script.py`; Jupyter, IPython and the interactive prompt display the returned report).
    functions: some or all of the exercise's functions, written in the notebook, by the name the
        exercise expects; the others come from the exercise's file. They run with what they use from
        the notebook (imports, helper functions, constants), as if the cells were one file.
    """
    results = []
    try:
        seed = resolve_seed(seed)
    except ValueError:                       # a broken $TINYATTN_GRADE_SEED: grade with a fresh seed anyway
        seed = secrets.randbits(63)
    folder = Path(path) if path is not None else find_exercises()
    for ex_id in exercises or ("",):
        try:
            ex = get(str(ex_id))
        except (ValueError, AttributeError):
            why = (f"unknown exercise {ex_id!r}" if ex_id != "" else "check() needs an exercise id")
            results.append(ExerciseResult(str(ex_id), "error", 0, 0, [{
                "name": "exercise id", "passed": False, "mistake": None, "part": None,
                "message": f"{why}; the exercises are {', '.join(BY_ID)} (e.g. check(\"ex04\"))"}]))
            continue
        try:
            if functions:
                if len(exercises) != 1:
                    raise ValueError("pass functions with exactly one exercise id")
                results.append(_check_functions(ex, functions, seed, timeout, folder))
            elif folder is None:
                results.append(_single(ex, "error", "file exists", "no exercises/ folder here or in any folder "
                                       "above; pass path='...' to check()"))
            else:
                results.append(grade_file(folder / ex.filename, ex, seed, timeout))
        except Exception as e:  # noqa: BLE001 - a report, never an exception
            results.append(_single(ex, "error", "grader", f"{type(e).__name__}: {e}"))
    report = CheckReport(str(folder) if folder else "", seed, results)
    if show or show is None and not _shown_by_caller():
        print(report)
    return report
