"""The grader's parts in-process (no subprocesses): references, variants, verdict helpers, seeds, reports."""
from __future__ import annotations

import ast
import re
import types
from pathlib import Path

import numpy as np
import pytest

from tinyattn.gradcheck import numerical_grad
from tinyattn.grading import EXERCISES, MISTAKES, references as ref, wrong
from tinyattn.grading import checks as checks_pkg
from tinyattn.grading.checkkit import (MUTATION_MISTAKE, NOT_REAL_MISTAKE, NUMERICAL_MISTAKE, CheckFailed, Session, StudentNotImplemented, StudentRaised, diagnose,
                                       expect_close, expect_mask, huge_logit_rows, large_logits)
from tinyattn.grading.exercises import get
from tinyattn.grading.grader import ExerciseResult, GradeReport, SEED_ENV, grade_file, resolve_seed
from tinyattn.grading.report import format_report

GRADING = Path(__file__).resolve().parents[1] / "tinyattn" / "grading"


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# ---- the mistake registry ------------------------------------------------------------------------

REQUIRED = ["missing_scale", "scale_by_d_not_sqrt", "unstable_softmax", "softmax_wrong_axis",
            "softmax_backward_missing_term", "mask_inverted_future_leak", "mask_excludes_diagonal",
            "mask_after_softmax", "mask_fill_zero", "weights_transposed", "heads_mixed_no_transpose",
            "kv_repeat_tiled_not_interleaved", "flash_missing_rescale", "flash_materializes_scores",
            "kv_cache_not_appended", "unbroadcast_wrong_axes", "positional_sin_cos_swapped"]


def test_required_mistake_ids_have_one_paragraph_hints():
    assert set(REQUIRED) <= set(MISTAKES)
    for mid, text in MISTAKES.items():
        assert "\n" not in text and len(text) > 200, mid


def test_every_mistake_id_named_in_the_checks_is_registered():
    """Every snake_case string in the checks and variants is an exercise function or a registered id."""
    functions = {name for ex in EXERCISES for name in ex.functions}
    named = set()
    for f in list((GRADING / "checks").glob("*.py")) + [GRADING / "wrong.py"]:
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"[a-z]+(_[a-z0-9]+)+", node.value):
                named.add(node.value)
    # (checkkit names the ones any check can find: an input written into, a gradient computed numerically)
    assert named - functions | {MUTATION_MISTAKE, NUMERICAL_MISTAKE, NOT_REAL_MISTAKE} == set(MISTAKES)


def test_every_exercise_has_a_checks_module():
    for ex in EXERCISES:
        assert callable(checks_pkg.load(ex.id).run)
    assert sum(ex.points for ex in EXERCISES) == 145  # the one pin of the total: README and Classroom quote it


# ---- the references are right, and every variant really differs ----------------------------------

def test_reference_attention_matches_a_loop(rng):
    Q, K, V = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 2))
    out, w = ref.attention(Q, K, V)
    for i in range(3):
        s = np.array([Q[i] @ K[j] / 2.0 for j in range(5)])
        p = np.exp(s) / np.exp(s).sum()
        assert np.allclose(w[i], p) and np.allclose(out[i], p @ V)


def test_reference_attention_backward_matches_finite_differences(rng):
    Q, K, V, dout = (rng.standard_normal((2, 3, n)) for n in (4, 4, 2, 2))
    mask = ref.causal_mask(3)
    analytic = wrong.attention_backward(Q, K, V, dout, mask)          # default knobs = the correct backward
    for i, x in enumerate((Q, K, V)):
        def loss(v, i=i):
            args = [Q, K, V]
            args[i] = v
            return ref.attention_loss(*args, dout, mask)
        assert np.allclose(analytic[i], numerical_grad(loss, x), atol=1e-7)


