"""Submissions that try to get a grade without solving the exercise: none may end `passed`.

Every tampering class of the red-team report has a file in grading_fixtures/tamper/ (see its
README); the batch attacks are written here, since they need this run's paths. All of them are
graded in the sandbox, which must work on Linux (user, PID, network and mount namespaces).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tinyattn.grading import grade_batch
from tinyattn.grading.exercises import get
from tinyattn.grading.grader import default_jobs, run_tasks
from tinyattn.grading.learner import PACKAGE_ROOT, sandbox_problem

ROOT = Path(__file__).resolve().parents[1]
TAMPER = Path(__file__).resolve().parent / "grading_fixtures" / "tamper"
ISOLATION = "sandbox" if sys.platform.startswith("linux") else "process"
SEED = 4611686018427392225               # a seed of record (grade_batch refuses one below 2**48)
TIMEOUT = 20.0
HONEST = {"lingering_thread_ex13.py"}           # correct answers with a nuisance: they must pass


def test_the_sandbox_works_on_linux():
    if sys.platform.startswith("linux"):
        assert sandbox_problem() is None


def _as_exercise(folder: Path, fixture: Path) -> Path:
    ex = get(fixture.stem[-4:])
    folder.mkdir(parents=True)
    shutil.copy(fixture, folder / ex.filename)
    return folder / ex.filename


@pytest.fixture(scope="module")
def tampered(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tamper")
    files = sorted(TAMPER.glob("*_ex[0-9][0-9].py"))
    tasks = [(_as_exercise(tmp / f.stem, f), get(f.stem[-4:])) for f in files]
    results = run_tasks(tasks, SEED, TIMEOUT, default_jobs(), isolation=ISOLATION)
    return {f.name: r for f, r in zip(files, results)}


# without namespaces (macOS, Docker) the learner's process can read files, so these hold only in the
# sandbox: reading the references or solutions, importing an installed framework, reading /proc
NEEDS_SANDBOX = {"reach_answers_ex13.py", "framework_ex11.py", "seed_hunter_ex13.py"}


@pytest.fixture(scope="module")
def plain_process(tmp_path_factory):
    """The same submissions in a plain child process: what must hold even without a sandbox."""
    tmp = tmp_path_factory.mktemp("tamper_process")
    files = sorted(f for f in TAMPER.glob("*_ex[0-9][0-9].py") if f.name not in NEEDS_SANDBOX)
    tasks = [(_as_exercise(tmp / f.stem, f), get(f.stem[-4:])) for f in files]
    results = run_tasks(tasks, SEED, TIMEOUT, default_jobs(), isolation="process")
    return {f.name: r for f, r in zip(files, results)}


def test_without_a_sandbox_the_judge_still_decides(plain_process, tampered):
    assert all(r.isolation == "process" or r.status == "forbidden" for r in plain_process.values())
    for name, r in plain_process.items():
        if name in HONEST:
            assert r.status == "passed", r.checks
        else:
            assert r.status == tampered[name].status != "passed" and r.points == 0, (name, r.checks)
    test_no_process_outlives_the_grader(plain_process)       # the setsid grandchild is found and killed


def test_every_fixture_is_graded(tampered):
    # a computed import name is refused before anything runs (isolation "none"); the rest ran sandboxed
    assert len(tampered) >= 10
    assert all(r.isolation == ISOLATION or r.status == "forbidden" for r in tampered.values())


@pytest.fixture(scope="module")
def unchecked(tmp_path_factory):
    """The submissions that hide their imports, graded WITHOUT the static check: the sandbox alone."""
    from tinyattn.grading.runner import grade_exercise
    out = {}
    for name in ("reach_answers_ex13.py", "framework_ex11.py"):
        ex = get(name[-7:-3])
        out[name] = grade_exercise(ex.id, {ex.filename: (TAMPER / name).read_text()}, f"/x/{ex.filename}", SEED,
                                   TIMEOUT, ISOLATION)
    return out


def test_hidden_imports_are_refused_before_they_run(tampered):
    for name in ("reach_answers_ex13.py", "framework_ex11.py"):
        r = tampered[name]
        assert r.status == "forbidden" and "computed name" in r.checks[0]["message"], r.checks


@pytest.mark.parametrize("name", sorted(f.name for f in TAMPER.glob("*_ex[0-9][0-9].py") if f.name not in HONEST))
def test_tampering_never_passes(tampered, name):
    r = tampered[name]
    assert r.status != "passed" and r.points == 0, r.checks


@pytest.mark.skipif(ISOLATION != "sandbox", reason="without namespaces the learner's process reads files")
def test_reaching_the_answers_finds_nothing(unchecked):
    # a NumPy exercise's sandbox holds no tinyattn at all: the hunt for the package's folder ends at None
    r = unchecked["reach_answers_ex13.py"]
    text = " ".join(c["message"] for c in r["checks"])
    assert r["status"] == "error" and "'NoneType' object has no attribute 'origin'" in text, text


@pytest.mark.skipif(ISOLATION != "sandbox", reason="without namespaces the learner's process reads files")
def test_a_framework_can_not_be_imported_even_without_the_guard(unchecked):
    r = unchecked["framework_ex11.py"]
    assert r["status"] == "error" and "No module named 'scipy'" in r["checks"][0]["message"], r["checks"]


def test_lies_in_the_learners_numpy_do_not_reach_the_judge(tampered):
    r = tampered["lying_numpy_ex13.py"]
    assert r.status == "failed" and any("differs from the expected mask" in c["message"] for c in r.checks)
    r = tampered["array_like_ex01.py"]
    assert r.status == "failed" and "should be a NumPy array, got Fake" in r.checks[0]["message"]


def test_a_forged_reply_on_the_pipe_is_only_an_answer(tampered):
    # whatever reaches the judge is data it checks itself: a reply saying "passed" is just a wrong reply
    r = tampered["protocol_forger_ex13.py"]
    assert r.status in ("error", "failed") and not any(c["passed"] for c in r.checks), r.checks


def test_no_process_outlives_the_grader(tampered):
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc") if os.path.isdir("/proc") else []):
        try:
            left += [pid] if b"4242.4242" in Path(f"/proc/{pid}/cmdline").read_bytes() else []
        except OSError:
            pass
    assert tampered["verdict_writers_ex13.py"].status == "failed" and not left


def test_a_lingering_thread_does_not_make_a_correct_answer_time_out(tampered):
    r = tampered["lingering_thread_ex13.py"]
    assert r.status == "passed" and r.seconds < TIMEOUT / 2, r.checks


def test_a_megabyte_on_stderr_stays_a_short_message(tampered):
    r = tampered["huge_stderr_ex01.py"]
    assert r.status == "error" and "status 3" in r.checks[0]["message"]
    assert max(len(c["message"]) for c in r.checks) < 600


def test_the_seed_never_reaches_the_learner(tmp_path):
    """Given on the command line AND in the environment, the seed is still nowhere the child can look."""
    folder = tmp_path / "learner"
    _as_exercise(folder, TAMPER / "seed_hunter_ex13.py")
    out = tmp_path / "r.json"
    env = {**os.environ, "PYTHONPATH": PACKAGE_ROOT, "TINYATTN_GRADE_SEED": "817263549"}
    proc = subprocess.run([sys.executable, "-m", "tinyattn.grading", "grade", str(folder), "--only", "ex13",
                           "--seed", "918273645", "--json", str(out), "--isolation", ISOLATION],
                          capture_output=True, text=True, timeout=120, env=env)
    data = json.loads(out.read_text())
    assert data["seed"] == 918273645                              # recorded for the instructor ...
    (ex,) = data["exercises"]
    leak = " ".join(c["message"] for c in ex["checks"])
    assert ex["status"] == "error" and "leak:" in leak, proc.stdout + proc.stderr
    assert "918273645" not in leak and "817263549" not in leak    # ... but never seen by the learner
    assert "mem-open" not in leak                                  # no other process's memory could be opened


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


ATTACK = '''
import os
done = []
for path in {targets!r}:
    try:
        with open(path, "a") as f:           # appending nothing: harmless if it worked, but it must not
            f.write("")
        done.append("wrote " + path)
    except OSError:
        pass
for path in {deletions!r}:
    try:
        os.remove(path)
        done.append("deleted " + path)
    except OSError:
        pass
for path in {probes!r}:
    try:
        with open(path, "w") as f:
            f.write("raise SystemExit('tampered')")
        done.append("created " + path)
    except OSError:
        pass


def sliding_window_mask(T, window):
    raise RuntimeError("attack: " + "; ".join(done))


def attention_scores(Q, K):
    raise RuntimeError("attack: " + "; ".join(done))
'''


def test_a_learner_can_not_touch_the_grader_or_another_learner(tmp_path):
    root = tmp_path / "submissions"
    bob = root / "bob"
    bob.mkdir(parents=True)
    for ex_id in ("ex01", "ex13"):
        shutil.copy(ROOT / "solutions" / get(ex_id).filename, bob)
    grading = Path(PACKAGE_ROOT) / "tinyattn" / "grading"
    probes = [str(grading / "_tamper_probe.py"), str(Path(PACKAGE_ROOT) / "tinyattn" / "_tamper_probe.py"),
              str(bob / "ex02_softmax.py")]
    targets = [str(grading / "checkkit.py"), str(grading / "checks" / "ex13_sliding_window.py"),
               str(bob / "ex13_sliding_window.py")]
    source = ATTACK.format(targets=targets, deletions=[str(bob / "ex01_scores.py")], probes=probes)
    (root / "alice").mkdir()
    for ex_id in ("ex01", "ex13"):
        (root / "alice" / get(ex_id).filename).write_text(source)
    before = _digest(bob)
    try:
        alice, bob_report = grade_batch(root, ["ex01", "ex13"], seed=SEED, timeout=TIMEOUT, jobs=2,
                                        isolation=ISOLATION)
    finally:
        found = [p for p in probes[:2] if os.path.exists(p)]
        for p in found:
            os.remove(p)
    assert not found
    assert _digest(bob) == before                                  # nothing written, created or deleted
    assert (bob_report.total, bob_report.max) == (10, 10)
    assert alice.total == 0 and all(r.status == "error" for r in alice.exercises)
    said = " ".join(c["message"] for r in alice.exercises for c in r.checks)
    assert "attack: " in said and "wrote" not in said and "deleted" not in said and "created" not in said


HUNTER = '''
import gc, os, sys
def sliding_window_mask(T, window):
    seen = {"argv": sys.argv, "executable": sys.executable, "cwd": os.getcwd(), "environ": dict(os.environ),
            "path": sys.path, "file": __file__, "code": sliding_window_mask.__code__.co_filename}
    for name in ("cmdline", "environ"):
        try:
            seen[name] = open("/proc/self/" + name, "rb").read().decode("utf-8", "replace")
        except OSError:
            pass
    frame, stack = sys._getframe(), []
    while frame is not None:                     # the child's own frames: the load message, its config
        stack.append(repr(frame.f_locals)[:200000])
        frame = frame.f_back
    seen["frames"] = stack
    seen["gc"] = [o for o in gc.get_objects() if isinstance(o, dict) and "op" in o][:50]
    found = sorted(k for k, v in seen.items() if any(m in repr(v) for m in MARKERS))
    raise ValueError("REPORT" + repr(found) + "REPORT " + sys.argv[0])
'''


@pytest.mark.parametrize("isolation", ["process", ISOLATION])
def test_no_path_of_the_checkout_reaches_the_learners_process(isolation):
    # in --isolation process the checkout was reachable through sys.argv[0]: the learner's process now
    # knows its file only by its own folder's name, in argv, code objects and every message it is sent
    from tinyattn.grading.runner import grade_exercise
    origin = ROOT / "exercises" / "ex13_sliding_window.py"
    source = f"MARKERS = {[str(ROOT), str(origin)]!r}\n" + HUNTER
    r = grade_exercise("ex13", {"ex13_sliding_window.py": source}, str(origin), SEED, TIMEOUT, isolation)
    seen = r["checks"][0]["message"]
    assert seen.split("REPORT")[1] == "[]", seen
    assert seen.split("REPORT")[2].strip().split(" ")[0].endswith("/ex13_sliding_window.py")
