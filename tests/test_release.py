"""solutions/ -> exercises/: regions become NotImplementedError stubs; exercises/ must be up to date."""
from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

from tinyattn.grading import EXERCISES
from tinyattn.grading.classroom import autograding_workflow
from tinyattn.grading.cli import release_main
from tinyattn.grading.release import BEGIN, END, ReleaseError, release, strip_solutions

ROOT = Path(__file__).resolve().parents[1]


def test_committed_exercises_are_up_to_date_with_solutions():
    changed = release(ROOT / "solutions", ROOT / "exercises", check=True)
    assert changed == [], (f"{changed} in exercises/ differ from what solutions/ generates. Maintainers: run "
                           "`tinyattn release`. Learners: this file's tests check the stubs this repository ships, so "
                           "they fail once your answers are in exercises/ (see exercises/README.md, Self-study; "
                           "grade your work with `tinyattn grade`)")


def test_release_writes_every_file_into_an_empty_folder(tmp_path):
    changed = release(ROOT / "solutions", tmp_path)
    assert len(changed) == len(EXERCISES) + 1
    for rel in changed:
        assert (tmp_path / rel).read_text() == (ROOT / "exercises" / rel).read_text()
    assert release(ROOT / "solutions", tmp_path) == []          # a second run changes nothing


def _signatures(source: str) -> dict[str, tuple[str, str | None]]:
    """qualified name -> (signature, docstring) for every function and class."""
    out = {}

    def visit(node, prefix=""):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.ClassDef)):
                name = prefix + child.name
                sig = ast.unparse(child.args) if isinstance(child, ast.FunctionDef) else ""
                ret = ast.unparse(child.returns) if isinstance(child, ast.FunctionDef) and child.returns else ""
                out[name] = (sig + " -> " + ret, ast.get_docstring(child))
                visit(child, name + ".")

    visit(ast.parse(source))
    return out


@pytest.mark.parametrize("ex", EXERCISES, ids=lambda e: e.id)
def test_stub_keeps_signatures_and_docstrings_and_hides_the_solution(ex):
    sol = (ROOT / "solutions" / ex.filename).read_text()
    stub = (ROOT / "exercises" / ex.filename).read_text()
    assert _signatures(stub) == _signatures(sol)
    assert ast.get_docstring(ast.parse(stub)) == ast.get_docstring(ast.parse(sol))
    for name in ex.functions:
        assert name in _signatures(stub)
    n_regions = sol.count(BEGIN)
    assert n_regions >= 1 and sol.count(END) == n_regions
    assert stub.count(f'raise NotImplementedError("{ex.id}: ') == n_regions
    assert BEGIN not in stub and END not in stub
    # no line of any solution region survives in the stub (except blank ones)
    inside, hidden = False, []
    for line in sol.splitlines():
        if line.strip().startswith(BEGIN):
            inside = True
        elif line.strip().startswith(END):
            inside = False
        elif inside and line.strip() and len(line.strip()) > 12:
            hidden.append(line)
    stub_lines = set(stub.splitlines())
    assert hidden and not [line for line in hidden if line in stub_lines]


_SHAPE = re.compile(r"\((?:\.\.\., )?[A-Za-z_0-9]+(?:, [A-Za-z_0-9 +*/.-]+)+\)")  # e.g. (B, T, d_k), (..., T, S)
_MATH = re.compile(r"[=√^·∑]|softmax|exp\(|sqrt")


def test_every_public_function_has_a_docstring_with_shapes_or_math():
    for ex in EXERCISES:
        sigs = _signatures((ROOT / "solutions" / ex.filename).read_text())
        for name in ex.functions:
            doc = sigs[name][1]
            assert doc and len(doc) > 80, (ex.id, name)
            assert _SHAPE.search(doc) or _MATH.search(doc), (ex.id, name, doc)


def test_strip_solutions_keeps_indentation_and_custom_messages():
    src = ("def f(x):\n    \"\"\"Doc.\"\"\"\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n\n\n"
           "class C:\n    def g(self):\n        ### BEGIN SOLUTION: add one\n        return 1\n        ### END SOLUTION\n")
    out = strip_solutions(src, "ex99")
    assert out == ("def f(x):\n    \"\"\"Doc.\"\"\"\n    raise NotImplementedError(\"ex99: implement f\")\n\n\n"
                   "class C:\n    def g(self):\n        raise NotImplementedError(\"ex99: add one\")\n")


@pytest.mark.parametrize("src, words", [
    ("def f():\n    ### BEGIN SOLUTION\n    pass\n", "no ### END SOLUTION"),
    ("def f():\n    pass\n    ### END SOLUTION\n", "without a"),
    ("### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n", "inside a function"),
    ("def f():\n    ### BEGIN SOLUTION\n    ### BEGIN SOLUTION\n    pass\n    ### END SOLUTION\n", "inside another"),
    ("def f():\n    return 1\n", "no ### BEGIN SOLUTION"),
])
def test_strip_solutions_rejects_broken_regions(src, words):
    with pytest.raises(ReleaseError, match=words.replace("#", "\\#")):
        strip_solutions(src, "ex99")


