"""The op-surface fuzzer against live PyTorch, over seeds the main suite's recording does not hold.

tests/surface_fuzz.py generates one-call programs over the op surface (elementwise functions, operators
with broadcasting and Python numbers on either side, reductions with dim/keepdim/dtype, scans, sorts,
where/clamp/cat/stack/gather/index ops) on every dtype and edge shape; each runs with tinyattn and with
torch, and the outcomes (raise or not and the exception's type, values, dtypes, shapes, warnings, every
input's gradient) must agree. A program may differ only in a class named in surface_fuzz.OPEN_CLASSES
(each with its reason); a difference of any other kind fails, showing the program. The recorded replay
(seeds 0-599, tests/test_surface_fuzz.py) names its open programs one by one.
"""
from __future__ import annotations

import collections
import json
import pathlib
import sys

import pytest
import torch

TESTS = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))

import surface_fuzz as sf  # noqa: E402
import tinyattn  # noqa: E402

CHUNKS = 8
PER_CHUNK = 1000  # 8000 programs: about 2 s a chunk, 25 s the whole file (measured, one shared core)
FIRST = 100_000


def _outcomes(seed: int):
    program = sf.generate(seed)
    torch.set_default_dtype(torch.float32)
    return program, sf.compare(sf.run(program, tinyattn), sf.run(program, torch))


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_random_programs_match_pytorch_or_an_open_class(chunk):
    failures, classes = [], collections.Counter()
    for seed in range(FIRST + chunk * PER_CHUNK, FIRST + (chunk + 1) * PER_CHUNK):
        program, diffs = _outcomes(seed)
        if not diffs:
            continue
        cls = sf.classify(program, diffs)
        classes[cls] += 1
        if cls not in sf.OPEN_CLASSES:
            failures.append(f"seed {seed} ({program.family}):\n  " + "\n  ".join(f"{k}: {d[:300]}" for k, d in diffs[:4])
                            + "\n  program:\n    " + "\n    ".join(program.stmts))
    assert not failures, f"{len(failures)} of {PER_CHUNK} programs differ in no open class:\n" + "\n".join(failures[:5])
    # the open classes are the exception: most programs match outright
    assert sum(classes.values()) < PER_CHUNK // 5, classes


def test_the_recorded_outcomes_are_this_pytorchs():
    """tests/data/surface_fuzz_torch.json still says what the installed torch does (spot check)."""
    data = json.loads((TESTS / "data" / "surface_fuzz_torch.json").read_text())
    for prog in data["programs"][::5]:
        torch.set_default_dtype(torch.float32)
        live = sf.run(sf.generate(prog["seed"]), torch)
        diffs = sf.compare(sf.outcome_from_json(prog["torch"]), live)
        assert not diffs, f"seed {prog['seed']}: rerun tests/data/record_surface_fuzz.py ({diffs[:2]})"


def test_the_regression_cases_hold_in_pytorch(tmp_path):
    """tests/test_surface_regressions.py, run with torch in place of tinyattn, passes: its expected results
    (derived there without torch) are PyTorch's too."""
    src = (TESTS / "test_surface_regressions.py").read_text()
    assert "import tinyattn as torch\n" in src
    (tmp_path / "test_regressions_in_torch.py").write_text(src.replace("import tinyattn as torch\n", "import torch\n"))
    import subprocess
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
                        "test_regressions_in_torch.py"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:]
