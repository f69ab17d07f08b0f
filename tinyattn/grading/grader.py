"""Grading a folder (or a batch of folders): one subprocess per exercise, in parallel, with a time limit.

The parent never runs submitted code. It checks imports statically, starts
`python -m tinyattn.grading.runner` per exercise, and reads back the JSON verdict; a process
that dies, hangs or writes nothing becomes an `error` or `timeout` for that exercise alone.
"""
from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import static
from .exercises import EXERCISES, Exercise, get
from .mistakes import hint

SEED_ENV = "TINYATTN_GRADE_SEED"
DEFAULT_TIMEOUT = 60.0
STDOUT_CHUNKS = 4                                          # KiB of a learner's stdout kept for the report
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])   # the folder that holds tinyattn/


@dataclass
class ExerciseResult:
    id: str
    status: str                    # passed | failed | not_attempted | error | timeout | forbidden
    points: int
    max_points: int
    checks: list[dict] = field(default_factory=list)   # {"name", "passed", "message", "mistake"}
    seconds: float = 0.0
    stdout: str = ""               # the end of what the learner's code printed (a few KiB at most)

    @property
    def mistakes(self) -> list[str]:
        return list(dict.fromkeys(c["mistake"] for c in self.checks if c.get("mistake")))

    def to_json(self) -> dict:
        """The issue's schema; a diagnosed mistake's hint is appended to its check's message."""
        checks = []
        for c in self.checks:
            msg = c["message"] + (f" Hint ({c['mistake']}): {hint(c['mistake'])}" if c.get("mistake") else "")
            checks.append({"name": c["name"], "passed": bool(c["passed"]), "message": msg, "mistake": c.get("mistake")})
        out = {"id": self.id, "status": self.status, "points": self.points, "max_points": self.max_points,
               "checks": checks}
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

    def to_json(self) -> dict:
        return {"total": self.total, "max": self.max, "exercises": [e.to_json() for e in self.exercises]}


def resolve_seed(seed: int | None) -> int:
    """--seed, else $TINYATTN_GRADE_SEED, else a fresh random seed (so hard-coded answers fail)."""
    from .oracle import recorded_seed
    if (recorded := recorded_seed(seed, os.environ.get(SEED_ENV, ""))) is not None:
        return recorded                 # a student release grades only at the seeds it has answers for
    if seed is not None:
        return int(seed)
    env = os.environ.get(SEED_ENV, "").strip()
    if env:
        try:
            return int(env)
        except ValueError:
            raise ValueError(f"${SEED_ENV} must be an integer, got {env!r}") from None
    return secrets.randbelow(2**31)


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != SEED_ENV}      # the seed stays private
    env["PYTHONPATH"] = PACKAGE_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONIOENCODING="utf-8")
    return env


def _single(ex: Exercise, status: str, name: str, message: str, seconds: float = 0.0) -> ExerciseResult:
    return ExerciseResult(ex.id, status, 0, ex.points, [{"name": name, "passed": False, "message": message,
                                                         "mistake": None}], seconds)


