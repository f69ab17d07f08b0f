"""A call's inputs in a file the judge makes (grading/shared_inputs.py), where users stand.

Both branches run here: the sealed memfd (Linux) and the branch macOS takes (no memfd, no seals: an unlinked file
of the judge's own), chosen by one decision, shared_inputs.SEALED. Whatever an honest learner's function does with
its arguments (returns a view of one or the argument itself, keeps it across calls, raises, runs past the deadline,
dies) its answer comes back right and the judge holds no descriptor more than before. And a platform without
fcntl (Windows) imports the grader and gets one clear error where grading would start.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from test_grading_hidden_write import ISOLATIONS, unsealed
from tinyattn.grading import shared_inputs
from tinyattn.grading.exercises import EXERCISES
from tinyattn.grading.grader import default_jobs, run_tasks
from tinyattn.grading.learner import GraderFault, LearnerDied, LearnerProcess, LearnerTimeout, resolve_isolation

ROOT = Path(__file__).resolve().parents[1]
BRANCHES = [(iso, True) for iso in ISOLATIONS if shared_inputs.SEALED] + [("process", False)]


@pytest.fixture(params=BRANCHES, ids=lambda b: f"{b[0]}-{'sealed' if b[1] else 'unsealed'}")
def branch(request, monkeypatch):
    isolation, sealed = request.param
    if not sealed:
        unsealed(monkeypatch)
    return isolation


def test_every_solution_keeps_full_marks_without_memfd_or_seals(monkeypatch):
    unsealed(monkeypatch)                       # (the pool's workers fork: they take the unsealed branch too)
    tasks = [(ROOT / "solutions" / ex.filename, ex) for ex in EXERCISES]
    results = run_tasks(tasks, 4611686018427392225, 60.0, default_jobs(), isolation="process")
    assert len(results) == 15
    for (_, ex), r in zip(tasks, results):
        assert r.isolation == "process" and r.status == "passed" and r.points == ex.points, (ex.id, r.checks)


SOURCE = '''
import os
import numpy as np
kept = []

def view(x):
    return x[::2]

def same(x):
    return x

def doubled(x):
    x *= 2
    return x

def raises(x):
    x[0] = 99.0
    raise ValueError("refused")

def keep(x):
    kept.append(x)
    return float(sum(k.sum() for k in kept))

def spin(x):
    x[0] = 5.0
    while True:
        pass

def dies(x):
    x[0] = 5.0
    os.kill(os.getpid(), 9)
'''


def _start(isolation: str, timeout: float = 30.0) -> LearnerProcess:
    proc = LearnerProcess(isolation, timeout)
    reply = proc.request({"op": "load", "files": {"ex01_scores.py": SOURCE}, "main": "ex01_scores.py",
                          "module": "m", "kind": "numpy", "blocked": [], "rule": "", "init_seed": 1})
    assert "ok" in reply, reply
    return proc


def _call(proc: LearnerProcess, fn: str, x: np.ndarray) -> dict:
    return proc.request({"op": "call", "fn": fn, "args": [x], "kwargs": {}})


def _fds() -> set[str]:
    """The judge's open descriptors (Linux /proc; macOS /dev/fd)."""
    return set(os.listdir("/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"))


def test_what_an_honest_function_does_with_its_arguments_comes_back_right_and_leaks_no_descriptor(branch):
    # its pages are remapped private after the call: a view of an argument, or the argument itself, still holds
    # what the call left there; what it keeps stays its own; 200 calls (and their failures) leave the judge's
    # descriptors as they were, call after call
    before = _fds()
    proc = _start(branch)
    during = _fds()
    try:
        for i in range(40):
            x = np.arange(6.0) + i
            r = _call(proc, "view", x)
            assert np.array_equal(r["ok"], x[::2]) and r["mutated"] == [], r
            r = _call(proc, "same", x)
            assert np.array_equal(r["ok"], x) and r["mutated"] == [], r
            r = _call(proc, "doubled", x)
            assert np.array_equal(r["ok"], 2 * x) and r["mutated"] == [[0, [6]]], r
            r = _call(proc, "raises", x)
            assert r["raised"]["message"] == "refused" and r["mutated"] == [[0, [6]]], r
            r = _call(proc, "keep", x)
            assert r["ok"] == sum(float((np.arange(6.0) + k).sum()) for k in range(i + 1)), (i, r)
            assert np.array_equal(x, np.arange(6.0) + i)           # the judge's own array: never written
            assert _fds() == during, i
    finally:
        proc.close()
    assert _fds() == before


