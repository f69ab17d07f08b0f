"""Synthetic tasks: shapes, determinism, and that every label is the right answer (recomputed independently)."""

import numpy as np
import pytest

import tinyattn
from tinyattn.data import IGNORE, NOUNS, TASKS, make_task

B = 16


def test_registry_lists_every_task():
    assert set(TASKS) == {"copy", "reverse", "sort", "first_token_recall", "associative_recall", "induction",
                          "agreement"}


@pytest.mark.parametrize("name", sorted(TASKS))
def test_shapes_dtypes_and_vocab(name):
    task = make_task(name)
    batch = task.batch(B, rng=0)
    assert batch.inputs.shape == batch.targets.shape == (B, task.seq_len)
    assert batch.inputs.dtype == batch.targets.dtype == np.int64
    assert batch.inputs.min() >= 0 and batch.inputs.max() < task.vocab_size
    scored = batch.targets[batch.loss_mask]
    assert scored.size > 0 and scored.min() >= 0 and scored.max() < task.vocab_size
    assert 0 < task.chance < 1
    assert len(set(task.vocab)) == task.vocab_size  # names are unique, so decode is unambiguous


@pytest.mark.parametrize("name", sorted(TASKS))
def test_same_seed_same_batch_other_seed_other_batch(name):
    task = make_task(name)
    a, b, c = task.batch(B, rng=3), task.batch(B, rng=3), task.batch(B, rng=4)
    np.testing.assert_array_equal(a.inputs, b.inputs)
    np.testing.assert_array_equal(a.targets, b.targets)
    assert not np.array_equal(a.inputs, c.inputs)


def test_unseeded_batches_follow_manual_seed():
    task = make_task("copy")
    tinyattn.manual_seed(7)
    a = task.batch(4)
    tinyattn.manual_seed(7)
    b = task.batch(4)
    np.testing.assert_array_equal(a.inputs, b.inputs)


def test_batches_stream_is_reproducible():
    task = make_task("reverse", length=3)
    s1 = [b.inputs for b in task.batches(3, 4, rng=1)]
    s2 = [b.inputs for b in task.batches(3, 4, rng=1)]
    assert all(np.array_equal(x, y) for x, y in zip(s1, s2))
    assert not np.array_equal(s1[0], s1[1])  # one generator across the stream, not re-seeded per batch


@pytest.mark.parametrize("name,answer", [("copy", lambda x: x), ("reverse", lambda x: x[::-1]),
                                         ("sort", sorted)])
def test_transduction_labels(name, answer):
    task = make_task(name, length=5, n_symbols=6)
    batch = task.batch(B, rng=1)
    for row_in, row_t in zip(task.decode(batch.inputs), task.decode(batch.targets)):
        words, tgt = row_in.split(), row_t.split()
        assert words[5] == "=" and words[6:] == ["_"] * 5  # the blanks say nothing about the answer
        assert tgt[:6] == ["·"] * 6
        assert tgt[6:] == list(answer(words[:5]))


@pytest.mark.parametrize("distinct_noise", [True, False])
def test_first_token_recall_labels(distinct_noise):
    task = make_task("first_token_recall", distance=12, distinct_noise=distinct_noise)
    batch = task.batch(B, rng=2)
    assert task.seq_len == 13
    np.testing.assert_array_equal(batch.labels, batch.inputs[:, 0])  # the answer is the first token
    assert (batch.inputs[:, -1] == task.token("?")).all()
    assert batch.loss_mask.sum() == B and batch.loss_mask[:, -1].all()  # only the query is scored
    keys = set(task.vocab[1:1 + task.n_keys])
    for row in task.decode(batch.inputs):
        words = row.split()
        assert words[0] in keys
        if distinct_noise:
            assert not keys & set(words[1:-1])  # the key is the only key-symbol in the row


def test_associative_recall_labels():
    task = make_task("associative_recall", n_pairs=5, n_queries=3)
    batch = task.batch(B, rng=3)
    assert task.seq_len == 13
    for row_in, row_t in zip(batch.inputs, batch.targets):
        keys, values = row_in[0:10:2], row_in[1:10:2]
        assert len(set(keys.tolist())) == 5  # keys are distinct, so every query has one answer
        table = dict(zip(keys.tolist(), values.tolist()))
        queries = row_in[10:]
        assert len(set(queries.tolist())) == 3
        assert (row_t[:10] == IGNORE).all()
        assert row_t[10:].tolist() == [table[q] for q in queries.tolist()]


