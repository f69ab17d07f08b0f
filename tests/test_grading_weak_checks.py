"""Red team, rounds five to seven: cheats on ex01, ex03, ex04, ex06, ex07, ex09, ex10, ex11, ex12, ex13, ex14 and ex15
that earned points they should not, now closed.

Each fixture in grading_fixtures/weak_checks/ is a learner's file (its docstring says what it earned before and
after). The seed sweeps grade in this process (a namespace of the file's functions, fast); one run grades the
files in the sandbox, as the batch grader does.

* ex04: a finite mask fill (-1e4) and masking after the softmax (renormalised) passed every mask check: no check
  had masked keys scoring above the kept ones. Now the masks part has large logits under a padding mask.
* ex07, ex11: a float32 result from float64 inputs was judged with float32 tolerances (10x-100x looser); now a
  result must be as precise as its inputs (expect_float), as ex01, ex04 and ex14 already asked.
* ex09, ex13: the table is a function of a few integers, and the student release ships the answers it recorded
  at its seeds: a copied table answered the fixed T = 128, d_model = 64 (ex09) and most masks with T in [6, 12)
  (ex13). Now the sizes come from the seed, from ranges a copied table rarely covers; the residual is bounded.
* ex01, ex14: float32 digits in a float64 result (scores computed in float32; a cache rounded to float32) passed
  rtol 1e-6 on some seeds, and on every seed where the answer is a copy (ex07's heads, ex11's repeat_kv): ex01 now
  checks float64 scores to rtol 1e-9; copies (ex07, repeat_kv, ex14's cache) must be exact.
* ex08 (round six): a mask applied in NumPy cut the graph and earned 15/15: no backward check had a mask. One has
  now (mistake graph_cut_by_numpy).
* ex03, ex06, ex10, ex15 (round six): float32 where float64 is asked. apply_mask copies the scores (now exact, in
  their dtype), unbroadcast's sums and rnn_forward's states are checked to rtol 1e-9 in float64, patch_heads' grid
  must be float64 as its docstring says.
* round seven: ex12's scores written INTO BLAS's buffers (mapped before the limit: no mapping for RLIMIT_AS or mseal
  to see) earned 15/15; the judge now reads the measured process's peak resident set (resident.py). ex08's backward
  compared W_q.bias only: a Tensor subclass whose backward() made up the seven others earned 15/15; now all eight.
* ex12 (round six): the online-softmax check's limit counted what the process mapped when the call started, and was
  set by the harness after the learner's file had run: an array made at import and freed in the call, or the
  harness's function replaced at import, was room for a whole row of scores. Every limit is now set before the
  file loads.
"""
from __future__ import annotations

import importlib.util
import shutil
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from tinyattn.grading import checks as checks_pkg
from tinyattn.grading import references as ref
from tinyattn.grading.checkkit import Session
from tinyattn.grading.exercises import get
from tinyattn.grading.grader import default_jobs, run_tasks
from tinyattn.grading.mistakes import MISTAKES
from tinyattn.grading.oracle import FIXTURE_SEEDS

pytestmark = pytest.mark.instructor           # the references record the tables a release would ship

HERE = Path(__file__).resolve().parent / "grading_fixtures" / "weak_checks"
TAMPER = HERE.parent / "tamper"
SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"
SEEDS = range(1, 21)
SWEEP = range(1, 201)
SEED = 4611686018427392225
ISOLATION = "sandbox" if sys.platform.startswith("linux") else "process"


def load(path: Path) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def grade(ex_id: str, seed: int, module) -> tuple[dict, list]:
    """({part: points}, results) for `module`'s functions on the grader's inputs for `seed`."""
    s = Session(module=module, path=f"/learner/{ex_id}.py", rng=np.random.default_rng([seed, int(ex_id[2:])]))
    checks_pkg.load(ex_id).run(s)
    results = s.finish()
    return get(ex_id).score([r.to_json() for r in results]), results


def mean_points(ex_id: str, module, seeds) -> float:
    return float(np.mean([sum(grade(ex_id, seed, module)[0].values()) for seed in seeds]))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")   # 0 / 0: the mistake itself
