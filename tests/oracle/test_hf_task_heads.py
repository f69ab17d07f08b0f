"""Task heads (sequence classification, token classification, question answering) on BERT and DistilBERT,
and GPT-2's sequence classification,
written by transformers and compared with its own forward and loss: logits, the loss for every kind of label,
and every gradient of the loss, in float64; float32 outputs too. A base checkpoint loaded for a task must
give transformers' body with an untrained head (so the head's weights are copied across before comparing).
Tolerances as test_hf_checkpoints.py: float64 1e-10 relative to the largest value, float32 5e-4."""
import json
import os
import warnings

import numpy as np
import pytest
import torch
import transformers
from test_hf_checkpoints import SMALL_BERT, SMALL_DISTIL, TINY_GPT2, _build, _rel, _save

import tinyattn
from tinyattn.pretrained.bert import _schema, read_bert_config
from tinyattn.pretrained.gpt2 import _parts as gpt2_parts
from tinyattn.pretrained.task_heads import task_of, task_schema
from tinyattn.pretrained import (AutoModel, AutoModelForMaskedLM, AutoModelForQuestionAnswering,
                                 AutoModelForSequenceClassification, AutoModelForTokenClassification, load_bert)

SST2 = {"id2label": {"0": "NEGATIVE", "1": "POSITIVE"}, "label2id": {"NEGATIVE": 0, "POSITIVE": 1},
        "finetuning_task": "sst-2"}  # distilbert-base-uncased-finetuned-sst-2-english's label fields
NER = {"id2label": {str(i): t for i, t in enumerate(["O", "B-MISC", "I-MISC", "B-PER", "I-PER", "B-ORG", "I-ORG",
                                                        "B-LOC", "I-LOC"])}}  # dslim/bert-base-NER's labels
CASES = {
    "bert-sequence": dict(SMALL_BERT, architectures=["BertForSequenceClassification"], **SST2),
    "bert-sequence-3": dict(SMALL_BERT, architectures=["BertForSequenceClassification"], num_labels=3),
    "bert-regression": dict(SMALL_BERT, architectures=["BertForSequenceClassification"], num_labels=1),
    "bert-token": dict(SMALL_BERT, architectures=["BertForTokenClassification"], **NER),
    "bert-qa": dict(SMALL_BERT, architectures=["BertForQuestionAnswering"]),
    "distilbert-sequence": dict(SMALL_DISTIL, architectures=["DistilBertForSequenceClassification"], **SST2),
    "distilbert-token": dict(SMALL_DISTIL, architectures=["DistilBertForTokenClassification"], **NER),
    "distilbert-qa": dict(SMALL_DISTIL, architectures=["DistilBertForQuestionAnswering"]),
}
AUTO = {"Sequence": AutoModelForSequenceClassification, "Token": AutoModelForTokenClassification,
        "Question": AutoModelForQuestionAnswering}


def _inputs(hf, rng):
    ids = rng.integers(0, hf.config.vocab_size, size=(2, 11))
    mask = np.ones_like(ids)
    mask[1, 7:] = 0  # the second text is padded
    extra = {"token_type_ids": np.repeat([[0] * 5 + [1] * 6], 2, axis=0)} if hf.config.model_type == "bert" else {}
    return dict(input_ids=ids, attention_mask=mask, **extra)


def _label_sets(hf, rng):
    """Every kind of label the model's loss takes, as (ours, theirs) keyword dicts."""
    name, n = type(hf).__name__, hf.config.num_labels
    if "Question" in name:  # one answer inside the text, one past its end (clamped: not scored)
        pos = [dict(start_positions=np.array([2, 20]), end_positions=np.array([4, 3]))]
    elif "Token" in name:
        y = rng.integers(0, n, size=(2, 11))
        y[1, 7:] = -100  # padding: not scored
        pos = [dict(labels=y)]
    elif n == 1:
        pos = [dict(labels=rng.normal(size=2))]
    else:
        pos = [dict(labels=rng.integers(0, n, size=2)), dict(labels=(rng.random((2, n)) > 0.5).astype(np.float64))]
    return [(p, {k: torch.tensor(v) for k, v in p.items()}) for p in pos]


