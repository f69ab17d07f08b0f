"""tinyattn.grading: the mistake-aware autograder for exercises/ (re-exports only).

    tinyattn grade [PATH] [--only ex04 ...] [--json FILE] [--seed N] [--timeout S] [--isolation auto]
    tinyattn grade --batch DIR --csv grades.csv --jobs N
    tinyattn release                      # solutions/ -> exercises/ (maintainers)
    tinyattn release --student OUT        # the repository a student gets: no answers, recorded fixtures
    check("ex04"), check("ex04", attention=f)   # from a notebook (notebook.py)

How a grade is made, and why a submission can not forge it
-----------------------------------------------------------
Two kinds of process, and the line between them is a pipe that carries only plain data.

* The JUDGE (runner.py, in the grader or one of its `--jobs` worker processes) holds everything a
  grade depends on: the checks (checks/), the references, the known-wrong variants, the seed and
  the verdict. It reads each submission's folder once, through ONE door (door.py: regular .py
  files only, no link followed, sizes and counts capped), before any submitted code runs, checks
  the imports of every file statically (static.py), and draws the inputs from a generator seeded
  privately.
* The LEARNER'S PROCESS (child.py, started by learner.py) gets the files over its stdin and
  nothing else: no seed, no references, no expected values, no writable path to any verdict, and
  an environment of a dozen fixed variables. It runs the calls the judge asks for and answers each
  with plain data: {"ok": value} or {"raised": kind, class names, message, line}, plus what it
  printed. ex08's module initialises from a fresh random salt, nothing derived from the seed.
* The PIPE (wire.py) is JSON plus raw array bytes, never pickle, every length checked against a cap
  before anything is read or parsed, every read and write of the judge bounded by the deadline.
  The judge rebuilds every array with np.frombuffer after checking dtype and size, so what it
  compares is always a fresh, plain `numpy.ndarray`. A reply that is not one is an error.
* OBJECTS (ex08's module, its Tensors, a bound method) never cross: the learner's process keeps
  them and sends a handle (learner.Remote); attribute reads and calls are further requests.
* MEASUREMENTS come from outside the learner's code: ex12's memory bound is an address-space limit
  the kernel enforces (set before the learner's code loads, in a fresh process); the cost of a derived
  backward (ex02, ex05, ex06, ex10) is the CPU time the judge reads from /proc for a call in a fresh
  process, against its own reference forward on one BLAS thread (meter.py): a numerical gradient
  costs one forward per input entry. A measured call runs alone (RLIMIT_NPROC = 1). Whether a call
  wrote into its arguments the judge sees itself (shared_inputs.py): a call's arrays are views of a
  file the judge made, which it seals against every write and reads back before the reply may be
  sent; the learner's process is never asked. A write fails the check it happened in (so its part).

What each exercise may import (exercises.py, the same list in the static check and the docstrings):
NumPy and the standard library; ex08 also a build of tinyattn without its attention code
(allowed.py). NumPy exercises have no tinyattn at all (so no numerical_grad either).

Isolation of the learner's process (`isolation` on every result, every --csv row):
* "sandbox" (Linux; no root, no package needed: plain system calls from child.py): new user, PID,
  network, mount, IPC and UTS namespaces and a FRESH root, a small tmpfs holding only read-only
  binds of /usr, /lib*, /bin, Python's prefix and NumPy (every site-packages folder emptied but for
  NumPy), /dev/null, zero, random, urandom, a /proc of its own, a private /tmp, and for ex08 the
  allowed tinyattn at /opt/tinyattn. No checkout, .git, home, /etc (but the loader's cache), host
  /tmp or /run, other learner, host Unix socket, terminal or network. As root, the grader maps
  each sandbox to a host uid of its own (no account's); otherwise a nested user namespace locks the
  mounts and drops every capability. RLIMIT_NPROC (counted per user namespace) and RLIMIT_AS cap
  the whole sandbox; the wall-clock deadline kills its PID namespace. Needs user namespaces: on
  Ubuntu 24.04 `kernel.apparmor_restrict_unprivileged_userns=0`, or a root grader.
* "user" (a root grader without namespaces, e.g. in Docker): a plain child process under a uid of
  its own, no tinyattn but the allowed build.
* "process" (macOS, namespaces off): a plain child process that can read what the grader's user can
  read and signal its processes. `tinyattn grade` warns; `--batch` refuses it unless asked for
  with `--isolation process`. For grades of record there, use the Docker recipe (exercises/README.md).

The seed of record: --seed, $TINYATTN_GRADE_SEED or a fresh 63-bit random seed. It lives only in
the judge; the grader overwrites it in its own /proc cmdline and environ memory and makes itself
non-dumpable (no same-user process may read its memory), and --json records it for the instructor.
"""
from .exercises import EXERCISES, Exercise
from .mistakes import MISTAKES
from .grader import ExerciseResult, GradeReport, grade_batch, grade_folder
from .release import release, strip_solutions
from .notebook import CheckReport, check, find_exercises

__all__ = ["EXERCISES", "CheckReport", "Exercise", "MISTAKES", "ExerciseResult", "GradeReport", "check",
           "find_exercises", "grade_batch", "grade_folder", "release", "strip_solutions"]
