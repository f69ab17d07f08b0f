"""Grading a folder (or a batch of folders): one judge per exercise, in parallel, with a time limit.

The grader never runs submitted code. It checks imports statically, reads each submission's
source once, and hands (source, exercise, seed) to a judge (runner.grade_exercise) in a pool of
`--jobs` worker processes; each judge runs the checks and starts the learner's own process
(sandboxed where the machine allows). A process that dies, hangs or answers nonsense becomes an
`error` or `timeout` for that exercise alone.
"""
from __future__ import annotations

import multiprocessing
import os
import re
import secrets
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import checks as checks_pkg
from . import static
from .exercises import BY_ID, EXERCISES, Exercise, get
from .learner import resolve_isolation
from .mistakes import hint
from .door import Submission, read_folder
from .runner import grade_exercise

SEED_ENV = "TINYATTN_GRADE_SEED"
EXERCISE_FILES = {ex.filename for ex in EXERCISES}
DEFAULT_TIMEOUT = 60.0


@dataclass
class ExerciseResult:
    id: str
    status: str                    # passed | failed | not_attempted | error | timeout | forbidden
    points: int
    max_points: int
    checks: list[dict] = field(default_factory=list)   # {"name", "passed", "message", "mistake"}
    seconds: float = 0.0
    isolation: str = "none"        # sandbox | user | process (where the learner's code ran) | none (never ran)
    stdout: str = ""               # the end of what the learner's code printed (4 KiB at most, from a line start)

    @property
    def mistakes(self) -> list[str]:
        return list(dict.fromkeys(c["mistake"] for c in self.checks if c.get("mistake")))

    @property
    def parts(self) -> list[tuple[str, int, int]]:
        """[(part, points earned, points possible)] (exercises.Part); [] for an unknown exercise id."""
        ex = BY_ID.get(self.id)
        if ex is None:
            return []
        earned = ex.score(self.checks)
        return [(p.name, earned[p.name], p.points) for p in ex.parts]

    def to_json(self) -> dict:
        """The issue's schema; a diagnosed mistake's hint is appended to its check's message."""
        checks = []
        for c in self.checks:
            msg = c["message"] + (f" Hint ({c['mistake']}): {hint(c['mistake'])}" if c.get("mistake") else "")
            checks.append({"name": c["name"], "passed": bool(c["passed"]), "message": msg, "mistake": c.get("mistake"),
                           "part": c.get("part")})
        out = {"id": self.id, "status": self.status, "points": self.points, "max_points": self.max_points,
               "parts": [{"name": n, "points": p, "max_points": m} for n, p, m in self.parts],
               "checks": checks, "isolation": self.isolation}
        if self.stdout:
            out["stdout"] = self.stdout
        return out


@dataclass
class GradeReport:
    path: str
    seed: int
    exercises: list[ExerciseResult]

    @property
    def total(self) -> int:
        return sum(e.points for e in self.exercises)

    @property
    def max(self) -> int:
        return sum(e.max_points for e in self.exercises)

    @property
    def all_passed(self) -> bool:
        return all(e.status == "passed" for e in self.exercises)

    @property
    def isolation(self) -> str:
        """The weakest isolation any exercise ran under ('sandbox' only when all did)."""
        used = {e.isolation for e in self.exercises} - {"none"}
        return next((i for i in ("process", "user", "sandbox") if i in used), "none")

    def to_json(self) -> dict:
        return {"total": self.total, "max": self.max, "seed": self.seed, "isolation": self.isolation,
                "exercises": [e.to_json() for e in self.exercises]}


SEED_OF_RECORD_BITS = 48        # a seed of record is at least 2**48: about 45 CPU-years to find by trying seeds


def fresh_seed() -> int:
    """62 random bits from the OS, in [2**62, 2**63): always a valid seed of record when given back."""
    return secrets.randbits(62) | 1 << 62


def resolve_seed(seed: int | None, of_record: bool = False) -> int:
    """--seed, else $TINYATTN_GRADE_SEED, else a fresh random seed (so hard-coded answers fail).

    of_record (grades of record: --batch): a seed given by hand must be at least 2**SEED_OF_RECORD_BITS,
    so that nobody can recover it from the inputs by trying every smaller one; ValueError otherwise."""
    from . import oracle
    if of_record and not oracle.live():
        raise ValueError("grades of record are made where the grader's references are installed (the instructor's "
                         "repository); this copy only has answers recorded at the seeds "
                         f"{', '.join(map(str, oracle.FIXTURE_SEEDS))}, which anyone can read")
    if (recorded := oracle.recorded_seed(seed, os.environ.get(SEED_ENV, ""))) is not None:
        return recorded                 # a student release grades only at the seeds it has answers for
    if seed is None:
        env = os.environ.get(SEED_ENV, "").strip()
        if not env:
            return fresh_seed()
        try:
            seed = int(env)
        except ValueError:
            raise ValueError(f"${SEED_ENV} must be an integer, got {env!r}") from None
    seed = int(seed)
    if of_record and not 1 << SEED_OF_RECORD_BITS <= seed < 1 << 64:
        raise ValueError(f"the seed {seed} is too small for grades of record: a seed below 2**{SEED_OF_RECORD_BITS} "
                         "can be recovered from the inputs by trying every one. Leave --seed and $"
                         f"{SEED_ENV} unset (a fresh 62-bit seed is drawn and printed), or give one drawn at random "
                         "from [2**48, 2**64), e.g. python -c \"import secrets; print(secrets.randbits(62) | 1 << 62)\"")
    return seed


