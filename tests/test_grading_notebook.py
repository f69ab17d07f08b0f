"""`tinyattn.grading.check(...)` from a notebook, and finding exercises/ from notebooks/."""
from __future__ import annotations

import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from tinyattn.grading import check, find_exercises
from tinyattn.grading.learner import PACKAGE_ROOT
from tinyattn.grading.mistakes import hint

ROOT = Path(__file__).resolve().parents[1]


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def cell_attention(Q, K, V, mask=None):
    """As a learner writes it in a cell: a helper from the same notebook and a module alias."""
    s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = _softmax(s)
    return w @ V, w


def unscaled_attention(Q, K, V, mask=None):
    s = Q @ np.swapaxes(K, -1, -2)
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = _softmax(s)
    return w @ V, w


def looping_attention(Q, K, V, mask=None):
    while True:
        pass


def raising_attention(Q, K, V, mask=None):
    raise KeyError("oops")


def test_find_exercises_looks_upward(tmp_path):
    assert find_exercises(ROOT / "notebooks") == ROOT / "exercises"
    assert find_exercises(ROOT) == ROOT / "exercises"
    assert find_exercises(tmp_path) is None or find_exercises(tmp_path) != ROOT / "exercises"


def test_cli_without_path_finds_exercises_from_notebooks(tmp_path, shipped_stubs):
    work = tmp_path / "repo"
    (work / "notebooks").mkdir(parents=True)
    shutil.copytree(shipped_stubs, work / "exercises")
    proc = subprocess.run([sys.executable, "-m", "tinyattn.grading", "grade", "--only", "ex13", "-q"],
                          cwd=work / "notebooks", capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": PACKAGE_ROOT})
    assert proc.returncode == 1 and "not attempted" in proc.stdout, proc.stdout + proc.stderr
    assert str(work / "exercises") in proc.stdout


def test_untouched_stubs_give_a_deterministic_not_attempted(shipped_stubs):
    a, b = check("ex01", "ex04", path=shipped_stubs), check("ex01", "ex04", path=shipped_stubs)
    assert str(a) == str(b) == repr(a) and a._repr_html_() == b._repr_html_()
    assert [r.status for r in a.results] == ["not_attempted", "not_attempted"] and a.points == 0
    assert str(a).splitlines()[0] == "ex01 · attention scores: not attempted (0/5)"
    assert "not attempted" in a._repr_html_() and "0/10" in a._repr_html_()


def test_a_function_from_a_cell_is_graded_with_its_helpers():
    r = check("ex04", attention=cell_attention)
    assert r.passed and (r.points, r.max_points) == (10, 10), str(r)
    assert "✓ large logits" in str(r)                                 # the checks that passed are listed


def test_a_named_mistake_shows_its_hint_in_html_and_text():
    r = check("ex04", attention=unscaled_attention)
    assert r.results[0].status == "failed" and r.points == 0
    html = r._repr_html_()
    assert "FAILED" in html and "0/10" in html and "missing_scale" in html
    assert hint("missing_scale").split(".")[0].replace("'", "&#x27;") in html
    assert "likely mistake: missing_scale" in str(r)


def test_learner_mistakes_become_reports_never_exceptions(tmp_path):
    assert check("ex04", attention=looping_attention, timeout=2).results[0].status == "timeout"
    r = check("ex04", attention=raising_attention).results[0]
    assert r.status == "error" and "KeyError" in r.checks[0]["message"]
    r = check("ex04", attention=lambda Q, K, V, mask=None: (Q, K)).results[0]
    assert r.status == "error" and "lambda" in r.checks[0]["message"]
    (tmp_path / "ex04_attention.py").write_text("def attention(Q, K, V, mask=None:\n    pass\n")
    r = check("ex04", path=tmp_path).results[0]
    assert r.status == "error" and "syntax error" in r.checks[0]["message"]
    (tmp_path / "ex04_attention.py").write_text("import numpy as np\ndef attention(Q, K, V, mask=None):\n"
                                                "    return np.zeros(3), np.zeros(3)\n")
    r = check("ex04", path=tmp_path).results[0]
    assert r.status in ("failed", "error") and "has shape (3,)" in " ".join(c["message"] for c in r.checks)
    assert check("ex99").results[0].status == "error" and "unknown exercise" in str(check("ex99"))
    assert check("ex04", path=tmp_path / "nowhere").results[0].status == "error"
    assert check("ex04", softmax=cell_attention).results[0].status == "error"     # not one of ex04's names


# ---- round two: what a function from a cell may use, partial overrides, how the report reads -------------

from math import sqrt as _sqrt          # noqa: E402 - a notebook-level `from ... import` of a function
from numpy import exp as _exp           # noqa: E402 - and of a NumPy ufunc

NEG = -np.inf                           # notebook-level constants the function reads
POWER = 0.5
OFFSETS = (0.0, 0.0)


def _cell_softmax(s):
    e = _exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def globals_attention(Q, K, V, mask=None, power=POWER):
    s = Q @ np.swapaxes(K, -1, -2) / _sqrt(Q.shape[-1]) ** (2 * power) + OFFSETS[0]
    if mask is not None:
        s = np.where(mask, s, NEG)
    w = _cell_softmax(s)
    return w @ V, w


def test_a_cell_function_gets_the_notebooks_imports_helpers_and_constants():
    r = check("ex04", attention=globals_attention, show=False)
    assert r.passed and r.points == 10, str(r)


class _Opaque:
    pass


OPAQUE = _Opaque()


def opaque_attention(Q, K, V, mask=None):
    return OPAQUE, Q


def test_a_global_that_can_not_be_sent_is_named():
    r = check("ex04", attention=opaque_attention, show=False).results[0]
    assert r.status == "error" and "'OPAQUE'" in r.checks[0]["message"] and "_Opaque" in r.checks[0]["message"]


GOOD_EX02 = (ROOT / "solutions" / "ex02_softmax.py").read_text()


def forward_only_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_a_partial_override_grades_the_files_other_functions(tmp_path):
    stub_forward = GOOD_EX02.replace("    z = x - x.max(axis=axis, keepdims=True)\n", "    raise NotImplementedError\n")
    (tmp_path / "ex02_softmax.py").write_text(stub_forward)
    r = check("ex02", softmax=forward_only_softmax, path=tmp_path, show=False)
    assert r.passed and r.points == 10, str(r)
    assert "defines no function" not in str(r)
    # the file's backward still a stub: the notebook's forward earns its part, the backward is "not implemented"
    from tinyattn.grading.release import strip_solutions
    (tmp_path / "ex02_softmax.py").write_text(strip_solutions(GOOD_EX02, "ex02"))
    r = check("ex02", softmax=forward_only_softmax, path=tmp_path, show=False)
    assert r.points == 5 and r.results[0].parts == [("softmax", 5, 5), ("softmax_backward", 0, 5)], str(r)
    assert "defines no function" not in str(r)
    assert "softmax_backward(y, dy) over the last axis: not implemented" in str(r)


def test_a_partial_override_without_a_file_says_what_is_missing(tmp_path):
    r = check("ex02", softmax=forward_only_softmax, path=tmp_path, show=False)
    assert r.points == 5 and "defines no function" not in str(r), str(r)
    assert all("softmax_backward was not passed to check() and no " in c["message"]
               for c in r.results[0].checks if c["part"] == "softmax_backward" and not c["passed"])


def test_each_hint_is_shown_once():
    r = check("ex04", attention=unscaled_attention, show=False)
    text, page = str(r), r._repr_html_()
    assert len([c for c in r.results[0].checks if c["mistake"] == "missing_scale"]) >= 3
    first = hint("missing_scale").split(".")[0]
    assert text.count(first) == 1 and page.count(first.replace("'", "&#x27;")) == 1
    assert "likely mistake: missing_scale (see above)" in text


def test_an_unknown_exercise_names_the_valid_ones():
    r = check("ex99", show=False)
    assert str(r) == ("check('ex99'): unknown exercise 'ex99'; the exercises are "
                      + ", ".join(f"ex{i:02d}" for i in range(1, 16)) + ' (e.g. check("ex04"))')
    assert " · :" not in str(r) and "(0/0)" not in str(r) and "ex14" in r._repr_html_()
    assert "needs an exercise id" in str(check(show=False))


def test_check_prints_plain_text_in_a_plain_script(tmp_path, shipped_stubs):
    script = tmp_path / "s.py"
    script.write_text("from tinyattn.grading import check\nr = check('ex99')\nr = check('ex13', path=%r)\n"
                      "r = check('ex13', path=%r, show=False)\n" % (str(shipped_stubs), str(shipped_stubs)))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": PACKAGE_ROOT})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "check('ex99'): unknown exercise 'ex99'; the exercises are " + ", ".join(f"ex{i:02d}" for i in range(1, 16))
        + ' (e.g. check("ex04"))',
        "ex13 · sliding-window masks: not attempted (0/5)",
        "  still raises NotImplementedError: replace it with your code, then run this cell again"]


