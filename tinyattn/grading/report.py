"""Turning results into text: the terminal report, the --json file and the --batch CSV."""
from __future__ import annotations

import csv
import re
import json
import textwrap
from collections import Counter

from .exercises import BY_ID, EXERCISES
from .grader import ExerciseResult, GradeReport
from .mistakes import hint

WIDTH = 88
LABEL = {"passed": "passed", "failed": "FAILED", "not_attempted": "not attempted", "error": "ERROR",
         "timeout": "TIMEOUT", "forbidden": "FORBIDDEN"}


def _wrap(text: str, indent: str) -> str:
    return textwrap.fill(text, WIDTH, initial_indent=indent, subsequent_indent=indent, break_long_words=False)


STDOUT_LINES, STDOUT_CHARS = 15, 1500      # how much of a failing exercise's printed output is shown


def stdout_tail(text: str) -> tuple[list[str], str]:
    """The last lines the learner's code printed, at most STDOUT_LINES lines and STDOUT_CHARS characters,
    and how much of it that is ("the last 15 of 567 lines"): the terminal's report and check()'s alike."""
    lines = [line[:200] + (" ..." if len(line) > 200 else "") for line in text.rstrip().splitlines()]
    keep = lines[-STDOUT_LINES:]
    while len(keep) > 1 and sum(len(line) + 1 for line in keep) > STDOUT_CHARS:
        keep = keep[1:]
    how_much = f"the last {len(keep)} of {len(lines)} lines" if len(keep) < len(lines) else f"{len(lines)} line(s)"
    return keep, how_much


def stdout_lines(text: str) -> list[str]:
    keep, how_much = stdout_tail(text)
    return [f"      your code printed ({how_much}):"] + [f"      | {line}" for line in keep]


def exercise_lines(r: ExerciseResult, details: bool = True) -> list[str]:
    """The exercise's line; unless it passed: the checks that passed, what failed (with hints), its output."""
    title = BY_ID[r.id].title if r.id in BY_ID else ""
    head = f"{r.id}  {title} ".ljust(48, ".") + f" {LABEL.get(r.status, r.status):<14}{r.points:>3}/{r.max_points}"
    lines = [head]
    if not details or r.status == "passed":
        return lines
    if len(r.parts) > 1 and r.status != "not_attempted":
        lines.append("      parts: " + " · ".join(f"{name} {got}/{most}" for name, got, most in r.parts))
    if r.status == "not_attempted":
        lines.append("      still raises NotImplementedError: replace it with your code")
        return lines
    for c in r.checks:
        if c["passed"]:
            lines.append(_wrap(f"ok {c['name']}", "      "))
    shown, said = set(), set()
    for c in r.checks:
        if c["passed"] or c["message"].startswith("not implemented yet"):
            continue
        # the same crash in every check is said once
        text = "(the same as above)" if c["message"] in said and not c.get("mistake") else c["message"]
        said.add(c["message"])
        lines.append(_wrap(f"x {c['name']}: {text}", "      "))
        m = c.get("mistake")
        if m:
            lines.append(f"        likely mistake: {m}")
            if m not in shown:
                lines.append(_wrap(hint(m), "        "))
                shown.add(m)
    pending = [c["name"] for c in r.checks if not c["passed"] and c["message"].startswith("not implemented yet")]
    if pending:
        lines.append(_wrap(f"- not implemented yet: {'; '.join(pending)}", "      "))
    if getattr(r, "stdout", ""):
        lines += stdout_lines(r.stdout)
    return lines


def format_report(report: GradeReport, details: bool = True, show_seed: bool = True) -> str:
    """The human-readable report: one line per exercise; under each that did not pass, the checks
    that passed, each that failed (with its hint) and the end of what the code printed.

    show_seed=False (the feedback files of --batch) leaves out the private seed."""
    where = f" · seed {report.seed}" if show_seed else ""
    lines = [f"tinyattn grade · {report.path}{where}", ""]
    for r in report.exercises:
        lines += exercise_lines(r, details)
    counts = Counter(r.status for r in report.exercises)
    summary = ", ".join(f"{n} {LABEL[s].lower()}" for s, n in counts.items())
    lines += ["", f"total {report.total}/{report.max} · {summary}"]
    if not report.all_passed and show_seed:
        lines.append(f"(same inputs again: --seed {report.seed}; a single exercise: --only exNN)")
    return "\n".join(lines)


def write_feedback(reports: list[GradeReport], names: list[str], folder: str) -> list[str]:
    """One text report per learner, FOLDER/<name>.txt, without the private seed; returns the paths."""
    from pathlib import Path
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, rep in zip(names, reports):
        path = out / f"{name}.txt"
        path.write_text(format_report(rep, show_seed=False) + "\n", encoding="utf-8")
        paths.append(str(path))
    return paths


def write_json(report: GradeReport, path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report.to_json(), f, indent=2)
        f.write("\n")


def write_csv(reports: list[GradeReport], path: str, names: list[str]) -> None:
    """One row per submission: name, total, max, each exercise's points and status, the isolation used."""
    ids = [ex.id for ex in EXERCISES if any(r.id == ex.id for rep in reports for r in rep.exercises)]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["submission", "total", "max"] + ids + [f"{i}_status" for i in ids] + ["isolation"])
        for name, rep in zip(names, reports):
            by = {r.id: r for r in rep.exercises}
            w.writerow([name, rep.total, rep.max] + [by[i].points for i in ids] + [by[i].status for i in ids]
                       + [rep.isolation])


# ---- for CI systems: JUnit XML (one test case per part) and a Markdown summary --------------------------

