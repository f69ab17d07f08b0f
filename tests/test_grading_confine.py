"""The real-only confinement of the derived-backward exercises (grading/confine.py), piece by piece and in this
process: every way to a complex or object array that NumPy offers is refused (NotReal) inside it, the language
rules refuse the ways around it (underscores, frames, `type`, `1j`, builtins outside the list), and what honest
code does with arrays still works and means what it means in plain NumPy. The grading of whole submissions in
the sandbox is tests/test_grading_numerical.py."""
from __future__ import annotations

import numpy as np
import pytest

from tinyattn.grading import confine
from tinyattn.grading.exercises import EXERCISES


class Forbidden(ImportError):
    pass


def _run(code: str, files: dict[str, str] | None = None, **values):
    """Run `code` as a confined learner module would; returns its namespace."""
    files = files or {}

    def exec_file(m, text, builtins):
        m.__dict__["__builtins__"] = builtins
        exec(compile(text, m.__name__ + ".py", "exec"), m.__dict__)
    safe, to_learner, from_learner, not_real = confine.runtime(np, files, exec_file, Forbidden)
    namespace = {"__builtins__": safe, "__name__": "learner", **to_learner(values)}
    exec(compile(code, "learner.py", "exec"), namespace)
    return namespace, to_learner, from_learner


# each makes a complex or object array by a route NumPy offers (the static rules allow every line)
ROUTES = {
    "astype": "y.astype('complex128')",
    "view as complex": "y.view('complex128')",
    "dtype set in place": "z = y.copy(); z.dtype = 'complex128'",
    "a Python complex in arithmetic": "y + 1e-30 * (-1.0) ** 0.5",
    "a list of Python complex": "np.array([(-1.0) ** 0.5])",
    "a dtype argument": "np.asarray(y.tolist(), dtype='c16')",
    "the array class": "np.ndarray((2,), 'D')",
    "a ufunc's dtype": "np.exp(y, dtype='D')",
    "a ufunc on a list": "np.exp([(-1.0) ** 0.5])",
    "a ufunc's outer": "np.multiply.outer([(-1.0) ** 0.5], [1.0])",
    "a reduction's dtype": "y.sum(-1, 'D')",
    "a scalar's array methods": "y[0, 0].reshape(1).astype('D')",
    "a sum's array methods": "y.sum().reshape(1).astype('D')",
    "an index's array methods": "y.argmax().reshape(1).astype('D')",
    "nonzero's index arrays": "y.nonzero()[0].astype('D')",
    "iterating": "[v for v in y[0]][0].reshape(1).astype('D')",
    "a scalar type called on an array": "np.float64(y).astype('D')",
    "np.max's scalar": "np.max(y).reshape(1).astype('D')",
    "dot's scalar": "y[0].dot(y[0]).reshape(1).astype('D')",
    "linalg": "np.linalg.svd(y)[1].astype('D')",
    "a list's sum": "np.sum([1.0, 2.0]).reshape(1).astype('D')",
    "broadcast_arrays": "np.broadcast_arrays(y, y)[0].astype('D')",
    "a 0-d result": "(y.sum() * 2).reshape(1).astype('D')",
    "object dtype": "np.array([1.0], dtype='O')",
    # np.pad calls a function given as its mode with NumPy's own (plain) arrays: their methods are not confined
    "np.pad's mode": "got = []; np.pad(y, 1, mode=lambda v, w, i, k: got.append(v.astype('D'))); got[0]",
    # a subclass that redefines `dtype` as a float one: the checks read x.dtype, and getfield (dtype positional, a
    # view of the same bytes) made a complex array they took for float64; now they read the dtype NumPy holds
    "a subclass that redefines dtype": "class C(np.ndarray):\n    dtype = np.result_type('float64')\n"
                                       "y.view(C).getfield('complex64', 0)",
}


@pytest.mark.parametrize("route", ROUTES)
def test_no_route_makes_a_complex_or_object_array(route):
    code = "import numpy as np\n" + ROUTES[route].replace("; ", "\n")
    assert confine.problems(code) == [], "the static rules would have refused it first"
    with pytest.raises(TypeError, match="values: this exercise is real arithmetic only") as info:
        _run(code, y=np.arange(6.0).reshape(2, 3) + 1)
    assert type(info.value).__name__ == "NotReal"


