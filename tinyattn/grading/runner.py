"""Runs ONE exercise's checks on ONE submitted file, inside its own process.

    python -m tinyattn.grading.runner   < {"exercise": "ex04", "file": ..., "seed": N, "result": ..., "nonce": ...}

The parent (`grader.py`) starts this with a time limit and sends the job as one JSON line on
stdin (not on the command line, where the submission could read it). Whatever the submission
does (print, sys.exit, os._exit, crash, hang) can only cost this process; the verdict, stamped
with the parent's nonce, is written to the result file at the very end, so a missing or
unstamped file tells the parent the process died early or something else wrote it.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import sys
import warnings
from pathlib import Path

from .checkkit import ForbiddenImport

BLOCKED = ("torch", "tensorflow", "jax", "scipy.special")


class ImportGuard(importlib.abc.MetaPathFinder):
    """Refuses the third-party modules no exercise may use, however they are imported."""

    def find_spec(self, fullname, path=None, target=None):
        for b in BLOCKED:
            if fullname == b or fullname.startswith(b + "."):
                raise ForbiddenImport(f"importing {fullname} is not allowed in the exercises")
        return None


def limit_memory(gib: float = 4.0) -> None:
    """Cap the address space so a runaway allocation fails here, not on the whole machine."""
    try:
        import resource
        limit = int(gib * 2**30)
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard if hard != resource.RLIM_INFINITY else limit))
    except (ImportError, ValueError, OSError):  # pragma: no cover - not on every platform
        pass


def load_submission(path: str, ex_id: str):
    """Import the learner's file by path, with its folder on sys.path (as in a notebook next to it)."""
    folder = str(Path(path).parent)
    if folder not in sys.path:
        sys.path.append(folder)           # appended: the learner's files can not shadow numpy
    spec = importlib.util.spec_from_file_location(f"submission_{ex_id}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def grade_in_process(ex_id: str, path: str, seed: int) -> dict:
    """{'status', 'checks'} for one exercise; never raises."""
    import numpy as np

    from . import checks as checks_pkg
    from .checkkit import ERROR, FORBIDDEN, NOT_IMPLEMENTED, PASSED, CheckResult, Session, where_in
    from .exercises import get

    ex = get(ex_id)

    def verdict(status: str, name: str, message: str) -> dict:
        return {"status": status, "checks": [CheckResult(name, status, message).to_json()]}

    try:
        module = load_submission(path, ex.id)
    except ForbiddenImport as e:
        return verdict(FORBIDDEN, "allowed imports only", str(e))
    except NotImplementedError as e:
        return verdict("not_attempted", "loads", f"the file raises NotImplementedError at import: {e}")
    except SystemExit as e:
        return verdict(ERROR, "loads", f"the file calls sys.exit({e.code!r}) while being imported{where_in(e, path)}; "
                                       "keep scripts under `if __name__ == \"__main__\":`")
    except BaseException as e:  # noqa: BLE001 - a broken file is a verdict, not a crash
        return verdict(ERROR, "loads", f"importing the file raised {type(e).__name__}: {e}{where_in(e, path)}")

    # inputs come from a private generator: fresh for each seed, and out of reach of the learner's code
    rng = np.random.default_rng([seed, int(ex.id[2:])])
    if ex.kind == "module":
        import tinyattn
        tinyattn.manual_seed(seed)        # ex08's nn.Linear initialisation draws from tinyattn's generator
    session = Session(module=module, path=path, rng=rng)
    try:
        checks_pkg.load(ex.id).run(session)
    except BaseException as e:  # noqa: BLE001 - e.g. KeyboardInterrupt raised by the learner's code
        session.results.append(CheckResult("runs to the end", ERROR, f"grading stopped: {type(e).__name__}: {e}"))
    results = session.finish()
    states = {r.state for r in results}
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


def main() -> int:
    try:
        job = json.loads(sys.stdin.readline())
        ex_id, path, seed, result_path, nonce = (job["exercise"], job["file"], int(job["seed"]), job["result"],
                                                 job["nonce"])
    except (ValueError, KeyError, TypeError) as e:
        print(f"tinyattn.grading.runner: expected one JSON job line on stdin ({e})", file=sys.stderr)
        return 2
    sys.stdin.close()                     # input() in a submission sees end-of-file instead of hanging
    del job
    sys.argv = [path]                     # the learner's code sees only its own file name
    sys.dont_write_bytecode = True        # no __pycache__ in the learner's folder
    warnings.simplefilter("ignore")       # NumPy overflow warnings etc. are the checks' business
    limit_memory()
    sys.meta_path.insert(0, ImportGuard())
    result = grade_in_process(ex_id, os.path.abspath(path), seed)
    result["nonce"] = nonce
    tmp = result_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.replace(tmp, result_path)          # atomic: the parent sees a whole result or none
    return 0


if __name__ == "__main__":
    sys.exit(main())
