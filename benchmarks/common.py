"""What every benchmark shares: the result row, side-by-side timing, and a description of the machine.

Timing rules (the same for every benchmark):
* ``time.perf_counter`` around the call, after warm-up calls that are not counted;
* the MEDIAN of the repeats (robust to the odd slow run; the mean is not);
* when two implementations are compared, their repeats are INTERLEAVED (a, b, b, a, a, b, ...), so a
  slow patch of the machine (another process, a frequency change) hits both, and the ratio is fair;
* BLAS speed depends on where the arrays sit in memory: on the machine in RESULTS.md the same
  (512, 64) @ (64, 512) product took 168 us at one address and 206 us at another, and the NumPy MLP
  step took anything from 674 to 788 us depending only on where its weights had been copied. One
  placement per process is a lottery ticket (it swung the MLP ratio between 1.13 and 1.26 from one
  process to the next with the same code), so before each round of ``compare`` a block of random
  size is allocated and held, which moves that round's temporaries, and ``before_round`` may copy
  each side's long-lived arrays (weights, inputs) to fresh addresses. Both sides are then timed
  over the same spread of placements.
"""
from __future__ import annotations

import gc
import importlib.util
import json
import math
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np


@dataclass
class Row:
    """One measured figure: tinyattn's ``value`` against a ``baseline`` (NumPy by hand, naive, ...)."""

    bench: str                       # which benchmark (module name)
    case: str                        # the configuration, e.g. "(B,T,d,h)=(8,128,256,8) float32"
    metric: str                      # what value/baseline measure, with the unit, e.g. "fwd+bwd ms"
    value: float                     # tinyattn's figure
    baseline: float | None = None    # the reference figure, same unit
    ratio: float | None = None       # the figure the target is about (e.g. value / baseline)
    ratio_name: str = ""             # what ratio means, e.g. "tinyattn / numpy"
    target: str | None = None        # e.g. "<= 1.25" or ">= 0.5"; None = informational
    extra: dict = field(default_factory=dict)  # anything else worth keeping in the JSON
    floor: dict | None = None        # against torch: NumPy / torch on the same GEMMs and elementwise ops (floor.py)
    target_why: str = ""             # which rule set ``target`` (targets.py): the issue's, kept, or the floor's

    @property
    def met(self) -> bool | None:
        """Whether ``ratio`` meets ``target`` (None when there is no target)."""
        if self.target is None or self.ratio is None:
            return None
        op, bound = self.target.split()
        return bool(self.ratio <= float(bound) if op == "<=" else self.ratio >= float(bound))

    def to_dict(self) -> dict:
        """Plain Python types only (NumPy scalars become floats), ready for json.dump."""
        d = asdict(self)
        for key in ("value", "baseline", "ratio"):
            if d[key] is not None:
                d[key] = float(d[key])
        d["extra"] = {k: (float(v) if isinstance(v, (np.floating, np.integer)) else v) for k, v in d["extra"].items()}
        d["met"] = self.met
        return d


