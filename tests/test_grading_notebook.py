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


def test_cli_without_path_finds_exercises_from_notebooks(tmp_path):
    work = tmp_path / "repo"
    (work / "notebooks").mkdir(parents=True)
    shutil.copytree(ROOT / "exercises", work / "exercises")
    proc = subprocess.run([sys.executable, "-m", "tinyattn.grading", "grade", "--only", "ex13", "-q"],
                          cwd=work / "notebooks", capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": PACKAGE_ROOT})
    assert proc.returncode == 1 and "not attempted" in proc.stdout, proc.stdout + proc.stderr
    assert str(work / "exercises") in proc.stdout


def test_untouched_stubs_give_a_deterministic_not_attempted():
    a, b = check("ex01", "ex04", path=ROOT / "exercises"), check("ex01", "ex04", path=ROOT / "exercises")
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