def test_induction_labels():
    task = make_task("induction", length=6, n_symbols=10)
    batch = task.batch(B, rng=4)
    x = batch.inputs
    np.testing.assert_array_equal(x[:, :6], x[:, 6:])  # the second half repeats the first
    for row, tgt in zip(x, batch.targets):
        assert len(set(row[:6].tolist())) == 6
        scored = np.flatnonzero(tgt != IGNORE)
        assert scored.tolist() == list(range(6, 11))
        np.testing.assert_array_equal(tgt[scored], row[scored + 1])  # next-token targets


def test_agreement_labels_follow_the_subject_not_the_nearest_noun():
    task = make_task("agreement", max_fillers=3)
    batch = task.batch(64, rng=5)
    noun_class = {n: p for p, ns in NOUNS.items() for n in ns}
    for row, label in zip(task.decode(batch.inputs), batch.labels):
        words = [w for w in row.split() if w != "<pad>"]
        assert words[0] == "the" and words[-1] == "?"
        nouns = [w for w in words if w in noun_class]
        assert len(nouns) == 2
        subject, distractor = nouns
        assert task.vocab[label] == noun_class[subject]
        assert noun_class[distractor] != noun_class[subject]
    # all four pronoun classes occur (chance is 1/4 for a balanced task)
    assert {task.vocab[i] for i in batch.labels} == {"he", "she", "it", "they"}
    assert task.chance == 0.25


def test_decode_batch_and_errors():
    task = make_task("copy", length=2, n_symbols=3)
    assert task.decode([2, 3, 0, 1, 1]) == "a b = _ _"
    assert task.decode(np.array([[2, 0], [4, 1]])) == ["a =", "c _"]
    with pytest.raises(ValueError, match=r"decode: ids holds id 7 at position \(0,\), outside \[0, 4\] \(vocab_size=5\)"):
        task.decode([7])


def test_labels_refuse_multi_position_tasks():
    with pytest.raises(ValueError, match="exactly one scored position"):
        make_task("copy").batch(2, rng=0).labels


def test_unknown_task_names_the_choices():
    with pytest.raises(ValueError) as e:
        make_task("foo")
    msg = str(e.value)
    assert "unknown task 'foo'" in msg and "copy, reverse, sort, first_token_recall" in msg and "\n" not in msg


def test_unknown_parameter_names_the_parameters():
    with pytest.raises(TypeError, match="task 'copy' has no parameter 'distance'; it takes: length, n_symbols"):
        make_task("copy", distance=3)


@pytest.mark.parametrize("name,params,match", [
    ("first_token_recall", {"distance": -3}, "distance must be a positive int, got distance=-3"),
    ("associative_recall", {"n_pairs": 0}, "n_pairs must be a positive int, got n_pairs=0"),
    ("associative_recall", {"n_pairs": 20}, "n_pairs=20 needs that many distinct keys but n_keys=16"),
    ("associative_recall", {"n_pairs": 2, "n_queries": 3}, "n_queries=3 must be <= n_pairs=2"),
    ("copy", {"length": -1}, "length must be a positive int, got length=-1"),
    ("induction", {"length": 9, "n_symbols": 8}, "n_symbols >= 9"),
    ("agreement", {"max_fillers": -1}, "max_fillers must be an int >= 0, got max_fillers=-1"),
])
def test_bad_counts_are_one_line_value_errors(name, params, match):
    with pytest.raises(ValueError, match=match):
        make_task(name, **params)


def test_bad_batch_size_and_types():
    task = make_task("sort")
    with pytest.raises(ValueError, match="batch_size must be a positive int, got batch_size=-2"):
        task.batch(-2)
    with pytest.raises(TypeError, match=r"batch_size must be a positive int, got batch_size=2.5 \(float\)"):
        task.batch(2.5)
    with pytest.raises(TypeError, match=r"distance must be a positive int, got distance='40' \(str\)"):
        make_task("first_token_recall", distance="40")
    with pytest.raises(TypeError, match="rng must be None, an int seed or a numpy Generator"):
        task.batch(2, rng="seed")
