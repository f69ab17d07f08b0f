"""Record PyTorch's outcomes of the op-surface fuzzer's programs, for the main suite (which has no torch).

Run from the repository root with a Python that has torch (CI's oracle venv, or any):

    PYTHONPATH=. python tests/data/record_surface_fuzz.py

It writes tests/data/surface_fuzz_torch.json: for each seed in SEEDS, the program's text (as
tests/surface_fuzz.py generates it) and what PyTorch did with it (whether and with which exception it
raised, every result's values, dtype and shape, the warnings, every input's gradient).
tests/test_surface_fuzz.py replays the programs on tinyattn and compares. Rerun this script whenever
the generator changes (the main suite checks that the recorded text is still what it generates).
"""
from __future__ import annotations

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import torch  # noqa: E402

import surface_fuzz as sf  # noqa: E402

SEEDS = range(600)


def main() -> None:
    torch.set_default_dtype(torch.float32)
    programs = []
    for seed in SEEDS:
        p = sf.generate(seed)
        programs.append({"seed": seed, "stmts": p.stmts, "grads": p.grads, "family": p.family,
                         "torch": sf.outcome_to_json(sf.run(p, torch))})
    data = {"torch_version": torch.__version__.split("+")[0], "generator": "tests/surface_fuzz.py",
            "programs": programs}
    path = HERE / "surface_fuzz_torch.json"
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    raised = sum(p["torch"]["raised"] is not None for p in programs)
    print(f"{path}: {len(programs)} programs, PyTorch raised in {raised}, {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
