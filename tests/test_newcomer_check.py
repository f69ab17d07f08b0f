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
