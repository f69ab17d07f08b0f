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
  the verdict. It reads each submission's source once, before any submitted code runs, checks
  its imports statically (static.py), and draws the inputs from a generator seeded privately.
* The LEARNER'S PROCESS (child.py, started by learner.py) gets the source over its stdin and
  nothing else: no seed, no references, no expected values, no writable path to any verdict, and
  an environment of a dozen fixed variables. It imports only the standard library, NumPy, the
  learner's files and, for ex08, tinyattn. It runs the calls the judge asks for and answers each
  with plain data: {"ok": value} or {"raised": kind, class names, message, line}, plus what it
  printed and whether it modified its arguments.
* The PIPE (wire.py) is JSON plus raw array bytes, never pickle. The judge rebuilds every array
  with np.frombuffer after checking dtype (bool/int/uint/float/complex) and size, so what it
  compares is always a fresh, plain `numpy.ndarray`: no subclass, no `__array__`, no object that
  runs code. The judge decides from that data alone; a reply that is not one is an error.
* OBJECTS (ex08's module, its Tensors, a bound method) never cross: the learner's process keeps
  them and sends a handle (learner.Remote). Reading an attribute, calling the object or a method
  is a further request; a Tensor comes back with its data as a plain array. So the checks read
  as they would in-process (`m = build(...)`, `m.W_q.weight.data`, `out.backward(g)`), and the
  check files did not change for it.

Isolation of the learner's process (recorded per exercise in --json and --csv):
* "sandbox" (Linux, no root needed): `unshare` gives it its own user, PID, network and mount
  namespaces; inside, child.py makes every mount read-only, mounts a private tmpfs, hides the
  grader, solutions/, tests/, the learners' folders (a batch's root: sources came over the pipe)
  and all of site-packages but NumPy, then enters a nested namespace so none of that can be
  undone, drops every capability, and sets CPU, memory, file-size and open-file limits. It can
  not see any process outside (so not the judge's memory, command line or environment), has no
  network, and everything it starts dies with the namespace when the judge kills it.
* "process" (macOS, Docker's default seccomp profile, user namespaces turned off): a plain child
  process. It still never holds the seed or the references, but it can read what the grader's
  user can read, so `tinyattn grade` warns; its session and every descendant are killed at the end.
  For grades of record there, run the grader in a container (`docker run --network none`, see
  exercises/README.md and the Dockerfile).

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
