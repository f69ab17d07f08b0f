"""`tinyattn demo | grade | release | gpt2 | bert`, and `bench` inside a source checkout: the command line.

Every error is one line (argparse's own, or `tinyattn: error: ...`) with exit
status 2; a learner should never see a traceback for a bad argument.
`grade` and `release` are imported lazily, so `tinyattn demo` and `--help`
work even while the grader is being changed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from typing import Sequence

PROG = "tinyattn"


class _Parser(argparse.ArgumentParser):
    """argparse, but errors are one line ('usage' is one --help away)."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def _int_at_least(minimum: int):
    """An argparse type: an integer >= minimum, or a one-line error saying what came."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {value}")
        return value
    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="tinyattn: attention from scratch in NumPy.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    demo = sub.add_parser("demo", help="train attention, a GRU and a tanh RNN on long-range recall; print a table, "
                                       "save figures",
                          description="Train a small attention model, a GRU and a tanh RNN on first-token recall "
                                      "at several distances and on associative recall with 2-16 pairs; print "
                                      "accuracies and save figures. A full run is 27 trainings: about 70 s "
                                      "of CPU time (measured: 70 s over two workers), which took 84 s to 11 "
                                      "minutes of wall-clock time on 2-core machines, depending on their load.")
    demo.add_argument("--quick", action="store_true",
                      help="15 shorter trainings: about a fifth of a full run's CPU time (measured: 13 s)")
    demo.add_argument("--out", default="demo_out", metavar="DIR", help="where figures go (default: demo_out/)")
    demo.add_argument("--seed", type=_int_at_least(0), default=0, metavar="N",
                      help="seed: the same seed gives the same table (default 0)")
    demo.add_argument("--workers", type=_int_at_least(0), default=None, metavar="N",
                      help="worker processes to train in (default: 2 on a machine with 2+ cores; 0: in this "
                           "process); the table does not depend on it")
    demo.add_argument("--progress", action="store_true", default=None,
                      help="one progress line for all the runs, on stderr (default: when stderr is a terminal)")

    sub.add_parser("grade", help="grade an exercises folder (tinyattn grade [PATH], default exercises/)",
                   add_help=False)
    sub.add_parser("release", help="build the learner's exercises/ from solutions/ (maintainers)", add_help=False)
    from tinyattn.pretrained.cli import add_commands  # argparse only: safetensors/tokenizers load later

    add_commands(sub, _int_at_least)  # gpt2 and bert: the pretrained-model commands
    if _checkout_root(os.getcwd()) is not None:     # outside a source checkout there is nothing to run
        sub.add_parser("bench", help="speed and memory benchmarks of this source checkout (tinyattn bench --help)",
                       add_help=False)
    return parser


def _fail(message: str) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def _run_grading(name: str, rest: list[str]) -> int:
    """Hand the remaining argv to tinyattn.grading.cli.<name>(argv) -> int, imported only now."""
    try:
        from tinyattn.grading import cli as grading_cli
    except ImportError as e:
        return _fail(f"the grader is not available ({e})")
    fn = getattr(grading_cli, name, None)
    if fn is None:
        return _fail(f"tinyattn.grading.cli has no {name}()")
    return int(fn(rest) or 0)


def _checkout_root(start: str) -> str | None:
    """The nearest folder at or above ``start`` that holds benchmarks/__main__.py (a source checkout), or None."""
    here = os.path.abspath(start)
    while True:
        if os.path.isfile(os.path.join(here, "benchmarks", "__main__.py")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _run_bench(rest: list[str]) -> int:
    # The benchmarks compare tinyattn with plain NumPy and write benchmarks/RESULTS.md: they belong to
    # the repository, not to the installed package, so `pip install tinyattn` alone has none to run.
    root = _checkout_root(os.getcwd())
    if root is None:
        return _fail(f"no benchmarks/__main__.py in {os.getcwd()} or any folder above it: `tinyattn bench` runs "
                     "the benchmarks/ folder of a tinyattn source checkout, which the installed package does not "
                     "include. Clone the repository and run `tinyattn bench` inside it")
    env = dict(os.environ, TINYATTN_BENCH_PROG=f"{PROG} bench")   # its --help and errors name this command
    return subprocess.call([sys.executable, "-m", "benchmarks", *rest], cwd=root, env=env)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `tinyattn` and `python -m tinyattn`; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    # grade/release/bench pass everything after the command through untouched (their own --help included).
    if argv and argv[0] in ("grade", "release", "bench"):
        command, rest = argv[0], argv[1:]
        try:
            if command == "bench":
                return _run_bench(rest)
            return _run_grading(f"{command}_main", rest)
        except KeyboardInterrupt:
            return 130
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) or a one-line usage error (2)
        return int(e.code or 0)
    if args.command is None:
        parser.print_help()
        return 0
    if args.command == "demo":
        from tinyattn.demo import run_demo

        try:
            run_demo(quick=args.quick, out=args.out, seed=args.seed, progress=args.progress, workers=args.workers)
        except OSError as e:  # e.g. --out names a file, or a folder we may not write
            return _fail(f"can not write to --out {args.out!r}: {e.strerror or e}")
        except KeyboardInterrupt:
            return 130
        return 0
    if args.command in ("gpt2", "bert"):
        try:
            from tinyattn.pretrained.cli import run_command
            return run_command(args)
        except (ImportError, OSError, ValueError) as e:  # a bad folder or file: one line, no traceback
            return _fail(str(e))
        except KeyboardInterrupt:
            return 130
    return _fail(f"unknown command {args.command!r}")  # pragma: no cover - argparse rejects it first


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
