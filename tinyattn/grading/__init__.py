"""tinyattn.grading: the mistake-aware autograder for exercises/ (re-exports only).

    tinyattn grade [PATH] [--only ex04 ...] [--json FILE] [--seed N] [--timeout S]
    tinyattn grade --batch DIR --csv grades.csv --jobs N
    tinyattn release                      # solutions/ -> exercises/ (maintainers)
"""
from .exercises import EXERCISES, Exercise
from .mistakes import MISTAKES
from .grader import ExerciseResult, GradeReport, grade_batch, grade_folder
from .release import release, strip_solutions

__all__ = ["EXERCISES", "Exercise", "MISTAKES", "ExerciseResult", "GradeReport", "grade_batch", "grade_folder",
           "release", "strip_solutions"]