def _hf_names(folder, ours):
    """{our parameter's name: transformers' name}, from the loader's tables (the tied decoder is the embedding)."""
    c = read_bert_config(folder)
    fam = c["family"]
    body, _ = _schema(c)
    out = {"body." + o: f"{fam}.{t}" for t, (o, _) in body.items()}
    for t, (o, _) in task_schema(fam, task_of(c["raw"], fam, ()), c["C"], ours.num_labels).items():
        out[o] = f"bert.{t}" if t.startswith("pooler.") else t
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_task_heads_match_transformers(tmp_path, case):
    hf, cfg = _build(CASES[case])
    hf = _save(hf, cfg, str(tmp_path), "safetensors")
    ours = AutoModel.from_pretrained(str(tmp_path), dtype=np.float64)
    auto = next(c for k, c in AUTO.items() if k in type(hf).__name__)
    assert type(auto.from_pretrained(str(tmp_path), dtype=np.float64)) is type(ours)
    assert ours.config.id2label == hf.config.id2label and ours.num_labels == hf.config.num_labels
    hf64 = hf.to(torch.float64)
    rng = np.random.default_rng(2)
    x = _inputs(hf, rng)
    tx = {k: torch.tensor(v) for k, v in x.items()}
    with torch.no_grad():
        theirs = hf64(**tx)
    out = ours(**x)
    keys = ["start_logits", "end_logits"] if "qa" in case else ["logits"]
    real = x["attention_mask"].astype(bool)
    for k in keys:  # a padded token's own logits are meaningless in both: token-level heads compare real ones
        a, b = getattr(out, k).numpy(), getattr(theirs, k).numpy()
        assert a.shape == b.shape
        assert _rel(a[real] if a.ndim == 2 and "sequence" not in case and "regression" not in case else a,
                    b[real] if b.ndim == 2 and "sequence" not in case and "regression" not in case else b) < 1e-10
    assert out.loss is None and list(out.keys()) == keys
    for ours_y, their_y in _label_sets(hf, rng):
        hf64.zero_grad()
        ours.zero_grad()
        hf64.config.problem_type = ours.config.problem_type = None  # both decide it at the first call: again
        t_loss = hf64(**tx, **their_y).loss
        o_loss = ours(**x, **ours_y).loss
        assert abs(float(o_loss.item()) - float(t_loss.item())) <= 1e-10 * max(1.0, abs(float(t_loss.item())))
        t_loss.backward()
        o_loss.backward()
        # every gradient, weight by weight, through the loader's own name mapping
        their_g = {n: p.grad.numpy() for n, p in hf64.named_parameters() if p.grad is not None}
        ours_g = {n: p.grad.numpy() for n, p in ours.named_parameters() if p.grad is not None}
        mapping = _hf_names(str(tmp_path), ours)
        assert sorted(mapping[n] for n in ours_g) == sorted(their_g)
        for n, g in ours_g.items():
            assert _rel(g, their_g[mapping[n]]) < 1e-10, n
    ours32 = load_bert(str(tmp_path), dtype=np.float32)[0]
    out32 = ours32(**x)
    for k in keys:
        assert getattr(out32, k).dtype == np.float32
        assert _rel(getattr(out32, k).numpy(), getattr(out, k).numpy()) < 5e-4


def _copy_head(ours, hf):
    """The untrained head's weights, copied from transformers' untrained head (both start random)."""
    their = dict(hf.named_parameters())
    pairs = {"pooler.weight": "bert.pooler.dense.weight", "pooler.bias": "bert.pooler.dense.bias"}
    for name, p in ours.named_parameters():
        if not name.startswith("body."):
            p.data = tinyattn.tensor(their[pairs.get(name, name)].detach().numpy())


