"""The yardstick a learner's backward is measured against: the judge's own reference forward pass, timed
in CPU seconds with the BLAS running on this one thread, as it does in the learner's process.

Why one thread: NumPy's OpenBLAS spreads a matmul over every core, and its helper threads spin while
they wait, so the process's CPU time for one forward pass can come out a hundred times the work on a
busy two-core machine (measured: 200 ms for a matmul that takes 0.9 ms on one thread). The learner's
process runs with OPENBLAS_NUM_THREADS=1, so its backward is compared with a forward timed the same
way: `thread_time` of this thread while the BLAS is held at one thread (a lock keeps two judges'
threads of one process from restoring it under each other). Where the BLAS can not be told (not
OpenBLAS), the process's CPU time is used: larger, never smaller, so only a cheat gains from it.
"""
from __future__ import annotations

import ctypes
import threading
import time
from contextlib import contextmanager
from functools import lru_cache

_LOCK = threading.Lock()
# the names OpenBLAS exports its thread setting under (plain, 64-bit-integer build, NumPy's own build)
_PREFIXES = ("openblas", "scipy_openblas")
_SUFFIXES = ("", "64_")


@lru_cache(maxsize=1)
def _openblas() -> tuple:
    """(get_num_threads, set_num_threads) of EVERY OpenBLAS mapped in this process (NumPy's, and any other
    library's: setting one that is not NumPy's alone would leave NumPy's threads working unseen by
    thread_time, a yardstick too short); () where there is none."""
    import numpy  # noqa: F401 - its BLAS is what gets mapped
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split(None, 5)[5].strip() for line in f  # (the path: field 6 to the end, spaces and all)
                             if "blas" in line.lower() and ".so" in line and len(line.split(None, 5)) == 6})
    except OSError:
        return ()
    found = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in (f"{p}_%s_num_threads{s}" for p in _PREFIXES for s in _SUFFIXES):
            get, set_ = getattr(lib, name % "get", None), getattr(lib, name % "set", None)
            if get is not None and set_ is not None:
                get.restype, set_.argtypes = ctypes.c_int, [ctypes.c_int]
                found.append((get, set_))
                break
    return tuple(found)


@contextmanager
def one_blas_thread():
    """Hold the BLAS at one thread; yields the clock to read (thread_time, or process_time where the BLAS
    can not be told)."""
    blases = _openblas()
    if not blases:
        yield time.process_time
        return
    with _LOCK:
        before = [get() for get, _ in blases]
        for _, set_ in blases:
            set_(1)
        try:
            yield time.thread_time
        finally:
            for (_, set_), n in zip(blases, before):
                set_(n)


def forward_seconds(forward, *args, repeats: int = 3) -> float:
    """CPU seconds of one run of `forward(*args)` here, on one BLAS thread: the best of `repeats` runs."""
    best = float("inf")
    with one_blas_thread() as clock:
        for _ in range(repeats):
            start = clock()
            forward(*args)
            best = min(best, clock() - start)
    return best