def test_reference_rnn_backward_matches_finite_differences(rng):
    p = (rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5)), rng.standard_normal((4, 5)) / 2,
         rng.standard_normal((5, 5)) / 2, rng.standard_normal(5))
    hs, dhs = ref.rnn_forward(*p), rng.standard_normal((2, 3, 5))
    analytic = wrong.rnn_backward(*p, hs, dhs)
    for i in range(5):
        def loss(v, i=i):
            q = list(p)
            q[i] = v
            return float(np.sum(ref.rnn_forward(*q) * dhs))
        assert np.allclose(analytic[i], numerical_grad(loss, p[i]), atol=1e-7)


def test_reference_unbroadcast_is_the_adjoint_of_broadcasting(rng):
    for grad_shape, shape in [((2, 3, 4), (4,)), ((2, 3, 4), (3, 1)), ((2, 3), ()), ((2, 1, 4), (1, 1, 4))]:
        g, x = rng.standard_normal(grad_shape), rng.standard_normal(shape)
        got = ref.unbroadcast(g, shape)
        assert got.shape == shape
        assert np.isclose(np.sum(got * x), np.sum(g * np.broadcast_to(x, grad_shape)))


def test_reference_masks_positional_heads_and_gqa(rng):
    T, w = 7, 3
    loop = np.array([[i - w < j <= i for j in range(T)] for i in range(T)])
    assert np.array_equal(ref.sliding_window_mask(T, w), loop)
    assert np.array_equal(ref.causal_mask(4), np.tril(np.ones((4, 4), dtype=bool)))
    pe = ref.sinusoidal(5, 6)
    assert np.isclose(pe[3, 2], np.sin(3 / 10000 ** (2 / 6))) and np.isclose(pe[3, 3], np.cos(3 / 10000 ** (2 / 6)))
    x = rng.standard_normal((2, 3, 8))
    assert np.array_equal(ref.split_heads(x, 2)[1, 1, 2], x[1, 2, 4:8])
    assert np.array_equal(ref.merge_heads(ref.split_heads(x, 4)), x)
    k = rng.standard_normal((1, 2, 3, 4))
    assert np.array_equal(ref.repeat_kv(k, 3)[:, 2], k[:, 0]) and np.array_equal(ref.repeat_kv(k, 3)[:, 3], k[:, 1])


def test_every_attention_variant_differs_from_the_reference(rng):
    Q, K, V = (rng.standard_normal((2, 5, 4)) for _ in range(3))
    mask = ref.causal_mask(5)
    good = ref.attention(Q, K, V, mask)[0]
    for mid, outs in wrong.attention_variants(Q, K, V, mask).items():
        assert outs and all(not np.allclose(o, good, equal_nan=True) for o in outs), mid
    assert np.allclose(wrong.attention(Q, K, V, mask)[0], good)                        # default knobs: correct


def test_flash_variant_is_only_wrong_when_the_max_moves(rng):
    Q, K, V = rng.standard_normal((6, 3)) * 2, rng.standard_normal((9, 3)), rng.standard_normal((9, 2))
    exact = ref.attention(Q, K, V)[0]
    for acc, l in ((False, False), (False, True), (True, False)):
        assert not np.allclose(wrong.flash_no_rescale(Q, K, V, 2, rescale_acc=acc, rescale_l=l), exact), (acc, l)
        # one block: nothing to rescale
        assert np.allclose(wrong.flash_no_rescale(Q, K, V, 16, rescale_acc=acc, rescale_l=l), exact), (acc, l)
    assert np.allclose(wrong.flash_no_rescale(Q, K, V, 2, rescale_acc=True, rescale_l=True), exact)


def _shifted_softmaxes(s: np.ndarray) -> dict[str, np.ndarray]:
    """A softmax that subtracts something other than each row's max, in the forms learners write."""
    out = {}
    with np.errstate(all="ignore"):
        for name, shift in (("none", 0.0), ("row min", s.min(-1, keepdims=True)),
                            ("row mean", s.mean(-1, keepdims=True)), ("global max", s.max())):
            e = np.exp(s - shift)
            out[name] = e / e.sum(-1, keepdims=True)
    return out


