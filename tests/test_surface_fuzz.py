"""The op-surface fuzzer's programs, replayed on tinyattn against PyTorch's recorded outcomes.

tests/surface_fuzz.py generates one-call programs over the op surface: elementwise functions, operators
with broadcasting, 0-d tensors and Python numbers on either side, reductions with dim/keepdim/dtype,
scans and sorts, where/clamp/cat/stack/gather/index ops, on every dtype (bool to float64) and shape
(0-d, empty, size-1 dims), with NaN and inf among float values. tests/data/surface_fuzz_torch.json holds
what PyTorch 2.13 did with the programs of seeds 0-599 (recorded by tests/data/record_surface_fuzz.py):
whether each raised and with which exception, its results' values, dtypes and shapes, its warnings, and
every input's gradient. Here each program runs on tinyattn and must do the same.
The live comparison with PyTorch, over other seeds, is tests/oracle/test_surface_fuzz_live.py.
"""
from __future__ import annotations

import json
import pathlib
import re

import pytest

import surface_fuzz as sf
import tinyattn

DATA = json.loads((pathlib.Path(__file__).parent / "data" / "surface_fuzz_torch.json").read_text())
PROGRAMS = {p["seed"]: p for p in DATA["programs"]}


def _describe(diffs: list, prog: dict) -> str:
    lines = [f"seed {prog['seed']} ({prog['family']}): tinyattn differs from PyTorch {DATA['torch_version']}:"]
    lines += [f"  {kind}: {detail[:400]}" for kind, detail in diffs[:6]]
    return "\n".join(lines + ["program:"] + ["  " + s for s in prog["stmts"]])


def test_the_recorded_programs_are_the_generators():
    """The JSON was recorded from this generator (rerun tests/data/record_surface_fuzz.py after changing it)."""
    for seed, prog in PROGRAMS.items():
        assert sf.generate(seed).stmts == prog["stmts"], f"seed {seed}: the generator changed since recording"


def test_the_recorded_programs_cover_the_surface():
    """Every family, every dtype, 0-d and empty inputs, NaN/inf, numbers on the left, and both outcomes
    (raise / compute) occur among the recorded programs, most of them often."""
    fams = {p["family"].split(":")[0] for p in PROGRAMS.values()}
    assert fams == {"unary", "binary", "reduce", "scan", "select"}
    text = "\n".join("\n".join(p["stmts"]) for p in PROGRAMS.values())
    for dt in sf.DTYPES:
        assert text.count(f"dtype=torch.{dt}") > 40, dt
    for needle in ("nan", "inf", "torch.zeros((0,", "torch.tensor(True", "keepdim=True", "dtype=torch.float64)"):
        assert needle in text, needle
    assert len(re.findall(r"out = (-?[\d.]+|True|False) \S+ x\d", text)) > 10  # a Python number on the left
    raised = sum(p["torch"]["raised"] is not None for p in PROGRAMS.values())
    assert 0.05 * len(PROGRAMS) < raised < 0.5 * len(PROGRAMS)
    assert sum(bool(p["torch"]["grads"]) for p in PROGRAMS.values()) > 100


# Programs that still differ from PyTorch, each with its class (sf.OPEN_CLASSES says why each is left).
# The last test fails once one of them matches, so this table is always exactly what is open.
OPEN = {
    14: 'remainder_grad', 37: 'var_no_dof', 80: 'torch_bug', 110: 'var_no_dof', 114: 'numpy_warning',
    118: 'torch_empty_unchecked', 133: 'var_no_dof', 137: 'floor_divide_grad', 187: 'numpy_warning',
    228: 'floor_divide_grad', 282: 'torch_bug', 303: 'floor_divide_grad', 312: 'floor_divide_grad',
    354: 'numpy_warning', 362: 'int_mean', 481: 'torch_empty_unchecked', 488: 'numpy_warning', 516: 'int_mean',
    519: 'numpy_warning', 546: 'var_no_dof',
}


def test_every_open_class_is_explained():
    assert set(OPEN.values()) <= set(sf.OPEN_CLASSES)


@pytest.mark.parametrize("seed", sorted(set(PROGRAMS) - set(OPEN)))
def test_program_matches_pytorch(seed):
    prog = PROGRAMS[seed]
    diffs = sf.compare(sf.run(sf.generate(seed), tinyattn), sf.outcome_from_json(prog["torch"]))
    assert not diffs, _describe(diffs, prog)


@pytest.mark.parametrize("seed", sorted(OPEN))
def test_the_open_programs_still_differ_as_their_class_says(seed):
    prog = PROGRAMS[seed]
    diffs = sf.compare(sf.run(sf.generate(seed), tinyattn), sf.outcome_from_json(prog["torch"]))
    assert diffs, f"seed {seed} now matches PyTorch: strike it from OPEN ({OPEN[seed]})"
    assert sf.classify(sf.generate(seed), diffs) == OPEN[seed], diffs