@pytest.mark.parametrize("name", ["fill_minus_1e4_ex04.py", "renormalise_after_softmax_ex04.py"])
def test_masks_that_fail_when_masked_keys_score_highest_earn_no_mask_points(name, seed):
    points, results = grade("ex04", seed, load(HERE / name))
    assert points == {"attention": 6, "masks": 0}, [(r.name, r.message) for r in results if not r.passed]
    failed = [r for r in results if not r.passed and not r.advice]
    assert [r.name for r in failed] == ["large logits under a padding mask: padded keys score highest and still "
                                        "get zero weight"]
    if name.startswith("fill"):
        assert failed[0].mistake == "mask_fill_finite" and "minus infinity" in MISTAKES["mask_fill_finite"]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_fill_below_every_score_still_earns_full_marks(seed):
    assert grade("ex04", seed, load(HERE / "fill_minus_1e9_ex04.py"))[0] == {"attention": 6, "masks": 4}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name, ex_id", [("float32_result_ex07.py", "ex07"), ("float32_result_ex11.py", "ex11")])
def test_a_float32_result_from_float64_inputs_earns_nothing(name, ex_id, seed):
    points, results = grade(ex_id, seed, load(HERE / name))
    assert set(points.values()) == {0}, points
    assert all("float32" in r.message and "float64" in r.message for r in results if not r.passed and not r.advice)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name, ex_id", [("float32_inside_ex01.py", "ex01"), ("float32_cache_ex14.py", "ex14"),
                                         ("float32_digits_ex07.py", "ex07")])
def test_float32_digits_in_a_float64_result_earn_nothing(name, ex_id, seed):
    assert set(grade(ex_id, seed, load(HERE / name))[0].values()) == {0}


@pytest.mark.parametrize("seed", SEEDS)
def test_copies_of_k_through_float32_earn_nothing_for_repeat_kv(seed):
    assert grade("ex11", seed, load(HERE / "float32_digits_ex11.py"))[0] == {"repeat_kv": 0, "gqa_attention": 7}


def recorded(ex_id: str, reference) -> dict:
    """{args: answer} for every call a student release records for ex_id (its seeds, its checks)."""
    tables = {}

    def recorder(*args):
        tables[args] = out = reference(*args)
        return out
    for seed in FIXTURE_SEEDS:
        grade(ex_id, seed, types.SimpleNamespace(**{get(ex_id).functions[0]: recorder}))
    return tables


@pytest.mark.parametrize("name, ex_id, reference, bound", [
    # measured over seeds 1-200: 0.225 and 0.2 (were 2.45 and 1.075 with the fixed sizes)
    ("copied_tables_ex09.py", "ex09", ref.sinusoidal, 0.5),
    ("copied_masks_ex13.py", "ex13", ref.sliding_window_mask, 0.5)])
def test_a_table_copied_from_the_release_rarely_answers_a_private_seed(name, ex_id, reference, bound):
    cheat = load(HERE / name)
    cheat.RECORDED.update(recorded(ex_id, reference))
    assert len(cheat.RECORDED) >= 4
    # the cheat answers what was recorded: on a fixture seed it earns full marks (it is no strawman) ...
    assert all(sum(grade(ex_id, seed, cheat)[0].values()) == get(ex_id).points for seed in FIXTURE_SEEDS)
    # ... and on other seeds, rarely
    assert mean_points(ex_id, cheat, SWEEP) <= bound


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name, points", [
    ("float32_result_ex03.py", {"causal_mask": 2, "apply_mask": 0}),
    ("float32_digits_ex03.py", {"causal_mask": 2, "apply_mask": 0}),
    ("float32_result_ex06.py", {"unbroadcast": 0, "matmul_backward": 6}),
    ("float32_digits_ex06.py", {"unbroadcast": 0, "matmul_backward": 6}),
    ("float32_inside_ex10.py", {"rnn_forward": 0, "rnn_backward": 0}),
    ("float32_grid_ex15.py", {"patch_heads": 0})])
def test_float32_where_float64_is_asked_earns_nothing_for_that_part(name, points, seed):
    got, results = grade(name[-7:-3], seed, load(HERE / name))
    assert got == points, [(r.name, r.message) for r in results if not r.passed]
    if name.startswith("float32_result") or name.endswith("ex15.py"):
        assert any("float32" in r.message and "dtype" in r.message for r in results if not r.passed)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_mask_applied_in_numpy_cuts_the_graph_and_earns_nothing(seed):
    points, results = grade("ex08", seed, load(HERE / "numpy_mask_ex08.py"))
    assert points == {"MultiHeadAttention": 0}
    failed = [r for r in results if not r.passed and not r.advice]
    assert [(r.name, r.mistake) for r in failed] == [
        ("backward through a causal mask: the masked path stays in Tensor ops too", "graph_cut_by_numpy")]
    assert "W_q" in failed[0].message and "masked_fill" in MISTAKES["graph_cut_by_numpy"]


