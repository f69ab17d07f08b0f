"""The small toolkit every exercise's checks are written with.

A `Session` wraps the learner's module. `session.call(name, *args)` runs one of their functions on
private copies of the inputs (so mutating an input is detected, never inherited by the next check)
and turns whatever escapes their code into a grader-friendly exception. `with session.check(name):`
records one check; inside it, `expect_*` helpers raise `CheckFailed`, optionally naming a mistake.
"""
from __future__ import annotations

import contextlib
import copy
import re
import time
import tracemalloc
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import oracle, resident
from .meter import forward_seconds, one_blas_thread
from .text import clean_line

# what the learner did, as the judge learns it (defined beside the process they come from; re-exported here)
from .learner import ForbiddenImport, LearnerOverBudget, Remote, RemoteFunction, RemoteTensor, \
    StudentNotImplemented, StudentRaised, rebuild_exception

PASSED, FAILED, NOT_IMPLEMENTED, ERROR, FORBIDDEN = "passed", "failed", "not_implemented", "error", "forbidden"
ADVICE_NAME = "does not modify its inputs"
MUTATION_MISTAKE = "modifies_input"       # the mistake id of an answer that writes into its arguments
MUTATION_ADVICE = ("Build new arrays instead of writing into the arguments (e.g. x = x - m, not x -= m): the caller "
                   "still needs them")
# bytes a call_budget's process may map, beside the inputs and the budget, while the learner's file loads and the
# call's message arrives (the ex12 solution passes with none; a file that maps more at import has less for its call)
LOAD_ALLOWANCE = 1 << 20
MAX_MESSAGE = 600          # characters: a check's message is a sentence or two, never a wall of text
# what a learner's exp raises when it overflows: math.exp(1000), or np.exp under np.seterr(all="raise")
OVERFLOWS = ("OverflowError", "FloatingPointError")


def cap(text: str, limit: int = MAX_MESSAGE) -> str:
    """text on one line without control characters, cut to `limit` characters with a note of how much was left out."""
    text = " ".join(clean_line(text, 1 << 16).split())
    if len(text) <= limit:
        return text
    note = f" ... ({len(text) - limit} more characters)"
    return text[:limit - len(note)].rstrip() + note


class CheckFailed(Exception):
    """A check's verdict: wrong answer, with a message and maybe a known mistake id."""

    def __init__(self, message: str, mistake: str | None = None):
        super().__init__(message)
        self.message, self.mistake = message, mistake


@dataclass
class CheckResult:
    name: str
    state: str                      # passed | failed | not_implemented | error | forbidden
    message: str = ""
    mistake: str | None = None
    part: str | None = None         # the exercise part it scores (exercises.Part.name); None: every part
    advice: bool = False            # shown, never worth points: the judge can not verify it from outside

    def __post_init__(self) -> None:
        self.message = cap(self.message)

    @property
    def passed(self) -> bool:
        return self.state == PASSED

    def to_json(self) -> dict:
        out = {"name": self.name, "passed": self.passed, "message": self.message, "mistake": self.mistake,
               "part": self.part}
        if self.advice:
            out["advice"] = True
        return out


@contextlib.contextmanager
def _cpu_alarm(limit: float | None):
    """In-process (the grader's own tests): stop a call at `limit` CPU seconds, as the judge stops a learner's
    process, with SIGPROF (main thread, POSIX); elsewhere the call runs to its end and is judged after."""
    import signal
    import threading
    if limit is None or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return
    start = time.process_time()

    def stop(*_):
        raise LearnerOverBudget(time.process_time() - start)
    old = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def _left_in(name: str, msg: str) -> str:
    """A debugging line left in the code, named as such: the learner's process has no terminal (stdin is empty)."""
    if name == "BdbQuit":
        return "a breakpoint() or pdb.set_trace() was left in the code; the grader has no terminal to debug in, " \
               "so remove it (it stopped just before the line below)"
    if name == "EOFError" and "reading a line" in msg:
        return "input() was left in the code; nobody can type an answer while the grader runs, so remove it"
    return ""