def time_once(fn: Callable[[], object]) -> float:
    """Seconds for one call of ``fn``."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def median_time(fn: Callable[[], object], repeat: int = 7, warmup: int = 2, number: int = 1) -> float:
    """Median seconds per call of ``fn`` over ``repeat`` timings of ``number`` calls, after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    gc.collect()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def compare(fns: dict[str, Callable[[], object]], repeat: int = 7, warmup: int = 2, number: int = 1,
            min_time: float = 0.0, max_repeat: int = 60, stats: dict | None = None,
            before_round: Callable[[], object] | None = None,
            clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Median seconds per call of each function, with their repeats interleaved (see the module docstring).

    Every function gets ``warmup`` uncounted calls first. Round r runs the functions in order when r is
    even and in reverse order when r is odd, so neither always runs right after the other. With
    ``min_time``, the number of rounds grows (up to ``max_repeat``) until each function has been timed
    for about that many seconds: on a busy machine a few more repeats steady the median a lot.
    ``stats``, if given, receives the fastest time of each function too (under "min").
    ``clock``: wall time by default; ``time.process_time`` counts only this process's CPU time, which
    for single-threaded code on a shared machine leaves out the time spent waiting for a core.
    """
    names = list(fns)
    slowest = 0.0
    for name in names:
        for _ in range(warmup):
            slowest = max(slowest, time_once(fns[name]) * number)
    if min_time > 0 and slowest > 0:
        repeat = max(repeat, min(max_repeat, math.ceil(min_time / slowest)))
    gc.collect()
    times: dict[str, list[float]] = {name: [] for name in names}
    offsets = random.Random(0)  # the same sequence of heap shifts on every run
    for r in range(repeat):
        shift = np.empty(offsets.randrange(64, 256 * 1024, 64), np.uint8)  # held for this round (see above)
        if before_round is not None:
            before_round()
        for name in (names if r % 2 == 0 else names[::-1]):
            fn = fns[name]
            t0 = clock()
            for _ in range(number):
                fn()
            times[name].append((clock() - t0) / number)
        del shift
    if stats is not None:
        stats["min"] = {name: min(ts) for name, ts in times.items()}
        stats["repeat"] = repeat
    return {name: statistics.median(ts) for name, ts in times.items()}


# ----------------------------------------------------------------------------------------------
# The machine the figures came from.
# ----------------------------------------------------------------------------------------------
def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _blas() -> dict:
    """Which BLAS numpy runs, and with how many threads (threadpoolctl if it is installed; optional)."""
    info: dict = {}
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg.get("Build Dependencies", {}).get("blas", {})
        info["name"], info["version"] = blas.get("name"), blas.get("version")
    except Exception:  # older numpy: show_config has no mode=
        pass
    try:
        from threadpoolctl import threadpool_info  # optional, not a dependency
        for pool in threadpool_info():
            if pool.get("user_api") == "blas":
                info.update(threads=pool.get("num_threads"), kernel=pool.get("architecture"),
                            internal=pool.get("internal_api"))
                break
    except ImportError:
        info["threads"] = "unknown (pip install threadpoolctl to see)"
    if not info.get("kernel"):
        info["kernel"] = openblas_corename()
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        if os.environ.get(var):
            info[var] = os.environ[var]
    return info


def openblas_corename() -> str | None:
    """The kernel OpenBLAS chose for this CPU (e.g. "Haswell", "SkylakeX"), asked from the loaded library itself.

    Without threadpoolctl this is the only way to see it; OPENBLAS_CORETYPE in the environment
    overrides OpenBLAS's own choice, and on the machine in RESULTS.md the two differ by up to 2x at
    the GEMM shapes of a small transformer, so every figure says which one ran.
    """
    import ctypes

    from tinyattn.blas import _loaded_openblas_paths
    np.ones((2, 2)) @ np.ones((2, 2))  # make sure the BLAS is loaded
    for path in _loaded_openblas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for sym in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename64_",
                    "openblas_get_corename"):
            fn = getattr(lib, sym, None)
            if fn is not None:
                fn.argtypes, fn.restype = [], ctypes.c_char_p
                return fn().decode()
    return None


def machine() -> dict:
    """CPU, cores, memory, Python, NumPy and BLAS: enough to tell whether two runs are comparable."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count()
    mem_gib = None
    try:
        with open("/proc/meminfo") as f:
            mem_gib = round(int(f.readline().split()[1]) / 2**20, 1)  # MemTotal, in kiB
    except (OSError, ValueError, IndexError):
        pass
    from .floor import numpy_config, read_cpu_flags
    flags = read_cpu_flags()
    return {"cpu": _cpu_model(), "cores": cores, "memory_gib": mem_gib, "os": platform.platform(),
            "python": platform.python_version(), "numpy": np.__version__, "blas": _blas(),
            "vector_extensions": flags["vector_extensions"], "avx512": flags["avx512"], "amx": flags["amx"],
            "numpy_simd": numpy_config().get("simd"), "torch": _torch_config()}


def _torch_config() -> dict | None:
    """torch's version, BLAS (MKL?), oneDNN and CPU kernels, asked in a fresh process (None without torch):
    importing torch here would load its OpenMP and MKL into every benchmark's process."""
    if importlib.util.find_spec("torch") is None:
        return None
    code = ("import json, torch; from benchmarks.floor import torch_config; "
            "print(json.dumps({'version': torch.__version__, **torch_config(torch.__config__.show(), "
            "torch.backends.cpu.get_cpu_capability())}))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")))
    return json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else None