def _single(ex: Exercise, status: str, name: str, message: str, seconds: float = 0.0) -> ExerciseResult:
    return ExerciseResult(ex.id, status, 0, ex.points, [{"name": name, "passed": False, "message": message,
                                                         "mistake": None}], seconds)


def grade_file(path: Path, ex: Exercise, seed: int, timeout: float = DEFAULT_TIMEOUT, isolation: str = "auto",
               hide: tuple[str, ...] = (), files: Submission | None = None, label: str | None = None) -> ExerciseResult:
    """Grade one submitted file for one exercise, judging in this process. Never raises.

    `files`: the submission folder as read through the one door before any learner code ran (read
    now if None); `label`: how messages name the folder.
    """
    start = time.perf_counter()
    try:
        return _grade_file(Path(path), ex, seed, timeout, isolation, hide, start, files, label)
    except Exception as e:  # noqa: BLE001 - the grader must report, never crash
        return _single(ex, "error", "grader", f"the grader failed on this exercise: {type(e).__name__}: {e}",
                       time.perf_counter() - start)


def _grade_file(path: Path, ex: Exercise, seed: int, timeout: float, isolation: str, hide: tuple[str, ...],
                start: float, sub: Submission | None, label: str | None) -> ExerciseResult:
    label = label if label is not None else str(path.parent)
    if sub is None:
        sub = read_folder(path.parent, label)
    if sub.refused:
        return _single(ex, "error", "learner files", "; ".join(sub.refused)[:1500] + ". Only regular .py files "
                       "(and folders of them) are read from a submission.")
    if sub.missing or path.name not in sub.files:
        return _single(ex, "error", "file exists", f"{label}/{path.name} not found (expected {ex.filename} in {label})")
    problems = []
    try:
        # the exercise and its helpers (the other exercises' files are judged as those exercises; here, the
        # sandbox still holds only what this exercise allows, whatever they import)
        for rel, text in sorted(sub.files.items(), key=lambda kv: kv[0] != path.name):
            if rel != path.name and rel in EXERCISE_FILES:
                continue
            problems += [f"{rel}, {p}" for p in static.check_source(text, ex, rel)]     # file, line, why
    except SyntaxError as e:
        if e.filename == path.name:
            return _single(ex, "error", "parses", f"syntax error in {path.name}, line {e.lineno}: {e.msg}")
        problems.append(f"{e.filename}: does not parse (line {e.lineno}: {e.msg})")
    if problems:
        return _single(ex, "forbidden", "allowed imports only", "; ".join(problems) + ". " + static.rule(ex))
    data = grade_exercise(ex.id, sub.files, str(path.resolve()), seed, timeout, isolation, hide)
    return ExerciseResult(ex.id, data["status"], points_earned(ex, data["checks"]), ex.points, data["checks"],
                          time.perf_counter() - start, data["isolation"], data.get("stdout", ""))


def points_earned(ex: Exercise, checks: list[dict]) -> int:
    """The points of every part of `ex` whose checks all passed (exercises.Exercise.score)."""
    return sum(ex.score(checks).values())


def select(only: list[str] | None) -> list[Exercise]:
    """The exercises named in `only` (ids like ex04, ex4 or 4), in course order; all when empty."""
    if not only:
        return list(EXERCISES)
    wanted = {get(x).id for x in only}
    return [ex for ex in EXERCISES if ex.id in wanted]


def default_jobs() -> int:
    return max(1, os.cpu_count() or 1)


def _grade_task(task) -> ExerciseResult:
    return grade_file(*task)


def _worker_init() -> None:
    protect_memory()


def protect_memory() -> None:
    """No other process of this user may read this one's memory or environment (Linux: not dumpable)."""
    try:
        import ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)          # PR_SET_DUMPABLE = 0
    except (OSError, AttributeError):
        pass