@pytest.mark.parametrize("seed", SEEDS[:5])
def test_a_backward_that_makes_up_gradients_earns_nothing(seed):
    """ex08 (round seven): a NumPy forward returning a Tensor subclass whose backward() wrote W_q.bias's gradient by
    finite differences and a constant for the seven others earned 15/15: only W_q.bias was compared. Now every
    weight and bias is compared with the reference's derived gradient, with and without a mask."""
    points, results = grade("ex08", seed, load(HERE / "fake_backward_ex08.py"))
    assert points == {"MultiHeadAttention": 0}
    failed = [r for r in results if not r.passed and not r.advice]
    assert [r.name.split(":")[0] for r in failed] == ["backward", "backward through a causal mask"], failed
    assert all("self.W_q.weight.grad is wrong" in r.message and "self.W_q.bias.grad is wrong" not in r.message
               for r in failed), failed


@pytest.mark.parametrize("ex_id", ["ex01", "ex03", "ex04", "ex06", "ex07", "ex08", "ex09", "ex10", "ex11", "ex13",
                                   "ex14", "ex15"])
def test_the_solutions_keep_full_marks_on_every_seed(ex_id):
    sol = load(SOLUTIONS / get(ex_id).filename)
    assert all(sum(grade(ex_id, seed, sol)[0].values()) == get(ex_id).points for seed in SWEEP[:60])


def test_the_fixtures_earn_the_same_in_the_sandbox(tmp_path):
    want = {"fill_minus_1e4_ex04.py": 6, "renormalise_after_softmax_ex04.py": 6, "fill_minus_1e9_ex04.py": 10,
            "float32_result_ex07.py": 0, "float32_result_ex11.py": 0, "float32_inside_ex01.py": 0,
            "float32_cache_ex14.py": 0, "float32_result_ex03.py": 2, "float32_digits_ex06.py": 6,
            "float32_inside_ex10.py": 0, "float32_grid_ex15.py": 0, "numpy_mask_ex08.py": 0,
            "fake_backward_ex08.py": 0}
    tasks = []
    for name in want:
        ex = get(name[-7:-3])
        folder = tmp_path / name[:-3]
        folder.mkdir()
        shutil.copy(HERE / name, folder / ex.filename)
        tasks.append((folder / ex.filename, ex))
    results = run_tasks(tasks, SEED, 60.0, default_jobs(), isolation=ISOLATION)
    assert {name: r.points for name, r in zip(want, results)} == want, \
        [(r.status, [c for c in r.checks if not c["passed"]]) for r in results]


@pytest.mark.parametrize("isolation", sorted({ISOLATION, "process"}))
def test_the_online_softmax_limit_is_set_before_the_learners_code_runs(tmp_path, isolation):
    """ex12's online-softmax check limited what the call adds to what the process mapped when the call started,
    and the harness set that limit after the learner's file had run: 64 MiB mapped at import and freed in the
    call (reserve_freed), or the harness's limit_address_space replaced at import (tamper/limit_patcher), held a
    whole row of scores: 15/15 each (0/15 without the trick). Now the limit is set before the file loads (the
    inputs' bytes, LOAD_ALLOWANCE and the budget): 0/15, and the solution keeps its 15 points."""
    ex = get("ex12")
    tasks = []
    for name, path in (("reserve", HERE / "reserve_freed_ex12.py"), ("patcher", TAMPER / "limit_patcher_ex12.py"),
                       ("solution", SOLUTIONS / ex.filename)):
        (tmp_path / name).mkdir()
        shutil.copy(path, tmp_path / name / ex.filename)
        tasks.append((tmp_path / name / ex.filename, ex))
    *cheats, solution = run_tasks(tasks, SEED, 60.0, default_jobs(), isolation=isolation)
    assert [r.points for r in cheats] + [solution.points] == [0, 0, 15], [r.checks for r in cheats]
    for cheat in cheats:
        failed = [c for c in cheat.checks if not c["passed"]]
        assert [c["mistake"] for c in failed] == ["flash_materializes_scores"], failed
        assert failed[0]["name"].startswith("the online softmax, measured")


