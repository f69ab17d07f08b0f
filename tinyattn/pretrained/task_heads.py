"""Hugging Face's task heads on BERT and DistilBERT: a fine-tuned checkpoint is the encoder plus a small head.

    sequence classification   one label per text (sentiment, topic): the first token's ([CLS]) state,
                              BERT: tanh(pooler(h[:, 0])) -> classifier;
                              DistilBERT: relu(pre_classifier(h[:, 0])) -> classifier
    token classification      one label per token (named entities): classifier(h) at every position
    question answering        an answer span in the text: qa_outputs(h) -> a start and an end score per token
    GPT-2 sequence classification   score(h) at each text's last token that is not padding: in a causal
                              model only the last token has seen the whole text

The head reads the encoder's last hidden states (B, T, C); only the first token's for a text's label, because
that token attends to every other one, so its state can summarise the whole text. With ``labels`` the models
also return Hugging Face's loss; the head's dropout has the checkpoint's rate, and is active in train mode only.
"""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from .. import Tensor, get_rng
from ..nn import Dropout, Linear, Module, init
from ..nn import functional as F
from ..nn.hooked import HookedMixin
from .checkpoint import ModelConfig
from .outputs import ModelOutput

__all__ = ["TASKS", "SequenceClassification", "TokenClassification", "QuestionAnswering",
           "GPT2SequenceClassification", "task_schema", "task_of", "build_task_model"]

# Hugging Face's class for each (family, task), as config.json's "architectures" names it.
TASKS = {"sequence": "ForSequenceClassification", "token": "ForTokenClassification", "qa": "ForQuestionAnswering"}
_PREFIX = {"bert": "Bert", "distilbert": "DistilBert", "gpt2": "GPT2"}


def _rate(cfg: dict, *keys: str, default: float = 0.1) -> float:
    """The head's dropout rate: the first of ``keys`` that config.json sets (not null), as Hugging Face reads it."""
    return next((float(cfg[k]) for k in keys if cfg.get(k) is not None), default)


class _TaskModel(HookedMixin, Module):
    """The encoder (``body``, a BertModel without the masked-LM head) and a head; called as Hugging Face's models."""

    _lens_alias = {"body": ""}  # the encoder's hook points keep their names (blocks.0.attn.hook_pattern, ...)

    def __init__(self, body: Module, config: dict, num_labels: int) -> None:
        super().__init__()
        self.body, self.config, self.num_labels = body, config, num_labels

    @property
    def n_layers(self) -> int:
        return self.body.n_layers

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, labels=None,
                output_attentions: bool = False, output_hidden_states: bool = False, return_dict=None,
                start_positions=None, end_positions=None) -> ModelOutput:
        out = self.body(input_ids, attention_mask, token_type_ids, output_attentions, output_hidden_states)
        fields = self._head(out.last_hidden_state, labels, start_positions, end_positions)  # loss first, as HF
        return ModelOutput(**fields, hidden_states=out.hidden_states, attentions=out.attentions)


def _labels(labels) -> Tensor:
    return labels if isinstance(labels, Tensor) else Tensor(np.asarray(labels))


class SequenceClassification(_TaskModel):
    """One label per text: logits (B, num_labels) from the first token's state (see the module's docstring).

    Loss with ``labels``, as Hugging Face picks it (config.json's problem_type, else from the labels): one label
    (num_labels = 1) is regression (mean squared error); integer labels (B,) are single-label classification
    (cross-entropy); float labels (B, num_labels) are multi-label (binary cross-entropy on each logit)."""

    def __init__(self, body: Module, config: dict, num_labels: int) -> None:
        super().__init__(body, config, num_labels)
        C = body.embeddings.word.weight.shape[1]
        if body.family == "bert":
            self.pooler = Linear(C, C)  # BERT's pooler: tanh(dense(h[:, 0])), trained by next-sentence prediction
            self.dropout = Dropout(_rate(config, "classifier_dropout", "hidden_dropout_prob"))
        else:
            self.pre_classifier = Linear(C, C)  # DistilBERT's: relu(pre_classifier(h[:, 0]))
            self.dropout = Dropout(_rate(config, "seq_classif_dropout", default=0.2))
        self.classifier = Linear(C, num_labels)

    def _head(self, h: Tensor, labels, *_) -> dict:
        first = h[:, 0]  # (B, C): the [CLS] token's state
        pooled = self.pooler(first).tanh() if self.body.family == "bert" else self.pre_classifier(first).relu()
        logits = self.classifier(self.dropout(pooled))  # (B, C) -> (B, num_labels)
        return {"loss": None if labels is None else _text_loss(self, logits, _labels(labels)), "logits": logits}


