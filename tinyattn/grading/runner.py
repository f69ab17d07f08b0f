"""The judge: runs ONE exercise's checks here, the learner's code in its own process.

The checks, the references, the seed and the verdict stay in this process. The submission's
source goes to a fresh learner process (learner.py, child.py) that runs only the calls the checks
ask for; what comes back is plain data. Whatever the submission does there (print, exit, crash,
hang, patch NumPy, fork, write files) can only change what it answers, never how it is judged.
"""
from __future__ import annotations

import secrets
from pathlib import Path

import numpy as np

from . import checks as checks_pkg
from .checkkit import ERROR, FORBIDDEN, NOT_IMPLEMENTED, PASSED, CheckResult, Session
from .exercises import EXERCISES, get
from .allowed import tensor_library
from .learner import LearnerDied, LearnerProcess, LearnerTimeout, resolve_isolation
from .resident import STUB
from .static import ALWAYS, NEVER_RULE
from .text import clean_text

BLOCKED = ALWAYS                       # refused at import time too, in the learner's process
RULE = NEVER_RULE                      # said after "importing X is not allowed: ", word for word as in the docstrings
CONFINE = (Path(__file__).resolve().parent / "confine.py").read_text(encoding="utf-8")   # run by the learner's process


def submission_files(path: str | Path) -> dict[str, str]:
    """The submitted file's folder through the one door (door.read_folder): for scripts and tests.
    OSError naming what was refused."""
    from .door import read_folder
    path = Path(path)
    sub = read_folder(path.parent)
    if sub.refused:
        raise OSError("; ".join(sub.refused))
    if path.name not in sub.files:
        raise FileNotFoundError(f"{path} not found")
    return sub.files


def _verdict(status: str, name: str, message: str) -> dict:
    return {"status": status, "checks": [CheckResult(name, status, message).to_json()]}


def _load_verdict(r: dict, path: str) -> dict:
    kind, msg, where = r.get("kind"), str(r.get("message", ""))[:2000], str(r.get("where", ""))[:400]
    if kind == "forbidden":
        return _verdict(FORBIDDEN, "allowed imports only", msg)
    if kind == "not_implemented":
        return _verdict("not_attempted", "loads", f"the file raises NotImplementedError at import: {msg}")
    if kind == "exit":
        return _verdict(ERROR, "loads", f"the file calls sys.exit({str(r.get('code'))[:100]}) while being imported"
                                        f"{where}; keep scripts under `if __name__ == \"__main__\":`")
    name = (r.get("types") or ["Exception"])[0]
    return _verdict(ERROR, "loads", f"importing the file raised {name}: {msg}{where}")


def grade_exercise(ex_id: str, files: dict[str, str], origin: str, seed: int, timeout: float = 60.0,
                   isolation: str = "auto", hide: tuple[str, ...] = ()) -> dict:
    """{'status', 'checks', 'stdout', 'isolation'} for one exercise; never raises for the learner's doing.

    `files`: the submission's sources by name (files[Path(origin).name] is the exercise); `origin`:
    where it came from (tracebacks name it); `hide`: more paths the sandbox hides (a batch's root).
    """
    ex = get(ex_id)
    isolation = resolve_isolation(isolation)
    library = tensor_library() if ex.kind == "module" else None
    result: dict
    proc = None
    try:
        proc = LearnerProcess(isolation, timeout, hide, library)
        result = _judge(ex, proc, files, origin, seed, lambda budget, alone=False: LearnerProcess(
            isolation, timeout, hide, library, as_budget=budget or None, alone=alone))
    except LearnerTimeout:
        result = _verdict("timeout", "finishes in time",
                          f"still running after {timeout:g} s and stopped: look for an infinite loop "
                          "(a while loop whose condition never changes) or a very slow Python loop")
    except LearnerDied as e:
        result = _verdict(ERROR, "reports a result", e.message)
    finally:
        if proc is not None:
            proc.close()
    # every message leaves the judge cleaned (text.clean_text): whatever a check quoted of the learner's
    for c in result["checks"]:
        c["message"] = clean_text(c.get("message", ""), 8000)
    result["stdout"] = clean_text(proc.stdout, 8000) if proc is not None else ""
    result["isolation"] = isolation
    return result


def load(proc: LearnerProcess, ex, files: dict[str, str], origin: str) -> dict | None:
    """Send the submission to a fresh learner process; None when it loaded, else the verdict.

    ex08's module initialises its weights from a fresh random salt drawn here for this process:
    nothing derived from the seed of record reaches the learner's code (the checks then write
    every weight themselves)."""
    if ex.real_only:      # a confined exercise imports no other exercise's file: only its helpers passed its rules
        files = {name: text for name, text in files.items() if name == Path(origin).name
                 or name not in {e.filename for e in EXERCISES}}
    reply = proc.request({"op": "load", "files": files, "main": Path(origin).name,
                          "module": f"submission_{ex.id}", "kind": ex.kind, "blocked": list(BLOCKED),
                          "rule": RULE, "init_seed": secrets.randbits(63),
                          "confine": CONFINE if ex.real_only else None})
    if "raised" in reply:
        return _load_verdict(reply["raised"] if isinstance(reply["raised"], dict) else {}, origin)
    proc.names = [str(n) for n in reply["ok"]] if isinstance(reply["ok"], list) else []
    return None


def _judge(ex, proc: LearnerProcess, files: dict[str, str], origin: str, seed: int, fresh) -> dict:
    verdict = load(proc, ex, files, origin)
    if verdict is not None:
        return verdict

    # inputs come from a private generator: fresh for each seed, and out of reach of the learner's code
    rng = np.random.default_rng([seed, int(ex.id[2:])])
    session = Session(learner=proc, path=origin, rng=rng,
                      fresh_learner=lambda budget, alone=False: _fresh(fresh(budget, alone), ex, files, origin),
                      stub_learner=lambda budget: _fresh(fresh(budget, True), ex, {"stub.py": STUB}, "stub.py"))
    try:
        checks_pkg.load(ex.id).run(session)
    except (LearnerTimeout, LearnerDied):
        raise
    except BaseException as e:  # noqa: BLE001 - e.g. a bug in a check
        session.results.append(CheckResult("runs to the end", ERROR, f"grading stopped: {type(e).__name__}: {e}"))
    results = session.finish()
    states = {r.state for r in results if not r.advice} or {r.state for r in results}
    if FORBIDDEN in states:
        status = FORBIDDEN
    elif ERROR in states:
        status = ERROR
    elif states == {NOT_IMPLEMENTED}:     # every check hit a NotImplementedError: nothing tried yet
        status = "not_attempted"
    elif states == {PASSED}:
        status = PASSED
    else:
        status = "failed"
    return {"status": status, "checks": [r.to_json() for r in results]}


def _fresh(proc: LearnerProcess, ex, files: dict[str, str], origin: str) -> LearnerProcess:
    """A second learner process with the submission loaded (e.g. under an address-space budget)."""
    verdict = load(proc, ex, files, origin)
    if verdict is not None:
        proc.close()
        raise LearnerDied("the submission did not load a second time: " + verdict["checks"][0]["message"])
    return proc


def grade_in_process(ex_id: str, path: str, seed: int, timeout: float = 60.0, isolation: str = "auto") -> dict:
    """Grade the file at `path` as exercise `ex_id`, judging in this process (for scripts and tests)."""
    path = str(Path(path).resolve())
    return grade_exercise(ex_id, submission_files(path), path, seed, timeout, isolation)
