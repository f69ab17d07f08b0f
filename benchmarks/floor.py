"""The floor under a tinyattn / PyTorch ratio: NumPy against PyTorch on the same kernels, nothing of tinyattn.

A ratio such as "the GPT step takes 1.2x PyTorch's time" mixes two things: what tinyattn's engine adds
(recording ops, the graph walk, extra array passes) and what NumPy's kernels cost against PyTorch's
(OpenBLAS against MKL/oneDNN for the matrix products; NumPy's ufunc loops against ATen's vectorised
ones for exp, sums, mul-adds). This module measures the second alone, in the same run as the ratio:

* the GEMM floor: ``np.matmul`` against ``torch.matmul`` at the benchmark's own GEMM shapes (the
  shapes torch's profiler saw in one step of the PyTorch side: aten::mm, addmm, bmm, baddbmm), both
  on contiguous float32 operands; the floor is sum(count x NumPy time) / sum(count x torch time) over
  the shapes that make up 95% of the step's GEMM FLOPs (at most ``MAX_SHAPES``);
* the elementwise floor: ``np.exp(x)`` / ``torch.exp(x)``, ``x.sum(-1)`` on both, and ``a * b + c`` on
  both, float32, at ``ELEMENTWISE_SHAPE``.

How it is timed: the same way as ``tutorial_styles``, each library in its own process on one thread
(``python -m benchmarks.floor --child numpy|torch``, driven by ``common.Child``), the two taking turns
op by op, reversing the order every round; each request times a fixed number of repetitions of the op
(the same on both sides, so each timing lasts about a millisecond) in CPU time, and a ratio is the
median NumPy time over the median torch time.

A ratio of tinyattn to torch divided by its floor is then roughly what tinyattn's own code costs on
top of NumPy: at 1.2x with a GEMM floor of 1.15x, the engine adds little; at 1.2x with a floor of
0.95x, the engine is the cost.
"""
from __future__ import annotations

import json
import re
import statistics
import sys

ELEMENTWISE_SHAPE = (8, 128, 512)  # the shape: 2 MiB of float32, an activation of a small GPT
ELEMENTWISE_OPS = ("exp", "sum", "muladd")
MAX_SHAPES = 6
VECTOR_FLAG = re.compile(r"^(avx|amx|fma|f16c|sse4|vnni|avx_vnni)")


# ---- the machine: CPU vector extensions, each library's kernels ---------------------------------
def cpu_flags(cpuinfo: str) -> dict:
    """From the text of /proc/cpuinfo: the CPU's model name and its vector extensions (avx*, amx*, fma, ...).

    Only the first processor's block is read (every core of a machine reports the same flags)."""
    model, flags = None, []
    for line in cpuinfo.splitlines():
        if not line.strip():
            if model is not None or flags:
                break  # the end of the first processor's block
            continue
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and model is None:
            model = value.strip()
        elif key in ("flags", "Features") and not flags:  # x86 says flags, ARM says Features
            flags = value.split()
    vector = sorted(f for f in flags if VECTOR_FLAG.match(f) or f in ("asimd", "sve", "sve2", "sme"))
    return {"model": model, "vector_extensions": vector,
            "avx512": any(f.startswith("avx512") for f in flags), "amx": any(f.startswith("amx") for f in flags)}


def read_cpu_flags(path: str = "/proc/cpuinfo") -> dict:
    try:
        with open(path) as f:
            return cpu_flags(f.read())
    except OSError:  # not Linux
        return {"model": None, "vector_extensions": [], "avx512": None, "amx": None}


def torch_config(show: str, capability: str | None = None) -> dict:
    """PyTorch's BLAS and CPU kernels from the text of ``torch.__config__.show()``."""
    def setting(name):
        m = re.search(rf"\b{name}=([^,\s]+)", show)
        return m.group(1) if m else None
    mkl = re.search(r"Math Kernel Library Version ([^\s]+)", show)
    onednn = re.search(r"MKL-DNN v([0-9.]+)", show)
    usage = re.search(r"CPU capability usage: (\S+)", show)
    return {"blas": setting("BLAS_INFO"), "lapack": setting("LAPACK_INFO"), "mkl": mkl.group(1) if mkl else None,
            "onednn": onednn.group(1) if onednn else None, "use_mkldnn": setting("USE_MKLDNN"),
            "cpu_capability": capability or (usage.group(1) if usage else None)}