NAMED_TUPLES = '''import math
from typing import NamedTuple

import numpy as np


class Result(NamedTuple):
    out: np.ndarray
    weights: np.ndarray


class KVCache(NamedTuple):
    k: np.ndarray
    v: np.ndarray


def attention(Q, K, V, mask=None):
    s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    return Result(w @ V, w)


def decode_step(q_t, k_t, v_t, cache):
    if cache is not None:
        assert isinstance(cache, KVCache), type(cache)        # the cache comes back as the learner's own type
        k_t, v_t = np.concatenate([cache.k, k_t], axis=2), np.concatenate([cache.v, v_t], axis=2)
    out, _ = attention(q_t, k_t, v_t)
    return Result(out, KVCache(k_t, v_t))
'''


def test_a_named_tuple_is_a_tuple_across_the_process_boundary(tmp_path):
    (tmp_path / "ex04_attention.py").write_text(NAMED_TUPLES)
    (tmp_path / "ex14_kv_cache.py").write_text(NAMED_TUPLES)
    r = check("ex04", "ex14", path=tmp_path, show=False)
    assert [x.status for x in r.results] == ["passed", "passed"], str(r)
    assert "Remote" not in str(r) and "kv_cache_not_appended" not in str(r)


# ---- check() with some functions grades those and their exercise's file, never another exercise's ------

