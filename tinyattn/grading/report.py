"""Turning results into text: the terminal report, the --json file and the --batch CSV."""
from __future__ import annotations

import csv
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


def exercise_lines(r: ExerciseResult, details: bool = True) -> list[str]:
    title = BY_ID[r.id].title if r.id in BY_ID else ""
    head = f"{r.id}  {title} ".ljust(48, ".") + f" {LABEL.get(r.status, r.status):<14}{r.points:>3}/{r.max_points}"
    lines = [head]
    if not details or r.status == "passed":
        return lines
    if r.status == "not_attempted":
        lines.append("      still raises NotImplementedError: replace it with your code")
        return lines
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
    return lines


def format_report(report: GradeReport, details: bool = True) -> str:
    """The human-readable report: one line per exercise, failures with their checks and hints."""
    lines = [f"tinyattn grade · {report.path} · seed {report.seed}", ""]
    for r in report.exercises:
        lines += exercise_lines(r, details)
    counts = Counter(r.status for r in report.exercises)
    summary = ", ".join(f"{n} {LABEL[s].lower()}" for s, n in counts.items())
    lines += ["", f"total {report.total}/{report.max} · {summary}"]
    if not report.all_passed:
        lines.append(f"(same inputs again: --seed {report.seed}; a single exercise: --only exNN)")
    return "\n".join(lines)


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
