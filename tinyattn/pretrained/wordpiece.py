"""BERT's WordPiece tokenizer, from a checkpoint folder, through Hugging Face's ``tokenizers``.

How WordPiece reads text, in four steps:

1. Normalise: control characters go, every CJK character gets spaces around it, and an uncased model
   lower-cases the text and strips accents ("Café" -> "cafe").
2. Split into words at whitespace, and every punctuation mark becomes a word of its own ("it's" ->
   "it", "'", "s").
3. Each word becomes the longest vocabulary entry that starts it, then the longest entry that continues
   it, written with "##" in front ("playing" -> "play", "##ing"); a word that can't be spelled so is [UNK].
4. [CLS] goes in front and [SEP] after the text; a pair is [CLS] a [SEP] b [SEP], with token type 0 for
   the first part and 1 for the second.

Decoding joins the pieces again, gluing each "##" piece to the one before.
"""
from __future__ import annotations

import os

from .checkpoint import read_json
from .outputs import HFTokenizer, read_model_max_length

__all__ = ["BertTokenizer", "load_wordpiece"]

_SPECIAL = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]", "cls_token": "[CLS]",
            "mask_token": "[MASK]"}


def _need_tokenizers():
    try:
        import tokenizers
    except ImportError:
        raise ImportError("loading a BERT tokenizer needs the 'tokenizers' package: "
                          "pip install -e \".[pretrained]\" (or pip install tokenizers)") from None
    return tokenizers


class BertTokenizer(HFTokenizer):
    """Hugging Face's convention: tokenizer(text [, text_pair], return_tensors="pt", padding=True) -> input_ids,
    attention_mask (and token_type_ids for BERT, not DistilBERT); convert_ids_to_tokens, decode,
    mask_token / mask_token_id ("[MASK]"), cls_token, sep_token, pad_token, unk_token."""

    def __init__(self, backend, family: str, special: dict[str, str]) -> None:
        self._tok = backend  # a tokenizers.Tokenizer, with no padding or truncation of its own
        self.family = family
        self.vocab_size = int(backend.get_vocab_size(with_added_tokens=True))
        self.model_input_names = ("input_ids", "token_type_ids", "attention_mask") if family == "bert" \
            else ("input_ids", "attention_mask")
        for attr, token in special.items():
            setattr(self, attr, token if backend.token_to_id(token) is not None else None)

    def tokenize(self, text: str, text_pair: str | None = None) -> list[str]:
        """The pieces of a text, without [CLS]/[SEP]: tokenize("Playing") -> ['playing'] or ['play', '##ing']."""
        return list(self._tok.encode(text, text_pair, add_special_tokens=False).tokens)

    def __repr__(self) -> str:
        return f"BertTokenizer(family={self.family!r}, vocab_size={self.vocab_size})"


def _from_vocab_txt(folder: str, settings: dict, special: dict[str, str]):
    tk = _need_tokenizers()
    path = os.path.join(folder, "vocab.txt")
    vocab = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f):
            token = line.rstrip("\r\n")
            if token in vocab:
                raise ValueError(f"{path} line {n + 1}: {token!r} is listed twice (line {vocab[token] + 1})")
            vocab[token] = n  # one token per line; its id is its line number, from 0
    for attr in ("unk_token", "cls_token", "sep_token"):
        if special[attr] not in vocab:
            raise ValueError(f"{path} has no {special[attr]!r} ({attr}): a BERT vocabulary needs "
                             f"{', '.join(special[a] for a in ('unk_token', 'cls_token', 'sep_token'))}")
    lower = bool(settings.get("do_lower_case", True))  # Hugging Face's BertTokenizer defaults
    tok = tk.Tokenizer(tk.models.WordPiece(vocab, unk_token=special["unk_token"], max_input_chars_per_word=100))
    chinese = bool(settings.get("tokenize_chinese_chars", True))
    tok.normalizer = tk.normalizers.BertNormalizer(clean_text=True, lowercase=lower, handle_chinese_chars=chinese,
                                                   strip_accents=settings.get("strip_accents"))
    tok.pre_tokenizer = tk.pre_tokenizers.BertPreTokenizer()
    cls, sep = special["cls_token"], special["sep_token"]
    tok.post_processor = tk.processors.TemplateProcessing(
        single=f"{cls}:0 $A:0 {sep}:0", pair=f"{cls}:0 $A:0 {sep}:0 $B:1 {sep}:1",
        special_tokens=[(cls, vocab[cls]), (sep, vocab[sep])])
    tok.decoder = tk.decoders.WordPiece(prefix="##")
    # The special tokens written in a text ("a [MASK] here") are one token each, never split into pieces.
    tok.add_special_tokens([tk.AddedToken(t, special=True) for t in special.values() if t in vocab])
    return tok


def load_wordpiece(folder: str, family: str) -> BertTokenizer:
    """tokenizer.json if the folder has one (it holds everything), else vocab.txt (+ tokenizer_config.json)."""
    settings = {}
    if os.path.isfile(os.path.join(folder, "tokenizer_config.json")):
        settings = read_json(folder, "tokenizer_config.json", "")
    special = {attr: settings.get(attr) if isinstance(settings.get(attr), str) else token
               for attr, token in _SPECIAL.items()}
    path = os.path.join(folder, "tokenizer.json")
    if os.path.isfile(path):
        tk = _need_tokenizers()
        try:
            tok = tk.Tokenizer.from_file(path)
        except Exception as e:  # the Rust library's own message says what is wrong with the file
            raise ValueError(f"{path} could not be read as a Hugging Face tokenizer: {e}") from None
        tok.no_padding()  # padding and truncation are asked for per call, as in Hugging Face
        tok.no_truncation()
        return _limited(BertTokenizer(tok, family, special), folder)
    if not os.path.isfile(os.path.join(folder, "vocab.txt")):
        raise FileNotFoundError(f"{folder} has no tokenizer: a BERT or DistilBERT folder needs vocab.txt "
                                "or tokenizer.json")
    return _limited(BertTokenizer(_from_vocab_txt(folder, settings, special), family, special), folder)


def _limited(tok, folder: str):
    tok.model_max_length = read_model_max_length(folder)
    return tok