def test_release_will_not_overwrite_a_learners_work(tmp_path):
    release(ROOT / "solutions", tmp_path)
    solved = tmp_path / EXERCISES[0].filename
    shutil.copy(ROOT / "solutions" / EXERCISES[0].filename, solved)
    sol = ROOT / "solutions"
    changed_sol = tmp_path / "sol"
    shutil.copytree(sol, changed_sol)
    p = changed_sol / EXERCISES[0].filename
    p.write_text(p.read_text().replace('"""Exercise 01', '"""Exercise 01 (edited)', 1))
    with pytest.raises(ReleaseError, match="--force"):
        release(changed_sol, tmp_path)
    assert "(edited)" not in solved.read_text()
    assert EXERCISES[0].filename in release(changed_sol, tmp_path, force=True)
    assert "(edited)" in solved.read_text()


def test_release_main_check_mode(tmp_path, capsys):
    out = tmp_path / "ex"
    assert release_main(["--solutions", str(ROOT / "solutions"), "--out", str(out), "--check"]) == 1
    assert "out of date" in capsys.readouterr().out
    assert release_main(["--solutions", str(ROOT / "solutions"), "--out", str(out)]) == 0
    assert release_main(["--solutions", str(ROOT / "solutions"), "--out", str(out), "--check"]) == 0
    assert release_main(["--solutions", str(tmp_path / "missing")]) == 2


def test_classroom_workflow_is_generated_and_well_formed():
    text = (ROOT / "exercises" / "classroom" / "autograding.yml").read_text()
    assert text == autograding_workflow()
    lines = text.splitlines()
    assert "name: Autograding Tests" in lines
    jobs = lines[lines.index("jobs:") + 1:]
    assert [line for line in jobs if line.startswith("  ") and not line.startswith("   ")] == ["  run-autograding-tests:"]
    graders = text.count("uses: classroom-resources/autograding-command-grader@v1")
    parts = [(ex, p) for ex in EXERCISES for p in ex.parts]
    assert graders == len(parts) > len(EXERCISES)          # one autograding test per part: partial credit
    assert text.count("uses: classroom-resources/autograding-grading-reporter@v1") == 1
    assert text.index("autograding-grading-reporter") > text.rindex("autograding-command-grader")
    for ex, part in parts:
        command = f"command: tinyattn grade --only {ex.id}" + (f" --part {part.name}" if len(ex.parts) > 1 else "")
        block = text[text.index(command + "\n"):]
        assert block.splitlines()[2].strip() == f"max-score: {part.points}"
    scores = [int(line.split("max-score: ")[1]) for line in lines if line.strip().startswith("max-score: ")]
    assert sum(scores) == sum(ex.points for ex in EXERCISES)
    step_ids = [line.split("id: ")[1] for line in lines if line.strip().startswith("id: ")]
    assert len(step_ids) == len(set(step_ids)) == len(parts)
    runners = [line for line in lines if line.strip().startswith("runners: ")][0].split("runners: ")[1]
    assert runners.split(",") == step_ids
    for sid in step_ids:
        assert f'{sid.upper()}_RESULTS: "${{{{steps.{sid}.outputs.result}}}}"' in text
    # after the reporter: the Markdown summary and the JUnit file, whatever the tests gave
    tail = text[text.index("autograding-grading-reporter"):]
    assert '--junit tinyattn-junit.xml --summary "$GITHUB_STEP_SUMMARY"' in tail and tail.count("if: always()") == 2
    # the package is installed once, before the graders (14 editable installs would cost minutes per push)
    assert text.count("run: python -m pip install -q -e .") == 1
    assert text.index("run: python -m pip install") < text.index("autograding-command-grader")
    assert text.count("setup-command: ''") == len(parts)


def test_a_new_exercise_needs_only_its_table_entry(monkeypatch):
    """The Classroom workflow comes from the exercise table alone: an entry (say ex15, two parts) adds its tests."""
    from tinyattn.grading import classroom
    from tinyattn.grading.exercises import Exercise, Part
    new = Exercise("ex15", "ex15_patching.py", "activation patching", ("patch", "effect"),
                   (Part("patch", 4, 9), Part("effect", 6, 9)))
    monkeypatch.setattr(classroom, "EXERCISES", (*EXERCISES, new))
    text = classroom.autograding_workflow()
    assert "command: tinyattn grade --only ex15 --part patch\n" in text
    assert "command: tinyattn grade --only ex15 --part effect\n" in text
    assert text.count("max-score: ") == sum(len(ex.parts) for ex in EXERCISES) + 2
    assert "ex15-patch,ex15-effect" in text and "EX15-EFFECT_RESULTS" in text


def test_docstrings_state_the_sizes_and_limits_the_checks_use():
    """One source of truth: the numbers live in the checks; each exercise's docstring states them word for word
    (in solutions/ and in the generated stubs the learner reads)."""
    from tinyattn.grading.checkkit import EXACT
    from tinyattn.grading.checks import ex12_flash
    flat = {}
    for folder in ("solutions", "exercises"):
        for ex in EXERCISES:
            flat[(folder, ex.id)] = " ".join((ROOT / folder / ex.filename).read_text().split())
    for folder in ("solutions", "exercises"):
        text = flat[(folder, "ex12")]
        for promise in ex12_flash.PROMISES:
            assert " ".join(promise.split()) in text, (folder, promise)
        # every grading tolerance a docstring states is the checks' own
        for (f, ex_id), text in flat.items():
            if f == folder and "Graded to float64 rounding" in text:
                assert f"Graded to float64 rounding: within {EXACT:.0e} of the largest entry" in text, ex_id
    assert f"{ex12_flash.ROW_S:,}" in flat[("solutions", "ex12")] and "16384" not in flat[("solutions", "ex12")]
