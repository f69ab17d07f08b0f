"""AutoModel / AutoTokenizer: the family (GPT-2, BERT, DistilBERT) read from config.json's model_type."""
from __future__ import annotations

from .checkpoint import read_json
from .hub import resolve

__all__ = ["AutoModel", "AutoTokenizer"]

_FAMILIES = ("gpt2", "bert", "distilbert")


def _load(path, dtype=None, who: str = "AutoModel"):
    folder = resolve(path, f"{who}.from_pretrained", "config.json, model.safetensors and the tokenizer's files")
    family = read_json(folder, "config.json", "a Hugging Face checkpoint folder holds it").get("model_type")
    if family == "gpt2":
        from .gpt2 import load_gpt2
        return load_gpt2(folder, dtype)
    if family in ("bert", "distilbert"):
        from .bert import load_bert
        return load_bert(folder, dtype)
    raise ValueError(f"{who}.from_pretrained: config.json's model_type is {family!r}; tinyattn reads "
                     f"{', '.join(map(repr, _FAMILIES))}")


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
        family = read_json(folder, "config.json", "a Hugging Face checkpoint folder holds it").get("model_type")
        if family == "gpt2":
            from .tokenizer import load_tokenizer
            return load_tokenizer(folder)
        if family in ("bert", "distilbert"):
            from .wordpiece import load_wordpiece
            return load_wordpiece(folder, family)
        raise ValueError(f"AutoTokenizer.from_pretrained: config.json's model_type is {family!r}; tinyattn reads "
                         f"{', '.join(map(repr, _FAMILIES))}")
