"""AutoModel / AutoTokenizer: the family (GPT-2, BERT, DistilBERT) read from config.json's model_type."""
from __future__ import annotations

from .checkpoint import read_json
from .hub import resolve

__all__ = ["AutoModel", "AutoTokenizer"]

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


def _load(path, dtype=None, who: str = "AutoModel"):
    folder = resolve(path, f"{who}.from_pretrained", "config.json, model.safetensors and the tokenizer's files")
    family = _family(folder, who)
    if family == "gpt2":
        from .gpt2 import load_gpt2
        return load_gpt2(folder, dtype)
    from .bert import load_bert  # "bert" or "distilbert"
    return load_bert(folder, dtype)


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
