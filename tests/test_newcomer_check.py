"""check() with a wrongly named function says which name is wrong and how to pass it."""
from __future__ import annotations

import numpy as np

from tinyattn.grading import check


def my_scores(Q, K):
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])


def my_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_a_typo_in_the_name_is_named_with_the_right_one():
    r = check("ex01", attention_score=my_scores, show=False)
    msg = r.results[0].checks[0]["message"]
    assert r.results[0].status == "error" and r.points == 0
    assert "attention_score (did you mean attention_scores?)" in msg, msg
    assert 'check("ex01", attention_scores=my_attention_scores)' in msg, msg


def test_a_function_of_another_exercise_is_named_as_the_one_that_does_not_belong():
    # before: "ex01 defines attention_scores; check() got softmax", as if attention_scores had not been passed
    r = check("ex01", attention_scores=my_scores, softmax=my_softmax, show=False)
    msg = r.results[0].checks[0]["message"]
    assert msg.startswith("ex01 has no function named softmax:"), msg
    assert "did you mean" not in msg and "attention_scores=" in msg


def scores_with_a_breakpoint(Q, K):
    breakpoint()
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])


def scores_asking(Q, K):
    input("continue? ")
    return Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])


def test_a_breakpoint_or_input_left_in_is_named_not_just_its_exception():
    # before: "attention_scores raised BdbQuit: (line 3 ...)" and "raised EOFError: EOF when reading a line"
    r = check("ex01", attention_scores=scores_with_a_breakpoint, show=False, timeout=60)
    failed = [c["message"] for c in r.results[0].checks if not c["passed"]]
    assert r.results[0].status == "error" and failed, str(r)
    assert "raised BdbQuit: a breakpoint() or pdb.set_trace() was left in the code" in failed[0], failed[0]
    r = check("ex01", attention_scores=scores_asking, show=False, timeout=60)
    failed = [c["message"] for c in r.results[0].checks if not c["passed"]]
    assert "raised EOFError: input() was left in the code" in failed[0], failed[0]
    assert "input(\"continue? \")" in failed[0]                                # the line is still shown
