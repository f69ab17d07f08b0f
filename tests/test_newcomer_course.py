"""What a learner reads and runs matches the course: exercise counts, the order table, and notebooks
whose saved outputs do not depend on the learner's own answers in exercises/."""
from __future__ import annotations

import json
import re
from pathlib import Path

from tinyattn.grading import EXERCISES

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
WORDS = {10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen", 14: "fourteen", 15: "fifteen",
         16: "sixteen", 17: "seventeen", 18: "eighteen", 19: "nineteen", 20: "twenty"}


def _cells(path: Path, kind: str) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [("".join(c["source"]), c) for c in nb["cells"] if c["cell_type"] == kind]


def test_the_notebooks_count_the_exercises_there_are():
    said = []
    for nb in NOTEBOOKS:
        for text, _ in _cells(nb, "markdown"):
            said += [(nb.name, w) for w in re.findall(r"order for all\s+(\w+)", text)]
    assert said, "the notebooks no longer point to the exercise order: update this test"
    wrong = [(name, w) for name, w in said if w != WORDS[len(EXERCISES)]]
    assert not wrong, f"there are {len(EXERCISES)} exercises; these notebooks say otherwise: {wrong}"


def test_the_exercise_order_table_places_every_exercise():
    text = (ROOT / "exercises" / "README.md").read_text(encoding="utf-8")
    table = text.split("## Exercise order", 1)[1].split("\n## ", 1)[0]
    placed = set(re.findall(r"\bex\d\d\b", table))
    missing = [ex.id for ex in EXERCISES if ex.id not in placed]
    assert not missing, f"exercises/README.md's order table does not say when {missing} are ready"
    rows = re.findall(r"^\| (\d\d) ", table, flags=re.M)
    assert rows == [f"{i:02d}" for i in range(1, len(NOTEBOOKS) + 1)], rows


def test_a_check_cell_is_run_but_its_output_is_the_learners_not_the_notebooks():
    # A check cell's output is the learner's grade: once ex01 is solved, notebook 01's saved
    # "not attempted" no longer matches, and `python -m pytest` (nbval) failed on the learner's
    # correct work. nbval still runs the cell (a crash fails), but leaves its output alone.
    seen = 0
    for nb in NOTEBOOKS:
        for text, cell in _cells(nb, "code"):
            if re.search(r"^\s*check\(", text, flags=re.M):
                seen += 1
                assert "nbval-ignore-output" in cell["metadata"].get("tags", []), (nb.name, text[-80:])
    assert seen >= 8


def test_the_guides_sample_report_is_what_the_grader_prints(tmp_path, shipped_stubs):
    """exercises/README.md's sample (a softmax subtracting the row min, no backward, a print left in) line by
    line against a real run: the status line, the parts line and every check's name in order."""
    from tinyattn.grading import oracle
    from tinyattn.grading.grader import grade_folder
    from tinyattn.grading.report import format_report
    text = (ROOT / "exercises" / "README.md").read_text(encoding="utf-8")
    sample = text.split("## Reading the report", 1)[1].split("```", 2)[1].splitlines()
    stub = (shipped_stubs / "ex02_softmax.py").read_text(encoding="utf-8")
    body = ('    print("softmax: x has shape", x.shape)\n'
            '    e = np.exp(x - x.min(axis=axis, keepdims=True))\n'
            '    return e / e.sum(axis=axis, keepdims=True)')
    (tmp_path / "ex02_softmax.py").write_text(stub.replace('    raise NotImplementedError("ex02: implement softmax")',
                                                           body, 1), encoding="utf-8")
    seed = oracle.FIXTURE_SEEDS[0]                   # a recorded seed: a student release grades only those
    got = format_report(grade_folder(tmp_path, only=["ex02"], seed=seed), show_seed=False).splitlines()

    def heads(lines):   # what the sample fixes: status lines, parts, and the names of passed / failed checks
        out = []
        for line in lines:
            s = line.strip()
            if s.startswith("ex02 ") or s.startswith("parts:") or s.startswith("ok "):
                out.append(" ".join(s.split()))
            elif s.startswith("x "):
                out.append(s.split(":")[0])
        return out
    assert heads(sample) == heads(got), "\n".join(got)