# XML 1.0 can not hold most control characters, even escaped (messages are cleaned already; this is the guard)
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _part_checks(r: ExerciseResult, part: str) -> list[dict]:
    """The checks that score `part` (a check of no part, e.g. 'loads', scores every part)."""
    one = len(BY_ID[r.id].parts) == 1 if r.id in BY_ID else True
    return [c for c in r.checks if c.get("part") in (part, None) or one]


def _failure_text(r: ExerciseResult, part: str) -> str:
    lines = []
    for c in _part_checks(r, part):
        if not c["passed"]:
            lines.append(f"x {c['name']}: {c['message']}")
            if c.get("mistake"):
                lines.append(f"  likely mistake: {c['mistake']}. {hint(c['mistake'])}")
    if r.stdout:
        lines += ["", "your code printed:", r.stdout]
    return "\n".join(lines)


def part_status(r: ExerciseResult, part: str, got: int, most: int) -> str:
    """passed | failed | not_attempted | error | timeout | forbidden, for one part of an exercise."""
    if got >= most:
        return "passed"
    if r.status in ("error", "timeout", "forbidden"):
        return r.status
    failing = [c for c in _part_checks(r, part) if not c["passed"]]
    if r.status == "not_attempted" or failing and all(c["message"].startswith("not implemented") for c in failing):
        return "not_attempted"
    return "failed"


def junit_xml(report: GradeReport, suite_name: str = "tinyattn grade") -> str:
    """JUnit XML: one <testsuite> per exercise, one <testcase> per part, with its points and maximum as
    <properties> (points, max_points, status); a part without its points is a <failure> (wrong or not
    attempted) or an <error> (error, timeout, forbidden), its message the first failing check's."""
    import xml.etree.ElementTree as ET

    def xml_text(text) -> str:
        return _NOT_XML.sub("", str(text))

    def kind(status: str) -> str | None:
        return None if status == "passed" else "failure" if status in ("failed", "not_attempted") else "error"

    rows = {r.id: [(name, got, most, part_status(r, name, got, most)) for name, got, most in r.parts]
            for r in report.exercises}
    every = [row for r in report.exercises for row in rows[r.id]]
    root = ET.Element("testsuites", name=suite_name, tests=str(len(every)),
                      failures=str(sum(kind(st) == "failure" for *_, st in every)),
                      errors=str(sum(kind(st) == "error" for *_, st in every)),
                      time=f"{sum(r.seconds for r in report.exercises):.3f}")
    props = ET.SubElement(root, "properties")
    ET.SubElement(props, "property", name="points", value=str(report.total))
    ET.SubElement(props, "property", name="max_points", value=str(report.max))
    for r in report.exercises:
        title = BY_ID[r.id].title if r.id in BY_ID else ""
        cases = rows[r.id]
        suite = ET.SubElement(root, "testsuite", name=xml_text(f"{r.id} {title}".strip()), tests=str(len(cases)),
                              failures=str(sum(kind(st) == "failure" for *_, st in cases)),
                              errors=str(sum(kind(st) == "error" for *_, st in cases)), time=f"{r.seconds:.3f}")
        sp = ET.SubElement(suite, "properties")
        for key, value in (("points", r.points), ("max_points", r.max_points), ("status", r.status),
                           ("isolation", r.isolation)):
            ET.SubElement(sp, "property", name=key, value=str(value))
        for name, got, most, status in cases:
            case = ET.SubElement(suite, "testcase", classname=r.id, name=xml_text(name), time=f"{r.seconds:.3f}")
            cp = ET.SubElement(case, "properties")
            for key, value in (("points", got), ("max_points", most), ("status", status)):
                ET.SubElement(cp, "property", name=key, value=str(value))
            if kind(status) is None:
                continue
            first = next((c for c in _part_checks(r, name) if not c["passed"]), None)
            if status == "not_attempted":
                message = "not attempted: still raises NotImplementedError"
            else:
                message = f"{first['name']}: {first['message']}" if first else LABEL.get(r.status, r.status)
            node = ET.SubElement(case, kind(status), message=xml_text(f"{got}/{most} points. {message}")[:1000],
                                 type=status)
            node.text = xml_text(_failure_text(r, name))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(report: GradeReport, path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(junit_xml(report))


def _md(text: str) -> str:
    """One Markdown table cell: no line breaks, no column bars, no HTML."""
    return (" ".join(str(text).split()).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")
            .replace(">", "&gt;"))


def markdown_summary(report: GradeReport) -> str:
    """A Markdown summary for $GITHUB_STEP_SUMMARY (or any Markdown viewer): the total, one table row
    per part with its points, and the first failing check of each part that lost its points."""
    lines = [f"## tinyattn grade: {report.total}/{report.max} points", "",
             "| exercise | part | points | status |", "|---|---|---:|---|"]
    notes = []
    for r in report.exercises:
        title = BY_ID[r.id].title if r.id in BY_ID else ""
        for name, got, most in r.parts:
            status = part_status(r, name, got, most)
            lines.append(f"| {r.id} {_md(title)} | {_md(name)} | {got}/{most} | {_md(LABEL.get(status, status))} |")
            first = next((c for c in _part_checks(r, name) if not c["passed"]
                          and not c["message"].startswith("not implemented")), None)
            if status not in ("passed", "not_attempted") and first is not None:
                hinted = f" (likely mistake: `{first['mistake']}`)" if first.get("mistake") else ""
                notes.append(f"- **{r.id} {_md(name)}**: {_md(first['name'])}: {_md(first['message'][:400])}{hinted}")
    if notes:
        lines += ["", "### What to fix first", ""] + notes
    lines += ["", f"Isolation: {report.isolation}. Run `tinyattn grade --only exNN` locally for the full report "
              "with hints."]
    return "\n".join(lines) + "\n"


def append_summary(report: GradeReport, path: str) -> None:
    """Append (GitHub's step summary file collects what each step appends) the Markdown summary."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(markdown_summary(report))
