"""surface_fuzz.classify files a difference under an open class only when the class's reason covers all of it.

Each case is a difference the fuzzer reported against PyTorch (measured with torch 2.13, seeds noted), or the
same with one part changed to what a real bug would look like; the second must come out "other".
"""
from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import surface_fuzz as sf  # noqa: E402


def _cls(family, stmts, diffs):
    return sf.classify(sf.Program(0, list(stmts), [], family), diffs)


KTH = ["x1 = torch.tensor([1.45, -0.76, -0.39, -0.39], dtype=torch.float32, requires_grad=True)",
       "out = x1.kthvalue(3, 0)"]  # seed 100718


def test_tie_index_is_another_index_and_the_gradient_there():
    diffs = [("value", "result 1: 3 vs 2"), ("grad", "x1.grad: [0.0, 0.0, 0.0, 0.5] vs [0.0, 0.0, 0.5, 0.0]")]
    assert _cls("scan:kthvalue", KTH, diffs) == "tie_index"


@pytest.mark.parametrize("diffs", [
    [("value", "result 0: -0.39 vs -0.76"), ("value", "result 1: 3 vs 2")],          # the value itself differs
    [("value", "result 1: 3 vs 2"), ("grad", "x1.grad: [0.0, 0.0, 0.0, 1.0] vs [0.0, 0.0, 0.5, 0.0]")],  # not 0.5
    [("value", "result 1: 3 vs 2"), ("grad", "x1.grad: [0.0, 0.0, 0.25, 0.25] vs [0.0, 0.0, 0.5, 0.0]")],  # shared
])
def test_tie_index_does_not_cover_a_wrong_value_or_gradient(diffs):
    assert _cls("scan:kthvalue", KTH, diffs) == "other"


def test_pytorchs_uninitialised_median_over_an_expanded_dim_is_its_bug():
    stmts = ["x1 = torch.tensor([[0.42]], dtype=torch.float64)", "v1 = x1.expand(2, *x1.shape)",
             "out = v1.median(-3)"]  # seed 129642
    diffs = [("value", "result 0: [[0.42]] vs [[4.6895266303067e-310]]"), ("value", "result 1: [[0]] vs [[1]]")]
    assert _cls("reduce:median", stmts, diffs) == "torch_bug"
    assert _cls("reduce:median", stmts, [("value", "result 0: [[0.42]] vs [[0.0]]")]) == "torch_bug"  # (another run)
    assert _cls("reduce:median", stmts, [("value", "result 0: [[0.0]] vs [[0.42]]")]) == "other"  # (ours wrong)


def test_a_numpy_warning_hides_nothing_else():
    stmts = ["x1 = torch.tensor([inf], dtype=torch.float32, requires_grad=True)",
             "out = torch.nn.functional.softplus(x1, beta=2.0)"]  # seed 110440, before softplus's fix
    warn = ("warn", "tinyattn ['RuntimeWarning'] | torch []")
    assert _cls("functional:softplus", stmts, [warn]) == "numpy_warning"
    assert _cls("functional:softplus", stmts, [warn, ("grad", "x1.grad: [nan] vs [0.5]")]) == "other"
    assert _cls("functional:softplus", stmts, [("warn", "tinyattn [] | torch ['RuntimeWarning']")]) == "other"


def test_torch_rounding_is_rounding_on_both_sides():
    ln = ["x1 = torch.tensor([[0.3]], dtype=torch.float32, requires_grad=True)",
          "w = torch.tensor([0.5], dtype=torch.float32, requires_grad=True)",
          "out = torch.nn.functional.layer_norm(x1, (1,), w)"]
    assert _cls("functional:layer_norm", ln, [("grad", "w.grad: [0.0] vs [1.1920928955078125e-05]")]) == \
        "torch_rounding"
    assert _cls("functional:layer_norm", ln, [("grad", "w.grad: [0.5] vs [1.1920928955078125e-05]")]) == "other"
    at = ["x1 = torch.tensor([0.5, -1.2], dtype=torch.float16, requires_grad=True)",
          "x2 = torch.tensor([2.0, 0.3], dtype=torch.float16, requires_grad=True)", "out = torch.atan2(x1, x2)"]
    assert _cls("binary:atan2", at, [("grad", "x1.grad: [0.4705, 0.1953] vs [0.4707, 0.1952]")]) == "torch_rounding"
    assert _cls("binary:atan2", at, [("grad", "x1.grad: [0.4705, 0.1953] vs [-0.4707, 0.1952]")]) == "other"


def test_every_rule_names_an_open_class():
    import inspect
    src = inspect.getsource(sf.classify)
    names = {line.split('"')[1] for line in src.splitlines() if line.strip().startswith('("')}
    assert names <= set(sf.OPEN_CLASSES), names - set(sf.OPEN_CLASSES)


def test_nonfinite_grad_differs_only_where_a_side_is_not_finite():
    stmts = ["x1 = torch.tensor([0.38, 2.78, nan], dtype=torch.float32, requires_grad=True)",
             "out = torch.nn.functional.elu(x1)"]  # seed 119079: PyTorch's scalar tail gives 1 at NaN
    assert _cls("functional:elu", stmts, [("grad", "x1.grad: [0.5, 0.75, nan] vs [0.5, 0.75, 1.0]")]) == \
        "nonfinite_grad"
    assert _cls("functional:elu", stmts, [("grad", "x1.grad: [0.5, 0.7, nan] vs [0.5, 0.75, 1.0]")]) == "other"
    ht = ["x1 = torch.tensor(nan, dtype=torch.float64, requires_grad=True)",
          "out = torch.nn.functional.hardtanh(x1)"]  # seed 121936: a clamp's gradient at NaN, 0 here, 1 there
    assert _cls("functional:hardtanh", ht, [("grad", "x1.grad: 0.0 vs 0.5")]) == "nonfinite_grad"
    assert _cls("functional:hardtanh", ht, [("grad", "x1.grad: 0.25 vs 0.5")]) == "other"
