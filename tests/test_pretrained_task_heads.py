"""Task heads on BERT and DistilBERT checkpoints (tinyattn/pretrained/task_heads.py), without PyTorch: the
head's outputs against a float64 NumPy forward written here from the checkpoint's weights, each loss against
its formula (GPT-2's classifier too), which head a checkpoint is read as, the untrained head of a base checkpoint, and the refusals."""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
import safetensors.numpy
from bert_tiny import reference_bert, tiny_config, write_checkpoint
from gpt2_tiny import reference_gpt2
from gpt2_tiny import tiny_config as gpt2_config
from gpt2_tiny import write_checkpoint as write_gpt2

import tinyattn
from tinyattn.pretrained import (AutoModel, AutoModelForCausalLM, AutoModelForMaskedLM,
                                 AutoModelForQuestionAnswering, AutoModelForSequenceClassification,
                                 AutoModelForTokenClassification, load_bert, load_gpt2)

C = 12  # tiny_config's width
ARCH = {"sequence": "ForSequenceClassification", "token": "ForTokenClassification", "qa": "ForQuestionAnswering"}


def _head_weights(family: str, task: str, n: int, rng) -> dict:
    """The head's weights under the checkpoint's names (BERT's pooler sits inside the encoder's prefix)."""
    last = "qa_outputs" if task == "qa" else "classifier"
    w = {f"{last}.weight": rng.normal(size=(n, C)), f"{last}.bias": rng.normal(size=n)}
    if task == "sequence":
        pre = "bert.pooler.dense" if family == "bert" else "pre_classifier"
        w.update({f"{pre}.weight": rng.normal(size=(C, C)) * 0.3, f"{pre}.bias": rng.normal(size=C)})
    return {k: v.astype(np.float32) for k, v in w.items()}


def _checkpoint(tmp_path, family, task, n, arch=True, **cfg):
    cfg = dict(tiny_config(family), **cfg)
    if arch:
        cfg["architectures"] = [("Bert" if family == "bert" else "DistilBert") + ARCH[task]]
    folder, cfg, body = write_checkpoint(tmp_path / "m", cfg=cfg, head=False, family=family)
    path = os.path.join(folder, "model.safetensors")
    stored = safetensors.numpy.load_file(path)
    head = _head_weights(family, task, n, np.random.default_rng(5))
    safetensors.numpy.save_file({**stored, **head}, path)
    return folder, cfg, body, {k.removeprefix("bert."): v.astype(np.float64) for k, v in head.items()}


def _inputs():
    ids = np.array([[2, 7, 9, 11, 5, 3], [2, 8, 4, 3, 0, 0]])
    keep = np.array([[1] * 6, [1, 1, 1, 1, 0, 0]])
    return ids, keep


def _reference(family, task, body, head, cfg, ids, keep):
    """float64 NumPy: the head on reference_bert's hidden states, per text."""
    outs = []
    for row, k in zip(ids, keep):
        h = reference_bert(body, cfg, row, keep=k.astype(bool))[0]  # (T, C)
        if task == "sequence":
            if family == "bert":
                pooled = np.tanh(h[0] @ head["pooler.dense.weight"].T + head["pooler.dense.bias"])
            else:
                pooled = np.maximum(h[0] @ head["pre_classifier.weight"].T + head["pre_classifier.bias"], 0)
            outs.append(pooled @ head["classifier.weight"].T + head["classifier.bias"])  # (n,)
        else:
            last = "qa_outputs" if task == "qa" else "classifier"
            outs.append(h @ head[f"{last}.weight"].T + head[f"{last}.bias"])  # (T, n)
    return np.stack(outs)


