"""python -m benchmarks [--quick] [--only NAME[,NAME]] [--json FILE] [--markdown FILE] [--threads N] [--check]

Runs the benchmarks, prints one table, and optionally writes the figures as JSON and as the Markdown
of benchmarks/RESULTS.md. ``--check`` exits with status 1 when a target is missed (the default is to
report and exit 0: a slow, shared machine should not look like a crash).
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time

from . import BENCHMARKS, OPTIONAL_BENCHMARKS
from .floor import summary

# NumPy (and with it the BLAS) is imported only after --threads is read: a BLAS reads its thread
# count once, when it loads.


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if x == 0 or abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    if abs(x) >= 0.01:
        return f"{x:.3g}" if abs(x) < 1 else f"{x:.2f}"
    return f"{x:.2e}"


def _cells(r) -> list[str]:
    met = {True: "yes", False: "NO", None: ""}[r.met]
    ratio = "-" if r.ratio is None else f"{r.ratio:.3f} ({r.ratio_name})"
    return [r.bench, r.case, r.metric, _fmt(r.value), _fmt(r.baseline), ratio, summary(r.floor), r.target or "", met]


# "floor": beside a ratio against torch, NumPy's own time over torch's on the same GEMMs and elementwise ops
HEADER = ["benchmark", "case", "metric", "tinyattn", "baseline", "ratio", "floor (numpy / torch)", "target", "met"]


def table(rows: list) -> str:
    """A plain-text table, columns padded to fit."""
    cells = [HEADER] + [_cells(r) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADER))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _loadavg() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):  # not available on this OS
        return None


_ABOUT = """\
## What each benchmark measures

- **engine_overhead**: microseconds per op on a 16x16 float32 tensor that requires grad, against the same
  NumPy call. At this size NumPy takes about a microsecond, so the difference is the engine's bookkeeping
  (wrapping, recording the op; for the `backward()` rows the graph walk too): the fixed cost of every op.
- **mlp_step**: one training step of Linear(512, 512) -> ReLU -> Linear(512, 10), batch 64, cross-entropy
  and SGD, against the same step written by hand in NumPy (checked to give the same updated weights).
  Before every round both sides' weights and batch are copied to fresh addresses: where they sit
  changes the NumPy step's own time by up to 17% (674-788 us on this machine). The whole measurement
  runs in 5 fresh processes and the median ratio is reported (the JSON has each process's ratio):
  what else a process has allocated still moves the NumPy step's time by up to 6% between processes.
- **mha**: Attention forward+backward (the input requires grad, so dx is computed too) against a
  hand-written NumPy layer with a hand-derived backward (checked to agree on the output and every gradient).
- **matmul_roofline**: GFLOP/s of Attention forward+backward as a share of what `np.matmul` reaches
  running exactly the same matmuls (same shapes, contiguous operands) back to back: the practical limit of
  any NumPy implementation. The `scaled_dot_product_attention` row is the attention core alone.
- **flash_memory**: `flash_attention` against `scaled_dot_product_attention` (which holds the (T, T)
  scores), forward+backward, one head, d=64, float32; each T in its own process; peak memory is
  `tracemalloc`'s peak of NumPy's allocations during the call (inputs excluded).
- **gpt2_forward**: a full-size GPT-2 (124M: 12 layers, 12 heads, 768 wide, 50257 tokens) with random
  weights, written as a Hugging Face checkpoint folder and read back by `tinyattn.pretrained.load_gpt2`
  in a fresh process: a 20-token forward (batch 1, float32) under `no_grad` and with the graph recorded,
  its CPU time, greedy generation of 20 tokens with the KV cache, the load time, `tracemalloc`'s peak
  during one forward, and the process's peak resident memory. Target: the forward in under 1 s.
- **bert_forward**: distilbert-base-uncased's shape (6 layers, 12 heads, 768 wide, 30522 tokens, masked-LM
  head) with random weights, written as a Hugging Face checkpoint folder and read back by
  `tinyattn.pretrained.load_bert` in a fresh process: `model(**inputs, output_attentions=True)` on 32 tokens
  (batch 1, float32) under `no_grad`, its CPU time, the load time, `tracemalloc`'s peak during one forward,
  and the process's peak resident memory. Target: the forward in under 1 s.
- **demo_throughput**: training tokens per second of `tinyattn demo`'s three models (2-block attention,
  GRU, tanh RNN; d_model 32, batch 32) on first-token recall; a step is forward, loss, backward, gradient
  clipping and AdamW.
- **torch_cpu** (only where `import torch` works; PyTorch is not a dependency): float32, one thread on
  both sides (NumPy's BLAS and torch's intra-op pool), in one process with interleaved repeats.
  Attention forward+backward at the `mha` shapes against the same four projections around
  torch's fused `scaled_dot_product_attention`, and one AdamW training step of a nanoGPT-sized model
  (4 layers, 4 heads, width 128, block 128, batch 8, exact GELU) whose code, `benchmarks/gpt_model.py`,
  is written once against PyTorch's API and runs unchanged on both libraries. Both sides start from the
  same weights and are checked to agree on outputs, losses and gradients before timing.
