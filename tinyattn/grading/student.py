"""`tinyattn release --student OUT`: the repository a student is given, without the answers.

What goes in: the package (less `references.py` and `wrong.py`, whose functions are the answers),
the exercise stubs, the notebooks, the tests that need no answers, the Classroom workflow at
`.github/workflows/classroom.yml`, a student README, and `tinyattn/grading/fixtures/exNN.npz`:
every expected value and known-wrong variant the checks ask for, recorded here by running each
exercise's checks on the solutions at the seeds in `oracle.FIXTURE_SEEDS`. Checks that compare
a learner's backward with finite differences of their own forward need no recording at all.

What stays out: `solutions/`, the reference and variant code, the grader's own tests (they
grade the solutions) and the instructor's CI. The instructor keeps this repository: `--batch`
grades with the full references at a private seed.
"""
from __future__ import annotations

import fnmatch
import importlib.util
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np

from . import oracle
from .classroom import autograding_workflow
from .exercises import EXERCISES
from .release import ReleaseError, planned

WORKFLOW = ".github/workflows/classroom.yml"
ANSWERS = ("tinyattn/grading/references.py", "tinyattn/grading/wrong.py")
# what a student repository holds, from the instructor's (exercises/ is generated from solutions/)
TOP_LEVEL = ("tinyattn", "notebooks", "tests", "benchmarks", "conftest.py", "pyproject.toml", "LICENSE")
SKIP = ("__pycache__", "*.pyc", "*.egg-info", ".ipynb_checkpoints", ".pytest_cache")
FIXTURES = "tinyattn/grading/fixtures"
# tests that grade the solutions or call the references: the instructor's, not the student's. Whole files by
# name here; single tests by the marker `@pytest.mark.instructor`, which the release's pytest deselects
# (STUDENT_ADDOPTS in its pyproject.toml): the release's suite is exactly the tests that hold without answers
INSTRUCTOR_MARK = "instructor"
STUDENT_ADDOPTS = f"-m 'not {INSTRUCTOR_MARK}' "
INSTRUCTOR_TESTS = ("test_grading*.py", "test_release.py", "test_release_*.py", "test_review_learner_errors.py",
                    "grading_fixtures",
                    "test_declared_versions.py")  # (checks the project's .ci/run, which the release does not ship)
STUDENT_TESTS = ("test_grading_student.py",)      # ...except these, written to pass in both repositories


def _skipped(rel: str) -> bool:
    parts = rel.split("/")
    if any(fnmatch.fnmatch(p, pat) for p in parts for pat in SKIP) or rel in ANSWERS or rel.startswith(FIXTURES):
        return True
    if parts[0] == "tests" and len(parts) >= 2 and parts[1] not in STUDENT_TESTS:
        return any(fnmatch.fnmatch(parts[1], pat) for pat in INSTRUCTOR_TESTS)
    return False


def _files(root: Path) -> list[str]:
    """The files git tracks in the instructor's repository, and nothing else: no untracked backup of
    the references, no scratch answer, no build output. ReleaseError where `root` is not a git checkout."""
    try:
        listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached"],
                                capture_output=True, check=True, timeout=60).stdout.decode().split("\0")
    except (OSError, subprocess.SubprocessError) as e:
        raise ReleaseError(f"the student release is built from the files git tracks, and {root} is not a git "
                           f"checkout (or git is missing): {e}") from None
    return sorted(f for f in listed if f and (root / f).is_file() and not (root / f).is_symlink())


def _copy_tree(root: Path, out: Path) -> list[str]:
    copied = []
    for rel in _files(root):
        if rel.split("/")[0] not in TOP_LEVEL or _skipped(rel):
            continue
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
        copied.append(rel)
    return copied