@pytest.mark.parametrize("family", ["bert", "distilbert"])
@pytest.mark.parametrize("task,n", [("sequence", 3), ("token", 4), ("qa", 2)])
@pytest.mark.parametrize("arch", [True, False])  # without architectures, the head is read from the weights' names
def test_a_task_checkpoint_gives_its_heads_outputs(tmp_path, family, task, n, arch):
    folder, cfg, body, head = _checkpoint(tmp_path, family, task, n, arch=arch)
    model, _ = load_bert(folder, dtype=np.float64)
    assert type(model).__name__ == {"sequence": "SequenceClassification", "token": "TokenClassification",
                                    "qa": "QuestionAnswering"}[task]
    assert model.num_labels == n and not model.training
    ids, keep = _inputs()
    out = model(input_ids=ids, attention_mask=keep)
    want = _reference(family, task, body, head, cfg, ids, keep)
    real = keep.astype(bool)
    if task == "qa":
        got = np.stack([out.start_logits.numpy(), out.end_logits.numpy()], -1)
        assert list(out.keys()) == ["start_logits", "end_logits"]
    else:
        got = out.logits.numpy()
    if task == "sequence":
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    else:  # a padded token's own outputs are meaningless: real tokens only
        np.testing.assert_allclose(got[real], want[real], rtol=1e-9, atol=1e-9)
    assert out.loss is None and out[0] is (out.start_logits if task == "qa" else out.logits)


def _log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def test_sequence_losses_follow_the_labels_kind(tmp_path):
    folder, cfg, body, head = _checkpoint(tmp_path, "distilbert", "sequence", 3)
    model = AutoModelForSequenceClassification.from_pretrained(folder, dtype=np.float64)
    ids, keep = _inputs()
    z = model(input_ids=ids, attention_mask=keep).logits.numpy()  # (2, 3)
    y = np.array([2, 0])
    ce = -_log_softmax(z)[np.arange(2), y].mean()
    assert model(input_ids=ids, attention_mask=keep, labels=y).loss.item() == pytest.approx(ce, rel=1e-12)
    assert model.config.problem_type == "single_label_classification"  # decided once, kept (as Hugging Face)
    model.config.problem_type = None
    t = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])  # float labels: several labels per text
    p = 1 / (1 + np.exp(-z))
    bce = -(t * np.log(p) + (1 - t) * np.log(1 - p)).mean()
    assert model(input_ids=ids, attention_mask=keep, labels=t).loss.item() == pytest.approx(bce, rel=1e-10)
    assert model.config.problem_type == "multi_label_classification"
    loss = model(input_ids=ids, attention_mask=keep, labels=t).loss
    loss.backward()  # the gradient reaches the head and the embeddings
    assert model.classifier.weight.grad is not None and model.body.embeddings.word.weight.grad is not None


def test_regression_with_one_label(tmp_path):
    folder, *_ = _checkpoint(tmp_path, "bert", "sequence", 1)
    model = load_bert(folder, dtype=np.float64)[0]
    ids, keep = _inputs()
    z = model(input_ids=ids, attention_mask=keep).logits.numpy()  # (2, 1)
    y = np.array([0.5, -1.5])
    assert model(input_ids=ids, attention_mask=keep, labels=y).loss.item() == pytest.approx(
        ((z[:, 0] - y) ** 2).mean(), rel=1e-12)


def test_token_loss_skips_minus_100_and_qa_loss_skips_answers_past_the_end(tmp_path):
    folder, *_ = _checkpoint(tmp_path / "tok", "bert", "token", 4)
    model = load_bert(folder, dtype=np.float64)[0]
    ids, keep = _inputs()
    z = model(input_ids=ids, attention_mask=keep).logits.numpy()  # (2, 6, 4)
    y = np.array([[0, 1, 2, 3, -100, 1], [3, 2, 1, 0, -100, -100]])
    scored = y != -100
    ce = -_log_softmax(z)[scored, y[scored]].mean()
    assert model(input_ids=ids, attention_mask=keep, labels=y).loss.item() == pytest.approx(ce, rel=1e-12)

    folder, *_ = _checkpoint(tmp_path / "qa", "distilbert", "qa", 2)
    model = load_bert(folder, dtype=np.float64)[0]
    out = model(input_ids=ids, attention_mask=keep)
    s, e = out.start_logits.numpy(), out.end_logits.numpy()  # (2, 6) each
    start, end = np.array([1, 99]), np.array([3, 4])  # the second answer starts past the text: clamped, unscored
    loss_s = -_log_softmax(s)[0, 1]  # only the first text's start is scored
    loss_e = -_log_softmax(e)[np.arange(2), end].mean()
    got = model(input_ids=ids, attention_mask=keep, start_positions=start, end_positions=end).loss.item()
    assert got == pytest.approx((loss_s + loss_e) / 2, rel=1e-12)


