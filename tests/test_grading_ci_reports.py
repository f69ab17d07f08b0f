"""Partial credit where CI systems read it: `tinyattn grade --junit FILE` (one test case per part, its points in
its properties), `--summary FILE` (Markdown for $GITHUB_STEP_SUMMARY) and `--part NAME` (one Classroom test per
part: exit status 0 iff that part earned its points)."""
from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tinyattn.grading.cli import grade_main
from tinyattn.grading.release import strip_solutions

ROOT = Path(__file__).resolve().parents[1]
SEED = "5"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """ex02: softmax solved, softmax_backward a stub; ex04: no scale (a named mistake in both parts);
    ex13: solved. Expected: ex02 5/10, ex04 0/10, ex13 5/5."""
    out = tmp_path_factory.mktemp("ci") / "exercises"
    out.mkdir()
    solved = (ROOT / "solutions" / "ex02_softmax.py").read_text()
    stub = strip_solutions(solved, "ex02")
    fwd = solved[solved.index("def softmax("):solved.index("def softmax_backward(")]
    (out / "ex02_softmax.py").write_text(stub[:stub.index("def softmax(")] + fwd + stub[stub.index("def softmax_backward("):])
    ex04 = (ROOT / "solutions" / "ex04_attention.py").read_text()
    (out / "ex04_attention.py").write_text(ex04.replace(" / math.sqrt(d_k)", "", 1))
    shutil.copy(ROOT / "solutions" / "ex13_sliding_window.py", out)
    return out


def test_junit_has_one_test_case_per_part_with_its_points(folder, tmp_path):
    xml = tmp_path / "report.xml"
    assert grade_main([str(folder), "--only", "ex02", "ex04", "ex13", "--seed", SEED, "--junit", str(xml), "-q"]) == 1
    root = ET.parse(xml).getroot()
    assert root.tag == "testsuites"
    props = {p.get("name"): p.get("value") for p in root.find("properties")}
    assert (props["points"], props["max_points"]) == ("10", "25")
    cases = {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}
    assert list(cases) == [("ex02", "softmax"), ("ex02", "softmax_backward"), ("ex04", "attention"),
                           ("ex04", "masks"), ("ex13", "sliding_window_mask")]
    points = {k: (c.find("properties/property[@name='points']").get("value"),
                  c.find("properties/property[@name='max_points']").get("value")) for k, c in cases.items()}
    assert points == {("ex02", "softmax"): ("5", "5"), ("ex02", "softmax_backward"): ("0", "5"),
                      ("ex04", "attention"): ("0", "6"), ("ex04", "masks"): ("0", "4"),
                      ("ex13", "sliding_window_mask"): ("5", "5")}
    assert cases[("ex02", "softmax")].find("failure") is None and cases[("ex13", "sliding_window_mask")].find("failure") is None
    back = cases[("ex02", "softmax_backward")].find("failure")
    assert back.get("message").startswith("0/5 points. not attempted")
    scale = cases[("ex04", "attention")].find("failure")
    assert scale.get("type") == "failed" and "likely mistake: missing_scale" in scale.text
    assert root.get("tests") == "5" and root.get("failures") == "3"
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert suites["ex02 stable softmax and its backward"].find("properties/property[@name='points']").get("value") == "5"


def test_summary_is_a_markdown_table_of_parts_appended(folder, tmp_path):
    md = tmp_path / "summary.md"
    md.write_text("earlier step\n")
    assert grade_main([str(folder), "--only", "ex02", "ex04", "--seed", SEED, "--summary", str(md), "-q"]) == 1
    text = md.read_text()
    assert text.startswith("earlier step\n## tinyattn grade: 5/20 points\n")      # appended, as GitHub expects
    assert "| ex02 stable softmax and its backward | softmax | 5/5 | passed |" in text
    assert "| ex02 stable softmax and its backward | softmax_backward | 0/5 | not attempted |" in text
    assert "| ex04 scaled dot-product attention | attention | 0/6 | FAILED |" in text
    assert "(likely mistake: `missing_scale`)" in text
    # a learner's text can not break the table: no raw bar or tag from a message reaches a cell
    from tinyattn.grading.grader import ExerciseResult, GradeReport
    from tinyattn.grading.report import markdown_summary
    evil = ExerciseResult("ex01", "failed", 0, 5, [{"name": "n", "passed": False, "mistake": None, "part": None,
                                                    "message": "a | b <script>x</script>\nnew row"}])
    out = markdown_summary(GradeReport("x", 1, [evil]))
    row = [line for line in out.splitlines() if line.startswith("- **ex01")][0]
    assert "a \\| b &lt;script&gt;" in row and "<script>" not in out


@pytest.mark.parametrize("part, status", [("softmax", 0), ("softmax_backward", 1)])
def test_part_exit_status_is_that_parts_verdict(folder, part, status):
    assert grade_main([str(folder), "--only", "ex02", "--part", part, "--seed", SEED, "-q"]) == status


def test_part_and_ci_flags_are_checked(folder, capsys):
    assert grade_main([str(folder), "--part", "softmax"]) == 2
    assert "--part needs exactly one exercise" in capsys.readouterr().err
    assert grade_main([str(folder), "--only", "ex02", "--part", "nope"]) == 2
    assert "ex02 has no part 'nope'; its parts: softmax, softmax_backward" in capsys.readouterr().err
    assert grade_main(["--batch", str(folder.parent), "--junit", "x.xml"]) == 2
    assert "--junit, --summary and --part grade one PATH" in capsys.readouterr().err