TWO_FUNCTION = [ex for ex in __import__("tinyattn.grading", fromlist=["EXERCISES"]).EXERCISES if len(ex.functions) == 2]


def _solution_module(ex):
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"_sol_{ex.id}", ROOT / "solutions" / ex.filename)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_function_of_each_two_function_exercise_is_graded_beside_the_repositorys_stubs(shipped_stubs):
    """The call each notebook's check cell suggests, against this repository's exercises/ (whose ex08 stub
    imports tinyattn.nn, which a NumPy exercise may not): the function passed earns its part."""
    assert {ex.id for ex in TWO_FUNCTION} >= {"ex02", "ex03", "ex06", "ex07", "ex10", "ex11"}
    assert "from tinyattn import nn" in (shipped_stubs / "ex08_multihead.py").read_text()
    for ex in TWO_FUNCTION:
        sol = _solution_module(ex)
        for name in ex.functions:
            r = check(ex.id, path=shipped_stubs, show=False, **{name: getattr(sol, name)})
            res = r.results[0]
            assert res.status != "forbidden", str(r)
            earned = dict((n, p) for n, p, _ in res.parts)
            own = [c for c in res.checks if c["part"] == name]
            other = next(f for f in ex.functions if f != name)
            # a part can only wait for the other function where its check uses YOUR other function (a backward
            # against finite differences of your forward, merge_heads(split_heads(x))): nothing else fails
            waits = [c for c in own if not c["passed"]]
            assert all(c["message"].startswith(f"not implemented yet ({ex.id}: implement {other}") for c in waits), \
                (ex.id, name, str(r))
            assert any(c["passed"] for c in own)
            if not waits:
                assert earned[name] == ex.part(name).points, (ex.id, name, str(r))
            if name == ex.functions[0]:              # the first part never waits for the second
                assert not waits, (ex.id, name, str(r))


def test_a_refusal_names_the_file_and_the_line(tmp_path):
    from tinyattn.grading.release import strip_solutions
    stub = strip_solutions((ROOT / "solutions" / "ex02_softmax.py").read_text(), "ex02")
    lines = stub.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("import numpy")) + 1
    (tmp_path / "ex02_softmax.py").write_text("\n".join(lines[:at] + ["import tinyattn.nn"] + lines[at:]) + "\n")
    shutil.copy(ROOT / "exercises" / "ex08_multihead.py", tmp_path)      # another exercise's file: not judged here
    r = check("ex02", softmax=forward_only_softmax, path=tmp_path, show=False)
    msg = r.results[0].checks[0]["message"]
    assert r.results[0].status == "forbidden"
    assert f"{tmp_path / 'ex02_softmax.py'}, line {at + 1}: tinyattn.nn" in msg, msg
    assert "ex08" not in msg, msg

    def uses_tinyattn(x, axis=-1):
        import tinyattn
        return tinyattn.softmax(x, axis)
    (tmp_path / "ex02_softmax.py").write_text(stub)
    r = check("ex02", softmax=uses_tinyattn, path=tmp_path, show=False)
    msg = r.results[0].checks[0]["message"]
    assert r.results[0].status == "forbidden" and msg.startswith("your notebook's functions, line "), msg