@pytest.mark.parametrize("seed", range(5))
def test_large_logits_break_every_shift_but_the_row_max(seed):
    rng = np.random.default_rng(seed)
    for q_shape, k_shape in (((3, 4, 5), (3, 4, 5)), ((2, 8, 3), (2, 30, 3)), ((6, 2), (7, 2))):
        Q, K = large_logits(rng, q_shape, k_shape)
        s = ref.scores(Q, K)
        assert np.abs(s).max() > 2000                                   # exp(2000) overflows
        good = ref.softmax(s)
        assert np.isfinite(good).all() and good.max() < 0.9999         # finite, and not one-hot
        for name, p in _shifted_softmaxes(s).items():
            assert np.isnan(p).any(), (name, q_shape)


@pytest.mark.parametrize("seed", range(5))
def test_huge_logit_rows_break_every_shift_but_the_row_max(seed):
    rng = np.random.default_rng(seed)
    x = huge_logit_rows(rng, 6, 7)
    assert np.ptp(x, axis=-1).min() > 900                              # a spread of ~1000 inside EVERY row
    assert (x.max(-1) > 900).any() and (x.max(-1) < -900).any()        # and rows far apart
    good = ref.softmax(x)
    assert np.isfinite(good).all()
    for name, p in _shifted_softmaxes(x).items():
        assert np.isnan(p).any(), name


# ---- verdict helpers -------------------------------------------------------------------------------

def test_diagnose_names_a_unique_match_only():
    a, b = np.zeros(3), np.ones(3)
    assert diagnose(b, {"x": [a], "y": [b]}, 1e-6, 1e-8) == "y"
    assert diagnose(b, {"x": [b], "y": [b]}, 1e-6, 1e-8) is None               # ambiguous: name neither
    assert diagnose(b, {"x": [np.ones(4)]}, 1e-6, 1e-8) is None                # shapes must agree


def test_expect_close_reports_shape_nan_and_values():
    want = np.arange(6.0).reshape(2, 3)
    with pytest.raises(CheckFailed, match=r"has shape \(3, 2\), expected \(2, 3\)") as e:
        expect_close(want.T.copy(), want, "out", {"weights_transposed": [want.T]})
    assert e.value.mistake == "weights_transposed"
    with pytest.raises(CheckFailed, match="nan/inf in 1 of 6") as e:
        expect_close(np.where(want == 4, np.nan, want), want, "out", nonfinite_mistake="unstable_softmax")
    assert e.value.mistake == "unstable_softmax"
    with pytest.raises(CheckFailed, match=r"worst at index \(1, 2\): got 7, expected 5"):
        expect_close(want + np.array([[0, 0, 0], [0, 0, 2.0]]), want, "out")
    with pytest.raises(CheckFailed, match="should be a NumPy array, got list"):
        expect_close([[0.0]], np.zeros((1, 1)), "out")
    expect_close(want.astype(np.float32), want, "out")


def test_expect_mask_wants_bool():
    m = np.tril(np.ones((3, 3), dtype=bool))
    with pytest.raises(CheckFailed, match="dtype float64, expected bool"):
        expect_mask(m.astype(float), m, "mask")
    with pytest.raises(CheckFailed, match=r"first at \(query, key\) = \(0, 1\)") as e:
        expect_mask(np.ones((3, 3), dtype=bool), m, "mask", {"mask_inverted_future_leak": [np.ones((3, 3), bool)]})
    assert e.value.mistake == "mask_inverted_future_leak"


def _session(**funcs) -> Session:
    return Session(module=types.SimpleNamespace(**funcs), path="/x/sub.py", rng=np.random.default_rng(0))


def test_session_translates_what_learner_code_does():
    def inplace(x):
        x += 1
        return x

    def not_yet(x):
        raise NotImplementedError("ex99: implement not_yet")

    def leaves(x):
        raise SystemExit(3)

    s = _session(inplace=inplace, not_yet=not_yet, leaves=leaves)
    x = np.zeros(2)
    assert np.array_equal(s.call("inplace", x), np.ones(2)) and np.array_equal(x, np.zeros(2))  # caller's x intact
    with pytest.raises(StudentNotImplemented, match="ex99"):
        s.call("not_yet", x)
    with pytest.raises(StudentRaised, match=r"called sys.exit\(3\)"):
        s.call("leaves", x)
    with pytest.raises(CheckFailed, match="defines no function or class called missing"):
        s.call("missing", x)
    results = s.finish()
    assert results[-1].name == "does not modify its inputs" and not results[-1].passed
    assert "inplace modified its input #1" in results[-1].message