def _load_solution(path: Path, ex_id: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(f"_solution_{ex_id}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def record_fixtures(solutions: Path, out_dir: Path, seeds: tuple[int, ...] = oracle.FIXTURE_SEEDS) -> dict[str, int]:
    """Run every exercise's checks on the solutions at `seeds`, recording each oracle call; write
    out_dir/exNN.npz. Returns {exercise id: number of recorded calls}. Fails if a solution fails."""
    from . import checks as checks_pkg
    from .checkkit import Session

    if not oracle.live():
        raise ReleaseError("recording fixtures needs the reference implementation (tinyattn/grading/references.py)")
    counts = {}
    for ex in EXERCISES:
        module = _load_solution(solutions / ex.filename, ex.id)
        with oracle.record() as calls:
            for seed in seeds:
                s = Session(module=module, path=str(solutions / ex.filename), rng=np.random.default_rng([seed, int(ex.id[2:])]))
                checks_pkg.load(ex.id).run(s)
                bad = [(r.name, r.message) for r in s.finish() if not r.passed]
                if bad:
                    raise ReleaseError(f"{ex.filename} fails its own checks at seed {seed}: {bad[0]}")
        oracle.save(calls, out_dir / f"{ex.id}.npz")
        counts[ex.id] = len(calls)
    return counts


# the sections of exercises/README.md that are about solutions/, batch grading or maintenance
INSTRUCTOR_SECTIONS = ("Self-study or classroom", "For maintainers", "Grades you can trust (for instructors)")


def student_guide(text: str) -> str:
    """exercises/README.md without its instructor sections (each runs from its '## ' title to the next)."""
    kept, keep = [], True
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            keep = line[3:].strip() not in INSTRUCTOR_SECTIONS
        if keep:
            kept.append(line)
    return "".join(kept).rstrip("\n") + "\n\n"


STUDENT_TAIL = """## Submitting

Push your work: the Classroom workflow (`.github/workflows/classroom.yml`) runs one test per
part of each exercise (`tinyattn grade --only exNN --part NAME`), worth that part's points. This copy grades
with answers recorded for the seeds {seeds}; your instructor may grade again with other
inputs, so write code that is right, not code that matches the recorded answers.
"""

STUDENT_README = """# tinyattn: build attention yourself

Your copy of the tinyattn course: a from-scratch NumPy framework for attention (`tinyattn/`), {notebooks}
notebooks that explain each idea (`notebooks/`), and {exercises} exercises you implement
(`exercises/`), each graded with feedback that names the likely misconception.

## Quickstart

```bash
python -m pip install -e . && tinyattn grade --only ex01
python -m pip install -e ".[dev]" && python -m pytest
```

The first command installs the package and grades the first exercise (it says `not attempted`
until you write it). The second installs the test tools and runs the test suite, the notebooks
included.

## Opening the notebooks

```bash
python -m pip install -e ".[course]"
jupyter lab          # in this folder, not in notebooks/
```

The `course` extra brings JupyterLab. Each notebook's setup cell moves its kernel to this folder,
so `%load exercises/ex04_attention.py`, importing an exercise after
`sys.path.insert(0, "exercises")`, `check("ex04")` and `!tinyattn grade --only ex04` work in a
cell as written (`exercises/README.md`, "Working in Jupyter").

## Working on the exercises

Read `exercises/README.md` first: it explains the files, the report and the rules. In short:
replace each `raise NotImplementedError(...)` with your code, then run

```bash
tinyattn grade                 # every exercise
tinyattn grade --only ex04     # one exercise
```

A failing exercise lists the checks that passed, the first thing that went wrong, a hint when
the grader recognises the mistake, and the end of what your code printed.

This copy grades against recorded answers: inputs and expected outputs fixed at release time for
the seeds {seeds} (`--seed N` picks one; by default one is drawn at random), and your backward
passes against finite differences of your own forward passes. There are no reference solutions
in this repository.

## Submitting (GitHub Classroom)

Every push runs `.github/workflows/classroom.yml`: it installs the package once and runs one
test per part of each exercise (`tinyattn grade --only exNN --part NAME`), worth that part's
points, then writes a summary table on the run's page. Your instructor
may grade the final submission again with other inputs: write code that is right, not code that
matches the recorded answers.
"""


def build_student(out: str | Path, root: str | Path | None = None, seeds: tuple[int, ...] = oracle.FIXTURE_SEEDS,
                  force: bool = False) -> dict:
    """Write the student repository to `out` (which must not exist, or be empty, unless force=True)."""
    root = Path(root) if root is not None else Path(__file__).resolve().parents[2]
    out = Path(out)
    solutions = root / "solutions"
    if not solutions.is_dir():
        raise ReleaseError(f"no folder {solutions}: the student release is built from the instructor's repository")
    if out.exists() and any(out.iterdir()):
        if not force:
            raise ReleaseError(f"{out} is not empty; pass --force to replace it")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    copied = _copy_tree(root, out)
    for rel, text in planned(solutions).items():                      # the stubs, from solutions/
        if rel.endswith(".py"):                                        # the learner's copy, and the tests' own
            for folder in (out / "exercises", out / "tests" / "data" / "stubs"):
                folder.mkdir(parents=True, exist_ok=True)
                (folder / rel).write_text(text, encoding="utf-8")
    readme = root / "exercises" / "README.md"
    if readme.is_file():
        tail = STUDENT_TAIL.format(seeds=", ".join(map(str, seeds)))
        (out / "exercises" / "README.md").write_text(student_guide(readme.read_text(encoding="utf-8")) + tail,
                                                     encoding="utf-8")
    (out / WORKFLOW).parent.mkdir(parents=True, exist_ok=True)
    (out / WORKFLOW).write_text(autograding_workflow(), encoding="utf-8")
    n_notebooks = len(list((out / "notebooks").glob("*.ipynb")))   # the counts the README states: what was shipped
    (out / "README.md").write_text(STUDENT_README.format(seeds=", ".join(map(str, seeds)), notebooks=_words(n_notebooks),
                                                         exercises=_words(len(EXERCISES))), encoding="utf-8")
    _deselect_instructor_tests(out / "pyproject.toml")
    ignore = (root / ".gitignore").read_text(encoding="utf-8") if (root / ".gitignore").is_file() else ""
    (out / ".gitignore").write_text(ignore.rstrip("\n") + "\n!tinyattn/grading/fixtures/*.npz\n", encoding="utf-8")
    counts = record_fixtures(solutions, out / "tinyattn" / "grading" / "fixtures", seeds)
    return {"files": len(copied) + 2 * len(EXERCISES) + 3, "fixtures": counts}


def _words(n: int) -> str:
    """A count as the README writes it: 'eleven', or '21' past twenty."""
    words = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
             "sixteen seventeen eighteen nineteen twenty").split()
    return words[n] if n < len(words) else str(n)


def _deselect_instructor_tests(pyproject: Path) -> None:
    """The release's `python -m pytest` leaves out every test marked `instructor` (it needs the answers)."""
    text = pyproject.read_text(encoding="utf-8")
    key = 'addopts = "'
    if text.count(key) != 1 or f"markers = [\"{INSTRUCTOR_MARK}:" not in text:
        raise ReleaseError(f"{pyproject} has no single [tool.pytest.ini_options] addopts = \"...\" and "
                           f"'{INSTRUCTOR_MARK}' marker to build the student's test command from")
    pyproject.write_text(text.replace(key, key + STUDENT_ADDOPTS), encoding="utf-8")


def main_student(out: str, force: bool = False) -> int:
    try:
        info = build_student(out, force=force)
    except (ReleaseError, OSError) as e:
        print(f"tinyattn release: error: {e}", file=sys.stderr)
        return 2
    size = sum(p.stat().st_size for p in (Path(out) / "tinyattn" / "grading" / "fixtures").glob("*.npz"))
    print(f"student repository written to {out}/: {info['files']} files, recorded answers for "
          f"{sum(info['fixtures'].values())} checks' calls at seeds {', '.join(map(str, oracle.FIXTURE_SEEDS))} "
          f"({size / 2**20:.1f} MiB); no solutions/, no reference code")
    return 0