def _text_loss(model, logits: Tensor, labels: Tensor) -> Tensor:
    """A text classifier's loss, of the kind config.json's problem_type names or the labels imply (see above)."""
    kind, n = model.config.get("problem_type"), model.num_labels
    if kind is None:  # Hugging Face decides at the first call with labels and keeps the decision in the config
        kind = ("regression" if n == 1 else "single_label_classification"
                if labels.dtype in (np.int64, np.int32) else "multi_label_classification")
        model.config["problem_type"] = kind
    if kind == "regression":
        return F.mse_loss(logits.squeeze(), labels.squeeze()) if n == 1 else F.mse_loss(logits, labels)
    if kind == "single_label_classification":
        return F.cross_entropy(logits.view(-1, n), labels.view(-1))
    if kind == "multi_label_classification":
        return F.binary_cross_entropy_with_logits(logits, labels)
    raise ValueError(f"config problem_type={kind!r}: expected 'regression', 'single_label_classification' or "
                     "'multi_label_classification'")


class TokenClassification(_TaskModel):
    """One label per token: logits (B, T, num_labels); with ``labels`` (B, T), the cross-entropy over tokens whose
    label is not -100 (a tokenizer's continuation pieces and padding are usually labelled -100: not scored)."""

    def __init__(self, body: Module, config: dict, num_labels: int) -> None:
        super().__init__(body, config, num_labels)
        C = body.embeddings.word.weight.shape[1]
        keys = ("classifier_dropout", "hidden_dropout_prob") if body.family == "bert" else ("dropout",)
        self.dropout = Dropout(_rate(config, *keys))
        self.classifier = Linear(C, num_labels)

    def _head(self, h: Tensor, labels, *_) -> dict:
        logits = self.classifier(self.dropout(h))  # (B, T, C) -> (B, T, num_labels)
        loss = None if labels is None else F.cross_entropy(logits.view(-1, self.num_labels),  # (B*T, num_labels)
                                                           _labels(labels).view(-1))
        return {"loss": loss, "logits": logits}


class QuestionAnswering(_TaskModel):
    """An answer span: start_logits and end_logits (B, T), one score per token for "the answer starts/ends here".

    With ``start_positions`` and ``end_positions`` (B,), the loss is the mean of the two cross-entropies over
    positions; a position outside the text (the answer was cut off) is clamped to T and not scored."""

    def __init__(self, body: Module, config: dict, num_labels: int = 2) -> None:
        super().__init__(body, config, num_labels)
        C = body.embeddings.word.weight.shape[1]
        self.dropout = Dropout(0.0 if body.family == "bert" else _rate(config, "qa_dropout"))  # BERT's has none
        self.qa_outputs = Linear(C, num_labels)

    def _head(self, h: Tensor, labels, start_positions, end_positions) -> dict:
        logits = self.qa_outputs(self.dropout(h))  # (B, T, C) -> (B, T, 2)
        start, end = (x.squeeze(-1) for x in logits.split(1, dim=-1))  # (B, T) each
        loss = None
        if start_positions is not None and end_positions is not None:
            T = start.shape[1]  # the "ignored" position: an answer past the text's end is clamped there
            s, e = (_labels(p).reshape(-1).clamp(0, T) for p in (start_positions, end_positions))  # (B,) each
            loss = (F.cross_entropy(start, s, ignore_index=T) + F.cross_entropy(end, e, ignore_index=T)) / 2
        return {"loss": loss, "start_logits": start, "end_logits": end}


def _caller() -> int:
    """warnings.warn's stacklevel of the first frame outside this package: the learner's own line."""
    here, level, frame = os.path.dirname(__file__), 2, sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(here):
        frame, level = frame.f_back, level + 1
    return level


class GPT2SequenceClassification(_TaskModel):
    """GPT-2 with one label per text: logits (B, num_labels) = score(h) at each text's last token that is not
    config.pad_token_id (Hugging Face reads the ids, not attention_mask: set model.config.pad_token_id to the
    tokenizer's pad token). Without a pad token only one text at a time can be scored. Losses as
    SequenceClassification's."""

    def __init__(self, body: Module, config: dict, num_labels: int) -> None:
        super().__init__(body, config, num_labels)
        self.score = Linear(body.tok_emb.weight.shape[1], num_labels, bias=False)

    def forward(self, input_ids=None, attention_mask=None, labels=None, output_attentions: bool = False,
                output_hidden_states: bool = False, return_dict=None, head_mask=None) -> ModelOutput:
        h, hidden, attentions = self.body.hidden_states(input_ids, attention_mask, head_mask, output_attentions,
                                                        "GPT2ForSequenceClassification")
        logits = self.score(h)  # (B, T, C) -> (B, T, num_labels): every position scored, one kept per text
        ids = np.asarray(getattr(input_ids, "_data", input_ids))
        pad = self.config.get("pad_token_id")
        if pad is None:
            if ids.shape[0] != 1:
                raise ValueError(f"GPT2ForSequenceClassification: {ids.shape[0]} texts but config.pad_token_id is "
                                 "None, so where each text ends is not known; set model.config.pad_token_id = "
                                 "tokenizer.pad_token_id (GPT-2's tokenizer: pad_token = eos_token), or score one text")
            last = np.full(1, ids.shape[1] - 1)
        else:  # the rightmost position that is not the pad token (0 if every one is)
            last = (np.arange(ids.shape[1]) * (ids != pad)).argmax(-1)  # (B,)
        pooled = logits[np.arange(ids.shape[0]), last]  # (B, num_labels)
        loss = None if labels is None else _text_loss(self, pooled, _labels(labels))
        return ModelOutput(loss=loss, logits=pooled, hidden_states=tuple(hidden) if output_hidden_states else None,
                           attentions=tuple(attentions) if output_attentions else None)


