"""Tutorial code on tinyattn against the same code on PyTorch: one training step of each style in ``tutorial_models``.

Optional, like ``torch_cpu``: it runs only where ``import torch`` works (torch is not a dependency).
A step is forward, loss and backward (``model.zero_grad()``; ``loss = model(*batch)``; ``loss.backward()``),
float32, at each style's realistic small size (``tutorial_models``' docstring).

How it is timed, and why:

* each library runs in its OWN process (``python -m benchmarks.tutorial_styles --child LIB STYLE``), so
  neither pays for the other's imports, allocator state or caches; both processes stay alive and
  take turns: the parent asks one for a step, then the other, reversing the order every round, so
  a busy moment of the shared machine hits both sides (interleaved repetitions);
* one thread on each side (``OPENBLAS_NUM_THREADS=OMP_NUM_THREADS=1`` before NumPy or torch loads, and
  ``torch.set_num_threads(1)``); on a shared machine two threads swing these ratios by tens of percent;
* each step is timed in the child's CPU time (``time.process_time``): with one thread that is the
  work itself, without the waits for a core that other processes add to wall time;
* the ratio is the median tinyattn step over the median torch step; its spread is the 25th-75th
  percentile (and the extremes) of the per-round ratios (round r's tinyattn step over round r's torch step).

Before timing, both processes load the same weights (drawn by NumPy, in parameter order) and,
with dropout off, compute the loss and every parameter's gradient norm on the same batch; the
parent refuses to time two models that disagree.
"""
from __future__ import annotations

import importlib.util
import json
import statistics
import sys

import numpy as np

from . import lagging_models, targets
from .common import Child, Row, blas_kernel, serve
from .floor import summary


ABOUT = {
    "gelu_masked": "GPT, written-out tanh GELU, masked_fill + softmax attention",
    "sdpa": "nanoGPT-like GPT on F.scaled_dot_product_attention",
    "heads": "GPT with every head its own module (cat of heads), ReLU MLP, dropout",
    "bmm_encdec": "encoder-decoder, bmm attention, masked softmax by hand",
    "book": "book-style GPT, bool-mask fill, own LayerNorm and GELU modules, dropout",
    "annotated": "Annotated-Transformer-style encoder-decoder, label-smoothed KL loss",
    "nn_transformer": "translation-tutorial encoder-decoder on nn.Transformer",
    **lagging_models.ABOUT,  # the three shapes of code where PyTorch leads most (vit, gru_attn, small_nlp)
}


def build(lib, style: str, quick: bool = False):
    """(model, make_batch) of ``style`` on ``lib``, at its realistic size or its quick one."""
    from . import tutorial_models as tm
    if style in lagging_models.STYLES:
        builder = lagging_models.STYLES[style]
        return builder(lib, lagging_models.QUICK[style]) if quick else builder(lib)
    return tm.STYLES[style](lib, tm.QUICK_SIZE) if quick else tm.STYLES[style](lib)


def available() -> bool:
    """Whether torch can be imported here (the benchmark is skipped otherwise)."""
    return importlib.util.find_spec("torch") is not None


# ------------------------------------------------------------------------------------------------
# The child: one library, one style; builds, checks, then times steps on request.
# ------------------------------------------------------------------------------------------------
def _load_common_weights(lib, model) -> list:
    """Overwrite every parameter with NumPy draws that depend only on its place and shape; return the shapes."""
    shapes = []
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            shape = tuple(p.shape)
            rng = np.random.default_rng(1000 + i)
            if len(shape) > 1:
                arr = rng.standard_normal(shape) / np.sqrt(shape[-1])  # fan-in scaled
            else:
                base = np.asarray(p.detach().numpy())
                c = float(base.flat[0]) if base.size and np.all(base == base.flat[0]) else 0.0
                arr = c + 0.05 * rng.standard_normal(shape)  # ones/zeros of a norm stay near themselves
            p.copy_(lib.from_numpy(arr.astype(np.float32)))
            shapes.append(list(shape))
    return shapes


def _child(lib_name: str, style: str, quick: bool) -> None:
    if lib_name == "torch":
        import torch as lib
        lib.set_num_threads(1)
    else:
        import tinyattn as lib
    lib.manual_seed(0)
    model, make_batch = build(lib, style, quick)
    shapes = _load_common_weights(lib, model)
    batch = make_batch(np.random.default_rng(3))
    params = list(model.parameters())

    def step():
        model.zero_grad()
        loss = model(*batch)
        loss.backward()
        return loss

    model.eval()  # dropout off: both libraries must compute the same loss and gradients
    loss = float(step().item())
    norms = [float(np.linalg.norm(np.asarray(p.grad.numpy(), dtype=np.float64))) if p.grad is not None else 0.0
             for p in params]
    model.train()
    lib.manual_seed(1)
    for _ in range(1 if quick else 3):  # warm-up: first-touch allocations, caches
        step()
    gemms = None
    if lib_name == "torch":  # the step's GEMM shapes, for the floor measured beside the ratio (floor.py)
        from .floor import torch_gemm_shapes
        gemms = torch_gemm_shapes(lib, step)
    print(json.dumps({"loss": loss, "norms": norms, "shapes": shapes, "blas": blas_kernel(), "gemms": gemms}),
          flush=True)
    serve({"": step})