def _kill(proc: subprocess.Popen) -> None:
    """Kill the runner and anything it started (it leads its own process group)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        proc.kill()


def grade_file(path: Path, ex: Exercise, seed: int, timeout: float = DEFAULT_TIMEOUT) -> ExerciseResult:
    """Grade one submitted file for one exercise. Never raises."""
    start = time.perf_counter()
    try:
        return _grade_file(Path(path), ex, seed, timeout, start)
    except Exception as e:  # noqa: BLE001 - the grader must report, never crash
        return _single(ex, "error", "grader", f"the grader failed on this exercise: {type(e).__name__}: {e}",
                       time.perf_counter() - start)


def _grade_file(path: Path, ex: Exercise, seed: int, timeout: float, start: float) -> ExerciseResult:
    if not path.is_file():
        return _single(ex, "error", "file exists", f"{path} not found (expected {ex.filename} in {path.parent})")
    try:
        source = path.read_text(encoding="utf-8")
        problems = static.check_source(source, ex, str(path))
    except SyntaxError as e:
        return _single(ex, "error", "parses", f"syntax error in {path.name}, line {e.lineno}: {e.msg}")
    except (UnicodeDecodeError, OSError) as e:
        return _single(ex, "error", "readable", f"can not read {path}: {e}")
    if problems:
        return _single(ex, "forbidden", "allowed imports only", "; ".join(problems) + ". " + static.rule(ex))

    # the result goes to a private folder; the learner's code runs in another, empty one
    with tempfile.TemporaryDirectory() as private, tempfile.TemporaryDirectory() as workdir:
        result_path = os.path.join(private, "result.json")
        nonce = secrets.token_hex(16)
        job = json.dumps({"exercise": ex.id, "file": str(path.resolve()), "seed": seed, "result": result_path,
                          "nonce": nonce})
        proc = subprocess.Popen([sys.executable, "-m", "tinyattn.grading.runner"], cwd=workdir, env=_child_env(),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        tail: deque[bytes] = deque(maxlen=16)                 # the last ~64 KiB of stderr, however much comes
        printed: deque[bytes] = deque(maxlen=STDOUT_CHUNKS)   # the last few KiB of stdout (shown on failure)
        readers = [threading.Thread(target=lambda q=q, f=f: [q.append(b) for b in iter(lambda: f.read(1024), b"")],
                                    daemon=True) for q, f in ((tail, proc.stderr), (printed, proc.stdout))]
        for reader in readers:
            reader.start()
        try:
            proc.stdin.write(job.encode() + b"\n")
            proc.stdin.close()
        except OSError:                                       # it died before reading: reported below
            pass
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(proc)
            proc.wait()
            for reader in readers:
                reader.join(timeout=1.0)
            res = _single(ex, "timeout", "finishes in time",
                          f"still running after {timeout:g} s and stopped: look for an infinite loop "
                          "(a while loop whose condition never changes) or a very slow Python loop",
                          time.perf_counter() - start)
            res.stdout = _printed(printed)
            return res
        _kill(proc)                                           # anything the learner's code left running
        for reader in readers:
            reader.join(timeout=1.0)
        seconds = time.perf_counter() - start
        try:
            with open(result_path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            data = None
        if data is None or data.get("nonce") != nonce:
            err = b"".join(tail).decode("utf-8", "replace").strip().splitlines()
            last = err[-1] if err else ""
            why = (f"the exercise's process exited with status {rc} before reporting a result"
                   + (" (os._exit or a crash?)" if rc == 0 else "")
                   + (f"; last error line: {last}" if last else ""))
            if data is not None:
                why = "the result file was not written by the grader's runner"
            res = _single(ex, "error", "reports a result", why, seconds)
            res.stdout = _printed(printed)
            return res
    status = data["status"]
    return ExerciseResult(ex.id, status, ex.points if status == "passed" else 0, ex.points, data["checks"], seconds,
                          _printed(printed))


def _printed(chunks) -> str:
    """The learner's stdout as text: its last STDOUT_CHUNKS KiB, cut at a line start."""
    text = b"".join(chunks).decode("utf-8", "replace")
    if len(chunks) == STDOUT_CHUNKS and "\n" in text:
        text = text[text.index("\n") + 1:]                  # the first line was cut in the middle
    return text


def select(only: list[str] | None) -> list[Exercise]:
    """The exercises named in `only` (ids like ex04, ex4 or 4), in course order; all when empty."""
    if not only:
        return list(EXERCISES)
    wanted = {get(x).id for x in only}
    return [ex for ex in EXERCISES if ex.id in wanted]


def default_jobs() -> int:
    return max(1, os.cpu_count() or 1)


def run_tasks(tasks: list[tuple[Path, Exercise]], seed: int, timeout: float, jobs: int | None,
              on_done=None) -> list[ExerciseResult]:
    """Grade (file, exercise) pairs on `jobs` parallel runners; results in the order given."""
    jobs = max(1, min(jobs or default_jobs(), len(tasks) or 1))

    def one(task):
        res = grade_file(task[0], task[1], seed, timeout)
        if on_done is not None:
            on_done(task, res)
        return res

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, tasks))


def grade_folder(path: str | os.PathLike = "exercises", only: list[str] | None = None, seed: int | None = None,
                 timeout: float = DEFAULT_TIMEOUT, jobs: int | None = None) -> GradeReport:
    """Grade a folder laid out like exercises/ (exNN_*.py files)."""
    folder, seed = Path(path), resolve_seed(seed)
    exercises = select(only)
    results = run_tasks([(folder / ex.filename, ex) for ex in exercises], seed, timeout, jobs)
    return GradeReport(str(folder), seed, results)


def submission_folder(path: Path) -> Path:
    """A submission is either laid out like exercises/ or holds an exercises/ folder (a cloned repo)."""
    return path / "exercises" if (path / "exercises").is_dir() and not any(path.glob("ex[0-9][0-9]_*.py")) else path


def grade_batch(root: str | os.PathLike, only: list[str] | None = None, seed: int | None = None,
                timeout: float = DEFAULT_TIMEOUT, jobs: int | None = None, on_done=None) -> list[GradeReport]:
    """Grade every sub-folder of `root` (one per learner), all exercises in one parallel pool."""
    root, seed = Path(root), resolve_seed(seed)
    subs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    exercises = select(only)
    tasks = [(submission_folder(sub) / ex.filename, ex) for sub in subs for ex in exercises]
    results = run_tasks(tasks, seed, timeout, jobs, on_done)
    n = len(exercises)
    return [GradeReport(str(sub), seed, results[i * n:(i + 1) * n]) for i, sub in enumerate(subs)]