def test_session_check_records_each_outcome():
    s = _session(ok=lambda: 1, boom=lambda: 1 / 0)
    with s.check("passes"):
        s.call("ok")
    with s.check("fails"):
        raise CheckFailed("nope", "missing_scale")
    with s.check("crashes"):
        s.call("boom")
    states = [(r.name, r.state, r.mistake) for r in s.results]
    assert states == [("passes", "passed", None), ("fails", "failed", "missing_scale"), ("crashes", "error", None)]
    assert "ZeroDivisionError" in s.results[2].message


# ---- seeds: fresh inputs each run, reproducible with --seed ------------------------------------------

def test_resolve_seed(monkeypatch):
    monkeypatch.delenv(SEED_ENV, raising=False)
    assert resolve_seed(5) == 5
    assert len({resolve_seed(None) for _ in range(5)}) > 1
    monkeypatch.setenv(SEED_ENV, "77")
    assert resolve_seed(None) == 77 and resolve_seed(3) == 3
    monkeypatch.setenv(SEED_ENV, "abc")
    with pytest.raises(ValueError, match=SEED_ENV):
        resolve_seed(None)


def _inputs_seen(seed: int) -> list:
    seen = []

    def attention_scores(Q, K):
        seen.append((Q.shape, K.shape, float(Q.ravel()[0])))
        return ref.scores(Q, K)

    s = Session(module=types.SimpleNamespace(attention_scores=attention_scores), path="/x/ex01.py",
                rng=np.random.default_rng([seed, 1]))
    checks_pkg.load("ex01").run(s)
    assert all(r.passed for r in s.finish())
    return seen


def test_inputs_change_with_the_seed_and_repeat_with_it():
    assert _inputs_seen(1) == _inputs_seen(1)
    assert _inputs_seen(1) != _inputs_seen(2)


# ---- files that never reach a subprocess ---------------------------------------------------------------

def test_missing_file_and_syntax_error_are_errors(tmp_path):
    ex = get("ex01")
    r = grade_file(tmp_path / ex.filename, ex, 0)
    assert (r.status, r.points) == ("error", 0) and "not found" in r.checks[0]["message"]
    (tmp_path / ex.filename).write_text("def attention_scores(Q, K:\n    pass\n")
    r = grade_file(tmp_path / ex.filename, ex, 0)
    assert r.status == "error" and "syntax error" in r.checks[0]["message"] and "line 1" in r.checks[0]["message"]


def test_forbidden_import_is_caught_before_running(tmp_path):
    ex = get("ex02")
    (tmp_path / ex.filename).write_text("import os\nos._exit(1)\nfrom scipy.special import softmax\n")
    r = grade_file(tmp_path / ex.filename, ex, 0)
    assert r.status == "forbidden" and "ex02_softmax.py, line 3: scipy.special" in r.checks[0]["message"]


# ---- the report --------------------------------------------------------------------------------------

def test_report_text_and_json_carry_the_hint():
    checks = [{"name": "values", "passed": False, "message": "out is wrong", "mistake": "missing_scale"},
              {"name": "dtype", "passed": True, "message": "", "mistake": None}]
    rep = GradeReport("exercises", 42, [ExerciseResult("ex01", "failed", 0, 5, checks),
                                        ExerciseResult("ex02", "passed", 10, 10, []),
                                        ExerciseResult("ex03", "not_attempted", 0, 5, [])])
    text = format_report(rep)
    assert "likely mistake: missing_scale" in text and "1/sqrt(d_k)" in text
    assert "total 10/20" in text and "--seed 42" in text and "not attempted" in text
    data = rep.to_json()
    assert (data["total"], data["max"]) == (10, 20)
    assert data["exercises"][0]["checks"][0]["message"].startswith("out is wrong Hint (missing_scale): ")
    assert data["exercises"][0]["checks"][1] == {"name": "dtype", "passed": True, "message": "", "mistake": None,
                                                 "part": None}


