"""A student who has done the work runs the release's own `python -m pytest`, as its README says: it passes.

Before, the suite read exercises/ (the learner's working copy) as if it still held the stubs: once ex01 was
solved, the release's stub test, its notebook-kernel workflow test and nbval on notebook 01's check cell all
failed on correct work. The stubs as shipped now come from tests/data/stubs/ (the `shipped_stubs` fixture).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tinyattn.grading.student import build_student

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.instructor
def test_a_students_suite_passes_with_solved_exercises(tmp_path):
    student = tmp_path / "student's répo"
    build_student(student, root=ROOT)
    assert sorted(p.name for p in (student / "tests" / "data" / "stubs").glob("ex*.py")) == \
        sorted(p.name for p in (student / "exercises").glob("ex*.py"))
    for name in ("ex01_scores.py", "ex02_softmax.py", "ex04_attention.py", "ex13_sliding_window.py"):
        shutil.copy(ROOT / "solutions" / name, student / "exercises" / name)     # the student's finished work
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TINYATTN_GRADE_SEED")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider",
                           "tests/test_grading_student.py", "tests/test_course_workflow.py",
                           "notebooks/01_attention_by_hand.ipynb"],
                          cwd=student, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout.splitlines()[-1] and "failed" not in proc.stdout.splitlines()[-1]
