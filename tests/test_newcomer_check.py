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


def chatty_unscaled(Q, K):
    for i in range(300):
        print("debug line", i)
    return Q @ np.swapaxes(K, -1, -2)                 # wrong: no 1/sqrt(d_k), so the printout is shown


def test_check_shows_the_end_of_what_the_code_printed_as_the_terminal_does():
    # before: check() showed the first 12 lines of the captured text and cut its end ("... (N more characters)"),
    # so the last lines printed, the ones a learner looks for, were the ones hidden
    r = check("ex01", attention_scores=chatty_unscaled, show=False)
    text, page = str(r), r._repr_html_()
    assert r.results[0].status == "failed"
    assert "debug line 299" in text and "debug line 299" in page, text
    assert "your code printed (the last 15 of" in text and "your code printed (the last 15 of" in page
    shown = [line.strip() for line in text.splitlines() if line.strip().startswith("debug line")]
    assert shown == [f"debug line {i}" for i in range(285, 300)], shown