@pytest.mark.parametrize("code, what", [
    ("y.__class__", ".__class__"), ("f.__globals__", ".__globals__"), ("g.gi_frame.f_back", ".gi_frame"),
    ("np.exp._f", "._f"), ("y.dtype.type", ".type"), ("np.ndarray.mro()[1]", ".mro"),
    ("(x async for x in g).ag_frame", ".ag_frame"), ("x = 1j", "1j"), ("complex(1, 2)", "complex"),
    ("getattr(y, 'astype')", "getattr"), ("eval('1')", "eval"), ("type(y)", "type"), ("open('/tmp/x')", "open"),
    ("__builtins__", "__builtins__"), ("__import__('os')", "__import__"), ("from numpy import _core", "_core"),
    ("class D:\n    def __add__(self, o):\n        return o", "__add__"), ("object", "object"),
    ("vars()", "vars"), ("globals()", "globals"),
    # names the language binds or reads without an ast.Name or ast.Attribute (they passed before)
    ("from __main__ import sys", "from __main__"), ("from _operator import attrgetter", "from _operator"),
    ("from helper import dual_add as __add__", "__add__"), ("match v:\n    case __mul__:\n        pass", "__mul__"),
    ("match e:\n    case Exception(__traceback__=tb):\n        pass", "__traceback__="),
    ("match g:\n    case K(gi_frame=f):\n        pass", "gi_frame="), ("f(__x=1)", "__x"),
    ("try:\n    pass\nexcept Exception as __e:\n    pass", "__e"), ("match v:\n    case [*__r]:\n        pass", "__r")])
def test_the_language_rules_refuse_the_ways_around(code, what):
    found = confine.problems(code)
    assert found and any(what in p for p in found), found


def test_imports_are_a_whitelist():
    for name in ("os", "ctypes", "importlib", "operator", "builtins", "numpy.ctypeslib"):
        with pytest.raises(Forbidden, match=f"import {name}: This exercise runs confined"):
            _run(f"import {name}")
    for name in ("__main__", "_operator", "_ctypes"):     # (the real import took them: __main__ held the real sys)
        with pytest.raises(Forbidden, match=f"import {name}: This exercise runs confined"):
            _run(f"from {name} import sys")
    with pytest.raises(ImportError, match="cannot import name 'update_wrapper'"):
        _run("from functools import update_wrapper")        # functools: reduce, partial, lru_cache, cache only
    ns, _, _ = _run("import math, itertools, functools, typing, collections, random, time\nfrom numpy import linalg\n"
                    "from numpy.typing import NDArray\nimport numpy.typing as npt\nimport helper\n"
                    "x = helper.twice(math.sqrt(4.0))", files={"helper.py": "def twice(v):\n    return 2 * v\n"})
    assert ns["x"] == 4.0
    ns, _, _ = _run("import sys\nfrom pkg import twice\nfrom pkg.deep import four\nimport pkg.deep\nx = twice(four)",
                    files={"pkg/__init__.py": "from .core import twice\nfrom . import deep\n",
                           "pkg/core.py": "def twice(v):\n    return 2 * v\n", "pkg/deep.py": "four = 4.0\n"})
    assert ns["x"] == 8.0 and ns["pkg"].deep.four == 4.0
    with pytest.raises(AttributeError):
        _run("import sys\nsys.modules")                    # sys: its streams and exit only
    with pytest.raises(AttributeError):
        _run("import numpy as np\nnp.load")                  # not in the list (a pickle runs code)
    with pytest.raises(AttributeError):
        _run("import numpy as np\nnp.ctypeslib")


def test_numpy_typing_names_annotate_and_make_nothing():
    # NumPy's own NDArray is an alias of the plain ndarray, and calling an alias calls its class: NDArray(shape,
    # "complex128") was a plain complex array (grading_fixtures/numerical/typing_alias_ex02.py)
    code = ("import numpy as np\nfrom typing import Optional, Tuple\nfrom numpy.typing import NDArray, ArrayLike\n"
            "def f(x: NDArray[np.float64], m: Optional[NDArray] = None, a: ArrayLike | None = None) -> "
            "Tuple[NDArray, NDArray]:\n    return x, x\nok = f(y)[0].sum()")
    assert confine.problems(code) == []
    ns, _, _ = _run(code, y=np.ones(3))
    assert float(ns["ok"]) == 3.0
    for name in ("NDArray", "ArrayLike", "DTypeLike"):
        for call in (f"{name}((2,), 'complex128')", f"np.typing.{name}((2,), 'complex128')"):
            code = f"import numpy as np\nfrom numpy.typing import {name}\n{call}"
            assert confine.problems(code) == []
            with pytest.raises(TypeError, match=f"numpy.typing.{name} is an annotation here"):
                _run(code)