def scrub_own_cmdline(secret: str) -> None:
    """Overwrite `secret` in this process's original argv and environment memory (what
    /proc/<pid>/cmdline and /proc/<pid>/environ show), so `--seed N` or $TINYATTN_GRADE_SEED=N
    can not be read there by another process. Linux only; a no-op elsewhere."""
    if not secret or not sys.platform.startswith("linux"):
        return
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        # fields after the name: state is 3rd overall; arg_start..env_end are the 48th..51st
        spans = [(int(fields[45]), int(fields[46])), (int(fields[47]), int(fields[48]))]
        key = secret.encode()

        def scrub(word: bytes) -> bytes:
            if word == key or word.endswith(b"=" + key) and (word.startswith(b"--seed=")
                                                             or word.startswith(SEED_ENV.encode() + b"=")):
                return word[:len(word) - len(key)] + b"x" * len(key)
            return word
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            for start, end in spans:
                mem.seek(start)
                area = mem.read(end - start)
                new = b"\0".join(scrub(w) for w in area.split(b"\0"))
                if new != area:
                    mem.seek(start)
                    mem.write(new)
    except (OSError, ValueError, IndexError):
        pass


def run_tasks(tasks: list[tuple[Path, Exercise]], seed: int, timeout: float, jobs: int | None,
              on_done=None, isolation: str = "auto", hide: tuple[str, ...] = (),
              labels: dict[Path, str] | None = None) -> list[ExerciseResult]:
    """Grade (file, exercise) pairs on `jobs` judge processes; results in the order given."""
    jobs = max(1, min(jobs or default_jobs(), len(tasks) or 1))
    isolation = resolve_isolation(isolation)
    for ex in dict.fromkeys(t[1] for t in tasks):
        checks_pkg.load(ex.id)               # every check in memory before any submission runs
    # every submission is read now, through the one door, before any of them runs: no learner's code
    # can change another's files, and nothing is read again
    snapshots: dict[Path, Submission] = {}
    for p, _ in tasks:
        p = Path(p)
        if p.parent not in snapshots:
            snapshots[p.parent] = read_folder(p.parent, (labels or {}).get(p.parent))
    if any(t[1].kind == "module" for t in tasks):
        from .allowed import tensor_library
        tensor_library()                     # built once, before the pool forks
    full = [(Path(p), ex, seed, timeout, isolation, tuple(str(h) for h in hide), snapshots[Path(p).parent],
             (labels or {}).get(Path(p).parent)) for p, ex in tasks]
    results: list[ExerciseResult] = []
    if jobs == 1:
        for task, f in zip(tasks, full):
            results.append(_grade_task(f))
            if on_done is not None:
                on_done(task, results[-1])
        return results
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context(method),
                             initializer=_worker_init) as pool:
        futures = [pool.submit(_grade_task, f) for f in full]
        for task, fut in zip(tasks, futures):
            results.append(fut.result())
            if on_done is not None:
                on_done(task, results[-1])
    return results


def grade_folder(path: str | os.PathLike = "exercises", only: list[str] | None = None, seed: int | None = None,
                 timeout: float = DEFAULT_TIMEOUT, jobs: int | None = None, isolation: str = "auto") -> GradeReport:
    """Grade a folder laid out like exercises/ (exNN_*.py files)."""
    folder, seed = Path(path), resolve_seed(seed)
    exercises = select(only)
    results = run_tasks([(folder / ex.filename, ex) for ex in exercises], seed, timeout, jobs,
                        isolation=isolation, hide=(str(folder.resolve()),), labels={folder: str(path)})
    return GradeReport(str(folder), seed, results)


def submission_folder(path: Path) -> Path:
    """A submission is either laid out like exercises/ or holds an exercises/ folder (a cloned repo).
    Decided from names alone (no link is followed: the one door refuses links when it reads)."""
    path = Path(path)
    if path.is_symlink():
        return path
    try:
        names = os.listdir(path)
    except OSError:
        return path
    if "exercises" in names and not any(re.fullmatch(r"ex\d\d_.*\.py", n) for n in names):
        return path / "exercises"
    return path


def grade_batch(root: str | os.PathLike, only: list[str] | None = None, seed: int | None = None,
                timeout: float = DEFAULT_TIMEOUT, jobs: int | None = None, on_done=None,
                isolation: str = "auto") -> list[GradeReport]:
    """Grade every sub-folder of `root` (one per learner), all exercises in one parallel pool."""
    root, seed = Path(root), resolve_seed(seed, of_record=True)      # grades of record: no guessable seed
    # a link to a folder is a submission too: the one door refuses it by name (no automatic plagiarism)
    subs = sorted(p for p in root.iterdir() if (p.is_symlink() or p.is_dir()) and not p.name.startswith("."))
    exercises = select(only)
    folders = {sub: submission_folder(sub) for sub in subs}
    labels = {f: f.relative_to(root).as_posix() for f in folders.values()}
    tasks = [(folders[sub] / ex.filename, ex) for sub in subs for ex in exercises]
    # every learner's folder is hidden from every learner's process: sources travel over the pipe
    results = run_tasks(tasks, seed, timeout, jobs, on_done, isolation, hide=(str(root.resolve()),), labels=labels)
    n = len(exercises)
    return [GradeReport(str(sub), seed, results[i * n:(i + 1) * n]) for i, sub in enumerate(subs)]
