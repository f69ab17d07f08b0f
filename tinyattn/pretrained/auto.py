"""AutoModel / AutoTokenizer and Hugging Face's AutoModelFor<Task> classes: the family (GPT-2, BERT, DistilBERT)
read from config.json's model_type."""
from __future__ import annotations

from .checkpoint import read_json
from .hub import resolve

__all__ = ["AutoModel", "AutoTokenizer", "AutoModelForCausalLM", "AutoModelForMaskedLM",
           "AutoModelForSequenceClassification", "AutoModelForTokenClassification", "AutoModelForQuestionAnswering"]

_FAMILIES = ("gpt2", "bert", "distilbert")


def _family(folder: str, who: str) -> str:
    """config.json's model_type, which must be one of the families read here."""
    cfg = read_json(folder, "config.json", "a Hugging Face checkpoint folder holds it")
    family = cfg.get("model_type")
    if family in _FAMILIES:
        return family
    if family is None:  # Hugging Face's Auto classes then guess from the folder's name; nothing is guessed here
        raise ValueError(f"{who}.from_pretrained: {folder}'s config.json has no model_type, so the family is not "
                         f"known (tinyattn reads {', '.join(map(repr, _FAMILIES))}); call load_bert or load_gpt2, "
                         "which read the family's own fields")
    raise ValueError(f"{who}.from_pretrained: config.json's model_type is {family!r}; tinyattn reads "
                     f"{', '.join(map(repr, _FAMILIES))}")


def _load(path, dtype=None, who: str = "AutoModel", task: str = "auto", num_labels=None):
    folder = resolve(path, f"{who}.from_pretrained", "config.json, model.safetensors and the tokenizer's files")
    family = _family(folder, who)
    if family == "gpt2":
        if task not in ("auto", "causal", "sequence"):
            raise ValueError(f"{who}.from_pretrained: {folder} is a GPT-2 checkpoint; tinyattn builds GPT-2 with its "
                             "language-model head (AutoModelForCausalLM) or a label per text "
                             "(AutoModelForSequenceClassification)")
        from .gpt2 import load_gpt2
        return load_gpt2(folder, dtype, task=task, num_labels=num_labels)
    if task == "causal":
        raise ValueError(f"{who}.from_pretrained: {folder} is a {family} checkpoint, an encoder that sees both "
                         "directions, not a causal language model (AutoModelForMaskedLM or AutoModel load it)")
    from .bert import load_bert  # "bert" or "distilbert"
    return load_bert(folder, dtype, task=task, num_labels=num_labels)


class AutoModel:
    """AutoModel.from_pretrained(path or cached name, dtype=None) -> the model, in eval mode.

    Unlike Hugging Face's AutoModel (the bare encoder), the model keeps the checkpoint's head, so its
    outputs have .logits where the checkpoint has a head (GPT-2's language-model head, BERT's masked-LM head).
    """

    @staticmethod
    def from_pretrained(path, dtype=None):
        return _load(path, dtype, "AutoModel")[0]


class AutoTokenizer:
    """AutoTokenizer.from_pretrained(path or cached name) -> the family's tokenizer."""

    @staticmethod
    def from_pretrained(path):
        folder = resolve(path, "AutoTokenizer.from_pretrained", "config.json and the tokenizer's files")
        family = _family(folder, "AutoTokenizer")
        if family == "gpt2":
            from .tokenizer import load_tokenizer
            return load_tokenizer(folder)
        from .wordpiece import load_wordpiece  # "bert" or "distilbert"
        return load_wordpiece(folder, family)


def _task_class(name: str, task: str, what: str, labels: bool):
    def from_pretrained(path, dtype=None, num_labels: int | None = None):
        if num_labels is not None and (not labels or isinstance(num_labels, bool) or not isinstance(num_labels, int)
                                       or num_labels < 1):
            raise ValueError(f"{name}.from_pretrained: num_labels must be a positive int" if labels else
                             f"{name}.from_pretrained takes no num_labels (got {num_labels!r})")
        return _load(path, dtype, name, task, num_labels)[0]

    doc = (f"{name}.from_pretrained(path or cached name, dtype=None{', num_labels=None' if labels else ''}) -> "
           f"{what}, in eval mode.")
    return type(name, (), {"__doc__": doc, "from_pretrained": staticmethod(from_pretrained)})


AutoModelForCausalLM = _task_class("AutoModelForCausalLM", "causal", "GPT-2 with its language-model head", False)
AutoModelForMaskedLM = _task_class("AutoModelForMaskedLM", "mlm", "BERT or DistilBERT with its masked-LM head", False)
AutoModelForSequenceClassification = _task_class(
    "AutoModelForSequenceClassification", "sequence", "BERT, DistilBERT or GPT-2 with a label per text (logits (B, "
    "num_labels)); from a checkpoint without that head (distilbert-base-uncased), the head starts untrained", True)
AutoModelForTokenClassification = _task_class(
    "AutoModelForTokenClassification", "token", "BERT or DistilBERT with a label per token (logits (B, T, "
    "num_labels)); from a checkpoint without that head, the head starts untrained", True)
AutoModelForQuestionAnswering = _task_class(
    "AutoModelForQuestionAnswering", "qa", "BERT or DistilBERT with start_logits and end_logits (B, T); from a "
    "checkpoint without that head, the head starts untrained", False)
