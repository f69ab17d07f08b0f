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