# ------------------------------------------------------------------------------------------------
# The parent: two children per style, interleaved.
# ------------------------------------------------------------------------------------------------
def _rel(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def measure(style: str, quick: bool = False, min_time: float = 4.0, min_rounds: int = 9,
            max_rounds: int = 60) -> dict:
    """Both libraries' step times for ``style``, interleaved; agreement checked first (see the module docstring)."""
    sides = {lib: Child("benchmarks.tutorial_styles", ["--child", lib, style] + (["--quick"] if quick else []), lib)
             for lib in ("tinyattn", "torch")}
    try:
        ready = {k: s.read() for k, s in sides.items()}
        if ready["tinyattn"]["shapes"] != ready["torch"]["shapes"]:
            raise AssertionError(f"{style}: the two libraries' models have different parameters")
        err = max(abs(ready["tinyattn"]["loss"] - ready["torch"]["loss"]) / abs(ready["torch"]["loss"]),
                  _rel(ready["tinyattn"]["norms"], ready["torch"]["norms"]))
        if not err < 2e-3:
            raise AssertionError(f"{style}: tinyattn and torch disagree on the loss or gradients "
                                 f"(relative error {err:.2e})")
        times: dict[str, list[float]] = {"tinyattn": [], "torch": []}
        rounds = 2 if quick else min_rounds
        r = 0
        while r < rounds:
            order = ["tinyattn", "torch"] if r % 2 == 0 else ["torch", "tinyattn"]
            for name in order:
                times[name].extend(sides[name].run(1))
            r += 1
            if not quick and r == rounds and rounds < max_rounds and min(sum(t) for t in times.values()) < min_time:
                rounds += 1
        ratios = [a / b for a, b in zip(times["tinyattn"], times["torch"])]
        q = statistics.quantiles(ratios, n=4) if len(ratios) >= 2 else [ratios[0]] * 3
        return {"tinyattn": statistics.median(times["tinyattn"]), "torch": statistics.median(times["torch"]),
                "err": err, "rounds": len(ratios), "p25": q[0], "p75": q[2], "lo": min(ratios), "hi": max(ratios),
                "blas": ready["tinyattn"]["blas"], "loss": ready["torch"]["loss"], "gemms": ready["torch"]["gemms"]}
    finally:
        for s in sides.values():
            s.close()


def run(quick: bool = False, styles=None) -> list[Row]:
    if not available():
        print("(torch is not importable here: the tutorial-styles comparison is skipped)", end=" ", flush=True)
        return []
    from .floor import Floor
    rows = []
    floor = Floor()  # NumPy against torch at each style's own GEMM shapes, in the same run (floor.py)
    try:
        for style in styles or ABOUT:
            rows.append(_row(style, measure(style, quick=quick), floor, quick))
    finally:
        floor.close()
    return rows


def _row(style: str, m: dict, floor, quick: bool) -> Row:
    fl = floor.measure(m["gemms"], rounds=1 if quick else 7)
    target, why = (None, "") if quick else targets.decide("tutorial_style", style, fl)
    return Row("tutorial_styles", f"{style}: {ABOUT[style]}, float32, 1 thread each",
               "step ms (fwd+loss+bwd)", m["tinyattn"] * 1e3, m["torch"] * 1e3,
               ratio=m["tinyattn"] / m["torch"], ratio_name="tinyattn / torch",
               target=target, target_why=why,
               extra={"max_rel_diff": m["err"], "rounds": m["rounds"], "ratio_p25": m["p25"],
                      "ratio_p75": m["p75"], "ratio_min": m["lo"], "ratio_max": m["hi"],
                      "blas": m["blas"]}, floor=fl)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        _child(argv[1], argv[2], "--quick" in argv)
        return 0
    quick = "--quick" in argv
    styles = [a for a in argv if not a.startswith("--")] or None  # python -m benchmarks.tutorial_styles [STYLE ...] [--quick] [--markdown]
    rows = run(quick=quick, styles=styles)
    for row in rows:
        e = row.extra
        print(f"{row.case.split(':')[0]:>15}  tinyattn {row.value:8.2f} ms  torch {row.baseline:8.2f} ms  "
              f"ratio {row.ratio:.3f} (p25-p75 {e['ratio_p25']:.3f}-{e['ratio_p75']:.3f}, "
              f"min-max {e['ratio_min']:.3f}-{e['ratio_max']:.3f}, {e['rounds']} rounds)  [{e['blas']}]  "
              f"floor: {summary(row.floor)}", flush=True)
    if "--markdown" in argv:  # the rows of RESULTS.md's table of tutorial styles
        print("\n| style | tinyattn ms | torch ms | tinyattn / torch | middle half of the per-round ratios | rounds "
              "| floor (numpy / torch) |")
        print("|---|---|---|---|---|---|---|")
        for row in rows:
            e = row.extra
            print(f"| {row.case.split(', float32')[0]} | {row.value:.1f} | {row.baseline:.1f} | **{row.ratio:.2f}x** | "
                  f"{e['ratio_p25']:.2f}-{e['ratio_p75']:.2f} | {e['rounds']} | {summary(row.floor)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