- **tutorial_styles** (only where `import torch` works): one training step (forward, loss, backward) of seven
  common ways tutorials write a transformer (`benchmarks/tutorial_models.py`, written once against PyTorch's
  API): GPTs with a written-out GELU and masked softmax, on SDPA, with a module per head, book-style; and
  encoder-decoders with bmm and a hand-written masked softmax, Annotated-Transformer-style, and on
  nn.Transformer. Each library runs in its own process, one thread, steps interleaved, timed in CPU time;
  the JSON has the spread (quartiles of the per-round ratios) and the OpenBLAS kernel that ran.
- **hf_gpt2** (only where `transformers` and `torch` import): GPT-2 (124M) with random weights in one
  Hugging Face checkpoint folder, loaded by `load_gpt2` and by `GPT2LMHeadModel.from_pretrained`: a
  128-token forward under `no_grad`, and greedy generation of 20 tokens after a 20-token prompt with
  each library's `generate` and KV cache; batch 1, float32, each library in its own process on one
  thread, calls interleaved and timed in CPU time, after checking that logits and tokens agree.

**The floor** (`benchmarks/floor.py`; the column "floor (numpy / torch)" beside every ratio against
torch or transformers): in the same run, NumPy's own time over torch's, each library in its own process on
one thread, taking turns: `np.matmul` against `torch.matmul` at the GEMM shapes torch's profiler saw in
that benchmark's own step (the shapes making up 95% of its GEMM FLOPs, at most 6, weighted by how often
each runs), and `exp`, `sum(-1)` and `a * b + c` on a (8, 128, 512) float32 array. A ratio near its GEMM
floor is the BLAS; a ratio well above every floor is tinyattn's own code. The machine line above
records the CPU's vector extensions (avx2, avx512*, amx*: MKL and oneDNN use AVX-512 and AMX where the
CPU has them, OpenBLAS picks its kernel from the same flags), NumPy's BLAS and kernel, and torch's BLAS,
oneDNN and CPU kernels; the JSON keeps every shape's times.

