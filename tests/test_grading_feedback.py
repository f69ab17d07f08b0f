"""What a learner reads: the checks that passed, what failed, what their code printed; per-learner feedback files."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from tinyattn.grading.cli import grade_main
from tinyattn.grading.exercises import get
from tinyattn.grading.report import STDOUT_CHARS, STDOUT_LINES
from tinyattn.grading.static import NEVER_RULE, rule

ROOT = Path(__file__).resolve().parents[1]

FORWARD_ONLY = '''import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_backward(y, dy, axis=-1):
    raise NotImplementedError("ex02: later")
'''

CHATTY_AND_WRONG = '''import numpy as np


def attention_scores(Q, K):
    for i in range(2000):
        print(f"debug line {i}: " + "x" * 300)
    return Q @ np.swapaxes(K, -1, -2)          # no scale
'''


def _grade(tmp_path, capsys, files: dict[str, str], *extra: str) -> tuple[int, str, dict]:
    folder = tmp_path / "learner"
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    only = [name[:4] for name in files]
    out = tmp_path / "r.json"
    rc = grade_main([str(folder), "--only", *only, "--seed", "7", "--json", str(out), *extra])
    return rc, capsys.readouterr().out, json.loads(out.read_text())


def test_a_failing_exercise_lists_the_checks_that_passed(tmp_path, capsys):
    rc, text, data = _grade(tmp_path, capsys, {"ex02_softmax.py": FORWARD_ONLY})
    # points per part: the forward (notebook 01 material) earns its 5 before the backward is written
    assert rc == 1 and data["exercises"][0]["points"] == 5
    assert data["exercises"][0]["parts"] == [{"name": "softmax", "points": 5, "max_points": 5},
                                             {"name": "softmax_backward", "points": 0, "max_points": 5}]
    assert "parts: softmax 5/5 · softmax_backward 0/5" in text and "total 5/10" in text
    assert "ok softmax over the last axis (the default)" in text
    assert "ok a large spread inside one row (like [0, 1000]) and mixed signs stay finite" in text
    assert "not implemented yet: softmax_backward(y, dy) over the last axis" in text


def test_a_failing_exercise_shows_the_end_of_what_it_printed(tmp_path, capsys):
    rc, text, data = _grade(tmp_path, capsys, {"ex01_scores.py": CHATTY_AND_WRONG})
    assert rc == 1 and "likely mistake: missing_scale" in text
    shown = [line for line in text.splitlines() if line.startswith("      | ")]
    assert 1 <= len(shown) <= STDOUT_LINES and sum(len(s) for s in shown) <= STDOUT_CHARS + 10 * len(shown)
    assert shown[-1].startswith("      | debug line 1999: xxx")           # the end of the output, not its start
    assert "your code printed (the last" in text
    assert len(data["exercises"][0]["stdout"]) <= 4 * 1024


def test_a_passing_exercise_shows_no_output(tmp_path, capsys):
    chatty = (ROOT / "solutions" / "ex01_scores.py").read_text() + "\nprint('hello from import')\n"
    rc, text, _ = _grade(tmp_path, capsys, {"ex01_scores.py": chatty})
    assert rc == 0 and "hello from import" not in text


def test_the_forbidden_message_states_the_docstrings_rule(tmp_path, capsys):
    src = "import numpy as np\nfrom tinyattn.nn.functional import scaled_dot_product_attention\n"
    rc, text, data = _grade(tmp_path, capsys, {"ex04_attention.py": src})
    msg = " ".join(data["exercises"][0]["checks"][0]["message"].split())
    assert data["exercises"][0]["status"] == "forbidden" and rule(get("ex04")) in msg
    src = ("import numpy as np\nimport tinyattn.nn.functional as F\nfrom tinyattn import nn\n\n\n"
           "class MultiHeadAttention(nn.Module):\n    def forward(self, x, mask=None):\n"
           "        return F.scaled_dot_product_attention(x, x, x)\n")
    rc, text, data = _grade(tmp_path, capsys, {"ex08_multihead.py": src})
    msg = " ".join(data["exercises"][0]["checks"][0]["message"].split())
    assert data["exercises"][0]["status"] == "forbidden"
    assert "F.scaled_dot_product_attention" in msg and rule(get("ex08")) in msg
    assert NEVER_RULE in " ".join((ROOT / "exercises" / "ex08_multihead.py").read_text().split())


def test_batch_feedback_writes_one_report_per_learner_without_the_seed(tmp_path, capsys):
    root = tmp_path / "submissions"
    (root / "ada").mkdir(parents=True)
    (root / "bo").mkdir()
    for ex in ("ex01_scores.py", "ex02_softmax.py"):
        shutil.copy(ROOT / "solutions" / ex, root / "ada" / ex)
    (root / "bo" / "ex01_scores.py").write_text(CHATTY_AND_WRONG)
    (root / "bo" / "ex02_softmax.py").write_text(FORWARD_ONLY)
    fb = tmp_path / "feedback"
    seed = "4611686019345661549"
    assert grade_main(["--batch", str(root), "--only", "ex01", "ex02", "--seed", seed, "--feedback", str(fb)]) == 0
    assert "2 feedback reports written" in capsys.readouterr().out
    assert sorted(p.name for p in fb.iterdir()) == ["ada.txt", "bo.txt"]
    ada, bo = (fb / "ada.txt").read_text(), (fb / "bo.txt").read_text()
    assert "total 15/15" in ada and "total 5/15" in bo            # bo's softmax earns its part
    assert "likely mistake: missing_scale" in bo and "ok softmax over the last axis" in bo
    assert "debug line 1999" in bo and "debug line 1999" not in ada
    assert seed not in ada + bo and "--seed" not in ada + bo


def test_feedback_needs_batch(tmp_path, capsys):
    assert grade_main([str(ROOT / "exercises"), "--feedback", str(tmp_path)]) == 2
    assert "--feedback needs --batch" in capsys.readouterr().err
