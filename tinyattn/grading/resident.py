"""Resident memory of a measured call (ex12), read by the judge from /proc: what the address-space limit can not see.

RLIMIT_AS counts the memory a process MAPS. Memory it mapped before the limit was set is writable all the same:
BLAS's two 32 MiB work buffers (mapped by the warm-up, so that honest answers are not charged for them) held a
whole (T, S) score matrix, written into them through ctypes; nothing was mapped or unmapped, so neither the limit
nor mseal saw it (grading_fixtures/weak_checks/blas_buffers_in_place_ex12.py: naive attention, 15/15).

What a call writes is RESIDENT: the kernel keeps each process's peak resident set (VmHWM). The judge reads it
after the call, outside the learner's code, and compares it with what a process of the same make holds when it
has loaded nothing of the learner's and answered the same call by doing nothing (the stub below): the call may
add its budget on top (memory_limit: the inputs, which the call reads, included). Inside the sandbox /proc is
read-only, so the peak can not be reset (clear_refs); elsewhere (`--isolation process`) it can, as everything
else of that process's. Where /proc is not there (macOS) nothing is read and the address-space limit stands alone.
"""
from __future__ import annotations

from .learner import _descendants

# the stub's source: every function the checks call returns None, touching none of its inputs
STUB = "def __getattr__(name):\n    return lambda *args, **kwargs: None\n"


def _status(pid: int) -> dict[str, int]:
    with open(f"/proc/{pid}/status") as f:
        return {k: int(v.split()[0]) * 1024 for k, v in (line.split(":", 1) for line in f if ":" in line)
                if k in ("VmHWM", "VmRSS")}


def resident(learner, key: str) -> int | None:
    """The largest `key` ("VmHWM": the peak resident set, "VmRSS": now) among the learner's process and every
    process below it (in the sandbox: the process outside, PID 1 and the learner's), in bytes; None without /proc."""
    found = []
    for pid in [learner.proc.pid] + sorted(_descendants(learner.proc.pid)):
        try:
            found.append(_status(pid)[key])
        except (OSError, KeyError, ValueError):
            continue
    return max(found) if found else None


def stub_resident(stub, target: dict, args: list, kwargs: dict) -> int | None:
    """The stub's resident set (bytes) once it has answered the same call: the base a measured call adds to."""
    try:
        stub.request({"op": "call", **target, "args": args, "kwargs": kwargs})
        return resident(stub, "VmRSS")
    finally:
        stub.close()
