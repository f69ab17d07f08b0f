"""`tinyattn release --student`: the student's repository holds no answers, yet its feedback stays mistake-aware.

Built once into a temporary folder; its grader then runs in subprocesses with only that folder on
the path, so nothing from this repository (references.py, wrong.py, solutions/) can help it.
"""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tinyattn.grading import EXERCISES, oracle
from tinyattn.grading.cli import release_main
from tinyattn.grading.classroom import autograding_workflow
from tinyattn.grading.release import BEGIN, END
from tinyattn.grading.student import ANSWERS, build_student

ROOT = Path(__file__).resolve().parents[1]
SEEDS = oracle.FIXTURE_SEEDS


@pytest.fixture(scope="module")
def student(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("student") / "repo"
    build_student(out, root=ROOT)
    return out


def _run(student: Path, code: str, payload=None, cwd: Path | None = None) -> dict:
    """Run `code` with ONLY the student repository importable (no PYTHONPATH from this one)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TINYATTN_GRADE_SEED")}
    env.update(PYTHONPATH=str(student), PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, "-c", code], input=json.dumps(payload), capture_output=True, text=True,
                          env=env, cwd=cwd or student, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---- the answers are absent --------------------------------------------------------------------------------

def test_no_solutions_and_no_reference_code(student):
    assert not (student / "solutions").exists()
    for rel in ANSWERS:
        assert not (student / rel).exists(), rel
    assert (student / ".github" / "workflows" / "classroom.yml").read_text() == autograding_workflow()
    assert "!tinyattn/grading/fixtures/*.npz" in (student / ".gitignore").read_text()   # the fixtures get committed
    package = {p: p.read_text() for p in (student / "tinyattn").rglob("*.py")}
    # not one reference or variant function, by name or by body
    for rel in ANSWERS:
        source = (ROOT / rel).read_text()
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef):
                body = ast.get_source_segment(source, node.body[-1]) if len(node.body) > 1 else None
                for path, text in package.items():
                    assert f"def {node.name}(" not in text or "grading" not in path.parts, (node.name, path)
                    if body and len(body) > 40:
                        assert body not in text, (node.name, path)


def test_no_line_of_a_solution_reaches_the_student(student):
    hidden = set()
    for ex in EXERCISES:
        inside = False
        for line in (ROOT / "solutions" / ex.filename).read_text().splitlines():
            if line.strip().startswith(BEGIN):
                inside = True
            elif line.strip().startswith(END):
                inside = False
            elif inside and len(line.strip()) > 30:
                hidden.add(line.strip())
    assert len(hidden) > 50
    for folder in ("exercises", "tinyattn/grading"):      # (the library's own tests check its ops in NumPy)
        for path in (student / folder).rglob("*.py"):
            lines = {line.strip() for line in path.read_text().splitlines()}
            assert not hidden & lines, (path, sorted(hidden & lines)[:3])


def test_the_student_readmes_point_nowhere_near_the_answers(student):
    for readme in (student / "README.md", student / "exercises" / "README.md"):
        text = readme.read_text()
        assert "solutions/" not in text and "--batch" not in text and "python -m pytest" in (
            student / "README.md").read_text()
        assert ", ".join(map(str, SEEDS)) in text
    guide = (student / "exercises" / "README.md").read_text()
    assert "## Rules the grader enforces" in guide and "## Submitting" in guide
    assert "## For maintainers" not in guide and "## Self-study or classroom" not in guide


def test_the_student_readme_counts_what_the_release_ships(student):
    # it once said "ten notebooks" and "fourteen exercises" while the release held eleven and fifteen
    words = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen".split()
    head = (student / "README.md").read_text().split("## ", 1)[0]
    stated = dict((kind, words.index(w)) for w, kind in re.findall(r"\b(\w+)\s+(notebooks|exercises) ", head))
    assert stated == {"notebooks": len(list((student / "notebooks").glob("*.ipynb"))),
                      "exercises": len(list((student / "exercises").glob("ex[0-9][0-9]_*.py")))}, head


def test_the_instructors_tests_stay_behind(student):
    shipped = {p.name for p in (student / "tests").iterdir()}
    assert "test_grading_student.py" in shipped and "conftest.py" in shipped
    assert not {"test_grading.py", "test_release.py", "test_release_student.py", "grading_fixtures"} & shipped
    assert not (student / ".ci").exists() and "test_declared_versions.py" not in shipped  # (it reads .ci/run)
    assert not [n for n in shipped if n.startswith("test_grading") and n != "test_grading_student.py"]


# ---- the student's grader, from recorded answers ------------------------------------------------------------

GRADE = """
import json, sys
from tinyattn.grading import EXERCISES, oracle
from tinyattn.grading.runner import grade_in_process
assert not oracle.live()
out = {}
for name, folder, seed in json.load(sys.stdin):
    results = [grade_in_process(ex.id, f"{folder}/{ex.filename}", seed) for ex in EXERCISES]
    out[name] = [sum(ex.points for ex, r in zip(EXERCISES, results) if r["status"] == "passed"),
                 sum(ex.points for ex in EXERCISES), [r["status"] for r in results]]
print(json.dumps(out))
"""


def test_solutions_score_full_marks_and_stubs_zero_at_every_recorded_seed(student):
    jobs = [[f"solutions@{s}", str(ROOT / "solutions"), s] for s in SEEDS] + [["stubs", str(student / "exercises"), SEEDS[0]]]
    got = _run(student, GRADE, jobs)
    for s in SEEDS:
        total, most, statuses = got[f"solutions@{s}"]
        assert total == most and set(statuses) == {"passed"}, (s, statuses)
    total, _, statuses = got["stubs"]
    assert total == 0 and statuses == ["not_attempted"] * len(EXERCISES)


MUTANTS = """
import json, sys, tempfile, pathlib
from tinyattn.grading.runner import grade_in_process
from tinyattn.grading.exercises import get
out = []
for mid, ex_id, src, seed in json.load(sys.stdin):
    f = pathlib.Path(tempfile.mkdtemp()) / get(ex_id).filename
    f.write_text(src)
    r = grade_in_process(ex_id, str(f), seed)
    unrecorded = [c["message"] for c in r["checks"] if "recorded answers" in c["message"]]
    out.append([mid, ex_id, seed, list(dict.fromkeys(c["mistake"] for c in r["checks"] if c["mistake"])), unrecorded])
print(json.dumps(out))
"""


def test_every_mutant_is_named_from_the_recorded_answers(student):
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from grading_fixtures.mutants import MUTANTS as ALL
        from test_grading import mutate
    finally:
        sys.path.remove(str(ROOT / "tests"))
    payload = [[mid, ex_id, mutate(ex_id, subs), SEEDS[i % len(SEEDS)]] for i, (mid, ex_id, subs) in enumerate(ALL)]
    got = _run(student, MUTANTS, payload)
    assert len(got) == len(ALL)
    assert [g for g in got if g[3] != [g[0]] or g[4]] == []


def test_correct_alternatives_pass_from_the_recorded_answers(student, tmp_path):
    # the blind-spot tests' correct alternatives, judged by the student's grader at its recorded seeds
    shutil.copy(ROOT / "tests" / "test_grading_blind_spots.py", tmp_path / "alternatives.py")
    code = f"""
import json, sys
sys.path.insert(0, {str(tmp_path)!r})
import alternatives as a
out = []
for seed in {list(SEEDS)!r}:
    cases = [("ex02", dict(softmax=a.softmax_logsumexp, softmax_backward=a.good_backward)),
             ("ex02", dict(softmax=a.softmax_math_exp_stable, softmax_backward=a.good_backward)),
             ("ex04", dict(attention=a._attention_with(lambda s, ax: s.max(ax, keepdims=True)))),
             ("ex05", dict(attention_backward=a._backward(einsum=True))),
             ("ex08", dict(MultiHeadAttention=a._MHA)),
             ("ex12", dict(flash_attention_forward=a.flash_key_tiles)),
             ("ex12", dict(flash_attention_forward=a.flash_query_and_key_tiles)),
             ("ex14", dict(decode_step=a._decoder(lists=True)))]
    for ex_id, fns in cases:
        out.append([ex_id, seed, [(r.name, r.message) for r in a.grade(ex_id, seed, **fns) if not r.passed]])
print(json.dumps(out))
"""
    got = _run(student, code)
    assert len(got) == 8 * len(SEEDS)
    assert [g for g in got if g[2]] == []


# ---- another CPU: the answers were recorded with one machine's kernels, the student grades with another's ----

# NumPy's SIMD kernels and OpenBLAS's kernel are chosen per CPU (and the BLAS's results depend on its threads):
# switching this machine's off gives the last bits another machine would. The release in `student` was
# recorded with whatever this process runs; the grading below runs with the others.
OTHER_KERNELS = {"OPENBLAS_CORETYPE": "Prescott", "NPY_DISABLE_CPU_FEATURES": "X86_V3", "OPENBLAS_NUM_THREADS": "1"}


def test_recorded_answers_are_found_on_another_cpus_kernels(student, tmp_path):
    """Every solution earns full marks at every recorded seed when the student's NumPy and BLAS compute other
    last bits than the instructor's did (a Classroom runner against the laptop the release was built on). The
    answers are found by where each call is made, not by its arguments' bits: ex06's wrong-variant calls take
    dC @ B.T, which another BLAS kernel rounds differently, and once found no recorded answer there."""
    repo = tmp_path / "repo"
    shutil.copytree(student, repo)
    for ex in EXERCISES:
        shutil.copy(ROOT / "solutions" / ex.filename, repo / "exercises" / ex.filename)
    here = {k: os.environ.get(k) for k in OTHER_KERNELS}
    other = {k: None for k in OTHER_KERNELS} if any(here.values()) else OTHER_KERNELS  # (CI runs both ways)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TINYATTN_GRADE_SEED", *OTHER_KERNELS)}
    env.update({k: v for k, v in other.items() if v is not None}, PYTHONWARNINGS="ignore")
    for seed in SEEDS:
        proc = subprocess.run([sys.executable, "-m", "tinyattn", "grade", "--seed", str(seed)], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0 and "FixtureMissing" not in proc.stdout, proc.stdout[-3000:]
        total = sum(ex.points for ex in EXERCISES)
        assert f"total {total}/{total}" in proc.stdout, proc.stdout[-3000:]


# ---- the Classroom workflow in the command grader's stripped environment -------------------------------------

def test_classroom_steps_pass_in_a_stripped_environment(student, tmp_path):
    """Each step's `command:` with `env -i PATH=... HOME=...`, from the repository root, on solved exercises.

    The workflow's install step (`pip install -e .`) is stood in for by the console script it would
    create: a `tinyattn` on PATH that imports the student repository's package."""
    repo = tmp_path / "classroom"
    shutil.copytree(student, repo)
    for ex in EXERCISES:
        shutil.copy(ROOT / "solutions" / ex.filename, repo / "exercises" / ex.filename)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "tinyattn"
    entry = bin_dir / "tinyattn_entry.py"
    entry.write_text(f"import sys\nsys.path.insert(0, {str(repo)!r})\nfrom tinyattn.cli import main\nsys.exit(main())\n")
    # a shell wrapper, not a #! line: the interpreter's path may hold a space (a venv in "/tmp/a venv")
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{entry}" "$@"\n')
    script.chmod(0o755)
    steps = [line.split("command: ", 1)[1] for line in autograding_workflow().splitlines()
             if line.strip().startswith("command: ")]
    assert len(steps) == sum(len(ex.parts) for ex in EXERCISES)
    home = tmp_path / "home"
    home.mkdir()
    for command in steps:
        proc = subprocess.run(["env", "-i", f"PATH={bin_dir}:/usr/bin:/bin", f"HOME={home}", "sh", "-c", command],
                              cwd=repo, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, (command, proc.stdout[-2000:], proc.stderr[-2000:])
        assert " passed " in proc.stdout and "recorded" not in proc.stderr, command
    # and a step on an unsolved exercise fails, as the command grader needs
    shutil.copy(student / "exercises" / "ex04_attention.py", repo / "exercises" / "ex04_attention.py")
    ex04 = [c for c in steps if "--only ex04 " in c]
    assert ex04 == ["tinyattn grade --only ex04 --part attention", "tinyattn grade --only ex04 --part masks"]
    proc = subprocess.run(["env", "-i", f"PATH={bin_dir}:/usr/bin:/bin", f"HOME={home}", "sh", "-c", ex04[0]],
                          cwd=repo, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "not attempted" in proc.stdout
    # partial credit: ex02's forward solved, its backward a stub -> the softmax test passes, the backward's fails
    stub = (student / "exercises" / "ex02_softmax.py").read_text()
    solved = (ROOT / "solutions" / "ex02_softmax.py").read_text()
    fwd = solved[solved.index("def softmax("):solved.index("def softmax_backward(")]
    (repo / "exercises" / "ex02_softmax.py").write_text(stub[:stub.index("def softmax(")] + fwd
                                                         + stub[stub.index("def softmax_backward("):])
    rcs = {c: subprocess.run(["env", "-i", f"PATH={bin_dir}:/usr/bin:/bin", f"HOME={home}", "sh", "-c", c], cwd=repo,
                             capture_output=True, text=True, timeout=300).returncode
           for c in steps if "--only ex02 " in c}
    assert rcs == {"tinyattn grade --only ex02 --part softmax": 0, "tinyattn grade --only ex02 --part softmax_backward": 1}


def test_release_student_command(tmp_path, capsys):
    out = tmp_path / "s"
    (out / "x").mkdir(parents=True)
    assert release_main(["--student", str(out)]) == 2
    assert "not empty" in capsys.readouterr().err


# ---- the release's own test suite: exactly the tests that hold without the answers --------------------------

def _pytest_in(student: Path, *args: str, timeout: float) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TINYATTN_GRADE_SEED")}
    return subprocess.run([sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider"], cwd=student, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_the_release_deselects_the_tests_that_need_the_answers(student):
    """Its pytest.ini options leave out every `@pytest.mark.instructor` test; the rest collects cleanly."""
    proc = _pytest_in(student, "tests", "--collect-only", "-n", "0", timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    collected = proc.stdout
    assert "test_exercise_workflow_from_a_notebook_kernel" in collected
    assert "test_a_solved_exercise_passes_from_a_notebook_kernel" not in collected
    assert "test_the_readme_fits_its_budget" not in collected  # the repository's README tests stay behind
    assert "deselected" in collected.splitlines()[-1]
    here = subprocess.run([sys.executable, "-m", "pytest", "tests/test_course_workflow.py", "--collect-only",
                           "-n", "0", "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert here.returncode == 0, here.stdout[-2000:]
    assert "test_a_solved_exercise_passes_from_a_notebook_kernel" in here.stdout    # the instructor runs it


def test_the_release_runs_its_course_tests_green(student):
    """The release's tests that exercise the course as a learner does (the kernel workflow, the student grader),
    run inside it, bounded in time. (The whole of its suite: CI runs `python -m pytest` inside a built release.)"""
    proc = _pytest_in(student, "tests/test_course_workflow.py", "tests/test_grading_student.py", "-n", "0",
                      timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout.splitlines()[-1] and "deselected" in proc.stdout.splitlines()[-1]


CHECK_ONE = """
import importlib.util, json, sys
from tinyattn.grading import EXERCISES, check, oracle
assert not oracle.live()
solutions, exercises, seed = json.load(sys.stdin)
out = {}
for ex in EXERCISES:
    if len(ex.functions) != 2:
        continue
    spec = importlib.util.spec_from_file_location("sol_" + ex.id, f"{solutions}/{ex.filename}")
    sol = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sol)
    name = ex.functions[0]
    r = check(ex.id, path=exercises, seed=seed, show=False, **{name: getattr(sol, name)}).results[0]
    out[ex.id] = [r.status, [list(p) for p in r.parts]]
print(json.dumps(out))
"""


def test_check_with_one_function_in_the_student_release(student):
    """`check("ex02", softmax=f)` beside the release's own stubs (ex08's imports tinyattn.nn): the function passed
    earns its part, from the recorded answers."""
    got = _run(student, CHECK_ONE, [str(ROOT / "solutions"), str(student / "exercises"), SEEDS[0]])
    assert set(got) == {ex.id for ex in EXERCISES if len(ex.functions) == 2}
    for ex_id, (status, parts) in got.items():
        first = parts[0]
        assert status != "forbidden" and first[1] == first[2], (ex_id, status, parts)
