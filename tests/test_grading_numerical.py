"""A gradient computed numerically, not derived, earns nothing in the exercises that ask for the derived
backward (ex02, ex05, ex06, ex10), and every honest backward, however slow its Python loops, still does.

A complex step, dual numbers or a linear map's finite differences are exact to rounding, so only their
cost gives them away: one forward pass per input entry. The cost checks measure each backward's CPU
time in a fresh process that can start no process or thread, from outside (/proc), and allow 500
reference forward passes (0.25 s at least). Every cheat here costs thousands of forward passes and is
stopped at the limit; every honest variant measured stays under 75 forward passes, two gradings at once
(see grading_fixtures/numerical/README.md). The verdicts, not the times, are asserted.
"""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from tinyattn.grading.exercises import get
from tinyattn.grading.grader import default_jobs, run_tasks
from tinyattn.grading.mistakes import MISTAKES

HERE = Path(__file__).resolve().parent / "grading_fixtures" / "numerical"
SEED = 4611686018427392225
ISOLATION = "sandbox" if sys.platform.startswith("linux") else "process"
# the part each cheat computes numerically: it earns nothing, the other part keeps its points
CHEATED = {"ex02": "softmax_backward", "ex05": None, "ex06": "matmul_backward", "ex10": "rnn_backward"}
FIXTURES = sorted(HERE.glob("*_ex[0-9][0-9].py"))


def _ex(path: Path):
    return get(re.search(r"ex\d\d", path.name).group())


def _grade(tmp, files, isolation):
    tasks = []
    for f in files:
        folder = tmp / f.stem
        folder.mkdir()
        shutil.copy(f, folder / _ex(f).filename)
        tasks.append((folder / _ex(f).filename, _ex(f)))
    results = run_tasks(tasks, SEED, 60.0, default_jobs(), isolation=isolation)
    return {f.name: r for f, r in zip(files, results)}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return _grade(tmp_path_factory.mktemp("numerical"), FIXTURES, ISOLATION)


def test_every_fixture_is_graded_in_the_sandbox(graded):
    assert len(graded) == len(FIXTURES) >= 15
    assert all(r.isolation == ISOLATION for r in graded.values())


@pytest.mark.parametrize("name", [f.name for f in FIXTURES if not f.name.startswith("honest")])
def test_a_numerical_gradient_earns_nothing(graded, name):
    r = graded[name]
    cheated = CHEATED[r.id]
    for part, got, most in r.parts:
        if cheated is None or part == cheated:
            assert got == 0, (part, r.checks)
        else:
            assert got == most, (part, r.checks)           # the honest part keeps its points
    # named for what it is, with the hint, and only on the cost check: every value it returned was exact
    failed = [c for c in r.to_json()["checks"] if not c["passed"] and not c.get("advice")]
    assert failed and all(c["mistake"] == "numerical_gradient" and "costs a few forward passes" in c["name"]
                          and MISTAKES["numerical_gradient"] in c["message"] for c in failed), failed


@pytest.mark.parametrize("name", [f.name for f in FIXTURES if f.name.startswith("honest")])
def test_an_honest_slow_backward_earns_full_marks(graded, name):
    r = graded[name]
    assert r.status == "passed" and r.points == r.max_points, [c for c in r.checks if not c["passed"]]


def test_outside_the_sandbox_the_cost_is_measured_too(tmp_path):
    """A plain child process (macOS, no namespaces) can not fork either while it is measured, and the judge
    reads its CPU time the same way."""
    got = _grade(tmp_path, [HERE / "linear_differences_ex06.py", HERE / "honest_loops_ex05.py"], "process")
    cheat, honest = got["linear_differences_ex06.py"], got["honest_loops_ex05.py"]
    assert cheat.isolation == "process" and cheat.parts == [("unbroadcast", 4, 4), ("matmul_backward", 0, 6)]
    assert honest.status == "passed", honest.checks


def test_the_exercises_state_the_limit_they_are_graded_with():
    from tinyattn.grading.checkkit import DERIVED_COST
    root = Path(__file__).resolve().parents[1]
    for ex_id in CHEATED:
        for folder in ("solutions", "exercises"):
            text = " ".join((root / folder / get(ex_id).filename).read_text().split())
            assert f"over {DERIVED_COST} forward passes' worth fails" in text, (folder, ex_id)


def test_the_yardstick_runs_numpys_blas_on_one_thread_and_gives_it_back():
    """The reference forward is timed with thread_time, so the BLAS must do all its work on this thread."""
    import time

    from tinyattn.grading import meter
    blases = meter._openblas()
    assert blases, "NumPy's OpenBLAS was not found: the yardstick would fall back to process_time"
    before = [get() for get, _ in blases]
    with meter.one_blas_thread() as clock:
        assert clock is time.thread_time and [get() for get, _ in blases] == [1] * len(blases)
    assert [get() for get, _ in blases] == before