def where_in(exc: BaseException, path: str) -> str:
    """' (line N of file.py: code)' for the deepest traceback frame inside the learner's file."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    if not frames:
        return ""
    f = frames[-1]
    return f" (line {f.lineno} of {path.rsplit('/', 1)[-1]}: {(f.line or '').strip()})"


def _arrays(obj: Any) -> list[np.ndarray]:
    """Every ndarray inside obj (through tuples, lists and dicts)."""
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [a for o in obj for a in _arrays(o)]
    if isinstance(obj, dict):
        return [a for o in obj.values() for a in _arrays(o)]
    return []


@dataclass
class Session:
    """The checks' view of one submission.

    In grading, `learner` is the submission's own process (learner.LearnerProcess): every call
    crosses the pipe, its array arguments as views of a file the judge made and reads back itself
    (shared_inputs.py: whether the call wrote into them is the judge's own reading), and results come
    back as plain arrays.
    `module` (a namespace of functions, run in this process) is for the grader's own unit tests.
    """
    module: Any = None                  # in-process functions (tests only)
    path: str = ""                      # the learner's file, for tracebacks
    rng: np.random.Generator = None     # the grader's private generator: fresh inputs each seed
    learner: Any = None                 # the submission's process (grading)
    results: list[CheckResult] = field(default_factory=list)
    mutations: list[str] = field(default_factory=list)
    completed_calls: int = 0
    fresh_learner: Any = None           # budget -> a new learner process under that address-space budget
    stub_learner: Any = None            # budget -> the same, with nothing of the learner's loaded (resident.py)
    # the mistake an OverflowError from the learner's code means here ("unstable_softmax" where a
    # softmax is taken); None: an overflow is reported as the error it is
    overflow_mistake: str | None = None
    part: str | None = None             # the part the running check scores (see `check`)

    def __post_init__(self) -> None:
        oracle.begin(self.rng)          # a student release finds its recorded answers by seed and check

    # ---- calling the learner ---------------------------------------------------------------
    def fn(self, name: str):
        if self.learner is not None:
            if name not in self.learner.names:
                raise CheckFailed(f"{self.path.rsplit('/', 1)[-1]} defines no function or class called {name}")
            return RemoteFunction(self.learner, name)
        f = getattr(self.module, name, None)
        if not callable(f):
            raise CheckFailed(f"{self.path.rsplit('/', 1)[-1]} defines no function or class called {name}")
        return f

    def call(self, name: str, *args, **kwargs):
        """Call the learner's function `name` on copies of the arguments."""
        return self.invoke(name, self.fn(name), *args, **kwargs)

    def invoke(self, label: str, f, *args, copy_inputs: bool = True, memory_limit: int | None = None,
               call_budget: int | None = None, cpu_limit: float | None = None, **kwargs):
        """Run learner code f(*args); note any array argument it modifies; translate what it raises.

        memory_limit (bytes): the call runs in a fresh learner process whose address space the kernel
        caps at what it mapped before the learner's code loaded plus this budget; going over is a
        MemoryError there. call_budget (bytes): what the call itself may add, its inputs held: in grading,
        a memory_limit of the inputs' bytes + LOAD_ALLOWANCE + call_budget, set before the learner's code loads. (In-process, for the grader's own tests:
        the tracemalloc peak of the call, judged the same.)
        """
        if isinstance(f, (Remote, RemoteFunction)):
            return self._invoke_remote(label, f, args, kwargs, memory_limit, call_budget, cpu_limit)
        memory_limit = memory_limit or call_budget
        given_args, given_kwargs = (copy.deepcopy(args), copy.deepcopy(kwargs)) if copy_inputs else (args, kwargs)
        try:
            if memory_limit:
                tracemalloc.start()
            try:
                # measured as the learner's process would be: the BLAS on one thread, this thread's CPU time
                with one_blas_thread() if cpu_limit is not None else contextlib.nullcontext(time.process_time) as clock, \
                        _cpu_alarm(cpu_limit):
                    cpu_start = clock()
                    out = f(*given_args, **given_kwargs)
                    used = clock() - cpu_start
            finally:
                if memory_limit:
                    peak = tracemalloc.get_traced_memory()[1]
                    tracemalloc.stop()
            if memory_limit and peak > memory_limit:
                raise MemoryError(f"the call allocated {peak} bytes at its peak; the budget is {memory_limit}")
            if cpu_limit is not None and used > cpu_limit:
                raise LearnerOverBudget(used)
        except NotImplementedError as e:
            raise StudentNotImplemented(str(e) or f"{label} is not implemented yet") from None
        except ForbiddenImport:
            raise
        except SystemExit as e:
            raise StudentRaised(f"{label} called sys.exit({e.code!r}){where_in(e, self.path)}", e) from None
        except Exception as e:  # noqa: BLE001 - anything from the learner's code is reported, not propagated
            raise StudentRaised(f"{label} raised {type(e).__name__}: {e}{where_in(e, self.path)}", e) from None
        if copy_inputs:
            for i, (orig, given) in enumerate(zip(_arrays((args, kwargs)), _arrays((given_args, given_kwargs)))):
                if orig.shape != given.shape or not np.array_equal(orig, given, equal_nan=True):
                    self.mutations.append(f"{label} modified its input #{i + 1} (shape {orig.shape}) in place")
        self.completed_calls += 1
        return out

    def _invoke_remote(self, label: str, f, args, kwargs, memory_limit: int | None, call_budget: int | None = None,
                       cpu_limit: float | None = None):
        """The same call in the learner's process: one request, one reply of plain data.

        With a memory or CPU budget, the call runs in a fresh learner process of its own (for CPU:
        one that can start no process or thread, so the judge's count of its CPU time is complete)."""
        target = {"fn": f.name} if isinstance(f, RemoteFunction) else {"ref": f._ref}
        learner = self.learner
        if call_budget:
            # what the CALL may add, its inputs held: a limit set, like every limit, before the learner's code loads
            # (code run at import can change whatever the process does after it: an ex12 file replaced the
            # function that set this limit when the call started), so it counts the inputs' bytes and the load too
            memory_limit = int(call_budget) + sum(a.nbytes + 4096 for a in _arrays((args, kwargs))) + LOAD_ALLOWANCE
        if memory_limit or cpu_limit is not None:
            if not isinstance(f, RemoteFunction):
                raise TypeError("a memory or CPU budget applies to a learner's function, not to an object's method")
            # alone: no process or thread beside it, whose address space or CPU time would go uncounted
            learner = self.fresh_learner(int(memory_limit or 0), alone=True)
            if cpu_limit is not None and self.learner is not None and self.learner.isolation != "sandbox":
                learner.also_counted = [self.learner]     # no sandbox between them: work handed over counts too
        peak = None
        try:
            reply = learner.request({"op": "call", **target, "args": list(args), "kwargs": dict(kwargs)},
                                    **({"cpu_limit": cpu_limit} if cpu_limit is not None else {}))
            if memory_limit and "ok" in reply:
                peak = resident.resident(learner, "VmHWM")     # what the call wrote, mapped before the limit or not
        finally:
            if learner is not self.learner:
                learner.close()
        if peak is not None and self.stub_learner is not None:
            base = resident.stub_resident(self.stub_learner(int(memory_limit)), target, list(args), dict(kwargs))
            if base is not None and peak > base + memory_limit:
                reply = {"raised": {"kind": "exception", "types": ["MemoryError", "Exception"], "where": "",
                                    "message": f"its process held {peak / 2**20:.1f} MiB at its peak, "
                                    f"{(peak - base) / 2**20:.1f} MiB more than one that loaded nothing and did "
                                    f"nothing; the call may add {memory_limit / 2**20:.1f} MiB (memory written "
                                    "counts, wherever it was mapped)"}}
        if "raised" in reply:
            r = reply["raised"] if isinstance(reply["raised"], dict) else {}
            kind, msg, where = r.get("kind"), str(r.get("message", ""))[:2000], str(r.get("where", ""))[:400]
            names = [str(t) for t in r.get("types", [])][:1] or ["Exception"]
            if kind == "not_implemented":
                raise StudentNotImplemented(msg or f"{label} is not implemented yet")
            if kind == "forbidden":
                raise ForbiddenImport(msg)
            if kind == "not_real":            # a complex or object value in a confined exercise (confine.py)
                raise CheckFailed(f"{label} raised NotReal: {msg}{where}", NOT_REAL_MISTAKE)
            if kind == "exit":
                raise StudentRaised(f"{label} called sys.exit({str(r.get('code'))[:100]}){where}")
            raise StudentRaised(f"{label} raised {names[0]}: {_left_in(names[0], msg) or msg}{where}",
                                rebuild_exception(r))
        for i, shape in reply.get("mutated") or []:       # the judge's reading of its own file (LearnerProcess.request)
            self.mutations.append(f"{label} modified its input #{int(i) + 1} (shape {tuple(shape)}) in place")
        self.completed_calls += 1
        return reply["ok"]

    # ---- recording checks ------------------------------------------------------------------
    @contextmanager
    def check(self, name: str, part: str | None = None) -> Iterator[None]:
        """Run the body as one check; its verdict is the first exception it raises (or a pass).

        part: the exercise part the check scores (exercises.Part.name; None in a one-part exercise)."""
        self.part = part
        before = len(self.mutations)
        oracle.enter(name)
        try:
            yield
            if len(self.mutations) > before:
                # the answer changed its caller's arrays: wrong, whatever it returned (the caller still needs them)
                raise CheckFailed("; ".join(dict.fromkeys(self.mutations[before:])) + ". " + MUTATION_ADVICE,
                                  MUTATION_MISTAKE)
        except CheckFailed as e:
            self.results.append(CheckResult(name, FAILED, e.message, e.mistake, part))
        except StudentNotImplemented as e:
            self.results.append(CheckResult(name, NOT_IMPLEMENTED, f"not implemented yet ({e})", None, part))
        except ForbiddenImport as e:
            self.results.append(CheckResult(name, FORBIDDEN, str(e)))
        except StudentRaised as e:
            if self.overflow_mistake and e.kind in OVERFLOWS:
                self.results.append(CheckResult(name, FAILED, f"{e}: an exponential overflowed on these inputs",
                                                self.overflow_mistake, part))
            else:
                self.results.append(CheckResult(name, ERROR, str(e), None, part))
        except Exception as e:  # noqa: BLE001 - the learner's result broke the check itself
            self.results.append(CheckResult(name, ERROR, f"the grader could not use the result: "
                                                         f"{type(e).__name__}: {e}", None, part))
        else:
            self.results.append(CheckResult(name, PASSED, part=part))
        finally:
            self.part = None
            oracle.enter(f"after {name}")  # (calls between checks: however many this one made)

    def finish(self) -> list[CheckResult]:
        """Append the 'inputs not modified' summary (once the learner's code ran at all). Each check in
        which a call wrote into its arguments has already failed (its part earns nothing); this line
        says it once more for the whole exercise, scoring nothing of its own."""
        if self.mutations:
            self.results.append(CheckResult(
                ADVICE_NAME, FAILED, "; ".join(dict.fromkeys(self.mutations)) + ". " + MUTATION_ADVICE
                + " Each check where it happened failed.", MUTATION_MISTAKE, advice=True))
        elif self.completed_calls:
            self.results.append(CheckResult(ADVICE_NAME, PASSED, advice=True))
        return self.results


# ---- verdict helpers ---------------------------------------------------------------------------

def as_array(x: Any, what: str) -> np.ndarray:
    """x as an ndarray, or CheckFailed saying what came instead (Tensors are unwrapped)."""
    if isinstance(x, RemoteTensor):
        x = x.data                      # a learner's Tensor: its data came back as a plain array (ex08)
    elif not isinstance(x, (np.ndarray, Remote)) and hasattr(x, "backward") and callable(getattr(x, "numpy", None)):
        x = x.numpy()                   # a tinyattn Tensor (in-process tests)
    if isinstance(x, np.generic):
        x = np.asarray(x)
    if not isinstance(x, np.ndarray) or type(x) is not np.ndarray and isinstance(x, Remote):
        raise CheckFailed(f"{what} should be a NumPy array, got {type_name(x)}")
    return x


def copy_into(t: Any, value: np.ndarray) -> None:
    """Write `value` into a Tensor's (or Parameter's) array in place, in whichever process it lives:
    how a check sets a learner module's weights (e.g. `copy_into(m.W_q.weight, W)`)."""
    if isinstance(t, RemoteTensor):
        t.copy_into(value)
        return
    for attr in ("_data", "data"):
        a = getattr(t, attr, None)
        if isinstance(a, np.ndarray):
            np.copyto(a, value)
            return
    raise CheckFailed(f"expected a tinyattn Tensor, got {type(t).__name__}")


def type_name(x: Any) -> str:
    """The class name of x; for an object living in the learner's process, its own class name."""
    from .learner import Remote
    return x.type_name if isinstance(x, Remote) else type(x).__name__


def as_sequence(x: Any) -> tuple | None:
    """x's items when x is a tuple or list, subclasses included (a NamedTuple is a tuple); else None.

    A tuple subclass returned by the learner's process stays there (only plain tuples cross the
    pipe as values), so its items are read with one more request."""
    from .learner import Remote
    if isinstance(x, Remote):
        if any(m in ("builtins.tuple", "builtins.list") for m in x._mro):
            return tuple(x)
        return None
    return tuple(x) if isinstance(x, (tuple, list)) else None


def as_tuple(x: Any, n: int, what: str) -> tuple:
    items = as_sequence(x)
    if items is None or len(items) != n:
        got = f"a {type_name(x)} of length {len(items)}" if items is not None else type_name(x)
        raise CheckFailed(f"{what} should return a tuple of {n} arrays, got {got}")
    return items


def diagnose(got: np.ndarray, variants: dict[str, list] | None, rtol: float, atol: float) -> str | None:
    """The mistake id whose variant equals `got` (same shape, close values, nan where it has nan).

    None when nothing matches, and also when variants of two different mistakes match: on inputs
    where two mistakes look alike (e.g. saturated softmaxes) naming either would be a guess.
    """
    found = []
    for mistake, outs in (variants or {}).items():
        for v in outs:
            if v is None:
                continue
            v = np.asarray(v)
            if v.shape != got.shape:
                continue
            if v.dtype == bool or got.dtype == bool:
                same = np.array_equal(v, got)
            else:
                with np.errstate(all="ignore"):
                    same = np.allclose(got.astype(np.float64), v.astype(np.float64), rtol=rtol, atol=atol,
                                       equal_nan=True)
            if same:
                found.append(mistake)
                break
    return found[0] if len(found) == 1 else None


def tolerances(got: np.ndarray, rtol: float | None, atol: float | None, inputs: tuple = ()) -> tuple[float, float]:
    """Float32 tolerances when the result OR any input is single precision, float64 ones otherwise.

    The inputs matter too: float32 scores divided by np.sqrt(d) (a float64 scalar) come back as a
    float64 array that is only as accurate as the float32 matmul that made it.
    """
    single = any(np.asarray(a).dtype.kind == "f" and np.asarray(a).dtype.itemsize < 8 for a in (got, *inputs))
    return (rtol if rtol is not None else (2e-4 if single else 1e-6),
            atol if atol is not None else (2e-5 if single else 1e-8))


def _pair(g: float, w: float) -> str:
    """'got G, expected W' with enough digits that the two numbers never print the same."""
    digits = 6
    while f"{g:.{digits}g}" == f"{w:.{digits}g}" and digits < 17:
        digits += 3
    return f"got {g:.{digits}g}, expected {w:.{digits}g}"


def expect_shape(got: Any, shape: tuple, what: str, variants: dict[str, list] | None = None) -> np.ndarray:
    got = as_array(got, what)
    if got.shape != tuple(shape):
        rtol, atol = tolerances(got, None, None)
        raise CheckFailed(f"{what} has shape {got.shape}, expected {tuple(shape)}", diagnose(got, variants, rtol, atol))
    return got


def expect_float(got: np.ndarray, what: str, *inputs: np.ndarray) -> None:
    """Floating point, and at least as precise as the most precise input."""
    need = max((np.asarray(x).dtype.itemsize for x in inputs if np.asarray(x).dtype.kind == "f"), default=4)
    if got.dtype.kind != "f" or got.dtype.itemsize < max(need, 4):
        want = "float64" if need == 8 else "float32 or float64"
        raise CheckFailed(f"{what} has dtype {got.dtype}, expected {want} (like the inputs)")


def expect_dtype(got: Any, dtype, what: str, why: str = "the docstring asks for the input's dtype") -> None:
    """got has exactly `dtype` (where a docstring promises it, e.g. "same shape and dtype as x")."""
    got = as_array(got, what)
    if got.dtype != np.dtype(dtype):
        raise CheckFailed(f"{what} has dtype {got.dtype}, expected {np.dtype(dtype)}: {why}")


def _where_worst(err: np.ndarray) -> tuple:
    return tuple(int(i) for i in np.unravel_index(int(np.nanargmax(err)), err.shape)) if err.size else ()


def expect_close(got: Any, want: np.ndarray, what: str, variants: dict[str, list] | None = None, *,
                 rtol: float | None = None, atol: float | None = None, nonfinite_mistake: str | None = None,
                 inputs: tuple = ()) -> None:
    """got ≈ want (shape, finiteness, values); on failure name the mistake whose variant got equals.

    `inputs`: the arrays the learner was given; float32 among them means float32 tolerances.
    """
    got = expect_shape(got, want.shape, what, variants)
    # the dtype before the values: a float16 answer is "the wrong dtype", not "wrong in 37 entries"
    if inputs:
        expect_float(got, what, *inputs)
    elif got.dtype.kind not in "fiub":
        raise CheckFailed(f"{what} has dtype {got.dtype}, expected a float array")
    elif got.dtype.kind == "f" and got.dtype.itemsize < 4:
        raise CheckFailed(f"{what} has dtype {got.dtype}, expected float64 (or float32): {got.dtype} keeps "
                          "only about 3 significant digits")
    rtol, atol = tolerances(got, rtol, atol, inputs)
    g = got.astype(np.float64)
    bad = ~np.isfinite(g) & np.isfinite(want)
    if bad.any():
        mistake = diagnose(got, variants, rtol, atol) or nonfinite_mistake
        raise CheckFailed(f"{what} contains nan/inf in {int(bad.sum())} of {bad.size} entries (first at index "
                          f"{tuple(int(i) for i in np.argwhere(bad)[0])}) where the exact answer is finite", mistake)
    with np.errstate(all="ignore"):
        ok = np.isclose(g, want, rtol=rtol, atol=atol, equal_nan=True)
    if not ok.all():
        err = np.where(ok, 0.0, np.abs(g - want))
        idx = _where_worst(err)
        raise CheckFailed(f"{what} is wrong in {int((~ok).sum())} of {ok.size} entries; worst at index {idx}: "
                          f"{_pair(g[idx], want[idx])}", diagnose(got, variants, rtol, atol))


def expect_each(items: list[tuple]) -> None:
    """Several results judged together, each reported: [(got, want, what, variants, {expect_close kwargs})].

    One CheckFailed that says, for every result, whether it is right or how it is wrong (so a
    learner sees "dQ is wrong ...; dK and dV are right", not only the first failure); its mistake is
    the one id the wrong results were diagnosed with (none when they point to different ids)."""
    wrong, right, ids = [], [], []
    for got, want, what, variants, kwargs in items:
        try:
            expect_close(got, want, what, variants, **kwargs)
        except CheckFailed as e:
            wrong.append(e.message)
            ids.append(e.mistake)
        else:
            right.append(what)
    if not wrong:
        return
    said = "; ".join(wrong)
    if right:
        said += "; " + (" and ".join(right) + (" are" if len(right) > 1 else " is") + " right")
    named = set(ids) - {None}
    raise CheckFailed(said, named.pop() if len(named) == 1 else None)


EXACT = 1e-12    # a derived float64 gradient is this close (relative to its largest entry); finite differences are not


def expect_exact(items: list[tuple[Any, np.ndarray, str]]) -> None:
    """Each (got, exact, what) equals the exact float64 gradient to rounding: within EXACT of its largest entry.

    Central differences (any step) are off by 1e-11 or more, derived formulas by about 1e-15: so a
    gradient computed by finite differences, not derived, fails here although it passes `expect_close`."""
    off = []
    for got, exact, what in items:
        got = as_array(got, what)
        exact = np.asarray(exact, dtype=np.float64)
        if got.shape != exact.shape:
            raise CheckFailed(f"{what} has shape {got.shape}, expected {exact.shape}")
        scale = float(np.max(np.abs(exact))) if exact.size else 0.0
        with np.errstate(all="ignore"):
            err = float(np.max(np.abs(got.astype(np.float64) - exact))) if exact.size else 0.0
        if not err <= EXACT * scale:
            off.append(f"{what} is off by {err / scale if scale else err:.1e} (relative to its largest entry)")
    if off:
        raise CheckFailed("; ".join(off) + f". A gradient derived by hand and computed in float64 is exact to "
                          f"rounding (about 1e-15); {EXACT:.0e} or more is what finite differences or single "
                          "precision give. This exercise asks for the derived formula, in float64.")


# A derived backward costs a few forward passes (every honest variant measured: at most 54 forwards, a
# Python loop over batch, query rows and an explicit softmax Jacobian); a gradient computed numerically
# (finite differences, complex step, dual numbers, a vectorised batch of perturbed forwards) costs one
# forward per input entry it perturbs, thousands on the inputs the cost checks use. What is measured
# is CPU time, from outside the learner's code: load on the machine stretches wall time, not this.
NOT_REAL_MISTAKE = "not_real"    # a complex or object value made in a confined exercise (confine.py)
DERIVED_COST = 500          # forward passes' worth of CPU time a backward call may use
COST_FLOOR = 0.25           # seconds: below this the limit is never set (/proc counts in 10 ms ticks)
NUMERICAL_MISTAKE = "numerical_gradient"


def call_derived(s: Session, name: str, forward, args: tuple, kwargs: dict | None = None) -> Any:
    """The learner's backward `name(*args)`, measured: its CPU time may be at most DERIVED_COST times the
    judge's own reference forward pass `forward()` on the same inputs (COST_FLOOR at least); over that,
    CheckFailed naming the numerical_gradient mistake. A call over the limit is tried once more in a fresh
    process before it fails, so one burst of a busy machine can not fail an honest answer.
    The caller then checks the returned values (a fast wrong answer must fail too)."""
    fwd = forward_seconds(forward)
    limit = max(DERIVED_COST * fwd, COST_FLOOR)
    for attempt in range(2):
        try:
            return s.invoke(name, s.fn(name), *args, cpu_limit=limit, **(kwargs or {}))
        except LearnerOverBudget as e:
            used = e.used
    raise CheckFailed(f"{name} was stopped twice after {used:.2f} s of CPU time on these inputs, the limit being "
                      f"{DERIVED_COST} times what one forward pass takes ({fwd * 1e3:.2f} ms; {COST_FLOOR} s at least): "
                      "the cost of a gradient computed numerically, one perturbed forward pass per input entry. A "
                      "derived backward costs a few forward passes: derive the formula.", NUMERICAL_MISTAKE)


def expect_mask(got: Any, want: np.ndarray, what: str, variants: dict[str, list] | None = None) -> None:
    """A boolean mask equal to `want`."""
    got = expect_shape(got, want.shape, what, variants)
    if got.dtype != bool:
        raise CheckFailed(f"{what} has dtype {got.dtype}, expected bool (True = may attend); "
                          "build it from comparisons or np.ones(..., dtype=bool)")
    if not np.array_equal(got, want):
        idx = tuple(int(i) for i in np.argwhere(got != want)[0])
        raise CheckFailed(f"{what} differs from the expected mask in {int((got != want).sum())} of {want.size} "
                          f"entries; first at (query, key) = {idx}: got {bool(got[idx])}, expected {bool(want[idx])}",
                          diagnose(got, variants, 0.0, 0.0))


def expect_raises(session: Session, exc_type: type[BaseException], name: str, *args,
                  naming: dict[str, Any] | None = None, **kwargs) -> None:
    """The learner's `name(*args)` raises exc_type, and its message names the values in `naming`.

    naming={"C": 31, "n_heads": 5}: a message like "C=31 is not divisible by n_heads=5" passes
    (each value must appear); NumPy's own "cannot reshape array of size 186 ..." does not.
    """
    try:
        session.call(name, *args, **kwargs)
    except StudentRaised as e:
        if isinstance(e.original, exc_type):
            text = str(e.original)
            # each value as a whole number in the message: "31" matches "C=31", not "310" or "3.1"
            missing = [k for k, v in (naming or {}).items()
                       if not re.search(rf"(?<!\d)(?<!\d\.){re.escape(str(v))}(?!\d)(?!\.\d)", text)]
            if missing:
                want = " and ".join(f"{k}={v}" for k, v in (naming or {}).items())
                raise CheckFailed(f"{name} raised {exc_type.__name__}({text!r}), but the message should name the "
                                  f"values involved ({want}) so the caller can see what was wrong") from None
            return
        raise CheckFailed(f"expected {exc_type.__name__} for these arguments, but {e}") from None
    raise CheckFailed(f"{name}{tuple(args)} should raise {exc_type.__name__}, but returned normally")


def distinct(rng: np.random.Generator, k: int, lo: int, hi: int) -> list[int]:
    """k different integers in [lo, hi], so that swapped axes always show up as wrong shapes."""
    return [int(v) for v in rng.choice(np.arange(lo, hi + 1), size=k, replace=False)]


def huge_logit_rows(rng: np.random.Generator, rows: int, cols: int) -> np.ndarray:
    """(rows, cols) logits with thousands of units of spread INSIDE each row, cycling three row types:
    [0, 1000] (two keys near 1000, the rest near 0), [-1000, 0, 1000] (mixed signs, the row mean
    far below its max) and [-2000, -1000] (a row far below the others). Subtracting anything but
    each row's own max (its min, its mean, the max of the whole array) leaves an exp(±1000)."""
    assert cols >= 6, cols
    x = rng.standard_normal((rows, cols)) * 2.0
    for r in range(rows):
        order = rng.permutation(cols)
        kind = r % 3
        if kind == 0:
            x[r, order[:2]] += 1000.0
        elif kind == 1:
            x[r, order[:2]] += 1000.0
            x[r, order[2:2 + (cols - 2) // 2]] -= 1000.0
        else:
            x[r] -= 1000.0
            x[r, order[:cols // 2]] -= 1000.0
    return x


def large_logits(rng: np.random.Generator, q_shape: tuple, k_shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Q, K whose scores are thousands of units from zero, in four kinds of query rows:
    all keys near +X, all near -X (far below the other rows), keys at +X and -X (mixed signs, the
    row mean near 0) and keys at 0 and 2X (a [0, 1000]-like spread), with X = 10000 / sqrt(d).
    Only subtracting each row's own max keeps every exp finite; the other columns stay ordinary, so
    rows that share a level still have O(1) differences (the exact softmax is not one-hot)."""
    Q, K = rng.standard_normal(q_shape), rng.standard_normal(k_shape)
    # keys alternate +, -, +, ...: both signs in every row (and in every causal prefix of 2 or more)
    signs = np.broadcast_to(np.where(np.arange(k_shape[-2]) % 2 == 0, 1.0, -1.0), k_shape[:-1])
    kinds = np.array([(0.0, 1.0), (0.0, -1.0), (1.0, 0.0), (1.0, 1.0)])   # (a, b): score ~ X (a sign_k + b)
    a_b = kinds[np.arange(q_shape[-2]) % 4]                    # (T, 2), the same pattern in every batch
    if q_shape[-1] >= 2:
        Q[..., 0], Q[..., 1] = 100.0 * a_b[:, 0], 100.0 * a_b[:, 1]
        K[..., 0], K[..., 1] = 100.0 * signs, 100.0
    else:                                                      # d = 1: one column, whole rows at +-X only
        Q[..., 0] = 100.0 * rng.choice([-1.0, 1.0], size=q_shape[:-1])
        K[..., 0] = 100.0
    return Q, K
