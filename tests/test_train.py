"""Training: SequenceModel heads, fit (loss goes down, early stop, clipping, progress), evaluation, checkpoints."""

import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
from tinyattn import optim
from tinyattn.data import IGNORE, Batch, make_task
from tinyattn.train import (SequenceModel, evaluate, fit, grad_norm_by_distance, load_checkpoint,
                            save_checkpoint)

KINDS = ["attention", "gru", "rnn"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("head", ["lm", "cls"])
def test_heads_shapes(kind, head):
    model = SequenceModel(kind, vocab_size=11, d_model=8, n_heads=2, max_len=20, head=head)
    out = model(np.zeros((3, 7), dtype=np.int64))
    assert out.shape == ((3, 7, 11) if head == "lm" else (3, 11))


@pytest.mark.parametrize("kind", KINDS)
def test_fit_reduces_the_loss_for_every_kind(kind):
    task = make_task("first_token_recall", distance=3, n_keys=4, n_noise=4)
    tinyattn.manual_seed(0)
    model = SequenceModel(kind, task.vocab_size, d_model=16, max_len=task.seq_len)
    hist = fit(model, task, steps=60, lr=1e-2, eval_every=60, eval_size=64, seed=0, progress=False)
    first, last = np.mean(hist["loss"][:5]), np.mean(hist["loss"][-5:])
    assert last < 0.5 * first, (first, last)
    assert hist["eval_acc"][-1] > 2 * task.chance  # it learned something, on held-out sequences
    assert len(hist["step"]) == len(hist["loss"]) == len(hist["grad_norm"]) == 60
    assert hist["eval_step"] == [60]


def test_fit_is_deterministic_given_the_seeds():
    task = make_task("copy", length=3, n_symbols=4)

    def run():
        tinyattn.manual_seed(1)
        model = SequenceModel("attention", task.vocab_size, d_model=8, max_len=task.seq_len)
        return fit(model, task, steps=5, eval_every=5, eval_size=16, seed=3, progress=False)

    a, b = run(), run()
    assert a["loss"] == b["loss"] and a["eval_acc"] == b["eval_acc"]


def test_early_stop_at_target_accuracy():
    task = make_task("first_token_recall", distance=3, n_keys=4, n_noise=4)
    tinyattn.manual_seed(0)
    model = SequenceModel("attention", task.vocab_size, d_model=16, max_len=task.seq_len)
    hist = fit(model, task, steps=500, lr=1e-2, eval_every=10, eval_size=64, target_accuracy=0.95, progress=False)
    assert hist["stopped_early"] and hist["eval_acc"][-1] >= 0.95
    assert hist["step"][-1] == hist["eval_step"][-1] < 500
    assert all(a < 0.95 for a in hist["eval_acc"][:-1])  # it stopped at the first evaluation that made it


def test_gradient_clipping_bounds_the_update():
    task = make_task("copy", length=2, n_symbols=3)
    model = SequenceModel("gru", task.vocab_size, d_model=8)
    params = list(model.parameters())
    before = [p.numpy().copy() for p in params]
    # Plain SGD with lr=1: the update IS the (clipped) gradient, so its norm must be <= clip_norm.
    hist = fit(model, task, steps=1, clip_norm=1e-3, optimizer=optim.SGD(params, lr=1.0), eval_size=8,
               progress=False)
    step = np.sqrt(sum(float(((p.numpy() - b) ** 2).sum()) for p, b in zip(params, before)))
    assert hist["grad_norm"][0] > 1e-2  # the raw gradient was much bigger than the clip...
    assert step == pytest.approx(1e-3, rel=1e-3)  # ...and the step was scaled down to exactly clip_norm


def test_fit_on_an_iterable_of_batches_with_eval_data():
    task = make_task("reverse", length=2, n_symbols=3)
    data = [(b.inputs, b.targets) for b in task.batches(4, 8, rng=0)]
    model = SequenceModel("rnn", task.vocab_size, d_model=8)
    hist = fit(model, data, steps=10, eval_every=2, eval_data=[task.batch(8, rng=1)], progress=False)
    assert hist["step"] == [1, 2, 3, 4]  # the iterable ran out before `steps`
    assert hist["eval_step"] == [2, 4]
    stream = iter(data)
    assert fit(model, stream, steps=3, progress=False)["step"] == [1, 2, 3]
    assert len(list(stream)) == 1  # it took exactly `steps` batches from the stream, no more
    with pytest.raises(ValueError, match="target_accuracy needs evaluation data"):
        fit(model, data, target_accuracy=0.5, progress=False)


def test_progress_bar_can_be_turned_off(capsys):
    task = make_task("copy", length=2, n_symbols=3)
    model = SequenceModel("rnn", task.vocab_size, d_model=4)
    fit(model, task, steps=2, eval_size=4, progress=False)
    assert capsys.readouterr().err == ""
    fit(model, task, steps=2, eval_size=4, progress=True, desc="bar")
    assert "bar" in capsys.readouterr().err  # tqdm writes to stderr


class _Fixed(nn.Module):
    """A stub model: logits that predict token 1 everywhere."""

    def forward(self, idx):
        B, T = np.asarray(idx).shape
        logits = np.zeros((B, T, 3), dtype=np.float32)
        logits[..., 1] = 1.0
        return tinyattn.tensor(logits)


def test_evaluate_scores_only_the_scored_positions():
    targets = np.array([[IGNORE, 1, 2], [1, IGNORE, IGNORE]])
    inputs = np.zeros((2, 3), dtype=np.int64)
    # scored: 1 (right), 2 (wrong), 1 (right); the IGNORE positions would all count as wrong
    assert evaluate(_Fixed(), Batch(inputs, targets)) == pytest.approx(2 / 3)


def test_checkpoint_round_trip_gives_identical_outputs(tmp_path):
    task = make_task("associative_recall", n_pairs=2)
    model = SequenceModel("attention", task.vocab_size, d_model=8, n_layers=2, max_len=task.seq_len)
    fit(model, task, steps=3, eval_size=8, progress=False)  # move the weights away from any fresh init
    x = task.batch(4, rng=9).inputs
    path = save_checkpoint(model, tmp_path / "ckpt", step=3)
    assert path.endswith(".npz")
    with tinyattn.no_grad():
        expected = model(x).numpy()
        tinyattn.manual_seed(123)  # a different init: the load must overwrite every parameter
        fresh = SequenceModel("attention", task.vocab_size, d_model=8, n_layers=2, max_len=task.seq_len)
        assert not np.array_equal(fresh(x).numpy(), expected)
        _, meta = load_checkpoint(path, fresh)
        np.testing.assert_array_equal(fresh(x).numpy(), expected)
        rebuilt, meta2 = load_checkpoint(path)  # no model given: rebuilt from the saved config
        np.testing.assert_array_equal(rebuilt(x).numpy(), expected)
    assert meta == meta2 == {"step": 3}


def test_fit_writes_a_checkpoint(tmp_path):
    task = make_task("copy", length=2, n_symbols=3)
    model = SequenceModel("gru", task.vocab_size, d_model=4)
    fit(model, task, steps=2, eval_size=4, progress=False, checkpoint=tmp_path / "run.npz")
    rebuilt, meta = load_checkpoint(tmp_path / "run.npz")
    assert meta["history"]["step"] == [1, 2]
    with tinyattn.no_grad():
        x = task.batch(2, rng=0).inputs
        np.testing.assert_array_equal(rebuilt(x).numpy(), model(x).numpy())


def test_load_checkpoint_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint at"):
        load_checkpoint(tmp_path / "missing.npz")


def test_attention_weights_match_the_block():
    model = SequenceModel("attention", 7, d_model=8, n_layers=2, n_heads=2, max_len=10)
    x = np.random.default_rng(0).integers(0, 7, size=(2, 5))
    maps = model.attention_weights(x)
    assert len(maps) == 2 and maps[0].shape == (2, 2, 5, 5)
    np.testing.assert_allclose(maps[0].sum(-1), 1.0, rtol=1e-5)
    assert np.all(np.triu(maps[0][0, 0], k=1) == 0)  # causal: nothing attends to the future
    # Layer 0's map, recomputed by hand from its LayerNorm and W_q/W_k: softmax(q k^T / sqrt(d_k)), causal.
    with tinyattn.no_grad():
        z = model.blocks[0].ln1(model.pos(model.embed(x))).numpy()  # (B, T, C)
    attn = model.blocks[0].attn
    q = (z @ attn.W_q.weight.numpy().T + attn.W_q.bias.numpy()).reshape(2, 5, 2, 4).transpose(0, 2, 1, 3)  # (B, H, T, d_k)
    k = (z @ attn.W_k.weight.numpy().T + attn.W_k.bias.numpy()).reshape(2, 5, 2, 4).transpose(0, 2, 1, 3)  # (B, H, T, d_k)
    s = np.where(np.tri(5, dtype=bool), q @ k.swapaxes(-1, -2) / 2.0, -np.inf)  # (B, H, T, T), sqrt(d_k) = 2
    p = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(maps[0], p / p.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="a gru model has no attention weights"):
        SequenceModel("gru", 7).attention_weights(x)


def test_gradient_vanishes_with_distance_in_a_tanh_rnn_but_not_in_attention():
    task = make_task("first_token_recall", distance=30)
    batch = task.batch(8, rng=0)
    tinyattn.manual_seed(0)
    rnn = grad_norm_by_distance(SequenceModel("rnn", task.vocab_size, d_model=16), batch)
    attn = grad_norm_by_distance(SequenceModel("attention", task.vocab_size, d_model=16, max_len=31), batch)
    assert sorted(rnn) == list(range(31))
    # Compare with distance 1, not 0: the token at distance 0 is the query itself, which also gets
    # gradient straight down its own residual path.
    assert rnn[30] < 1e-6 * rnn[1]  # 29 more tanh steps with PyTorch's init: the signal is gone (~1e-10)
    assert attn[30] > 0.3 * attn[1]  # one attention hop reaches the first token as well as its neighbour


def test_bad_arguments_give_one_line_errors():
    task = make_task("first_token_recall", distance=200)
    model = SequenceModel("attention", task.vocab_size, max_len=128)
    with pytest.raises(ValueError) as e:
        fit(model, task, steps=1, progress=False)
    msg = str(e.value)
    assert msg == ("task 'first_token_recall' with distance=200 needs sequences of 201 tokens but the model's "
                   "max_len is 128; build the model with max_len >= 201")
    with pytest.raises(ValueError, match="sequence length 201 is longer than the model's max_len=128"):
        model(task.batch(1, rng=0).inputs)
    with pytest.raises(ValueError, match="steps must be a positive int, got steps=-5"):
        fit(model, make_task("copy"), steps=-5, progress=False)
    with pytest.raises(ValueError, match="unknown model kind 'lstm'; choose from: attention, rnn, gru"):
        SequenceModel("lstm", 5)
    with pytest.raises(ValueError, match="d_model must be a positive int, got d_model=0"):
        SequenceModel("gru", 5, d_model=0)
    with pytest.raises(ValueError, match="inputs reveal later targets"):
        fit(SequenceModel("attention", 16, causal=False), make_task("induction"), progress=False)
    with pytest.raises(ValueError, match="head='cls' predicts one label per sequence"):
        fit(SequenceModel("gru", 10, head="cls"), make_task("copy"), progress=False)
    with pytest.raises(ValueError, match=r"SequenceModel: idx holds id 7 at position \(0, 1\), outside \[0, 4\] "
                                         r"\(vocab_size=5\)"):
        SequenceModel("rnn", 5)(np.array([[1, 7]]))
    with pytest.raises(ValueError, match="target_accuracy must be in"):
        fit(model, make_task("copy"), target_accuracy=99, progress=False)