@pytest.mark.parametrize("isolation", sorted({ISOLATION, "process"}))
def test_mappings_held_when_the_limit_is_set_can_not_be_unmapped_for_room(tmp_path, isolation):
    """Naive attention that unmapped BLAS's two 32 MiB buffers (ctypes) before building the (T, S) scores earned
    15/15: the address-space limit had been counted on top of them. Where the kernel has mseal they are sealed when
    the limit is set: 0/15, every memory check failing, named. Without mseal the unmapping works, and the scores it
    then writes count in the process's peak resident set (resident.py): 0/15 there too."""
    ex = get("ex12")
    (tmp_path / "cheat").mkdir()
    shutil.copy(HERE / "unmap_blas_buffers_ex12.py", tmp_path / "cheat" / ex.filename)
    [cheat] = run_tasks([(tmp_path / "cheat" / ex.filename, ex)], SEED, 60.0, 1, isolation=isolation)
    failed = [c for c in cheat.checks if not c["passed"]]
    assert cheat.points == 0 and len(failed) == 3, failed
    assert all(c["mistake"] == "flash_materializes_scores" for c in failed), failed


@pytest.mark.parametrize("isolation", sorted({ISOLATION, "process"}))
def test_memory_mapped_before_the_limit_counts_when_a_call_writes_it(tmp_path, isolation):
    """Naive attention that wrote its (T, S) scores INTO BLAS's 32 MiB buffers (mapped before the limit, found in
    /proc/self/maps, an array made on them with ctypes: nothing mapped or unmapped, so neither RLIMIT_AS nor mseal
    saw it) earned 15/15 in the sandbox and in a process on a kernel with mseal, and so did an exact softmax one row
    of 1,048,576 scores at a time in one buffer. Now the judge reads the process's peak resident set after each
    memory-measured call and compares it with a process that loaded nothing and did nothing: 0/15 each, the
    solution keeps its 15 points (it adds 24.4 MiB to the stub's 31 MiB in the online-softmax check, which allows
    27; the row cheat adds 30.8)."""
    ex = get("ex12")
    tasks = []
    for name, path in (("in_place", HERE / "blas_buffers_in_place_ex12.py"),
                       ("rows", HERE / "blas_buffer_rows_ex12.py"), ("solution", SOLUTIONS / ex.filename)):
        (tmp_path / name).mkdir()
        shutil.copy(path, tmp_path / name / ex.filename)
        tasks.append((tmp_path / name / ex.filename, ex))
    in_place, rows, solution = run_tasks(tasks, SEED, 60.0, default_jobs(), isolation=isolation)
    assert [in_place.points, rows.points, solution.points] == [0, 0, 15], (in_place.checks, rows.checks)
    for cheat, count in ((in_place, 3), (rows, 1)):
        failed = [c for c in cheat.checks if not c["passed"]]
        assert len(failed) == count and all(c["mistake"] == "flash_materializes_scores" and "at its peak" in
                                            c["message"] for c in failed), failed
    assert [c["name"] for c in rows.checks if not c["passed"]][0].startswith("the online softmax, measured")


def test_in_the_sandbox_the_peak_can_not_be_reset(tmp_path):
    """The same scores in BLAS's buffers, the pages then given back (MADV_DONTNEED) and the peak reset by writing
    "5" to /proc/self/clear_refs: in the sandbox /proc is read-only, so the peak stands (0/15). Under
    `--isolation process` the reset works (15/15, docs/instructors.md)."""
    ex = get("ex12")
    (tmp_path / "cheat").mkdir()
    shutil.copy(HERE / "blas_buffers_reset_peak_ex12.py", tmp_path / "cheat" / ex.filename)
    [cheat] = run_tasks([(tmp_path / "cheat" / ex.filename, ex)], SEED, 60.0, 1, isolation=ISOLATION)
    assert cheat.points == 0, cheat.checks              # (without the sandbox, on macOS: no /proc/self/maps at all)
    if ISOLATION == "sandbox":
        assert all(c["mistake"] == "flash_materializes_scores" for c in cheat.checks if not c["passed"]), cheat.checks
