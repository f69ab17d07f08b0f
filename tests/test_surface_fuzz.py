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
    assert fams == {"unary", "binary", "reduce", "scan", "select", "inplace", "functional"}
    text = "\n".join("\n".join(p["stmts"]) for p in PROGRAMS.values())
    for dt in sf.DTYPES:
        assert text.count(f"dtype=torch.{dt}") > 40, dt
    for needle in ("nan", "inf", "torch.zeros((0,", "torch.tensor(True", "keepdim=True", "dtype=torch.float64)",
                   ".transpose(0, -1)", "[..., ::2]", ".expand(", "b = x1.clone()", "out = (b, w)", "out=o",
                   "torch.nn.functional.cross_entropy(", "label_smoothing=", "p=0.0"):
        assert needle in text, needle  # views (non-contiguous inputs), in-place writes through views, F, out=
    zero_d = sum(bool(re.search(r"= torch\.tensor\([-\w.]+, dtype", "\n".join(p["stmts"]))) for p in PROGRAMS.values())
    assert zero_d > 0.15 * len(PROGRAMS)  # a 0-d input in a fair share of the programs
    left = r"out = (-?[\d.]+|True|False) \S+ [xv]\d|out = torch\.\w+\((-?[\d.]+|True|False), [xv]\d"
    assert len(re.findall(left, text)) > 10  # a Python number on the left (x op y or torch.op(number, x))
    raised = sum(p["torch"]["raised"] is not None for p in PROGRAMS.values())
    assert 0.05 * len(PROGRAMS) < raised < 0.5 * len(PROGRAMS)
    assert sum(bool(p["torch"]["grads"]) for p in PROGRAMS.values()) > 100


# Programs that still differ from PyTorch, each with its class (sf.OPEN_CLASSES says why each is left).
# The last test fails once one of them matches, so this table is always exactly what is open.
OPEN = {
    1: 'nn_float_input', 61: 'error_order', 63: 'nn_float_input', 80: 'torch_bug', 84: 'nn_float_input',
    126: 'nn_float_input', 170: 'nn_float_input', 179: 'loss_rule',
    194: 'torch_empty_unchecked', 234: 'int_mean', 241: 'int_mean', 272: 'var_no_dof',
    299: 'var_no_dof', 310: 'loss_rule', 339: 'nn_float_input', 375: 'loss_rule', 402: 'error_order',
    403: 'softmax_nonfinite', 410: 'error_order', 420: 'loss_rule', 484: 'nn_float_input',
    489: 'masked_fill_int_float', 498: 'loss_target_dtype', 509: 'loss_rule',
    534: 'nn_float_input', 545: 'error_order', 585: 'nn_float_input',
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