def numpy_config() -> dict:
    """NumPy's version, BLAS, the kernel it chose, and its SIMD dispatch on this CPU."""
    import numpy as np

    from .common import _blas
    info = {"version": np.__version__, "blas": _blas()}
    try:
        from numpy._core._multiarray_umath import __cpu_features__
        info["simd"] = [k for k in ("AVX2", "FMA3", "AVX512F", "AVX512_SKX", "AVX512_ICL", "AVX512_SPR")
                        if __cpu_features__.get(k)]
    except ImportError:  # older NumPy
        pass
    return info


# ---- the GEMM shapes of one PyTorch step ----------------------------------------------------------
def gemm_shapes_from_events(events) -> list[dict]:
    """(batch, M, K, N) with counts and FLOPs, from (name, input_shapes) pairs of torch profiler events,
    largest total FLOPs first."""
    found: dict[tuple, int] = {}
    for name, shapes in events:
        shapes = [tuple(s) for s in shapes if s]
        if name in ("aten::mm", "aten::bmm"):
            a, b = shapes[0], shapes[1]
        elif name in ("aten::addmm", "aten::baddbmm"):
            a, b = shapes[1], shapes[2]
        else:
            continue
        key = (a[0], a[1], a[2], b[2]) if len(a) == 3 else (1, a[0], a[1], b[1])
        found[key] = found.get(key, 0) + 1
    rows = [{"shape": list(k), "count": c, "gflop": 2.0 * k[0] * k[1] * k[2] * k[3] * c / 1e9} for k, c in found.items()]
    return sorted(rows, key=lambda r: -r["gflop"])


def main_shapes(rows: list[dict], share: float = 0.95, most: int = MAX_SHAPES) -> list[dict]:
    """The largest shapes that together make up ``share`` of the FLOPs (at most ``most`` of them)."""
    total, kept, acc = sum(r["gflop"] for r in rows), [], 0.0
    for r in rows:
        if len(kept) == most or (kept and acc >= share * total):
            break
        kept.append(r)
        acc += r["gflop"]
    return kept


def torch_gemm_shapes(torch, fn) -> list[dict]:
    """The GEMMs one call of ``fn`` runs on torch (its CPU profiler, shapes recorded)."""
    import os

    from torch.profiler import ProfilerActivity, profile
    err, quiet = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 2)  # the profiler's C++ side announces its start and stop on stderr: not in the results
    try:
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            fn()
    finally:
        os.dup2(err, 2)
        os.close(err)
        os.close(quiet)
    return gemm_shapes_from_events((e.name, e.input_shapes) for e in prof.events())


# ---- the child: one library, ops timed on request -----------------------------------------------
def reps(what: str) -> int:
    """How many times one timing repeats ``what``: about 1-2 ms of work, and the same on both sides."""
    kind, _, dims = what.partition(":")
    n = [int(d) for d in dims.split(",")]
    if kind == "mm":
        work = 2.0 * n[0] * n[1] * n[2] * n[3] / 100e9  # seconds at ~100 GFLOP/s
    else:
        work = 3.0 * n[0] * n[1] * n[2] * 4 / 10e9  # three 4-byte passes at ~10 GB/s
    return max(1, min(1000, round(1.5e-3 / max(work, 1e-9))))


class _Ops(dict):
    """``what`` -> a callable that runs the op ``reps(what)`` times; built (with its arrays) on first use."""

    def __init__(self, lib: str) -> None:
        super().__init__()
        self.lib = lib

    def __missing__(self, what: str):
        import numpy as np
        kind, _, dims = what.partition(":")
        shape = tuple(int(d) for d in dims.split(","))
        rng = np.random.default_rng(0)
        k = reps(what)
        if kind == "mm":
            b, M, K, N = shape
            arrays = [rng.standard_normal(s).astype(np.float32) for s in ((b, M, K), (b, K, N))]
            arrays = [a[0] if b == 1 else a for a in arrays]  # a plain 2-D product when there is no batch
        else:
            arrays = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
        if self.lib == "torch":
            import torch
            arrays = [torch.from_numpy(a) for a in arrays]
            mod = torch
        else:
            mod = np
        a, b_ = arrays[0], arrays[1]
        c = arrays[2] if len(arrays) > 2 else None
        op = {"mm": lambda: mod.matmul(a, b_), "exp": lambda: mod.exp(a), "sum": lambda: a.sum(-1),
              "muladd": lambda: a * b_ + c}[kind]

        def run():
            for _ in range(k):
                out = op()
            return out  # (the last result: what the tests check)
        self[what] = run
        return run


