"""Record PyTorch's outcomes of the fuzzer's programs, for the main suite (which has no torch).

Run from the repository root with a Python that has torch (CI's oracle venv, or any):

    PYTHONPATH=. python tests/data/record_engine_fuzz.py

It writes tests/data/engine_fuzz_torch.json: for each seed in SEEDS, the program's text (as
tests/engine_fuzz.py generates it) and what PyTorch did with it (raise or not, values, dtypes, every
gradient). tests/test_engine_fuzz.py replays the programs on tinyattn and compares. Rerun this script
whenever the generator changes (the main suite checks that the recorded text is still generated).
"""
from __future__ import annotations

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import engine_fuzz as ef  # noqa: E402

SEEDS = range(300)


def main() -> None:
    programs = []
    for seed in SEEDS:
        p = ef.generate(seed)
        out = ef.run(p, torch, F)
        programs.append({"seed": seed, "stmts": p.render(), "fd_ok": p.fd_ok,
                         "families": sorted(p.families),
                         "torch": ef.outcome_to_json(out)})
    data = {"torch_version": torch.__version__.split("+")[0], "generator": "tests/engine_fuzz.py",
            "programs": programs}
    path = HERE / "engine_fuzz_torch.json"
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    raised = sum(p["torch"]["raised"] is not None for p in programs)
    print(f"{path}: {len(programs)} programs, PyTorch raised in {raised}, {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