def test_config_reads_as_attributes_with_int_label_keys(tmp_path):
    folder, *_ = _checkpoint(tmp_path, "distilbert", "sequence", 2,
                             id2label={"0": "NEGATIVE", "1": "POSITIVE"}, label2id={"NEGATIVE": 0, "POSITIVE": 1})
    model = AutoModel.from_pretrained(folder)
    ids, keep = _inputs()
    pred = int(model(input_ids=ids, attention_mask=keep).logits.argmax(-1)[0].item())
    assert model.config.id2label[pred] in ("NEGATIVE", "POSITIVE")  # the sentiment tutorial's last line
    assert model.config.label2id == {"NEGATIVE": 0, "POSITIVE": 1} and model.config.num_labels == 2
    assert model.config["model_type"] == "distilbert"
    with pytest.raises(AttributeError, match="this config.json has no 'nonexistent'"):
        model.config.nonexistent


@pytest.mark.parametrize("auto,task", [(AutoModelForSequenceClassification, "sequence"),
                                       (AutoModelForTokenClassification, "token"),
                                       (AutoModelForQuestionAnswering, "qa")])
def test_a_base_checkpoint_gets_an_untrained_head_and_a_warning(tmp_path, auto, task):
    folder, cfg, body = write_checkpoint(tmp_path / "m", family="distilbert")  # with its masked-LM head
    tinyattn.manual_seed(0)
    kwargs = {} if task == "qa" else {"num_labels": 5}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = auto.from_pretrained(folder, dtype=np.float64, **kwargs)
    assert len(caught) == 1 and "start random: train the model on your task" in str(caught[0].message)
    assert model.num_labels == (2 if task == "qa" else 5)
    assert model.config.id2label == {i: f"LABEL_{i}" for i in range(model.num_labels)}
    last = model.qa_outputs if task == "qa" else model.classifier
    assert np.all(last.bias.numpy() == 0) and 0.005 < last.weight.numpy().std() < 0.05  # normal(0, 0.02)
    np.testing.assert_array_equal(model.body.embeddings.word.weight.numpy(),
                                  body["embeddings.word_embeddings.weight"])  # the encoder is the checkpoint's
    tinyattn.manual_seed(0)  # the head's draw is the user's seeded stream: the same seed, the same head
    with pytest.warns(UserWarning, match="start random"):
        again = auto.from_pretrained(folder, dtype=np.float64, **kwargs)
    np.testing.assert_array_equal((again.qa_outputs if task == "qa" else again.classifier).weight.numpy(),
                                  last.weight.numpy())


def test_mismatches_are_refused_by_name(tmp_path):
    folder, *_ = _checkpoint(tmp_path / "seq", "bert", "sequence", 3)
    with pytest.raises(ValueError, match="holds a BertForSequenceClassification head, not the "
                                         "BertForQuestionAnswering asked for; load it with "
                                         "AutoModelForSequenceClassification"):
        AutoModelForQuestionAnswering.from_pretrained(folder)
    with pytest.raises(ValueError, match="its BertForSequenceClassification head has 3 labels, num_labels=2"):
        AutoModelForSequenceClassification.from_pretrained(folder, num_labels=2)
    with pytest.raises(ValueError, match="not a causal language model"):
        AutoModelForCausalLM.from_pretrained(folder)
    with pytest.raises(ValueError, match="num_labels must be a positive int"):
        AutoModelForSequenceClassification.from_pretrained(folder, num_labels=0)
    bare, *_ = write_checkpoint(tmp_path / "bare", head=False)
    with pytest.raises(ValueError, match="has no masked-LM head"):
        AutoModelForMaskedLM.from_pretrained(bare)
    # a head no loader builds (a multiple-choice classifier beside the pooler) is still refused by name
    folder, *_ = _checkpoint(tmp_path / "mc", "bert", "sequence", 1, arch=False,
                             architectures=["BertForMultipleChoice"])
    with pytest.raises(ValueError, match=r"holds a classification head .*BertForMultipleChoice"):
        load_bert(folder)