def _child(lib: str) -> None:
    from .common import serve
    if lib == "torch":
        import torch
        torch.set_num_threads(1)
        info = {"version": torch.__version__, **torch_config(torch.__config__.show(),
                                                             torch.backends.cpu.get_cpu_capability())}
    else:
        info = numpy_config()
    print(json.dumps({"lib": lib, "config": info}), flush=True)
    serve(_Ops(lib))


# ---- the parent ---------------------------------------------------------------------------------
class Floor:
    """Two ``--child`` processes (NumPy, torch) kept alive for a whole benchmark; ``measure`` asks them."""

    def __init__(self, libs: tuple[str, str] = ("numpy", "torch")) -> None:
        from .common import Child
        self.libs = libs
        self.sides = [Child("benchmarks.floor", ["--child", lib], lib) for lib in libs]
        self.config = {}
        for lib, side in zip(libs, self.sides):
            self.config[lib if lib not in self.config else lib + "_2"] = side.read()["config"]

    def time(self, whats: list[str], rounds: int = 7) -> dict[str, dict]:
        """Per op: each side's median seconds per op, their ratio (first / second) and its quartiles."""
        times = {w: ([], []) for w in whats}
        for r in range(rounds):
            for w in whats:
                for i in ((0, 1) if r % 2 == 0 else (1, 0)):
                    times[w][i].append(self.sides[i].run(1, w)[0] / reps(w))
        out = {}
        for w, (a, b) in times.items():
            ratios = [x / y for x, y in zip(a, b)]
            q = statistics.quantiles(ratios, n=4) if len(ratios) >= 2 else [ratios[0]] * 3
            out[w] = {"numpy_ms": statistics.median(a) * 1e3, "torch_ms": statistics.median(b) * 1e3,
                      "ratio": statistics.median(a) / statistics.median(b), "p25": q[0], "p75": q[2]}
        return out

    def measure(self, gemms: list[dict], rounds: int = 7, elementwise_shape=ELEMENTWISE_SHAPE) -> dict:
        """The floor of one benchmark: its main GEMM shapes (``gemm_shapes_from_events`` rows) and the
        elementwise ops; ``summary`` is what a results table shows beside the ratio."""
        shapes = main_shapes(gemms)
        whats = [f"mm:{','.join(map(str, r['shape']))}" for r in shapes]
        ew = [f"{op}:{','.join(map(str, elementwise_shape))}" for op in ELEMENTWISE_OPS]
        t = self.time(whats + ew, rounds)
        gemm = None
        if shapes:
            num = sum(r["count"] * t[w]["numpy_ms"] for r, w in zip(shapes, whats))
            den = sum(r["count"] * t[w]["torch_ms"] for r, w in zip(shapes, whats))
            gemm = num / den
        covered = sum(r["gflop"] for r in shapes) / max(sum(r["gflop"] for r in gemms), 1e-30) if gemms else 0.0
        return {"gemm": gemm, "gemm_flop_share": covered,
                "gemm_shapes": [{**r, **t[w]} for r, w in zip(shapes, whats)],
                **{op: t[w]["ratio"] for op, w in zip(ELEMENTWISE_OPS, ew)},
                "elementwise": {op: t[w] for op, w in zip(ELEMENTWISE_OPS, ew)},
                "elementwise_shape": list(elementwise_shape)}

    def close(self) -> None:
        for side in self.sides:
            side.close()


def summary(floor: dict | None) -> str:
    """One line for a table: NumPy / torch on the GEMMs and on exp, sum(-1), mul-add."""
    if not floor:
        return ""
    gemm = "-" if floor.get("gemm") is None else f"{floor['gemm']:.2f}"
    return f"GEMM {gemm}, exp {floor['exp']:.2f}, sum {floor['sum']:.2f}, mul-add {floor['muladd']:.2f}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2])
    else:  # python -m benchmarks.floor M,K,N [M,K,N ...]: the floor at these shapes, printed
        gemms = [{"shape": [1, *map(int, a.split(","))], "count": 1, "gflop": 1.0} for a in sys.argv[1:]]
        floor = Floor()
        try:
            print(json.dumps({"config": floor.config, **floor.measure(gemms)}, indent=1))
        finally:
            floor.close()
