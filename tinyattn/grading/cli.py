"""`tinyattn grade ...` and `tinyattn release ...` (also `python -m tinyattn.grading grade|release ...`).

Both return an exit status and never let a traceback reach the learner: usage mistakes are one
line with status 2; an unexpected failure of the grader itself is one line with status 3.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from .exercises import BY_ID, get
from .text import cell, clean_line


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return v


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {v}")
    return v


def _exercise_id(text: str) -> str:
    try:
        return get(text).id
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def grade_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="tinyattn grade", description="Grade an exercises folder: each exercise in its own process, "
                "fresh random inputs each run (unless --seed), known mistakes named with a hint.")
    p.add_argument("path", nargs="?", default=None, metavar="PATH", help="folder with the exNN_*.py files "
                   "(default: the nearest exercises/ in this folder or above)")
    p.add_argument("--only", nargs="+", action="extend", type=_exercise_id, metavar="exNN",
                   help=f"grade only these exercises ({', '.join(BY_ID)})")
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.add_argument("--junit", metavar="FILE", help="also write JUnit XML: one test case per part, its points in its "
                   "properties (GitLab, Jenkins and other CI systems read it)")
    p.add_argument("--summary", metavar="FILE", help="also append a Markdown summary, one row per part (e.g. "
                   "--summary \"$GITHUB_STEP_SUMMARY\")")
    p.add_argument("--part", metavar="NAME", help="with one --only exNN: exit status 0 iff this part earned its "
                   "points (one Classroom test per part)")
    p.add_argument("--seed", type=int, metavar="N", help="seed the random inputs (default: $TINYATTN_GRADE_SEED, "
                   "else a fresh random seed; with --batch at least 2**48, so it can not be guessed)")
    p.add_argument("--timeout", type=_positive_float, default=60.0, metavar="S",
                   help="seconds per exercise before it counts as a timeout (default: 60)")
    p.add_argument("--jobs", type=_positive_int, default=None, metavar="N",
                   help="exercises graded in parallel (default: the number of CPUs)")
    p.add_argument("--isolation", choices=("auto", "sandbox", "user", "process"), default="auto",
                   help="where the learner's code runs: 'sandbox' (Linux user/PID/network/mount namespaces), "
                   "'user' (a child process as user nobody; the grader must be root), 'process' (a plain "
                   "child process) or 'auto' (the sandbox where it works, else 'user' as root, else "
                   "'process', with a warning; the default)")
    p.add_argument("--batch", metavar="DIR", help="instructor mode: grade every sub-folder of DIR (one per learner)")
    p.add_argument("--csv", metavar="FILE", help="with --batch: write one row of points per learner")
    p.add_argument("--feedback", metavar="DIR", help="with --batch: write one text report per learner, "
                   "DIR/<learner>.txt (without the private seed)")
    p.add_argument("-q", "--quiet", action="store_true", help="one line per exercise, no details")
    return p


def grade_main(argv: list[str]) -> int:
    """Exit status: 0 iff every selected exercise passed (in --batch mode: 0 once all are graded)."""
    try:
        args = grade_parser().parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    from .grader import SEED_ENV, protect_memory, resolve_seed, scrub_own_cmdline
    of_record = bool(args.batch or os.environ.get(SEED_ENV, "").strip())     # grades of record, not self-study
    try:
        args.seed = resolve_seed(args.seed, of_record=bool(args.batch))
    except ValueError as e:                # e.g. a non-integer $TINYATTN_GRADE_SEED
        return _usage(str(e))
    scrub_own_cmdline(str(args.seed))      # the seed can not be read from /proc/<pid>/cmdline or environ,
    protect_memory()                       # nor (another process of this user) from this one's memory
    try:
        args.isolation = _isolation(args.isolation, batch=bool(args.batch), of_record=of_record)
    except (ValueError, RuntimeError) as e:    # (RuntimeError: no grading on this platform, and why)
        return _usage(str(e))
    try:
        return _batch(args) if args.batch else _single(args)
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001 - the grader reports, it does not crash
        print(f"tinyattn grade: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        return 3


def _isolation(requested: str, batch: bool = False, of_record: bool = False) -> str:
    """The isolation to grade with. Grades of record (--batch) never fall back silently: without a
    working sandbox they refuse, naming the step that failed and its errno, unless --isolation
    process|user was asked for. The fallback's warning is for grades of record only (--batch, or
    the seed of record in $TINYATTN_GRADE_SEED): a learner grading their own work is not warned."""
    from .learner import resolve_isolation, sandbox_advice, sandbox_problem
    if batch and requested in ("auto", "sandbox") and sandbox_problem() is not None:
        problem = sandbox_problem()
        advice = sandbox_advice(problem)
        raise ValueError(f"--batch grades need the sandbox, and it could not start here: {problem}"
                         + (f" ({advice})" if advice else "") + ". Pass --isolation process to grade without it "
                         "(every row then says isolation=process), or use the Docker recipe in exercises/README.md")
    isolation = resolve_isolation(requested)
    if isolation != "sandbox" and (batch or of_record):
        who = "as a user of its own, which can read any world-readable file" if isolation == "user" else \
            "as you, which can read any file you can"
        print(f"tinyattn grade: warning: grades of record without the sandbox"
              + (f" ({clean_line(sandbox_problem())})" if requested == "auto" and sandbox_problem() else "")
              + f": each exercise runs in a plain child process {who}.", file=sys.stderr)
    return isolation


def _usage(msg: str) -> int:
    print(f"tinyattn grade: error: {msg}", file=sys.stderr)
    return 2


def _single(args) -> int:
    from .grader import grade_folder, submission_folder
    from .report import append_summary, format_report, write_json, write_junit

    if args.csv or args.feedback:
        return _usage(f"{'--csv' if args.csv else '--feedback'} needs --batch DIR")
    if args.part is not None:
        if not args.only or len(args.only) != 1:
            return _usage("--part needs exactly one exercise: --only exNN --part NAME")
        names = [p.name for p in get(args.only[0]).parts]
        if args.part not in names:
            return _usage(f"{args.only[0]} has no part {args.part!r}; its parts: {', '.join(names)}")
    from .notebook import find_exercises
    # no PATH: the nearest exercises/ here or above (a notebook's kernel starts in notebooks/)
    path = Path(args.path) if args.path else (find_exercises() or Path("exercises"))
    if path.is_file():                         # e.g. `tinyattn grade exercises/ex04_attention.py`
        ex_id = path.name[:4]
        hint = f"tinyattn grade {path.parent} --only {ex_id}" if ex_id in BY_ID else "tinyattn grade FOLDER"
        return _usage(f"{str(path)!r} is a file; PATH is the folder that holds the exNN_*.py files ({hint})")
    if not path.is_dir():
        return _usage(f"no folder {str(path)!r} (run from the folder that holds exercises/, or pass PATH)")
    path = submission_folder(path)             # the repository root works too: it holds exercises/
    names = [get(i).filename for i in (args.only or BY_ID)]
    if not any((path / name).is_file() for name in names):
        wanted = ", ".join(names) if len(names) <= 3 else f"{names[0]}, ..., {names[-1]}"
        return _usage(f"{str(path)!r} holds none of the exercise files ({wanted})")
    try:
        report = grade_folder(path, args.only, args.seed, args.timeout, args.jobs, args.isolation)
    except ValueError as e:                      # e.g. a non-integer $TINYATTN_GRADE_SEED
        return _usage(str(e))
    print(format_report(report, details=not args.quiet))
    for flag, path, write in (("--json", args.json, write_json), ("--junit", args.junit, write_junit),
                              ("--summary", args.summary, append_summary)):
        if path:
            try:
                write(report, path)
            except OSError as e:
                return _usage(f"can not write {flag} {path!r}: {e.strerror or e}")
    if args.part is not None:
        return 0 if dict((n, got == most) for n, got, most in report.exercises[0].parts)[args.part] else 1
    return 0 if report.all_passed else 1


def _batch(args) -> int:
    from .grader import grade_batch
    from .report import exercise_lines, write_csv, write_feedback

    if args.path:
        return _usage("give either PATH or --batch DIR, not both")
    if args.junit or args.summary or args.part:
        return _usage("--junit, --summary and --part grade one PATH; with --batch use --csv, --json or --feedback")
    root = Path(args.batch)
    if not root.is_dir():
        return _usage(f"--batch {str(root)!r} is not a folder")
    if not any(p.is_dir() and not p.name.startswith(".") for p in root.iterdir()):
        return _usage(f"--batch {str(root)!r} has no sub-folders (one per learner)")
    start = time.perf_counter()
    try:
        reports = grade_batch(root, args.only, args.seed, args.timeout, args.jobs, isolation=args.isolation)
    except ValueError as e:
        return _usage(str(e))
    names = [cell(Path(r.path).name) for r in reports]
    for name, rep in zip(names, reports):
        print(f"{name}: {rep.total}/{rep.max} ({rep.isolation})")
        if not args.quiet:
            for r in rep.exercises:
                print("  " + exercise_lines(r, details=False)[0])
    seed = reports[0].seed if reports else None
    print(f"{len(reports)} submissions graded in {time.perf_counter() - start:.1f} s (private seed {seed}, "
          f"isolation: {args.isolation})")
    if args.csv:
        try:
            write_csv(reports, args.csv, names)
        except OSError as e:
            return _usage(f"can not write --csv {args.csv!r}: {e.strerror or e}")
        print(f"grades written to {args.csv}")
    if args.feedback:
        try:
            paths = write_feedback(reports, names, args.feedback)
        except OSError as e:
            return _usage(f"can not write --feedback {args.feedback!r}: {e.strerror or e}")
        print(f"{len(paths)} feedback reports written to {args.feedback}/")
    if args.json:
        import json
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({n: r.to_json() for n, r in zip(names, reports)}, f, indent=2)
    return 0


def release_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="tinyattn release", description="Build the learner's exercises/ from solutions/: every "
                "solution region becomes raise NotImplementedError(...); also writes classroom/autograding.yml.")
    p.add_argument("--solutions", default="solutions", metavar="DIR", help="default: solutions/")
    p.add_argument("--out", default="exercises", metavar="DIR", help="default: exercises/")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if OUT is out of date")
    p.add_argument("--force", action="store_true", help="overwrite exercise files a learner has already solved "
                   "(with --student: replace a non-empty OUT)")
    p.add_argument("--student", metavar="OUT", help="instead: write the repository a student is given to OUT (no "
                   "solutions/, no reference code; recorded answers for the feedback, the Classroom workflow)")
    return p


def release_main(argv: list[str]) -> int:
    from .release import ReleaseError, release

    try:
        args = release_parser().parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if args.student:
        from .student import main_student
        return main_student(args.student, force=args.force)
    if not os.path.isdir(args.solutions):
        print(f"tinyattn release: error: no folder {args.solutions!r} (run from the repository root)", file=sys.stderr)
        return 2
    try:
        changed = release(args.solutions, args.out, check=args.check, force=args.force)
    except (ReleaseError, SyntaxError, OSError) as e:
        print(f"tinyattn release: error: {e}", file=sys.stderr)
        return 2
    if args.check:
        if changed:
            print(f"{args.out}/ is out of date with {args.solutions}/: {', '.join(changed)} "
                  "(run `tinyattn release`)")
            return 1
        print(f"{args.out}/ is up to date with {args.solutions}/")
        return 0
    print(f"wrote {len(changed)} file(s) to {args.out}/" + (f": {', '.join(changed)}" if changed else " (all up to date)"))
    return 0