def test_config_labels_that_disagree_with_the_head_are_read_from_the_weights(tmp_path):
    folder, *_ = _checkpoint(tmp_path, "bert", "token", 4, id2label={"0": "O", "1": "B-PER"})
    model = load_bert(folder)[0]
    assert model.num_labels == 4 and model.config.id2label == {i: f"LABEL_{i}" for i in range(4)}
    with open(os.path.join(folder, "config.json")) as f:
        assert '"B-PER"' in f.read()  # (the file itself is not changed)


def _gpt2_classifier(tmp_path, pad):
    """A GPT-2 classification checkpoint whose score is the first 3 rows of the token embedding, so its logits
    are the language-model logits of tokens 0, 1, 2 (reference_gpt2 computes those) at the scored position."""
    cfg = dict(gpt2_config(), architectures=["GPT2ForSequenceClassification"])
    if pad is not None:
        cfg["pad_token_id"] = pad
    folder, cfg, w = write_gpt2(tmp_path / "gpt2", cfg=cfg)
    path = os.path.join(folder, "model.safetensors")
    stored = safetensors.numpy.load_file(path)
    stored["score.weight"] = w["wte.weight"][:3].copy()
    safetensors.numpy.save_file(stored, path)
    return folder, cfg, w


def test_gpt2_scores_each_texts_last_token_that_is_not_padding(tmp_path):
    folder, cfg, w = _gpt2_classifier(tmp_path, pad=7)
    model = load_gpt2(folder, dtype=np.float64)[0]
    assert type(model).__name__ == "GPT2SequenceClassification" and model.num_labels == 3
    ids = np.array([[5, 9, 11, 12, 13], [5, 9, 12, 7, 7], [7, 7, 7, 7, 7]])  # full, right-padded, all padding
    out = model(input_ids=ids, attention_mask=(ids != 7).astype(int) | (np.arange(5) == 0))
    for i, (row, last) in enumerate(zip(ids, [4, 2, 0])):  # the rightmost non-pad token (0 when there is none)
        want = reference_gpt2(w, cfg, row[:last + 1])[0][last, :3]
        np.testing.assert_allclose(out.logits.numpy()[i], want, rtol=1e-9, atol=1e-9)
    y = np.array([0, 2, 1])
    ce = -_log_softmax(out.logits.numpy())[np.arange(3), y].mean()
    assert model(input_ids=ids, labels=y).loss.item() == pytest.approx(ce, rel=1e-12)


def test_gpt2_without_a_pad_token_scores_one_text(tmp_path):
    folder, cfg, w = _gpt2_classifier(tmp_path, pad=None)
    model = load_gpt2(folder, dtype=np.float64)[0]
    one = np.array([[5, 9, 11]])
    np.testing.assert_allclose(model(input_ids=one).logits.numpy()[0], reference_gpt2(w, cfg, one[0])[0][-1, :3],
                               rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="2 texts but config.pad_token_id is None, so where each text ends is not "
                                         "known; set model.config.pad_token_id = tokenizer.pad_token_id"):
        model(input_ids=np.repeat(one, 2, axis=0))
    model.config.pad_token_id = 11  # the usual fix after loading, read at the next call
    assert model(input_ids=np.array([[5, 9, 11], [5, 11, 11]])).logits.shape == (2, 3)
    with pytest.raises(ValueError, match="holds a GPT2ForSequenceClassification head, not the language-model head"):
        AutoModelForCausalLM.from_pretrained(folder)


def test_gpt2_base_checkpoint_gets_an_untrained_score(tmp_path):
    folder, cfg, w = write_gpt2(tmp_path / "lm")
    with pytest.warns(UserWarning, match=r"no GPT2ForSequenceClassification head, so its weights \(score.weight\)"):
        model = AutoModelForSequenceClassification.from_pretrained(folder, dtype=np.float64, num_labels=4)
    assert model.score.weight.shape == (4, cfg["n_embd"]) and model.score.bias is None
    with pytest.raises(ValueError, match="task must be 'auto', 'causal' or 'sequence'"):
        load_gpt2(folder, task="token")
    with pytest.raises(ValueError, match="is a GPT-2 checkpoint; tinyattn builds GPT-2 with its language-model head"):
        AutoModelForTokenClassification.from_pretrained(folder)
