"""The one door: a learner's folder is read as regular .py files only, never through a link.

Every case is a batch layout an instructor gets from GitHub Classroom (one folder per learner,
each a clone holding exercises/), attacked by one learner editing only their own folder.
"""
from __future__ import annotations

import csv
import os
import sys
import time
from pathlib import Path

from tinyattn.grading import grade_batch
from tinyattn.grading.cli import grade_main
from tinyattn.grading.door import MAX_FILE, read_folder
from tinyattn.grading.exercises import get

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
ISOLATION = "sandbox" if sys.platform.startswith("linux") else "process"
SEED = 5764607523034234883                      # a seed of record (grade_batch refuses one below 2**48)


def _learner(root: Path, name: str, *ex_ids: str, solved: bool = True) -> Path:
    folder = root / name / "exercises"
    folder.mkdir(parents=True)
    for ex_id in ex_ids:
        ex = get(ex_id)
        src = (SOLUTIONS if solved else ROOT / "exercises") / ex.filename
        (folder / ex.filename).write_text(src.read_text())
    return folder


def _grade(root: Path, *only: str) -> dict[str, list]:
    reports = grade_batch(root, only=list(only), seed=SEED, jobs=2, isolation=ISOLATION)
    return {Path(r.path).name: r.exercises for r in reports}


def _message(result) -> str:
    return " ".join(c["message"] for c in result.checks)


def test_links_never_reach_the_answers(tmp_path):
    root = tmp_path / "batch"
    _learner(root, "honest", "ex04", "ex13")
    # exercises/ linked to the instructor's solutions/
    (root / "whole").mkdir(parents=True)
    (root / "whole" / "exercises").symlink_to(SOLUTIONS)
    # one file linked to its solution
    one = _learner(root, "one_file", "ex13", solved=False)
    (one / "ex04_attention.py").symlink_to(SOLUTIONS / "ex04_attention.py")
    # a helper linked to the grader's reference module, imported by an otherwise empty answer
    helper = _learner(root, "helper", solved=False)
    (helper / "refs.py").symlink_to(ROOT / "tinyattn" / "grading" / "references.py")
    (helper / "ex04_attention.py").write_text("from refs import attention\n")
    (helper / "ex13_sliding_window.py").write_text((SOLUTIONS / "ex13_sliding_window.py").read_text())
    # a learner's whole folder linked to another learner's: no automatic plagiarism
    (root / "copycat").symlink_to(root / "honest")
    got = _grade(root, "ex04", "ex13")
    assert [r.status for r in got["honest"]] == ["passed", "passed"]
    for name in ("whole", "one_file", "helper", "copycat"):
        assert all(r.status == "error" and r.points == 0 for r in got[name]), (name, got[name])
    assert "symbolic link not allowed: whole/exercises" in _message(got["whole"][0])
    assert "symbolic link not allowed: one_file/exercises/ex04_attention.py" in _message(got["one_file"][0])
    # the refusal is the submission's, not one exercise's: the solved ex13 beside it is refused too
    assert "symbolic link not allowed: helper/exercises/refs.py" in _message(got["helper"][1])
    assert "symbolic link not allowed: copycat" in _message(got["copycat"][0])


def test_devices_and_fifos_are_refused_without_reading_them(tmp_path):
    root = tmp_path / "batch"
    folder = _learner(root, "zero", "ex13")
    (folder / "ex04_attention.py").symlink_to("/dev/zero")
    fifo = _learner(root, "fifo", "ex13")
    os.mkfifo(fifo / "ex04_attention.py")            # opening it would block forever
    _learner(root, "honest", "ex04")
    start = time.monotonic()
    got = _grade(root, "ex04")
    assert time.monotonic() - start < 60
    assert "symbolic link not allowed: zero/exercises/ex04_attention.py" in _message(got["zero"][0])
    assert "FIFO not allowed: fifo/exercises/ex04_attention.py" in _message(got["fifo"][0])
    assert got["honest"][0].status == "passed"


def test_sizes_and_counts_are_capped(tmp_path):
    folder = tmp_path / "big"
    folder.mkdir()
    (folder / "ex04_attention.py").write_text("x = 1\n" + "#" * MAX_FILE)
    sub = read_folder(folder, "big")
    assert sub.files == {} and any("ex04_attention.py is" in r and "at most" in r for r in sub.refused)
    many = tmp_path / "many"
    many.mkdir()
    for i in range(250):
        (many / f"m{i:03d}.py").write_text("")
    sub = read_folder(many, "many")
    assert len(sub.files) == 200 and any("more than 200 .py files" in r for r in sub.refused)


