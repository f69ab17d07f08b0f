"""A call that writes into its arguments is seen by the judge itself, however the learner's process hides it.

The judge lays a call's array arguments out in a file of its own (grading/shared_inputs.py); the learner's function
works on views of that memory and the judge reads the file back after the call, never asking the learner's process.
So the hidden writes of grading_fixtures/hidden_write/ (the learner's own np.array_equal and every other comparison
patched, a store through `.base` or an `as_strided` view, ctypes.memmove to the data pointer) each earn exactly what
the honest in-place answer (adversarial/ex03_masks.py, graded in the same run) earns: nothing on apply_mask, its
checks failed with the mistake modifies_input and the same message. And a write into an argument is seen in every
exercise that takes arrays, whatever the process it runs in: confined (ex02, ex05, ex06, ex10), a Tensor module
(ex08), a call measured for its memory (ex12).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from tinyattn.grading.exercises import get
from tinyattn.grading.grader import default_jobs, run_tasks

ROOT = Path(__file__).resolve().parents[1]
HIDDEN = ROOT / "tests" / "grading_fixtures" / "hidden_write"
HONEST_INPLACE = ROOT / "tests" / "grading_fixtures" / "adversarial" / "ex03_masks.py"
SEED = 4611686018427392225
ISOLATIONS = ["sandbox", "process"] if sys.platform.startswith("linux") else ["process"]
FIXTURES = sorted(HIDDEN.glob("*_ex[0-9][0-9].py"))
# its thread puts the old bytes back 1 ms after the call: where that lands before the call is over (a slow machine), the
# judge's arrays are intact and the answer it sent back is the unmasked buffer, a wrong answer; after, the write
RACING = {"restore_by_thread_ex03"}


def _ex(path: Path):
    return get(re.search(r"ex\d\d", path.name).group())


def _grade(tmp: Path, named: dict[str, tuple[str, str]], isolation: str) -> dict:
    """{label: result} for {label: (exercise id, source)}, each graded as its exercise."""
    tasks = []
    for label, (ex_id, source) in named.items():
        folder = tmp / label
        folder.mkdir()
        (folder / get(ex_id).filename).write_text(source)
        tasks.append((folder / get(ex_id).filename, get(ex_id)))
    results = run_tasks(tasks, SEED, 60.0, default_jobs(), isolation=isolation)
    return dict(zip(named, results))


@pytest.fixture(scope="module", params=[*ISOLATIONS, "process-unsealed"])
def hidden(request, tmp_path_factory):
    # "process-unsealed": the branch macOS takes (no memfd, no seals: an unlinked file of the judge's, never
    # sealed), run here; memfd_create and every seal would fail the grade if the judge still made or sealed one
    named = {f.stem: (_ex(f).id, f.read_text()) for f in FIXTURES}
    named["honest_inplace"] = ("ex03", HONEST_INPLACE.read_text())
    isolation = request.param.split("-")[0]
    with pytest.MonkeyPatch.context() as mp:
        if request.param.endswith("unsealed"):
            unsealed(mp)
        return isolation, _grade(tmp_path_factory.mktemp(f"hidden_{request.param}"), named, isolation)


def unsealed(mp: pytest.MonkeyPatch) -> None:
    """The judge takes the branch of a platform without memfd seals (shared_inputs.SEALED, its one decision)."""
    import fcntl
    import os

    from tinyattn.grading import shared_inputs

    def refused(*args):
        raise AssertionError(f"the unsealed branch made a memfd or sealed a file {args}")
    mp.setattr(shared_inputs, "SEALED", False)
    mp.setattr(os, "memfd_create", refused, raising=False)
    if hasattr(fcntl, "F_ADD_SEALS"):
        real = fcntl.fcntl
        mp.setattr(fcntl, "fcntl", lambda fd, cmd, *a: refused(fd, cmd) if cmd == fcntl.F_ADD_SEALS
                   else real(fd, cmd, *a))


def _failed(result) -> dict[str, tuple[str | None, str]]:
    return {c["name"]: (c.get("mistake"), c["message"]) for c in result.checks if not c["passed"]}


def test_there_are_hidden_writes_to_grade():
    assert {f.name for f in FIXTURES} >= {"array_equal_ex03.py", "every_check_ex03.py", "base_and_strides_ex03.py",
                                          "ctypes_ex03.py", "restore_after_reply_ex03.py", "restore_by_thread_ex03.py"}


def test_the_honest_inplace_answer_loses_apply_mask(hidden):
    isolation, results = hidden
    r = results["honest_inplace"]
    assert r.isolation == isolation
    assert get("ex03").score(r.checks) == {"causal_mask": 2, "apply_mask": 0}
    failed = _failed(r)
    assert failed and all(m == "modifies_input" for m, _ in failed.values()), failed
    assert all("apply_mask modified its input #1" in msg for _, msg in failed.values())


@pytest.mark.parametrize("fixture", [f.stem for f in FIXTURES])
def test_a_hidden_write_earns_what_the_honest_inplace_answer_earns(hidden, fixture):
    isolation, results = hidden
    r, honest = results[fixture], results["honest_inplace"]
    assert r.isolation == isolation
    assert get("ex03").score(r.checks) == get("ex03").score(honest.checks) == {"causal_mask": 2, "apply_mask": 0}
    assert r.points == honest.points == 2 and r.status == honest.status == "failed"
    failed = _failed(r)
    assert "does not modify its inputs" in failed, failed
    # every apply_mask check that failed says so as the honest answer's do: the write, and only the write
    for name, (mistake, message) in failed.items():
        if fixture in RACING and mistake is None:
            assert "apply_mask(" in message and " is wrong in " in message, (name, message)
            continue
        assert mistake == "modifies_input" and "apply_mask modified its input #1 (shape" in message, (name, message)
    assert set(failed) <= set(_failed(honest)), set(failed) - set(_failed(honest))


# a write into one array argument after the right answer was computed on copies, in every exercise that takes arrays
WRAP = '''

def writes_after(f):
    def call(*args, **kwargs):
        out = f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args], **kwargs)
        for a in args:
            if isinstance(a, np.ndarray) and a.dtype.kind in "fi" and a.size:
                a[...] = a + 1
                break
        return out
    return call


{name} = writes_after({name})
'''
WRAP_MODULE = '''

import tinyattn

forward_first = MultiHeadAttention.forward


def forward_then_write(self, x, *args, **kwargs):
    out = forward_first(self, tinyattn.tensor(x.numpy().copy()), *args, **kwargs)
    x.numpy()[...] = x.numpy() + 1.0
    return out


MultiHeadAttention.forward = forward_then_write
'''
# the function wrapped in each exercise (ex09 and ex13 take no array: nothing to write into)
WRAPPED = {"ex01": "attention_scores", "ex02": "softmax", "ex03": "apply_mask", "ex04": "attention",
           "ex05": "attention_backward", "ex06": "matmul_backward", "ex07": "split_heads", "ex10": "rnn_forward",
           "ex11": "repeat_kv", "ex12": "flash_attention_forward", "ex14": "decode_step", "ex15": "patch_heads"}


@pytest.fixture(scope="module")
def writers(tmp_path_factory):
    named = {}
    for ex_id, name in WRAPPED.items():
        named[ex_id] = (ex_id, (ROOT / "solutions" / get(ex_id).filename).read_text() + WRAP.format(name=name))
    named["ex08"] = ("ex08", (ROOT / "solutions" / get("ex08").filename).read_text() + WRAP_MODULE)
    return _grade(tmp_path_factory.mktemp("writers"), named, ISOLATIONS[0])


@pytest.mark.parametrize("ex_id", sorted([*WRAPPED, "ex08"]))
def test_a_write_into_an_argument_is_seen_in_every_exercise(writers, ex_id):
    r, ex = writers[ex_id], get(ex_id)
    failed = _failed(r)
    assert failed.get("does not modify its inputs", (None,))[0] == "modifies_input", failed
    assert "modified its input #" in failed["does not modify its inputs"][1]
    part = ex.part(WRAPPED.get(ex_id, "MultiHeadAttention") if ex_id != "ex05" else "attention_backward").name
    assert ex.score(r.checks)[part] == 0, (ex.score(r.checks), failed)


# ---- the protocol, one call at a time ------------------------------------------------------------------------------

KEEPER = '''
import numpy as np
kept = []

def keep(x):
    """Keeps a view of every argument it gets; says whether all the earlier ones still hold what they held."""
    intact = all(np.array_equal(view, copy) for view, copy in kept)
    if len(kept) % 2 == 0:
        x[...] = x + 1                          # every other call writes into its argument
    kept.append((x[::2], x[::2].copy()))
    return intact, len(kept)
'''


@pytest.mark.parametrize("isolation", [*ISOLATIONS, "process-unsealed"])
def test_views_kept_past_their_call_stay_as_they_were_and_hold_no_descriptor(isolation, monkeypatch):
    # 100 calls (more than the 64 files the process may have open), each keeping a view of its argument: what the
    # learner keeps stays its own (later calls' files and writes do not reach it), and the writes are still seen
    from tinyattn.grading.learner import LearnerProcess
    if isolation.endswith("unsealed"):
        unsealed(monkeypatch)
    proc = LearnerProcess(isolation.split("-")[0], 60.0)
    try:
        reply = proc.request({"op": "load", "files": {"ex01_scores.py": KEEPER}, "main": "ex01_scores.py",
                              "module": "m", "kind": "numpy", "blocked": [], "rule": "", "init_seed": 1})
        assert "ok" in reply, reply
        for i in range(100):
            x = np.arange(8.0) * (i + 1)
            reply = proc.request({"op": "call", "fn": "keep", "args": [x], "kwargs": {}})
            assert reply["ok"] == (True, i + 1), reply
            assert reply["mutated"] == ([[0, [8]]] if (i + 1) % 2 else []), (i, reply["mutated"])
            assert np.array_equal(x, np.arange(8.0) * (i + 1))          # the judge's own array: never written
    finally:
        proc.close()


@pytest.mark.parametrize("isolation", [*ISOLATIONS, "process-unsealed"])
def test_a_process_that_keeps_its_inputs_writable_can_not_be_vouched_for_where_the_file_is_sealed(isolation,
                                                                                                  monkeypatch):
    # a second shared, writable mapping of the call's file, kept past the call: the judge's seal is refused (EBUSY)
    # and no argument of that call is vouched for. Unsealed (macOS) nothing tells the judge of that mapping: it
    # vouches for what the file held when it read it. Either way a later write through the mapping goes into a
    # file the judge has done with (the seal was refused, so nothing refuses it) and is seen by no one
    from tinyattn.grading.learner import LearnerProcess
    source = '''
import mmap, os
held = []

def hold(x, y):
    for fd in range(3, 64):
        try:
            if "tinyattn-inputs" in os.readlink(f"/proc/self/fd/{fd}"):
                held.append(mmap.mmap(fd, 4096))
                break
        except OSError:
            pass
    return len(held)

def write_held(x):
    held[0][:8] = b"\\xff" * 8
    return len(held)
'''
    sealed = not isolation.endswith("unsealed")
    if not sealed:
        unsealed(monkeypatch)
    proc = LearnerProcess(isolation.split("-")[0], 20.0)
    try:
        assert "ok" in proc.request({"op": "load", "files": {"ex01_scores.py": source}, "main": "ex01_scores.py",
                                     "module": "m", "kind": "numpy", "blocked": [], "rule": "", "init_seed": 1})
        reply = proc.request({"op": "call", "fn": "hold", "args": [np.zeros(3), np.ones(2)], "kwargs": {}})
        assert reply.get("ok") == 1 and reply["mutated"] == ([[0, [3]], [1, [2]]] if sealed else []), reply
        x = np.zeros(3)
        reply = proc.request({"op": "call", "fn": "write_held", "args": [x], "kwargs": {}})
        assert reply.get("ok") == 1 and reply["mutated"] == [] and not x.any(), reply
    finally:
        proc.close()
