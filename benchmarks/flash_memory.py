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
BLOCKS = (64, 256)  # flash_attention's default block_size, and a larger tile (see run())


def _child(T: int, blocks: tuple[int, ...], repeat: int) -> dict:
    """Measure one T in this process; return the figures as a dict."""
    import tinyattn
    import tinyattn.nn.functional as F

    from .common import compare

    rng = np.random.default_rng(0)
    q, k, v = (tinyattn.tensor(rng.standard_normal((1, 1, T, D), dtype=np.float32), requires_grad=True)
               for _ in range(3))
    do = rng.standard_normal((1, 1, T, D), dtype=np.float32)

    def step(attend):
        def fn():
            for t in (q, k, v):
                t.grad = None
            out = attend(q, k, v)
            out.backward(do)
            return out
        return fn

    fns = {"naive": step(F.scaled_dot_product_attention)}
    for b in blocks:
        fns[f"flash{b}"] = step(lambda q_, k_, v_, b=b: F.flash_attention(q_, k_, v_, block_size=b))

    # Same numbers first (float32 rounding differs between one softmax and the tiled one). These first
    # calls are also the warm-up of the timing below.
    ref = None
    diff = 0.0
    for name, fn in fns.items():
        got = [fn().numpy()] + [t.grad.numpy().copy() for t in (q, k, v)]
        if ref is None:
            ref = got
            continue
        diff = max(diff, *(float(np.max(np.abs(a - b)) / np.max(np.abs(b))) for a, b in zip(got, ref)))
    if not diff < 1e-3:
        raise AssertionError(f"flash_attention and sdpa disagree at T={T}: relative difference {diff:.2e}")

    seconds = compare(fns, repeat=repeat, warmup=0)

    peaks = {}
    for name, fn in fns.items():
        for x in (q, k, v):
            x.grad = None
        tracemalloc.start()
        tracemalloc.reset_peak()
        fn()
        peaks[name] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return {"T": T, "seconds": seconds, "peak_bytes": peaks, "max_rel_diff": diff}


def run(quick: bool = False, blocks: tuple[int, ...] = BLOCKS) -> list[Row]:
    """One child process per T.

    flash_attention is timed at its default block_size=64 and at 256: a NumPy call costs microseconds
    whatever its size, so bigger tiles mean fewer calls; 256x256 float32 scores are 256 KiB, still
    nothing next to a (T, T) matrix. The targets (at T=8192) are checked at the default.
    """
    rows = []
    for T in (QUICK_TS if quick else TS):
        repeat = 1 if quick else (3 if T >= 4096 else 5)
        cmd = [sys.executable, "-m", "benchmarks.flash_memory", "--child", str(T),
               "--blocks", ",".join(map(str, blocks)), "--repeat", str(repeat)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"flash_memory child for T={T} failed:\n{proc.stderr[-2000:]}")
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        sec, peak = r["seconds"], r["peak_bytes"]
        for b in blocks:
            name = f"flash{b}"
            case = f"T={T}, d={D}, 1 head, float32, block_size={b}"
            target = not quick and T == 8192 and b == 64  # the targets: longest T, the default tile
            rows.append(Row("flash_memory", case, "peak MiB (fwd+bwd)", peak[name] / 2**20, peak["naive"] / 2**20,
                            ratio=peak[name] / peak["naive"], ratio_name="flash / naive",
                            target="<= 0.1" if target else None, extra={"max_rel_diff": r["max_rel_diff"]}))
            rows.append(Row("flash_memory", case, "fwd+bwd ms", sec[name] * 1e3, sec["naive"] * 1e3,
                            ratio=sec[name] / sec["naive"], ratio_name="flash / naive",
                            target="<= 2" if target else None))
    return rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="one flash-vs-naive measurement in its own process (used by run())")
    ap.add_argument("--child", type=int, required=True, metavar="T")
    ap.add_argument("--blocks", default=",".join(map(str, BLOCKS)), help="flash block sizes, comma-separated")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    print(json.dumps(_child(a.child, tuple(int(b) for b in a.blocks.split(",")), a.repeat)))