# ---- points per part ---------------------------------------------------------------------------------

def test_parts_add_up_and_multi_function_exercises_are_split():
    for ex in EXERCISES:  # (the total itself is pinned once, in test_every_exercise_has_a_checks_module)
        assert sum(p.points for p in ex.parts) == ex.points, ex.id
    ex02 = get("ex02")
    assert [(p.name, p.points, p.after) for p in ex02.parts] == [("softmax", 5, 1), ("softmax_backward", 5, 2)]
    assert [p.name for p in get("ex04").parts] == ["attention", "masks"]
    for ex in EXERCISES:
        assert len({p.name for p in ex.parts}) == len(ex.parts) and all(p.points > 0 for p in ex.parts)
        if len(ex.functions) > 1:
            assert [p.name for p in ex.parts] == list(ex.functions), ex.id


def _c(passed: bool, part=None) -> dict:
    return {"name": "c", "passed": passed, "message": "", "mistake": None, "part": part}


def test_a_part_earns_its_points_only_when_all_its_checks_passed():
    ex = get("ex02")
    assert ex.score([_c(True, "softmax"), _c(False, "softmax_backward")]) == {"softmax": 5, "softmax_backward": 0}
    assert ex.score([_c(True, "softmax"), _c(True, "softmax_backward")]) == {"softmax": 5, "softmax_backward": 5}
    # a failure that belongs to no part (load error, timeout, forbidden import) fails every part
    assert ex.score([_c(True, "softmax"), _c(True, "softmax_backward"), _c(False)]) == {"softmax": 0,
                                                                                       "softmax_backward": 0}
    assert ex.score([_c(True, "softmax")]) == {"softmax": 5, "softmax_backward": 0}     # a part with no checks: 0
    one = get("ex01")
    assert one.score([_c(True), _c(True, "attention_scores")]) == {"attention_scores": 5}
    assert one.score([_c(True), _c(False)]) == {"attention_scores": 0}


def _solution(ex_id: str) -> types.SimpleNamespace:
    ns: dict = {}
    exec((GRADING.parents[1] / "solutions" / get(ex_id).filename).read_text(), ns)
    return types.SimpleNamespace(**ns)


@pytest.mark.parametrize("ex_id", [ex.id for ex in EXERCISES if len(ex.parts) > 1])
def test_every_check_of_a_split_exercise_names_its_part(ex_id):
    s = Session(module=_solution(ex_id), path="/x.py", rng=np.random.default_rng([5, int(ex_id[2:])]))
    checks_pkg.load(ex_id).run(s)
    results = s.finish()
    names = {p.name for p in get(ex_id).parts}
    assert all(r.passed for r in results)
    assert {r.part for r in results if r.name != "does not modify its inputs"} == names
    assert all(r.part is None for r in results if r.name == "does not modify its inputs")


def test_writing_into_an_argument_costs_the_parts_points():
    # an answer that changes its inputs in place is wrong: each check where it happened fails, so its part
    # earns nothing; the other part keeps its points
    sol = _solution("ex02")

    def softmax_inplace(x, axis=-1):
        x -= x.max(axis=axis, keepdims=True)
        e = np.exp(x)
        return e / e.sum(axis=axis, keepdims=True)

    s = Session(module=types.SimpleNamespace(softmax=softmax_inplace, softmax_backward=sol.softmax_backward),
                path="/x.py", rng=np.random.default_rng(3))
    checks_pkg.load("ex02").run(s)
    results = [r.to_json() for r in s.finish()]
    bad = [c for c in results if not c["passed"]]
    assert bad and all(c["mistake"] == MUTATION_MISTAKE and "modified its input #1" in c["message"] for c in bad)
    assert {c["part"] for c in bad if not c.get("advice")} == {"softmax", "softmax_backward"}   # (FD of YOUR softmax)
    assert [c["name"] for c in bad if c.get("advice")] == ["does not modify its inputs"]
    assert get("ex02").score(results) == {"softmax": 0, "softmax_backward": 0}
    # a backward that writes into dy: the forward keeps its points
    def backward_inplace(y, dy, axis=-1):
        dy -= (dy * y).sum(axis=axis, keepdims=True)
        return y * dy
    s = Session(module=types.SimpleNamespace(softmax=sol.softmax, softmax_backward=backward_inplace),
                path="/x.py", rng=np.random.default_rng(3))
    checks_pkg.load("ex02").run(s)
    results = [r.to_json() for r in s.finish()]
    assert get("ex02").score(results) == {"softmax": 5, "softmax_backward": 0}


