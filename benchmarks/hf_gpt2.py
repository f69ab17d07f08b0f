"""GPT-2 (124M) inference on tinyattn against the same checkpoint on Hugging Face transformers (torch CPU).

Optional, like ``torch_cpu``: it runs only where ``transformers`` and ``torch`` import (neither is a
dependency). One checkpoint folder in Hugging Face's layout with random weights (``gpt2_forward``
writes it) is loaded by both: ``tinyattn.pretrained.load_gpt2`` and ``GPT2LMHeadModel.from_pretrained``.
Two things are timed, batch 1, float32:

* the forward of 128 tokens under ``no_grad`` (the logits of every position);
* greedy generation of 20 tokens after a 20-token prompt, with each library's ``generate`` and its KV
  cache (``model.generate(ids, 20, temperature=0)``; ``model.generate(ids, max_new_tokens=20,
  do_sample=False)`` with the end-of-text token switched off, so both always make 20).

As in ``tutorial_styles``: each library in its own process with one thread (``common.Child``), the two
taking turns (interleaved rounds), each call timed in the child's CPU time; the ratio is the median
tinyattn time over the median transformers time. Before timing, the parent checks that both computed
the same logits (to 1e-4 of the largest) and generated the same tokens.
"""
from __future__ import annotations

import importlib.util
import json
import os
import statistics
import sys
import tempfile

import numpy as np

from .common import Child, Row, blas_kernel, checkpoint_tools_available, serve, write_checkpoint
from .floor import summary
from .gpt2_forward import GPT2, QUICK

FORWARD_T, PROMPT_T, NEW_TOKENS = 128, 20, 20
QUICK_T = (16, 4, 3)  # forward tokens, prompt tokens, new tokens of the --quick run


def available() -> bool:
    """Whether transformers and torch can be imported here, and the checkpoint written (else skipped)."""
    if any(importlib.util.find_spec(m) is None for m in ("torch", "transformers")):
        print("(transformers or torch is not importable here: the Hugging Face comparison is skipped)",
              end=" ", flush=True)
        return False
    return checkpoint_tools_available("hf_gpt2")


def _token_ids(vocab: int, quick: bool) -> tuple[np.ndarray, np.ndarray]:
    """The same (1, T) forward ids and (1, P) prompt ids on both sides (any token but end-of-text)."""
    T, P, _ = QUICK_T if quick else (FORWARD_T, PROMPT_T, NEW_TOKENS)
    rng = np.random.default_rng(7)
    return rng.integers(0, vocab - 1, size=(1, T)), rng.integers(0, vocab - 1, size=(1, P))


# ------------------------------------------------------------------------------------------------
# The child: one library; loads, reports what the parent checks, then times calls on request.
# ------------------------------------------------------------------------------------------------
def _child(lib: str, folder: str, quick: bool) -> None:
    new = (QUICK_T if quick else (FORWARD_T, PROMPT_T, NEW_TOKENS))[2]
    if lib == "transformers":
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")  # (its notes on the made-up config go unread)
        import torch
        import transformers
        from transformers import GPT2LMHeadModel
        transformers.utils.logging.disable_progress_bar()
        torch.set_num_threads(1)
        model = GPT2LMHeadModel.from_pretrained(folder).eval()
        ids, prompt = (torch.from_numpy(a) for a in _token_ids(model.config.vocab_size, quick))

        def forward():
            with torch.no_grad():
                return model(ids).logits.numpy()

        def generate():
            out = model.generate(prompt, max_new_tokens=new, min_new_tokens=new, do_sample=False,
                                 eos_token_id=None, pad_token_id=0)
            return out[0, prompt.shape[1]:].tolist()
    else:
        import tinyattn
        from tinyattn.pretrained import load_gpt2
        model, _ = load_gpt2(folder)
        ids, prompt = _token_ids(model.vocab_size, quick)

        def forward():
            with tinyattn.no_grad():
                return model(ids).numpy()

        def generate():
            return np.asarray(model.generate(prompt, new, temperature=0))[0, prompt.shape[1]:].tolist()

    logits = forward()[0]  # (T, vocab)
    gemms = None
    if lib == "transformers":  # each call's GEMM shapes, for the floor measured beside the ratio (floor.py)
        from .floor import torch_gemm_shapes
        gemms = {"forward": torch_gemm_shapes(torch, forward), "generate": torch_gemm_shapes(torch, generate)}
    print(json.dumps({"last": logits[-1].astype(float).tolist(), "argmax": logits.argmax(-1).tolist(),
                      "generated": [int(t) for t in generate()], "blas": blas_kernel(), "gemms": gemms}), flush=True)
    for _ in range(1 if quick else 2):  # warm-up
        forward()
        generate()
    serve({"forward": forward, "generate": generate})