@pytest.mark.parametrize("base,task", [(SMALL_DISTIL, "Sequence"), (SMALL_BERT, "Token"), (SMALL_DISTIL, "Question")])
def test_a_base_checkpoint_gets_an_untrained_head(tmp_path, base, task):
    hf, cfg = _build(base)  # the masked-LM checkpoint (distilbert-base-uncased), as fine-tuning starts from
    _save(hf, cfg, str(tmp_path), "safetensors")
    n = 3 if task != "Question" else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = AUTO[task].from_pretrained(str(tmp_path), dtype=np.float64, **({"num_labels": n} if n else {}))
    assert any("start random" in str(w.message) for w in caught)
    cls = getattr(transformers, AUTO[task].__name__)
    theirs = cls.from_pretrained(str(tmp_path), dtype=torch.float64, attn_implementation="eager",
                                 **({"num_labels": n} if n else {})).eval()
    assert ours.num_labels == theirs.config.num_labels and ours.config.id2label == theirs.config.id2label
    _copy_head(ours, theirs)
    x = _inputs(theirs, np.random.default_rng(3))
    with torch.no_grad():
        t = theirs(**{k: torch.tensor(v) for k, v in x.items()})
    o = ours(**x)
    for k in ("start_logits", "end_logits") if task == "Question" else ("logits",):
        a, b = getattr(o, k).numpy(), getattr(t, k).numpy()
        keep = x["attention_mask"].astype(bool) if a.ndim >= 2 and task != "Sequence" else slice(None)
        assert _rel(a[keep], b[keep]) < 1e-10


def test_the_wrong_auto_class_is_refused(tmp_path):
    hf, cfg = _build(CASES["distilbert-sequence"])
    _save(hf, cfg, str(tmp_path), "safetensors")
    with pytest.raises(ValueError, match="holds a DistilBertForSequenceClassification head, not the "
                                         "DistilBertForTokenClassification asked for"):
        AutoModelForTokenClassification.from_pretrained(str(tmp_path))
    with pytest.raises(ValueError, match="not the masked-LM head asked for"):
        AutoModelForMaskedLM.from_pretrained(str(tmp_path))
    with pytest.raises(ValueError, match="head has 2 labels, num_labels=5"):
        AutoModelForSequenceClassification.from_pretrained(str(tmp_path), num_labels=5)
    with open(os.path.join(tmp_path, "config.json")) as f:
        assert json.load(f)["architectures"] == ["DistilBertForSequenceClassification"]


@pytest.mark.parametrize("pad", [None, 0])  # no pad token (one text at a time), and pad = a real id (eos-like)
def test_gpt2_sequence_classification_matches_transformers(tmp_path, pad):
    cfg = dict(TINY_GPT2, n_embd=16, n_head=2, architectures=["GPT2ForSequenceClassification"], num_labels=3)
    if pad is not None:
        cfg["pad_token_id"] = pad
    hf, cfg = _build(cfg)
    hf = _save(hf, cfg, str(tmp_path), "safetensors").to(torch.float64)
    ours = AutoModelForSequenceClassification.from_pretrained(str(tmp_path), dtype=np.float64)
    assert type(ours).__name__ == "GPT2SequenceClassification" and ours.num_labels == 3
    rng = np.random.default_rng(4)
    ids = rng.integers(1, 300, size=(1 if pad is None else 3, 9))
    mask = np.ones_like(ids)
    if pad is not None:
        ids[1, 5:], mask[1, 5:] = pad, 0  # padded on the right
        ids[2, 2] = pad  # a pad id inside a text, as with pad = eos: transformers reads ids, so does tinyattn
    y = rng.integers(0, 3, size=ids.shape[0])
    out = ours(input_ids=ids, attention_mask=mask, labels=y)
    theirs = hf(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask), labels=torch.tensor(y))
    assert _rel(out.logits.numpy(), theirs.logits.detach().numpy()) < 1e-10
    assert abs(out.loss.item() - theirs.loss.item()) < 1e-10 * max(1.0, abs(theirs.loss.item()))
    out.loss.backward()
    theirs.loss.backward()
    grads = {n: p.grad.numpy() for n, p in hf.named_parameters() if p.grad is not None}
    want = {}
    for part in gpt2_parts(lambda n: grads.get("transformer." + n), {**cfg, "n_layer": 2}):
        want.update(part)  # transformers' gradients in tinyattn's names and layout (the loader's own tables)
    want = {"body." + k: v for k, v in want.items() if v is not None}
    want["score.weight"] = grads["score.weight"]
    got = {n: p.grad.numpy() for n, p in ours.named_parameters() if p.grad is not None}
    assert sorted(got) == sorted(want)
    for n in got:
        assert _rel(got[n], want[n]) < 1e-10, n
    if pad is None:
        with pytest.raises(ValueError, match="2 texts but config.pad_token_id is None"):
            ours(input_ids=np.repeat(ids, 2, axis=0))
