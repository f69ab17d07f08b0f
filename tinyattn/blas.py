"""How many threads NumPy's BLAS uses, set from Python after NumPy is loaded.

tinyattn's matrices are small. On them a multi-threaded BLAS spends more time starting and
synchronising threads than it saves: on a loaded 2-core machine, notebook 07 took 155 s under
Jupyter with OpenBLAS's default thread count and 25 s with one thread. The usual fix, the
environment variable ``OPENBLAS_NUM_THREADS=1``, only works if it is set before NumPy loads, and a
notebook's first cell (``%matplotlib inline``) has already loaded it. So we ask the BLAS library
itself: OpenBLAS (also as the ``scipy-openblas`` build inside NumPy's wheels) exports
``openblas_set_num_threads``, which takes effect at once.

Where that library can not be found (NumPy on Apple's Accelerate, or MKL), every function here is
a no-op that says so by returning ``None``; if ``threadpoolctl`` is installed it is used instead.
"""
from __future__ import annotations

import ctypes
import glob
import os

import numpy as np

from . import checks

# (set, get) symbol names, most specific first: scipy-openblas's 64-bit-integer build prefixes
# and suffixes its symbols, a system OpenBLAS does not.
_SYMBOLS = [
    ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
    ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
    ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
    ("openblas_set_num_threads", "openblas_get_num_threads"),
]
_ENV_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _loaded_openblas_paths() -> list[str]:
    """Files of OpenBLAS libraries this process may have loaded: /proc/self/maps, else NumPy's folders."""
    paths: list[str] = []
    try:
        with open("/proc/self/maps") as f:                 # Linux: exactly what is mapped right now
            for line in f:
                path = line.split()[-1]
                if "openblas" in path.lower() and path not in paths:
                    paths.append(path)
    except OSError:                                          # macOS, Windows: where the wheels put it
        root = os.path.dirname(np.__file__)
        for pattern in ("*openblas*", os.path.join("..", "*openblas*", "lib", "*openblas*"),
                        os.path.join("..", "numpy.libs", "*openblas*"), os.path.join(".dylibs", "*openblas*")):
            paths += sorted(glob.glob(os.path.join(root, pattern)))
    return paths


def _functions():
    """(set, get) ctypes functions of the OpenBLAS NumPy uses, or None."""
    for path in _loaded_openblas_paths():
        try:
            lib = ctypes.CDLL(path)                          # already loaded: the same library, not a copy
        except OSError:
            continue
        for set_name, get_name in _SYMBOLS:
            if hasattr(lib, set_name) and hasattr(lib, get_name):
                setter, getter = getattr(lib, set_name), getattr(lib, get_name)
                setter.argtypes, setter.restype = [ctypes.c_int], None
                getter.argtypes, getter.restype = [], ctypes.c_int
                return setter, getter
    return None


def get_num_threads() -> int | None:
    """The number of threads NumPy's BLAS uses now, or None if it can not be asked."""
    fns = _functions()
    if fns is not None:
        return int(fns[1]())
    try:
        import threadpoolctl
    except ImportError:
        return None
    blas = [p for p in threadpoolctl.threadpool_info() if p.get("user_api") == "blas"]
    return int(blas[0]["num_threads"]) if blas else None


def set_num_threads(n: int) -> int | None:
    """Make NumPy's BLAS use n threads from now on; returns the count it then reports (None: not possible here)."""
    n = checks.positive_int("n", n, "set_num_threads")
    fns = _functions()
    if fns is not None:
        fns[0](n)
        return int(fns[1]())
    try:
        import threadpoolctl
    except ImportError:
        return None
    threadpoolctl.threadpool_limits(n, user_api="blas")     # a plain call (not `with`) sets it for good
    return get_num_threads()


def course_threads(default: int = 1) -> int | None:
    """The notebooks' setup: `default` BLAS threads, unless an environment variable already chose.

    OPENBLAS_NUM_THREADS (or OMP_NUM_THREADS, MKL_NUM_THREADS) set before starting Python wins, so
    a run under ``OPENBLAS_NUM_THREADS=2`` really uses two threads. Returns the count in use.
    """
    for var in _ENV_VARS:
        if os.environ.get(var, "").strip().isdigit() and int(os.environ[var]) >= 1:
            return set_num_threads(int(os.environ[var]))
    return set_num_threads(default)
