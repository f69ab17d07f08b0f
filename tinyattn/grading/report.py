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


STDOUT_LINES, STDOUT_CHARS = 15, 1500      # how much of a failing exercise's printed output is shown


def stdout_lines(text: str) -> list[str]:
    """The last lines the learner's code printed, at most STDOUT_LINES lines and STDOUT_CHARS characters."""
    lines = [line[:200] + (" ..." if len(line) > 200 else "") for line in text.rstrip().splitlines()]
    keep = lines[-STDOUT_LINES:]
    while len(keep) > 1 and sum(len(line) + 1 for line in keep) > STDOUT_CHARS:
        keep = keep[1:]
    how_much = f"the last {len(keep)} of {len(lines)} lines" if len(keep) < len(lines) else f"{len(lines)} line(s)"
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
