"""A gradient computed numerically, not derived, earns nothing in the exercises that ask for the derived
backward (ex02, ex05, ex06, ex10), and every honest backward, however slow its Python loops, still does.

Two lines. First, these exercises run confined to real arithmetic (grading/confine.py): a complex step or dual
numbers need a value that is not a real number, and none can exist there: `1j`, `complex`, dunder methods and
underscores are refused before the code runs (the exercise is `forbidden`), and a complex or object array made
any other way (a dtype string, Python's `(-1.0) ** 0.5`) raises NotReal, the mistake `not_real`. Second, a real
numerical gradient (finite differences of a linear map, exact with a step of 1) is stopped by its cost: the
backward's CPU time is measured in a fresh process that can start no process or thread, from outside (/proc),
against 500 reference forward passes (0.25 s at least). The verdicts, not the times, are asserted.
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
# refused before any of their code runs (a complex literal, `complex`, operator methods, `os._exit`): forbidden
STATIC = ("complex_step_ex02.py", "complex_step_ex05.py", "complex_step_ex06.py", "complex_step_ex10.py",
          "batched_step_ex05.py", "dual_numbers_ex10.py", "forked_helper_ex06.py", "main_module_ex02.py")
# a complex array made past the static rules: NotReal where it is made (the mistake not_real)
NOT_REAL = ("row_complex_step_ex02.py", "pad_complex_step_ex02.py")
# every way out of the confinement refused: the routes fail, it returns zeros (wrong, so nothing earned)
ESCAPES = ("escape_confinement_ex02.py", "refused_again_ex02.py")
# a plain complex array from calling numpy.typing.NDArray (an alias of the plain ndarray): now an annotation only
ANNOTATIONS = ("typing_alias_ex02.py",)
COST = ("linear_differences_ex06.py",)       # real arithmetic, exact: only its cost gives it away
# real arithmetic at a preimage x = log y (a 6th-order stencil, one position of every row at once: ~1e-13, and
# ~480 forwards' worth, under the cost limit): wrong where y is not a softmax output
PREIMAGE = ("stencil_rows_ex02.py",)


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
    assert all(r.isolation == ISOLATION for name, r in graded.items() if name not in STATIC)   # (STATIC: never run)


def test_every_cheat_is_in_one_group():
    cheats = {f.name for f in FIXTURES if not f.name.startswith("honest")}
    assert cheats == set(STATIC + NOT_REAL + ESCAPES + ANNOTATIONS + COST + PREIMAGE)


def _cheated_part_earns_nothing(r):
    cheated = CHEATED[r.id]
    for part, got, most in r.parts:
        if cheated is None or part == cheated:
            assert got == 0, (part, r.checks)
        else:
            assert got == most, (part, r.checks)           # the honest part keeps its points
    return [c for c in r.to_json()["checks"] if not c["passed"] and not c.get("advice")]


@pytest.mark.parametrize("name", STATIC)
def test_a_complex_step_or_dual_numbers_are_refused_before_they_run(graded, name):
    r = graded[name]
    assert r.status == "forbidden" and r.points == 0, r.checks
    from tinyattn.grading.confine import RULE
    assert RULE in r.checks[0]["message"] and "line " in r.checks[0]["message"], r.checks


@pytest.mark.parametrize("name", NOT_REAL)
def test_a_complex_array_made_any_other_way_fails_where_it_is_made(graded, name):
    failed = _cheated_part_earns_nothing(graded[name])
    assert failed and all(c["mistake"] == "not_real" and MISTAKES["not_real"] in c["message"]
                          and "NotReal: complex128 values" in c["message"] for c in failed), failed


@pytest.mark.parametrize("name", ESCAPES)
def test_no_way_out_of_the_confinement_gives_a_complex_array(graded, name):
    failed = _cheated_part_earns_nothing(graded[name])
    assert failed and all("got 0, expected" in c["message"] for c in failed), failed     # every route refused


@pytest.mark.parametrize("name", ANNOTATIONS)
def test_numpy_typing_makes_no_array(graded, name):
    failed = _cheated_part_earns_nothing(graded[name])
    assert failed and all("numpy.typing.NDArray is an annotation here" in c["message"] for c in failed), failed


@pytest.mark.parametrize("name", PREIMAGE)
def test_a_gradient_taken_at_a_preimage_of_y_fails_off_the_simplex(graded, name):
    failed = _cheated_part_earns_nothing(graded[name])
    # exact to rounding wherever y is a softmax output: the check at a y off the simplex fails, named; the cost
    # check may stop it too or not (about 480 of the 500 forwards' worth allowed: no margin to rest a verdict on)
    off = [c for c in failed if c["name"] == "softmax_backward is a formula in y: it holds for a y whose slices do "
                                            "not sum to 1"]
    assert off and off[0]["mistake"] == "preimage_gradient" and MISTAKES["preimage_gradient"] in off[0]["message"]
    assert all(c in off or c["mistake"] == "numerical_gradient" for c in failed), failed


@pytest.mark.parametrize("name", COST)
def test_a_real_numerical_gradient_is_stopped_by_its_cost(graded, name):
    failed = _cheated_part_earns_nothing(graded[name])
    # named for what it is, with the hint, and only on the cost check: every value it returned was exact
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