# ------------------------------------------------------------------------------------------------
# The parent: the checkpoint, two children, interleaved rounds.
# ------------------------------------------------------------------------------------------------
def measure(folder: str, quick: bool = False, min_time: float = 4.0, min_rounds: int = 9,
            max_rounds: int = 40) -> dict:
    """Median CPU seconds of each call on both sides, their ratios and spread; agreement checked first."""
    args = ["--child", "{lib}", folder] + (["--quick"] if quick else [])
    sides = {lib: Child("benchmarks.hf_gpt2", [a.format(lib=lib) for a in args], lib)
             for lib in ("tinyattn", "transformers")}
    try:
        ours, theirs = (sides[lib].read() for lib in ("tinyattn", "transformers"))
        last_a, last_t = np.array(ours["last"]), np.array(theirs["last"])
        err = float(np.max(np.abs(last_a - last_t)) / np.max(np.abs(last_t)))
        if not err < 1e-4 or ours["argmax"] != theirs["argmax"] or ours["generated"] != theirs["generated"]:
            raise AssertionError(f"hf_gpt2: tinyattn and transformers disagree (logits relative error {err:.2e}, "
                                 f"same argmax: {ours['argmax'] == theirs['argmax']}, "
                                 f"same generated tokens: {ours['generated'] == theirs['generated']})")
        result = {"err": err, "blas": ours["blas"], "gemms": theirs["gemms"]}
        for what in ("forward", "generate"):
            times: dict[str, list[float]] = {"tinyattn": [], "transformers": []}
            rounds, r = (2 if quick else min_rounds), 0
            while r < rounds:
                for lib in (("tinyattn", "transformers") if r % 2 == 0 else ("transformers", "tinyattn")):
                    times[lib].extend(sides[lib].run(1, what))
                r += 1
                if not quick and r == rounds and rounds < max_rounds and min(map(sum, times.values())) < min_time:
                    rounds += 1
            ratios = [a / b for a, b in zip(times["tinyattn"], times["transformers"])]
            q = statistics.quantiles(ratios, n=4) if len(ratios) >= 2 else ratios * 3
            result[what] = {"tinyattn": statistics.median(times["tinyattn"]),
                            "transformers": statistics.median(times["transformers"]),
                            "rounds": len(ratios), "p25": q[0], "p75": q[2]}
        return result
    finally:
        for s in sides.values():
            s.close()


def run(quick: bool = False) -> list[Row]:
    if not available():
        return []
    T, P, N = QUICK_T if quick else (FORWARD_T, PROMPT_T, NEW_TOKENS)
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "gpt2-random")
        write_checkpoint("benchmarks.gpt2_forward", folder, QUICK if quick else GPT2)
        m = measure(folder, quick=quick)
    from .floor import Floor
    floor = Floor()  # NumPy against torch at the GEMM shapes transformers ran, in the same run (floor.py)
    try:
        floors = {what: floor.measure(m["gemms"][what], rounds=1 if quick else 7) for what in ("forward", "generate")}
    finally:
        floor.close()
    name = "tiny gpt2" if quick else "gpt2 (124M)"
    cases = {"forward": (f"{name}, random weights, {T}-token forward, no_grad, batch 1, float32, 1 thread each",
                         "forward ms"),
             "generate": (f"{name}, random weights, greedy generate {N} tokens after {P}, KV cache, 1 thread each",
                          "generate ms")}
    from .targets import decide
    targets = {what: (None, "") if quick else decide("gpt2", what, floors[what]) for what in cases}
    rows = []
    for what, (case, metric) in cases.items():
        r = m[what]
        rows.append(Row("hf_gpt2", case, metric, r["tinyattn"] * 1e3, r["transformers"] * 1e3,
                        ratio=r["tinyattn"] / r["transformers"], ratio_name="tinyattn / transformers",
                        target=targets[what][0], target_why=targets[what][1],
                        extra={"max_rel_diff": m["err"], "rounds": r["rounds"], "ratio_p25": r["p25"],
                               "ratio_p75": r["p75"], "blas": m["blas"]}, floor=floors[what]))
    return rows


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2], sys.argv[3], "--quick" in sys.argv)
    else:
        for row in run(quick="--quick" in sys.argv):
            print(f"{row.metric}: tinyattn {row.value:.1f} ms, transformers {row.baseline:.1f} ms, "
                  f"ratio {row.ratio:.3f} (p25-p75 {row.extra['ratio_p25']:.3f}-{row.extra['ratio_p75']:.3f}, "
                  f"{row.extra['rounds']} rounds); floor: {summary(row.floor)}", flush=True)
