"""flash_attention against naive attention: time and peak memory of forward+backward, one head, d=64, float32.

"Naive" is ``F.scaled_dot_product_attention``: the fastest path tinyattn has, and it holds the full
(T, T) score matrix (in forward, and again for dS in backward). ``flash_attention`` walks over tiles
with an online softmax and recomputes them in backward, so it never holds a (T, T) array.

Each T runs in its own Python process (``python -m benchmarks.flash_memory --child T``), so one run's
freed-but-kept heap can not flatter or burden the next. Inside the child: both are checked to agree,
timed side by side (interleaved, median), and then run once each under ``tracemalloc`` for the peak
of NumPy's allocations during forward+backward (inputs excluded: they exist before the peak is reset).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tracemalloc

import numpy as np

from .common import Row

D = 64
TS = (1024, 2048, 4096, 8192)
QUICK_TS = (256,)
BLOCK = 256  # flash tile size (block_size=); see the docstring of run()


def _child(T: int, block: int, repeat: int) -> dict:
    """Measure one T in this process; return the figures as a dict."""
    import tinyattn
    import tinyattn.nn.functional as F

    from .common import compare

    rng = np.random.default_rng(0)
    q, k, v = (tinyattn.tensor(rng.standard_normal((1, 1, T, D), dtype=np.float32), requires_grad=True)
               for _ in range(3))
    do = rng.standard_normal((1, 1, T, D), dtype=np.float32)

    def naive():
        for t in (q, k, v):
            t.grad = None
        out = F.scaled_dot_product_attention(q, k, v)
        out.backward(do)
        return out

    def flash():
        for t in (q, k, v):
            t.grad = None
        out = F.flash_attention(q, k, v, block_size=block)
        out.backward(do)
        return out

    # Same numbers first (float32 rounding differs between one softmax and the tiled one).
    o_naive, g_naive = naive().data, [t.grad.copy() for t in (q, k, v)]
    o_flash, g_flash = flash().data, [t.grad.copy() for t in (q, k, v)]
    diff = max(float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
               for a, b in zip([o_flash, *g_flash], [o_naive, *g_naive]))
    if not diff < 1e-3:
        raise AssertionError(f"flash_attention and sdpa disagree at T={T}: relative difference {diff:.2e}")

    t = compare({"naive": naive, "flash": flash}, repeat=repeat, warmup=1)

    peaks = {}
    for name, fn in (("naive", naive), ("flash", flash)):
        for x in (q, k, v):
            x.grad = None
        tracemalloc.start()
        tracemalloc.reset_peak()
        fn()
        peaks[name] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return {"T": T, "block_size": block, "naive_s": t["naive"], "flash_s": t["flash"],
            "naive_peak_bytes": peaks["naive"], "flash_peak_bytes": peaks["flash"], "max_rel_diff": diff}


def run(quick: bool = False, block: int = BLOCK) -> list[Row]:
    """One child process per T. The tile size is ``block`` (flash_attention's block_size argument):
    a NumPy call costs microseconds whatever its size, so bigger tiles mean fewer calls; 256x256
    float32 scores are 256 KiB, still nothing next to a (T, T) matrix."""
    rows = []
    for T in (QUICK_TS if quick else TS):
        repeat = 1 if quick else (3 if T >= 4096 else 5)
        cmd = [sys.executable, "-m", "benchmarks.flash_memory", "--child", str(T), "--block", str(block),
               "--repeat", str(repeat)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"flash_memory child for T={T} failed:\n{proc.stderr[-2000:]}")
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        mem_ratio = r["flash_peak_bytes"] / r["naive_peak_bytes"]
        time_ratio = r["flash_s"] / r["naive_s"]
        case = f"T={T}, d={D}, 1 head, float32, block_size={block}"
        target = T == 8192  # the targets are set at the longest sequence
        rows.append(Row("flash_memory", case, "peak MiB (fwd+bwd)", r["flash_peak_bytes"] / 2**20,
                        r["naive_peak_bytes"] / 2**20, ratio=mem_ratio, ratio_name="flash / naive",
                        target="<= 0.1" if target else None, extra={"max_rel_diff": r["max_rel_diff"]}))
        rows.append(Row("flash_memory", case, "fwd+bwd ms", r["flash_s"] * 1e3, r["naive_s"] * 1e3,
                        ratio=time_ratio, ratio_name="flash / naive", target="<= 2" if target else None))
    return rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="one flash-vs-naive measurement (used by run())")
    ap.add_argument("--child", type=int, required=True, metavar="T")
    ap.add_argument("--block", type=int, default=BLOCK)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    print(json.dumps(_child(a.child, a.block, a.repeat)))
