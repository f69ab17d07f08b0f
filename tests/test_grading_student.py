"""The grader as a student's copy runs it: fresh stubs score 0, the Classroom workflow is in place.

This file ships in the student release (`tinyattn release --student`) and runs in both
repositories: with the reference answers (the instructor's) or with recorded ones (the student's).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from tinyattn.grading import EXERCISES, oracle
from tinyattn.grading.classroom import autograding_workflow
from tinyattn.grading.grader import grade_folder, resolve_seed

ROOT = Path(__file__).resolve().parents[1]
GRADING = ROOT / "tinyattn" / "grading"


def test_fresh_stubs_score_zero_all_not_attempted(shipped_stubs):
    report = grade_folder(shipped_stubs, seed=oracle.FIXTURE_SEEDS[0])
    assert [r.status for r in report.exercises] == ["not_attempted"] * len(EXERCISES)
    assert report.total == 0 and report.max == sum(ex.points for ex in EXERCISES)


def test_the_classroom_workflow_is_the_generated_one():
    student = ROOT / ".github" / "workflows" / "classroom.yml"
    path = student if student.is_file() else ROOT / "exercises" / "classroom" / "autograding.yml"
    assert path.read_text() == autograding_workflow()


def test_a_copy_without_references_has_recorded_answers_for_every_exercise():
    if oracle.live():
        assert (GRADING / "references.py").is_file()          # the instructor's copy: answers computed live
        return
    assert not (GRADING / "references.py").exists() and not (GRADING / "wrong.py").exists()
    assert not (ROOT / "solutions").exists()
    for ex in EXERCISES:
        assert (GRADING / "fixtures" / f"{ex.id}.npz").stat().st_size > 1000, ex.id


def test_seeds_a_copy_can_grade_with():
    assert resolve_seed(oracle.FIXTURE_SEEDS[1]) == oracle.FIXTURE_SEEDS[1]
    if oracle.live():
        assert resolve_seed(12345) == 12345
    else:
        assert all(resolve_seed(None) in oracle.FIXTURE_SEEDS for _ in range(10))
        with pytest.raises(ValueError, match="recorded for the seeds"):
            resolve_seed(12345)