def test_a_helper_package_beside_the_exercise_is_copied_like_a_file(tmp_path):
    root = tmp_path / "batch"
    folder = _learner(root, "pkg", solved=False)
    (folder / "mylib").mkdir()
    (folder / "mylib" / "__init__.py").write_text("from .core import softmax, softmax_backward\n")
    solution = (SOLUTIONS / "ex02_softmax.py").read_text()
    (folder / "mylib" / "core.py").write_text(solution)
    (folder / "ex02_softmax.py").write_text("from mylib import softmax, softmax_backward\n")
    got = _grade(root, "ex02")
    assert got["pkg"][0].status == "passed", got["pkg"][0].checks


def test_a_helper_is_held_to_the_exercise_rules(tmp_path):
    root = tmp_path / "batch"
    folder = _learner(root, "sneaky", solved=False)
    (folder / "util.py").write_text("from tinyattn.gradcheck import numerical_grad\n")
    (folder / "ex02_softmax.py").write_text("from util import numerical_grad\n")
    got = _grade(root, "ex02")
    assert got["sneaky"][0].status == "forbidden" and "util.py" in _message(got["sneaky"][0])


def test_batch_refuses_to_fall_back_silently(tmp_path, capsys, monkeypatch):
    from tinyattn.grading import learner
    root = tmp_path / "batch"
    _learner(root, "ada", "ex13")
    problem = "sandbox step failed: unshare(CLONE_NEWUSER) (a user namespace) failed: EPERM (Operation not permitted)"
    monkeypatch.setattr(learner, "sandbox_problem", lambda: problem)
    assert grade_main(["--batch", str(root), "--only", "ex13", "--seed", "5764607523034234883"]) == 2
    err = capsys.readouterr().err
    # the real cause (the step and its errno), then what to do about that cause, and the way on without it
    assert problem in err and "refuses unprivileged user namespaces" in err and "--isolation process" in err
    # a cause that is not the kernel's refusal of user namespaces gets no advice about them
    monkeypatch.setattr(learner, "sandbox_problem", lambda: "sandbox step failed: mount bind '/x/usr' failed: "
                        "ENOENT (No such file or directory)")
    assert grade_main(["--batch", str(root), "--only", "ex13", "--seed", "5764607523034234883"]) == 2
    err = capsys.readouterr().err
    assert "ENOENT" in err and "namespace" not in err.split("ENOENT")[1]
    out = tmp_path / "grades.csv"
    assert grade_main(["--batch", str(root), "--only", "ex13", "--seed", "5764607523034234883", "--isolation", "process",
                       "--csv", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert [(r["submission"], r["ex13"], r["isolation"]) for r in rows] == [("ada", "5", "process")]


def test_learner_chosen_names_are_neutralised_in_the_csv(tmp_path):
    root = tmp_path / "batch"
    _learner(root, "=cmd|calc\x1b[2J", "ex13")
    out = tmp_path / "grades.csv"
    assert grade_main(["--batch", str(root), "--only", "ex13", "--seed", "5764607523034234883", "--csv", str(out),
                       "--isolation", ISOLATION]) == 0
    rows = list(csv.DictReader(out.open()))
    assert rows[0]["submission"] == "'=cmd|calc" and rows[0]["isolation"] == ISOLATION


def test_odd_file_names_neither_crash_nor_reach_the_terminal(tmp_path, capsys):
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "ex13_sliding_window.py").write_text((SOLUTIONS / "ex13_sliding_window.py").read_text())
    with open(os.path.join(bytes(folder), b"bad\xff\x1b[2J.py"), "w") as f:     # not UTF-8, an escape code
        f.write("x = 1\n")
    os.symlink("/dev/zero", os.path.join(bytes(folder), b"link\xfe\x1b]0;title\x07.py"))
    assert grade_main([str(folder), "--only", "ex13", "--seed", "5764607523034234883", "--isolation", ISOLATION]) == 1
    out = capsys.readouterr().out
    assert "symbolic link not allowed: " in out and "\x1b" not in out and "\x07" not in out
    out.encode("utf-8")                                # printable as it stands


def test_hard_links_never_reach_the_answers_or_an_instructors_file(tmp_path):
    # a hard link is a regular file: O_NOFOLLOW lets it through, its link count does not
    root, instructor = tmp_path / "batch", tmp_path / "instructor"
    instructor.mkdir()
    for ex_id in ("ex04", "ex13"):
        (instructor / get(ex_id).filename).write_text((SOLUTIONS / get(ex_id).filename).read_text())
    secret = instructor / "grading_notes.py"
    secret.write_text("NOTES = 'the answer key'\n")
    secret.chmod(0o600)
    _learner(root, "honest", "ex04", "ex13")
    linked = _learner(root, "linked", solved=False)           # the answer, hard-linked from the instructor's copy
    os.link(instructor / "ex04_attention.py", linked / "ex04_attention.py")
    helper = _learner(root, "helper", solved=False)           # a helper linked to the answer, imported by an empty file
    os.link(instructor / "ex13_sliding_window.py", helper / "answers.py")
    (helper / "ex13_sliding_window.py").write_text("from answers import sliding_window_mask\n")
    other = _learner(root, "other", solved=False)             # another learner's file, linked
    os.link(root / "honest" / "exercises" / "ex04_attention.py", other / "ex04_attention.py")
    leak = _learner(root, "leak", solved=False)               # a 0600 instructor file, copied into the sandbox
    os.link(secret, leak / "notes.py")
    (leak / "ex13_sliding_window.py").write_text("import notes\ndef sliding_window_mask(T, window):\n"
                                                 "    raise ValueError(notes.NOTES)\n")
    got = _grade(root, "ex04", "ex13")
    # the honest learner's own file has two names now (the other one linked it): refused too, and named
    assert "hard link not allowed: honest/exercises/ex04_attention.py has 2 names" in _message(got["honest"][0])
    assert "hard link not allowed: linked/exercises/ex04_attention.py has 2 names" in _message(got["linked"][0])
    assert "hard link not allowed: helper/exercises/answers.py" in _message(got["helper"][1])
    assert "hard link not allowed: other/exercises/ex04_attention.py" in _message(got["other"][0])
    assert "hard link not allowed: leak/exercises/notes.py" in _message(got["leak"][1])
    for name in ("linked", "helper", "other", "leak"):
        assert all(r.points == 0 for r in got[name]), (name, got[name])
        assert "the answer key" not in " ".join(_message(r) for r in got[name])


def test_a_sandbox_that_can_not_start_names_the_step_and_its_errno(monkeypatch):
    from tinyattn.grading import learner
    real = learner.sandbox_config
    monkeypatch.setattr(learner, "sandbox_config", lambda *a, **k: {**real(*a, **k), "binds": [
        *real(*a, **k)["binds"], ["/nonexistent-tinyattn-test", "/opt/x"]]})
    learner.sandbox_problem.cache_clear()
    try:
        problem = learner.sandbox_problem()
    finally:
        learner.sandbox_problem.cache_clear()
    assert problem.startswith("sandbox step failed: mount bind") and "ENOENT" in problem, problem
    assert learner.sandbox_advice(problem) == ""                    # not a user-namespace matter: no guess


def test_self_study_is_quiet_and_grades_of_record_are_warned(tmp_path, capsys, monkeypatch):
    from tinyattn.grading import learner
    from tinyattn.grading.grader import SEED_ENV
    root = tmp_path / "batch"
    folder = _learner(root, "ada", "ex13")
    monkeypatch.setattr(learner, "sandbox_problem", lambda: "sandbox step failed: pivot_root failed: EINVAL (x)")
    monkeypatch.delenv(SEED_ENV, raising=False)
    # a learner grading their own work (a terminal, or `!tinyattn grade` in a notebook): no security warning
    assert grade_main([str(folder), "--only", "ex13"]) == 0
    assert "warning" not in capsys.readouterr().err
    from tinyattn.grading.notebook import check
    check("ex13", path=folder)
    assert "warning" not in capsys.readouterr().err
    # grades of record: the Classroom's seed of record, or an instructor's batch
    monkeypatch.setenv(SEED_ENV, "123456789012345678")
    assert grade_main([str(folder), "--only", "ex13"]) == 0
    assert "warning: grades of record without the sandbox" in capsys.readouterr().err
    monkeypatch.delenv(SEED_ENV)
    assert grade_main(["--batch", str(root), "--only", "ex13", "--isolation", "process"]) == 0
    assert "warning: grades of record without the sandbox" in capsys.readouterr().err