Why the MLP step is the hardest target: its matmuls take a few hundred microseconds, so what tinyattn
adds to every step whatever the sizes (recording each op, the backward walk, the checks at each
layer's surface, the optimizer's loop over parameters) is a visible share of it. That bookkeeping
takes about 28 us when it runs alone (a width-8 step: 60 us against NumPy's 32); inside the real
step it costs two to three times more, because each 1 MiB matmul evicts the interpreter's working
set from the CPU caches in between (with an 8 MB sweep through memory before each width-8 step, the
gap grows from 28 to about 51 us). The same step in plain NumPy with exactly tinyattn's array
operations runs at 1.01-1.04x, so the arithmetic is not where the difference is. An attention layer
spends milliseconds in each matmul, and the same bookkeeping vanishes.

Times are medians of repeats after warm-up; when two things are compared their repeats are interleaved
(a, b, b, a, ...), so a busy moment of the machine hits both. A multi-threaded BLAS suffers most from
other processes on the machine (its threads wait for each other), which is why `--threads 1` gives
steadier figures on a shared machine; on a quiet one the default thread count is faster for large matmuls.
"""


NOTES_MARKER = "<!-- notes: everything below this line is written by hand and kept when --markdown rewrites the file -->"


def kept_notes(path: str) -> str:
    """The hand-written notes of an existing results file (from NOTES_MARKER on), or "" if it has none."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return ""
    at = text.find(NOTES_MARKER)
    return "\n" + text[at:] if at >= 0 else ""


OWN = "the project's own (not one of issue 43's)"


def markdown(rows: list, info: dict, seconds: float, command: str) -> str:
    """The whole of benchmarks/RESULTS.md: where and how the figures were measured, the targets, every row."""
    from .common import describe_machine
    load = info.get("load_average_1min", {})
    targeted = [r for r in rows if r.target is not None]
    out = ["# Performance", "",
           f"Measured with `{command}` ({seconds:.0f} s) on: {describe_machine(info)}. "
           f"Load average (1 min): {load.get('start')} at the start, {load.get('end')} at the end "
           "(other processes were sharing the machine when this is above 0).", ""]
    busy = max((v for v in load.values() if v is not None), default=0) > (info.get("cores") or 1)
    if busy:
        out += ["**The machine was busy**: more runnable processes than cores, so the absolute times and GFLOP/s "
                "below are inflated (and noisy). The ratios, measured side by side with interleaved repeats, "
                "are much less affected; rerun on a quiet machine for absolute figures.", ""]
    out += ["Rerun (from the repository root, after `pip install -e .`):", "",
            "```bash",
            "python -m benchmarks                  # or: tinyattn bench; about 2 minutes on 2 cores",
            "python -m benchmarks --threads 1      # one BLAS thread: steadier figures on a shared machine",
            "python -m benchmarks --only mha,mlp_step --json figures.json",
            "python -m benchmarks --threads 1 --markdown benchmarks/RESULTS.md   # rewrite this file",
            "```", ""]
    if targeted:
        out += [f"## Targets: {sum(bool(r.met) for r in targeted)} of {len(targeted)} met", "",
                "| benchmark | case | ratio | floor (numpy / torch) | target | which target, and why | met |",
                "|---|---|---|---|---|---|---|"]
        out += [f"| {r.bench} | {r.case} ({r.metric}) | {r.ratio:.3f} ({r.ratio_name}) | {summary(r.floor)} | "
                f"{r.target} | {r.target_why or OWN} | {'yes' if r.met else 'NO'} |" for r in targeted]
        out += ["", "Targets (benchmarks/targets.py): issue 43's where it sets one, per CPU family; on AMD an earlier, "
                "stricter target stays where round four's run on this kind of host met it; where the GEMM floor "
                "measured in this run is above a target, the target is the floor plus 5%."]
        out.append("")
    out += ["## All figures", "", "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in _cells(r)) + " |" for r in rows]
    return "\n".join(out) + "\n\n" + _ABOUT


def main(argv: list[str] | None = None) -> int:
    # `tinyattn bench` runs this module and names itself in TINYATTN_BENCH_PROG, so its --help says `tinyattn bench`
    prog = os.environ.get("TINYATTN_BENCH_PROG", "python -m benchmarks")
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[1])
    ap.add_argument("--quick", action="store_true", help="tiny shapes and few repeats: checks that everything runs "
                                                          "(seconds, not minutes); the figures mean nothing")
    ap.add_argument("--only", metavar="NAME[,NAME]", help=f"run only these, from: {', '.join(BENCHMARKS + OPTIONAL_BENCHMARKS)} "
                                                          "(torch_cpu, tutorial_styles and hf_gpt2 run by default where what they "
                                                          "compare against imports)")
    ap.add_argument("--json", metavar="FILE", help="also write machine, settings and every row as JSON")
    ap.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown (benchmarks/RESULTS.md)")
    ap.add_argument("--threads", type=int, metavar="N", help="BLAS threads (sets OPENBLAS/OMP/MKL_NUM_THREADS before "
                                                             "NumPy loads; default: the BLAS's own choice)")
    ap.add_argument("--check", action="store_true", help="exit with status 1 if any target is missed")
    args = ap.parse_args(argv)
    if args.threads is not None:
        if args.threads < 1:
            ap.error(f"--threads must be >= 1, got {args.threads}")
        if "numpy" in sys.modules:
            print("warning: NumPy is already loaded, --threads may not take effect", file=sys.stderr)
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)  # the flash_memory child processes inherit these too
    from .common import describe_machine, machine

    known = BENCHMARKS + OPTIONAL_BENCHMARKS
    names = list(BENCHMARKS) + [n for n in OPTIONAL_BENCHMARKS
                                if importlib.import_module(f"benchmarks.{n}").available()]
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in known]
        if unknown:
            ap.error(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(known)}")

    info = machine()
    print(f"machine: {describe_machine(info)}", flush=True)
    load_start = _loadavg()
    start = time.perf_counter()
    rows: list = []
    seconds: dict[str, float] = {}
    for name in names:
        t0 = time.perf_counter()
        print(f"running {name} ...", end=" ", flush=True)
        module = importlib.import_module(f"benchmarks.{name}")
        rows.extend(module.run(quick=args.quick))
        seconds[name] = time.perf_counter() - t0
        print(f"{seconds[name]:.1f}s", flush=True)
    total = time.perf_counter() - start
    # Other processes on the machine slow everything down, and a multi-threaded BLAS more than the rest:
    # keep the load average next to the figures, so a reader can tell a quiet run from a busy one.
    info["load_average_1min"] = {"start": load_start, "end": _loadavg()}
    print()
    print(table(rows))
    missed = [r for r in rows if r.met is False]
    print(f"\n{len(rows)} figures in {total:.1f}s; targets met: "
          f"{sum(r.met is True for r in rows)}/{sum(r.met is not None for r in rows)}")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "quick": args.quick, "seconds": total, "seconds_per_benchmark": seconds,
                       "rows": [r.to_dict() for r in rows]}, f, indent=2, default=float)
        print(f"wrote {args.json}")
    if args.markdown:
        command = " ".join(["python -m benchmarks", *(argv if argv is not None else sys.argv[1:])])
        kept = kept_notes(args.markdown)
        with open(args.markdown, "w") as f:
            f.write(markdown(rows, info, total, command) + kept)
        print(f"wrote {args.markdown}" + (" (its notes below the marker kept)" if kept else ""))
    return 1 if (args.check and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