_CLASSES = {"sequence": SequenceClassification, "token": TokenClassification, "qa": QuestionAnswering}


def task_of(cfg: dict, family: str, names) -> str | None:
    """Which head a checkpoint holds: from config.json's architectures where it names one of TASKS, else from
    the weights' names (BERT's sequence classifier has the pooler, its token classifier not); None: no task head."""
    archs = [a for a in cfg.get("architectures") or () if a.startswith(_PREFIX[family])]
    if archs:  # a class it names and no head here builds (BertForMultipleChoice): None, and its weights are refused
        return next((task for task, suffix in TASKS.items() if _PREFIX[family] + suffix in archs), None)
    names = set(names)
    if family == "gpt2":
        return "sequence" if "score.weight" in names else None
    if "qa_outputs.weight" in names:
        return "qa"
    if "classifier.weight" in names:
        pooled = "pooler.dense.weight" in names if family == "bert" else "pre_classifier.weight" in names
        return "sequence" if pooled else "token"
    return None


def task_schema(family: str, task: str, C: int, n: int) -> dict:
    """{the checkpoint's name (without the family's prefix): (the task model's name, shape)} of the head."""
    if family == "gpt2":
        return {"score.weight": ("score.weight", (n, C))}
    pre = {"sequence": ("pooler.dense" if family == "bert" else "pre_classifier", "pooler" if family == "bert"
                        else "pre_classifier", (C, C))}.get(task)
    last = "qa_outputs" if task == "qa" else "classifier"
    out = {f"{last}.weight": (f"{last}.weight", (n, C)), f"{last}.bias": (f"{last}.bias", (n,))}
    if pre:
        theirs, ours, shape = pre
        out.update({f"{theirs}.weight": (f"{ours}.weight", shape), f"{theirs}.bias": (f"{ours}.bias", (C,))})
    return out


def plan_labels(f, names: dict, cfg: dict, where: str, family: str, task: str | None, held: str | None,
                num_labels) -> tuple[str | None, int, bool]:
    """(task, its number of labels, whether the head starts untrained): a head the file holds has the labels of
    its stored weights (num_labels, if given, must agree); a new one num_labels, else config.json's id2label's
    (2 if none, and always 2 for question answering's start and end)."""
    if task is None:
        return None, 0, False
    labels = cfg.get("id2label") or {}
    if held is not None:
        last = {"gpt2": "score.weight"}.get(family, "qa_outputs.weight" if task == "qa" else "classifier.weight")
        n = f.get_slice(names[last]).get_shape()[0] if last in names else len(labels) or 2
        if num_labels is not None and num_labels != n:
            raise ValueError(f"{where}: its {_PREFIX[family]}{TASKS[task]} head has {n} labels, num_labels={num_labels}"
                             " was asked for (a head for other labels is a new head: train one from the base model)")
        return task, n, False
    return task, num_labels if num_labels is not None else (2 if task == "qa" else len(labels) or 2), True


def task_config(raw: dict, n: int) -> ModelConfig:
    """config.json for a task model: id2label with int keys, as Hugging Face reads it (LABEL_i where it names
    another number of labels), label2id, and num_labels."""
    labels = {int(k): v for k, v in (raw.get("id2label") or {}).items()}
    if sorted(labels) != list(range(n)):
        labels = {i: f"LABEL_{i}" for i in range(n)}
    return ModelConfig(raw, id2label=labels, label2id={v: k for k, v in labels.items()}, num_labels=n)


def build_task_model(body: Module, task: str, config: dict, num_labels: int, fresh: bool) -> _TaskModel:
    """The task model around ``body``. ``fresh``: the checkpoint has no such head, so it starts untrained (as
    Hugging Face does: normal(0, initializer_range) weights, zero biases) and a warning says to train it."""
    state = get_rng().bit_generator.state  # building draws init weights: leave the user's seeded stream as it was
    try:
        model = (GPT2SequenceClassification if body_family(body) == "gpt2" else _CLASSES[task])(body, config,
                                                                                                num_labels)
    finally:
        get_rng().bit_generator.state = state
    if fresh:
        std = float(config.get("initializer_range", 0.02))
        for name, p in model.named_parameters():
            if not name.startswith("body."):
                init.normal_(p, 0.0, std) if name.endswith("weight") else init.zeros_(p)
        warnings.warn(f"the checkpoint has no {_PREFIX[body_family(body)]}{TASKS[task]} head, so its weights "
                      f"({', '.join(n for n, _ in model.named_parameters() if not n.startswith('body.'))}) start "
                      "random: train the model on your task before using its predictions", stacklevel=_caller())
    return model.to(next(body.parameters()).dtype).train(body.training)


def body_family(body: Module) -> str:
    return getattr(body, "family", "gpt2")  # (BertModel knows its family; GPT2LMHeadModel is GPT-2's)