def test_honest_code_works_and_means_what_it_means_in_numpy():
    code = '''
import math
import numpy as np


def softmax_backward(y: np.ndarray, dy: np.ndarray, axis: int = -1) -> np.ndarray:
    inner = (dy * y).sum(axis=axis, keepdims=True)
    return y * (dy - inner)


s = y.sum()
facts = [isinstance(y, np.ndarray), f"{s:.2f}", math.sqrt(s), int(y.argmax()), float(y[1, 2]), y[y.argmax() // 3, 0],
         y.astype(np.float32).dtype.name, np.zeros(3, dtype=np.float64).dtype.name, float(np.float64(2.5)),
         list(np.ndindex(2, 2)), y.tolist(), float(np.maximum.reduce(y.ravel())), (s / 0), y.shape, len(y),
         [r.sum() for r in y][1] == 15.0, float(np.einsum("ij,ij->", y, y)), np.linalg.norm(y) > 0,
         sorted(y[0].tolist(), reverse=True)]
'''
    y = np.arange(6.0).reshape(2, 3) + 1
    with np.errstate(divide="ignore"):
        ns, to_learner, from_learner = _run(code, y=y)
    facts = ns["facts"]
    assert facts[:9] == [True, "21.00", np.sqrt(21.0), 5, 6.0, 4.0, "float32", "float64", 2.5]
    assert facts[9:] == [[(0, 0), (0, 1), (1, 0), (1, 1)], y.tolist(), 6.0, np.inf, (2, 3), 2, True,
                         float((y * y).sum()), True, [3.0, 2.0, 1.0]]
    dy = np.linspace(-1, 1, 6).reshape(2, 3)
    got = from_learner(ns["softmax_backward"](*to_learner([y, dy])))
    assert type(got) is np.ndarray and np.array_equal(got, y * (dy - (dy * y).sum(-1, keepdims=True)))


def test_every_derived_backward_exercise_is_confined_and_says_so():
    from tinyattn.grading.static import rule
    assert {ex.id for ex in EXERCISES if ex.real_only} == {"ex02", "ex05", "ex06", "ex10"}
    assert all(confine.RULE in rule(ex) for ex in EXERCISES if ex.real_only)
    assert not any(confine.RULE in rule(ex) for ex in EXERCISES if not ex.real_only)


def test_the_solutions_keep_to_the_language_rules():
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    for ex in EXERCISES:
        if ex.real_only:
            for folder in ("solutions", "exercises"):
                assert confine.problems((root / folder / ex.filename).read_text()) == [], (folder, ex.id)


def test_a_confined_exercise_can_not_import_another_exercises_file(tmp_path):
    """Another exercise's file is judged by that exercise's rules, not by these: ex01_scores.py may say
    `x.__class__.__mro__[1]` (the plain ndarray class). ex02 can not import it; its own helpers it can."""
    import shutil
    import sys
    from pathlib import Path

    from tinyattn.grading.exercises import get
    from tinyattn.grading.grader import grade_file
    folder = Path(__file__).resolve().parent / "grading_fixtures" / "numerical" / "neighbour"
    for f in folder.glob("*.py"):
        shutil.copy(f, tmp_path / f.name)
    isolation = "sandbox" if sys.platform.startswith("linux") else "process"
    r = grade_file(tmp_path / "ex02_softmax.py", get("ex02"), 4611686018427392225, 60.0, isolation)
    assert r.status == "forbidden" and r.points == 0
    assert "import ex01_scores: This exercise runs confined" in r.checks[0]["message"], r.checks
    # the same escape moved into a helper file of its own is read by the static rules first
    (tmp_path / "helpers.py").write_text((folder / "ex01_scores.py").read_text())
    (tmp_path / "ex02_softmax.py").write_text((folder / "ex02_softmax.py").read_text().replace("ex01_scores", "helpers"))
    r = grade_file(tmp_path / "ex02_softmax.py", get("ex02"), 4611686018427392225, 60.0, isolation)
    assert r.status == "forbidden" and "helpers.py, line" in r.checks[0]["message"] and "__class__" in r.checks[0]["message"]