@pytest.mark.parametrize("fn, stops", [("spin", LearnerTimeout), ("dies", LearnerDied)])
def test_a_call_stopped_mid_way_leaves_no_descriptor_behind(branch, fn, stops):
    before = _fds()
    for _ in range(3):
        proc = _start(branch, timeout=30.0)
        proc.left = 1.0 if fn == "spin" else proc.left               # (its deadline: one second from here)
        try:
            with pytest.raises(stops):
                _call(proc, fn, np.zeros(4))
        finally:
            proc.close()
        assert _fds() == before


def test_a_file_the_judge_can_not_make_is_the_graders_fault_not_the_learners(branch, monkeypatch):
    def no_space(shared):
        raise OSError(28, "No space left on device")
    proc = _start(branch)
    try:
        monkeypatch.setattr(shared_inputs, "place", no_space)
        with pytest.raises(GraderFault, match="could not lay out a call's inputs.*No space left"):
            _call(proc, "same", np.zeros(3))
    finally:
        proc.close()


# ---- a platform without fcntl, without Unix sockets (Windows) ------------------------------------------------------

def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_without_fcntl_the_grader_imports_and_grades_unsealed():
    got = _python('''
        import sys
        for name in ("fcntl", "resource", "termios", "pwd", "grp"):
            sys.modules[name] = None                  # what Windows lacks
        import tinyattn.grading
        from tinyattn.grading import check, shared_inputs
        sys.modules["resource"] = sys.modules["pwd"] = sys.modules["grp"] = sys.modules["termios"] = None
        print(shared_inputs.SEALED)
        report = check("ex03", path="solutions", show=False, seed=5)
        print(report.results[0].status, report.results[0].points, report.results[0].isolation)
    ''')
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == ["False", "passed", "5", resolve_isolation("auto")]


def test_without_unix_sockets_grading_says_where_it_can_run():
    # before the shared inputs, grading never ran there either: the judge select()ed on pipes, which Windows refuses
    got = _python('''
        import socket, sys
        sys.modules["fcntl"] = None
        del socket.send_fds                           # (Windows has neither fcntl nor SCM_RIGHTS)
        sys.platform = "linux"                        # (the name the message gives, whatever runs this test)
        from tinyattn.grading import check
        from tinyattn.grading.learner import resolve_isolation
        report = check("ex03", path="solutions", show=False, seed=5)
        r = report.results[0]
        print(r.status, r.points, r.checks[0]["message"])
        try:
            resolve_isolation("process")
        except RuntimeError as e:
            print("refused:", e)
    ''')
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    problem = ("grading needs Unix sockets that pass file descriptors (SCM_RIGHTS), which linux lacks: grade on Linux "
               "or macOS (Windows: in WSL, or the Docker recipe of exercises/README.md)")
    assert lines == [f"error 0 the grader failed on this exercise: RuntimeError: {problem}", f"refused: {problem}"]


def test_the_grade_command_says_it_as_a_usage_error_not_an_internal_one():
    got = _python('''
        import socket, sys
        del socket.send_fds                           # (Windows has no SCM_RIGHTS)
        sys.platform = "linux"
        from tinyattn.grading.cli import grade_main
        print("exit", grade_main(["solutions", "--only", "ex03"]))
    ''')
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == ["exit", "2"]
    assert got.stderr.strip() == ("tinyattn grade: error: grading needs Unix sockets that pass file descriptors "
                                  "(SCM_RIGHTS), which linux lacks: grade on Linux or macOS (Windows: in WSL, or the "
                                  "Docker recipe of exercises/README.md)")
