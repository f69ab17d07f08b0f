"""python -m tinyattn.grading grade [...] | release [...]  (the same as `tinyattn grade/release`)."""
import sys

from .cli import grade_main, release_main


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("grade", "release"):
        return (grade_main if argv[0] == "grade" else release_main)(argv[1:])
    return grade_main(argv)          # `python -m tinyattn.grading exercises/` grades


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