def describe_machine(m: dict) -> str:
    blas = m.get("blas", {})
    blas_txt = " ".join(str(blas[k]) for k in ("name", "version") if blas.get(k))
    if blas.get("kernel"):
        blas_txt += f" (kernel {blas['kernel']}, {blas.get('threads')} threads)"
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        if blas.get(var):
            blas_txt += f", {var}={blas[var]}"
    vec = m.get("vector_extensions")
    cpu = m["cpu"] + (f" (vector extensions: {' '.join(vec)}; AVX-512 {'yes' if m.get('avx512') else 'no'}, "
                      f"AMX {'yes' if m.get('amx') else 'no'})" if vec is not None else "")
    simd = f", NumPy SIMD {'/'.join(m['numpy_simd'])}" if m.get("numpy_simd") else ""
    t = m.get("torch")
    torch_txt = (f"; torch {t['version']}: BLAS {t['blas']}" + (f" (MKL {t['mkl']})" if t.get("mkl") else "") +
                 (f", oneDNN {t['onednn']}" if t.get("onednn") else "") +
                 f", CPU kernels {t['cpu_capability']}") if t else ""
    return (f"{cpu}, {m['cores']} cores, {m['memory_gib']} GiB; Python {m['python']}, "
            f"NumPy {m['numpy']}{simd}, BLAS {blas_txt or 'unknown'}{torch_txt}; {m['os']}")


# ---- a library in a process of its own, timed on request (tutorial_styles, hf_gpt2) --------------
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Child:
    """``python -m <module> <args>`` kept alive with one BLAS/OpenMP thread, driven line by line.

    The child prints one JSON line when it is ready (what the parent checks before timing), then for each
    ``run N [WHAT]`` line it reads, one JSON line ``{"t": [N CPU times in seconds]}``; ``quit`` ends it.
    Two children taking turns are the interleaved comparison of two libraries that share no process."""

    def __init__(self, module: str, args: list[str], name: str) -> None:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                   PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen([sys.executable, "-m", module, *args], cwd=ROOT, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.name = name

    def read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            raise RuntimeError(f"the {self.name} child stopped (exit status {self.proc.returncode}); see its stderr")
        return json.loads(line)

    def run(self, n: int, what: str = "") -> list[float]:
        self.proc.stdin.write(f"run {n} {what}\n")
        self.proc.stdin.flush()
        return self.read()["t"]

    def close(self) -> None:
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
        except (BrokenPipeError, ValueError):
            pass
        self.proc.wait(timeout=60)


def serve(calls: dict) -> None:
    """The child's side of ``Child``: for each ``run N [WHAT]`` line on stdin, time N calls of ``calls[WHAT]``
    (``calls[""]`` when WHAT is left out) in CPU time and print them as one JSON line; stop at ``quit``."""
    for line in sys.stdin:
        cmd = line.split()
        if not cmd or cmd[0] == "quit":
            break
        fn, times = calls[cmd[2] if len(cmd) > 2 else ""], []
        for _ in range(int(cmd[1])):
            t0 = time.process_time()
            fn()
            times.append(time.process_time() - t0)
        print(json.dumps({"t": times}), flush=True)


def blas_kernel() -> str:
    """Which OpenBLAS kernel NumPy runs here, and whether OPENBLAS_CORETYPE forced it."""
    forced, core = os.environ.get("OPENBLAS_CORETYPE"), openblas_corename()
    if core is None:
        return "not OpenBLAS, or its kernel could not be asked"
    return f"OpenBLAS kernel {core}" + (f" (OPENBLAS_CORETYPE={forced})" if forced else "")


# ---- a checkpoint benchmark's child process (gpt2_forward, bert_forward) ------------------------
def run_child(module: str, args: list[str]) -> dict:
    """Run ``python -m <module> <args>`` in a fresh process; its last stdout line is a JSON dict."""
    proc = subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{module} child {args} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def write_checkpoint(module: str, folder: str, cfg: dict) -> None:
    """A checkpoint folder with random weights, written by ``python -m <module> --write`` in a fresh process."""
    run_child(module, ["--write", folder, "--config", json.dumps(cfg)])


def measure_checkpoint(module: str, cfg: dict, quick: bool) -> dict:
    """Write ``cfg``'s checkpoint into a temporary folder, then ``--measure`` it in another fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "random-weights")
        write_checkpoint(module, folder, cfg)
        return run_child(module, ["--measure", folder, "--repeat", "2" if quick else "7"])


def memory_peaks(fn: Callable[[], object]) -> tuple[int, int]:
    """(tracemalloc's peak during one ``fn()``, in bytes; this process's peak resident set size so far, in bytes)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports kiB


def checkpoint_tools_available(name: str) -> bool:
    """Whether a checkpoint can be written here (safetensors and tokenizers, tinyattn[pretrained]);
    if not, say that `name` is skipped."""
    if all(importlib.util.find_spec(m) is not None for m in ("safetensors", "tokenizers")):
        return True
    print(f"(safetensors or tokenizers is not importable here: pip install -e \".[pretrained]\"; "
          f"{name} is skipped)", end=" ", flush=True)
    return False
