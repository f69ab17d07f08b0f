"""The self-study paragraph of the instructor's exercises/README.md (the student release drops that section,
so this file stays behind with the instructor's tests: grading/student.py's INSTRUCTOR_TESTS)."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_self_study_names_the_one_test_file_that_checks_the_committed_stubs():
    """A learner's answers in exercises/ fail exactly tests/test_release.py (measured: 17 tests there, none in
    test_grading_student, test_grading_notebook, test_course_workflow or test_grading_door); the guide says so."""
    text = (ROOT / "exercises" / "README.md").read_text(encoding="utf-8")
    self_study = text.split("**Self-study.**", 1)[1].split("**Classroom", 1)[0]
    assert "tests/test_release.py" in self_study and "release --student" in self_study
    for name in ("test_grading_student.py", "test_course_workflow.py", "test_grading_notebook.py"):
        assert "shipped_stubs" in (ROOT / "tests" / name).read_text(encoding="utf-8"), name