# ---- hints explain; they do not hand over the fixing line --------------------------------------------------

CODE = re.compile(r"np\.|keepdims|axis\s*=|\.(transpose|reshape|sum|max|swapaxes)\(|concatenate|repeat\(|tile\(|"
                  r"tril|triu|where\(|\w+\s*=\s*\w+\s*[-+*/@]|\[[^\]]*::")


def test_no_hint_gives_code():
    for mid, text in MISTAKES.items():
        assert not CODE.search(text), (mid, CODE.search(text).group(0))


def test_expect_each_reports_every_result():
    want = np.arange(4.0)
    with pytest.raises(CheckFailed) as e:
        from tinyattn.grading.checkkit import expect_each
        expect_each([(want * 2, want, "dQ", {"missing_scale": [want * 2]}, {}), (want, want, "dK", None, {}),
                     (want, want, "dV", None, {})])
    assert e.value.message.startswith("dQ is wrong in 3 of 4 entries") and e.value.message.endswith(
        "dK and dV are right") and e.value.mistake == "missing_scale"


def test_expect_exact_tells_derived_from_finite_differences(rng):
    from tinyattn.grading.checkkit import expect_exact
    x, g = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    y = ref.softmax(x)
    exact = ref.softmax_backward(y, g)
    expect_exact([(y * g - y * np.sum(y * g, axis=-1, keepdims=True), exact, "dx")])      # another formula: exact
    numeric = numerical_grad(lambda z: float(np.sum(ref.softmax(z) * g)), x)
    assert np.allclose(numeric, exact, rtol=1e-5, atol=1e-7)                                # close enough for values
    with pytest.raises(CheckFailed, match="finite differences"):
        expect_exact([(numeric, exact, "dx")])


def test_every_exercise_states_its_points_per_part_as_the_registry_scores_them():
    root = GRADING.parents[1]
    for ex in EXERCISES:
        for folder in ("solutions", "exercises"):
            doc = ast.get_docstring(ast.parse((root / folder / ex.filename).read_text()))
            assert ex.points_line() in " ".join(doc.split()), (folder, ex.id)


# ---- the seed of record: too large to find by trying seeds --------------------------------------------------

def test_a_seed_of_record_is_drawn_from_the_os_and_a_small_one_is_refused(monkeypatch, tmp_path, capsys):
    from tinyattn.grading import oracle
    from tinyattn.grading.cli import grade_main
    from tinyattn.grading.grader import SEED_ENV, resolve_seed
    monkeypatch.delenv(SEED_ENV, raising=False)
    drawn = {resolve_seed(None, of_record=True) for _ in range(20)}
    assert len(drawn) == 20 and all(2**62 <= s < 2**63 for s in drawn)
    assert resolve_seed(5) == 5                                   # self-study: any seed repeats its inputs
    for small in (0, 7, 918273, 2**48 - 1, -(2**60)):
        with pytest.raises(ValueError, match=r"too small for grades of record.*2\*\*48"):
            resolve_seed(small, of_record=True)
    assert resolve_seed(2**48, of_record=True) == 2**48
    monkeypatch.setenv(SEED_ENV, "918273")                       # the example an old README gave
    with pytest.raises(ValueError, match="918273 is too small"):
        resolve_seed(None, of_record=True)
    root = tmp_path / "batch"
    (root / "ada").mkdir(parents=True)
    (root / "ada" / "ex13_sliding_window.py").write_text("")
    assert grade_main(["--batch", str(root), "--only", "ex13"]) == 2
    assert "too small for grades of record" in capsys.readouterr().err
    monkeypatch.delenv(SEED_ENV)
    assert grade_main(["--batch", str(root), "--only", "ex13", "--seed", "33"]) == 2
    assert "seed 33 is too small" in capsys.readouterr().err
    # a student release (no references) makes no grades of record at all: its recorded seeds are public
    monkeypatch.setattr(oracle, "live", lambda: False)
    with pytest.raises(ValueError, match="references are installed"):
        resolve_seed(None, of_record=True)
    assert resolve_seed(None) in oracle.FIXTURE_SEEDS


