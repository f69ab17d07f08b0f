"""The autograder end to end, through real subprocesses (issue 6's "must hold" list).

Kept lean: the solutions are graded once (timed), and everything else -- the fresh exercises/,
the adversarial folder and one mutant per mistake id -- goes through ONE parallel run, so the
3 s infinite-loop timeout overlaps with the other work.
"""
from __future__ import annotations

import csv
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tinyattn.grading import EXERCISES, MISTAKES, grade_folder
from tinyattn.grading.cli import grade_main
from tinyattn.grading.exercises import get
from tinyattn.grading.grader import default_jobs, run_tasks
from tinyattn.grading.release import release

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "grading_fixtures"
SEED = 1234
ADVERSARIAL_TIMEOUT = 3.0


def load_mutants() -> list[tuple[str, str, list]]:
    spec = importlib.util.spec_from_file_location("grading_mutants", FIXTURES / "mutants.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.MUTANTS


MUTANTS = load_mutants()


def _fixture(name: str) -> list:
    spec = importlib.util.spec_from_file_location("grading_mutants", FIXTURES / "mutants.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


VERDICTS, ALTERNATIVES = _fixture("VERDICTS"), _fixture("ALTERNATIVES")
FIRST_PER_ID = {}
for _m in MUTANTS:
    FIRST_PER_ID.setdefault(_m[0], _m)


def mutate(ex_id: str, subs) -> str:
    src = (ROOT / "solutions" / get(ex_id).filename).read_text(encoding="utf-8")
    for old, new, count in subs:
        assert src.count(old) == count, f"mutant for {ex_id}: {old!r} occurs {src.count(old)} times, expected {count}"
        src = src.replace(old, new)
    return src


ADVERSARIAL = {  # exercise -> (status, words the message must contain)  (points: see ADVERSARIAL_POINTS)
    "ex01": ("timeout", ["still running after 3 s"]),
    "ex02": ("error", ["sys.exit(0)", "imported"]),
    "ex03": ("failed", ["modified its input", "Build new arrays"]),     # writing into an argument costs the part
    "ex04": ("error", ["RuntimeError", "something went wrong"]),
    "ex06": ("passed", []),
    "ex07": ("failed", ["has shape"]),
    "ex09": ("error", ["exited with status 0", "os._exit"]),
    "ex11": ("forbidden", ["torch"]),
    "ex13": ("failed", ["sliding_window_mask"]),
    "ex14": ("error", ["before reporting a result"]),
}
# points per part: ex03's causal_mask is right; only apply_mask, which writes into its argument, earns nothing
ADVERSARIAL_POINTS = {"ex03": 2}


@pytest.fixture(scope="module")
def solutions_run():
    start = time.perf_counter()
    report = grade_folder(ROOT / "solutions", seed=SEED, jobs=default_jobs())
    return report, time.perf_counter() - start


@pytest.fixture(scope="module")
def combined(tmp_path_factory):
    """One parallel run: fresh exercises/, the adversarial folder, and one mutant per mistake id."""
    tmp = tmp_path_factory.mktemp("grading")
    fresh = tmp / "fresh"                       # generated here: a learner's edits in exercises/ do not matter
    release(ROOT / "solutions", fresh)
    adv = tmp / "adversarial"
    shutil.copytree(ROOT / "solutions", adv)
    for f in (FIXTURES / "adversarial").glob("ex*.py"):
        shutil.copy(f, adv / f.name)
    tasks, labels = [], []
    for ex in EXERCISES:
        tasks.append((fresh / ex.filename, ex))
        labels.append(("fresh", ex.id))
        tasks.append((adv / ex.filename, ex))
        labels.append(("adversarial", ex.id))
    for mid, (_, ex_id, subs) in FIRST_PER_ID.items():
        folder = tmp / f"mutant_{mid}"
        folder.mkdir()
        ex = get(ex_id)
        (folder / ex.filename).write_text(mutate(ex_id, subs), encoding="utf-8")
        tasks.append((folder / ex.filename, ex))
        labels.append(("mutant", mid))
    results = run_tasks(tasks, SEED, ADVERSARIAL_TIMEOUT, default_jobs())
    return {label: res for label, res in zip(labels, results)}


# ---- solutions and fresh stubs -----------------------------------------------------------------

def test_solutions_score_full_marks(solutions_run):
    report, _ = solutions_run
    failing = {r.id: [c for c in r.checks if not c["passed"]] for r in report.exercises if r.status != "passed"}
    assert not failing
    assert report.total == report.max == sum(ex.points for ex in EXERCISES)
    assert [r.id for r in report.exercises] == [ex.id for ex in EXERCISES]
    assert all(len(r.checks) >= 3 and all(c["passed"] for c in r.checks) for r in report.exercises)


def test_grading_all_solutions_takes_at_most_30_s(solutions_run):
    _, seconds = solutions_run
    print(f"graded 14 solutions in {seconds:.1f} s on {os.cpu_count()} CPUs")
    assert seconds <= 30.0


def test_fresh_exercises_score_zero_all_not_attempted(combined):
    fresh = [combined[("fresh", ex.id)] for ex in EXERCISES]
    assert [r.status for r in fresh] == ["not_attempted"] * len(EXERCISES)
    assert sum(r.points for r in fresh) == 0
    for r in fresh:
        assert all(not c["passed"] and f"{r.id}:" in c["message"] for c in r.checks), r.checks


# ---- mistakes ------------------------------------------------------------------------------------

def test_every_mistake_id_has_a_mutant():
    assert set(FIRST_PER_ID) == set(MISTAKES)


@pytest.mark.parametrize("mistake", sorted(FIRST_PER_ID))
def test_mutant_is_diagnosed_with_exactly_its_mistake(combined, mistake):
    res = combined[("mutant", mistake)]
    assert res.status in ("failed", "error") and res.points < res.max_points
    # a part the mutation does not touch keeps its points; the part it breaks earns none
    assert any(got == 0 for _, got, _ in res.parts) and res.points == sum(got for _, got, _ in res.parts)
    if mistake in ("softmax_backward_missing_term", "softmax_backward_wrong_axis"):          # ex02's backward
        assert res.parts == [("softmax", 5, 5), ("softmax_backward", 0, 5)]
    if mistake in ("mask_inverted_future_leak", "mask_excludes_diagonal"):                     # ex03's causal_mask
        assert res.parts == [("causal_mask", 0, 2), ("apply_mask", 3, 3)]
    assert res.mistakes == [mistake], [c for c in res.checks if not c["passed"]]
    hinted = [c for c in res.to_json()["checks"] if c["mistake"] == mistake]
    assert hinted and all(MISTAKES[mistake] in c["message"] for c in hinted)


def test_all_other_mutants_are_diagnosed_too():
    """The remaining mutants (same ids, other exercises), graded in one subprocess to keep the suite fast."""
    extra = [m for m in MUTANTS if FIRST_PER_ID[m[0]] is not m]
    code = (
        "import json, sys, tempfile, pathlib\n"
        "from tinyattn.grading.runner import grade_in_process\n"
        "from tinyattn.grading.exercises import get\n"
        "out = []\n"
        "for mid, ex_id, src in json.load(sys.stdin):\n"
        "    d = pathlib.Path(tempfile.mkdtemp())\n"
        "    f = d / get(ex_id).filename\n"
        "    f.write_text(src)\n"
        f"    r = grade_in_process(ex_id, str(f), {SEED})\n"
        "    out.append([mid, ex_id, list(dict.fromkeys(c['mistake'] for c in r['checks'] if c['mistake']))])\n"
        "print(json.dumps(out))\n")
    payload = json.dumps([[mid, ex_id, mutate(ex_id, subs)] for mid, ex_id, subs in extra])
    proc = subprocess.run([sys.executable, "-c", code], input=payload, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(got) == len(extra) >= 10
    wrong = [(mid, ex_id, found) for mid, ex_id, found in got if found != [mid]]
    assert not wrong


# ---- the red team's wrong passes (issue 39): each gets its verdict from the real grader -----------------------

@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    """Every VERDICTS and ALTERNATIVES entry in its own folder, graded in one parallel run at a seed of record."""
    tmp = tmp_path_factory.mktemp("verdicts")
    tasks, keys = [], []
    for i, (what, ex_id, subs, *_) in enumerate(VERDICTS + ALTERNATIVES):
        folder = tmp / f"v{i}"
        folder.mkdir()
        (folder / get(ex_id).filename).write_text(mutate(ex_id, subs))
        tasks.append((folder / get(ex_id).filename, get(ex_id)))
        keys.append(what)
    results = run_tasks(tasks, 2**62 + 1234, 120.0, default_jobs())
    return dict(zip(keys, results))


@pytest.mark.parametrize("what", [v[0] for v in VERDICTS])
def test_a_wrong_answer_the_red_team_found_gets_its_verdict(verdicts, what):
    _, ex_id, _, status, points, words = next(v for v in VERDICTS if v[0] == what)
    res = verdicts[what]
    failing = " ".join(c["name"] + ": " + c["message"] for c in res.checks if not c["passed"])
    assert res.status == status, failing
    assert {n: got for n, got, _ in res.parts if n in points} == points, (res.parts, failing)
    for w in words:
        assert w in failing, (w, failing)


@pytest.mark.parametrize("what", [a[0] for a in ALTERNATIVES])
def test_a_right_answer_written_differently_keeps_every_point(verdicts, what):
    res = verdicts[what]
    assert res.status == "passed" and res.points == res.max_points, [c for c in res.checks if not c["passed"]]


# ---- adversarial submissions ---------------------------------------------------------------------

@pytest.mark.parametrize("ex_id", sorted(ADVERSARIAL))
def test_adversarial_submission_gets_its_status(combined, ex_id):
    status, words = ADVERSARIAL[ex_id]
    res = combined[("adversarial", ex_id)]
    assert res.status == status, res.checks
    text = " ".join(c["message"] for c in res.checks)
    for w in words:
        assert w in text, text
    assert res.points == (get(ex_id).points if status == "passed" else ADVERSARIAL_POINTS.get(ex_id, 0))


def test_other_exercises_still_graded_next_to_adversarial_ones(combined):
    untouched = [ex.id for ex in EXERCISES if ex.id not in ADVERSARIAL]
    assert untouched
    assert all(combined[("adversarial", i)].status == "passed" for i in untouched)


def test_timeout_is_enforced_promptly(combined):
    assert combined[("adversarial", "ex01")].seconds < ADVERSARIAL_TIMEOUT + 3.0


# ---- the command line: exit status, --json schema, --batch CSV -------------------------------------

def test_cli_json_schema_and_exit_status(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert grade_main([str(ROOT / "solutions"), "--only", "ex13", "ex3", "--seed", "7", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert set(data) == {"total", "max", "seed", "isolation", "exercises"}
    assert (data["total"], data["max"], data["seed"]) == (10, 10, 7)       # the seed of record, for the instructor
    assert data["isolation"] in ("sandbox", "process")
    assert [e["id"] for e in data["exercises"]] == ["ex03", "ex13"]
    for e in data["exercises"]:
        assert set(e) == {"id", "status", "points", "max_points", "parts", "checks", "isolation"}
        assert e["isolation"] == data["isolation"]
        assert sum(p["points"] for p in e["parts"]) == e["points"] and sum(p["max_points"] for p in e["parts"]) == 5
        for c in e["checks"]:
            assert set(c) == {"name", "passed", "message", "mistake", "part"}
    text = capsys.readouterr().out
    assert "ex13" in text and "total 10/10" in text and "seed 7" in text

    release(ROOT / "solutions", tmp_path / "fresh")
    assert grade_main([str(tmp_path / "fresh"), "--only", "ex13", "-q"]) == 1
    assert "not attempted" in capsys.readouterr().out


def test_cli_usage_errors_are_one_line(tmp_path, capsys):
    assert grade_main([str(tmp_path / "nope")]) == 2
    assert grade_main(["--only", "ex99"]) == 2
    assert grade_main(["--timeout", "0"]) == 2
    assert grade_main(["--csv", "x.csv", str(ROOT / "solutions")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "no folder" in err and "unknown exercise 'ex99'" in err
    # a learner passing their file, or a folder without exercises, is told what PATH means
    assert grade_main([str(ROOT / "solutions" / "ex04_attention.py")]) == 2
    assert "is a file" in capsys.readouterr().err.strip().splitlines()[-1]
    assert grade_main([str(tmp_path), "--only", "ex04"]) == 2
    assert "holds none of the exercise files (ex04_attention.py)" in capsys.readouterr().err


def test_cli_grades_a_repository_root_that_holds_exercises(tmp_path, capsys):
    (tmp_path / "exercises").mkdir()
    shutil.copy(ROOT / "solutions" / "ex13_sliding_window.py", tmp_path / "exercises")
    assert grade_main([str(tmp_path), "--only", "ex13", "-q"]) == 0
    assert "total 5/5" in capsys.readouterr().out


def test_batch_mode_writes_one_csv_row_per_learner(tmp_path, capsys):
    root = tmp_path / "submissions"
    (root / "alice").mkdir(parents=True)
    (root / "bob" / "exercises").mkdir(parents=True)         # a cloned repository works too
    shutil.copy(ROOT / "solutions" / "ex13_sliding_window.py", root / "alice")
    release(ROOT / "solutions", tmp_path / "fresh")
    shutil.copy(tmp_path / "fresh" / "ex13_sliding_window.py", root / "bob" / "exercises")
    grades = tmp_path / "grades.csv"
    assert grade_main(["--batch", str(root), "--csv", str(grades), "--jobs", "2", "--only", "ex13"]) == 0
    rows = list(csv.DictReader(grades.open()))
    assert [(r["submission"], r["total"], r["ex13"], r["ex13_status"]) for r in rows] == [
        ("alice", "5", "5", "passed"), ("bob", "0", "0", "not_attempted")]
    assert {r["isolation"] for r in rows} <= {"sandbox", "process"} and len({r["isolation"] for r in rows}) == 1
    assert "private seed" in capsys.readouterr().out