# ---- recorded answers: found by where the call is made, checked against its inputs to a tolerance --------------

def test_recorded_answers_are_found_by_place_and_refused_for_other_inputs(monkeypatch, tmp_path):
    """A student release looks an answer up by (seed, check, function, how many calls before), so arguments that
    another CPU rounded differently still find it; inputs that differ by more than rounding raise FixtureMissing."""
    from tinyattn.grading import oracle
    rng = np.random.default_rng([11, 6])
    x = rng.standard_normal((3, 4))
    with oracle.record() as calls:
        oracle.begin(np.random.default_rng([11, 6]))
        oracle.enter("a check")
        first = oracle.ref.softmax(x, -1)
        second = oracle.ref.softmax(2 * x, -1)               # the same function again: the 2nd call there
        oracle.enter("after a check")
        after = oracle.ref.softmax(x, 0)
    oracle.save(calls, tmp_path / "ex99.npz")
    monkeypatch.setattr(oracle, "live", lambda: False)
    monkeypatch.setattr(oracle, "FIXTURE_DIR", tmp_path)
    monkeypatch.setattr(oracle._State, "tables", {})
    oracle.use_exercise("ex99")
    rounded_elsewhere = x * (1 + 2.0 ** -52 * rng.choice([-1, 0, 1], x.shape))  # a last bit off, as on another CPU
    oracle.begin(np.random.default_rng([11, 6]))
    oracle.enter("a check")
    np.testing.assert_array_equal(oracle.ref.softmax(rounded_elsewhere, -1), first)
    np.testing.assert_array_equal(oracle.ref.softmax(2 * rounded_elsewhere, -1), second)
    oracle.enter("after a check")
    np.testing.assert_array_equal(oracle.ref.softmax(x, 0), after)
    oracle.begin(np.random.default_rng([11, 6]))
    oracle.enter("a check")
    with pytest.raises(oracle.FixtureMissing, match="differ from the recorded ones"):
        oracle.ref.softmax(x + 1e-3, -1)                      # other inputs: never another input's answer
    with pytest.raises(oracle.FixtureMissing, match="differ from the recorded ones"):
        oracle.ref.softmax(x, 0)                              # the 2nd call there was softmax(2x, -1): not these inputs
    oracle.begin(np.random.default_rng([22, 6]))              # another seed: nothing recorded for it
    oracle.enter("a check")
    with pytest.raises(oracle.FixtureMissing, match="hold no references.softmax"):
        oracle.ref.softmax(x, -1)


def test_fingerprints_tolerate_rounding_and_nothing_more():
    from tinyattn.grading.oracle import _fingerprint, _same
    a = np.random.default_rng(0).standard_normal((50, 7))
    assert _same(_fingerprint([a, 3, "x"]), _fingerprint([a * (1 + 1e-15), 3, "x"]))
    assert _same(_fingerprint([np.array([np.nan, np.inf, 1.0])]), _fingerprint([np.array([np.nan, np.inf, 1.0])]))
    for other in ([a[:, :6], 3, "x"], [a.astype(np.float32), 3, "x"], [a + 1e-6, 3, "x"], [a, 4, "x"], [a, 3, "y"],
                  [a * (1 + 1e-6), 3, "x"]):
        assert not _same(_fingerprint(other), _fingerprint([a, 3, "x"]))
