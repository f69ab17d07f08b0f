"""GPT-2's byte-level BPE tokenizer, from a checkpoint folder, through Hugging Face's ``tokenizers``.

How byte-level BPE reads text, in three steps:

1. The text is split into words by a regular expression; a space stays glued to the front of the word
   after it (" cat" is one piece), so words at the start of a text and after a space differ.
2. Each piece becomes UTF-8 bytes, and each byte one of 256 printable stand-in characters (a space
   becomes "Ġ", a newline "Ċ"), so any text at all, emoji included, has a spelling in the vocabulary.
3. The merges (merges.txt, most frequent pair first) join neighbouring symbols again and again
   until no listed pair is left; every final symbol is one token id (vocab.json).

Decoding runs it backwards: ids -> symbols -> bytes -> UTF-8 text.
"""
from __future__ import annotations

import json
import os

from .outputs import HFTokenizer, read_model_max_length

__all__ = ["GPT2Tokenizer", "load_tokenizer"]

EOS = "<|endoftext|>"


def _need_tokenizers():
    try:
        import tokenizers
    except ImportError:
        raise ImportError("loading a GPT-2 tokenizer needs the 'tokenizers' package: "
                          "pip install -e \".[pretrained]\" (or pip install tokenizers)") from None
    return tokenizers


class GPT2Tokenizer(HFTokenizer):
    """encode(str) -> list[int], decode(ids) -> str, convert_ids_to_tokens(ids) -> the BPE symbols.

    Also Hugging Face's convention: tokenizer(text or texts, return_tensors="pt") -> input_ids and
    attention_mask. GPT-2 adds no special tokens and has no pad token: to pad a batch, set
    ``tokenizer.pad_token = tokenizer.eos_token`` first, as with Hugging Face's GPT-2 tokenizer.
    """

    model_input_names = ("input_ids", "attention_mask")

    def __init__(self, backend) -> None:
        self._tok = backend  # a tokenizers.Tokenizer
        self.vocab_size = int(backend.get_vocab_size(with_added_tokens=True))
        self.eos_token = EOS if backend.token_to_id(EOS) is not None else None
        self.bos_token = self.unk_token = self.eos_token  # GPT-2 uses <|endoftext|> for all three
        self.pad_token = None

    @property
    def eos_token_id(self) -> int | None:
        """The id of <|endoftext|>, or None if this vocabulary has none."""
        return self._id(self.eos_token)

    def encode(self, text: str) -> list[int]:
        if not isinstance(text, str):
            raise TypeError(f"encode expects a str, got {type(text).__name__}")
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        """Token ids -> text. Bytes that are not valid UTF-8 on their own (half a character) become U+FFFD."""
        return super().decode(ids, skip_special_tokens)

    def token_bytes(self, i: int) -> bytes:
        """The bytes token ``i`` stands for (a token can be part of a UTF-8 character, which decode can't show)."""
        table = {c: b for b, c in _byte_symbols().items()}
        sym = self._tok.id_to_token(int(i))
        if sym is None or sym == self.eos_token or any(c not in table for c in sym):
            return (sym or "").encode("utf-8")  # a special token is its own text
        return bytes(table[c] for c in sym)

    def __repr__(self) -> str:
        return f"GPT2Tokenizer(vocab_size={self.vocab_size}, eos_token_id={self.eos_token_id})"


def _byte_symbols() -> dict[int, str]:
    """Byte-level BPE's byte -> stand-in character table: the printable Latin-1 bytes stand for themselves,
    the other 68 (controls, the space, ...) take the characters from U+0100 on, in byte order."""
    keep = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


def _from_vocab_and_merges(vocab_path: str, merges_path: str):
    tk = _need_tokenizers()
    try:
        with open(vocab_path, encoding="utf-8") as f:
            vocab = json.load(f)
    except json.JSONDecodeError as e:
        raise ValueError(f"{vocab_path} is not valid JSON ({e})") from None
    if not isinstance(vocab, dict) or not all(isinstance(v, int) for v in vocab.values()):
        raise ValueError(f"{vocab_path} must map each token (a string) to its id (an int)")
    merges = []
    with open(merges_path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line or line.startswith("#version"):  # the file's first line is a version comment
                continue
            pair = line.split(" ")
            if len(pair) != 2:
                raise ValueError(f"{merges_path} line {n}: a merge is two symbols separated by one space, got {line!r}")
            for sym in pair + ["".join(pair)]:
                if sym not in vocab:
                    raise ValueError(f"{merges_path} line {n}: merge {line!r} uses {sym!r}, which is not in "
                                     f"{os.path.basename(vocab_path)}")
            merges.append(tuple(pair))
    # GPT-2's settings: no space added in front of the text, bytes mapped to stand-in characters.
    tok = tk.Tokenizer(tk.models.BPE(vocab, merges))
    tok.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tk.decoders.ByteLevel()
    if EOS in vocab:  # "<|endoftext|>" written in a text is the one special token, not 13 characters
        tok.add_special_tokens([tk.AddedToken(EOS, special=True)])
    return tok


def load_tokenizer(folder: str) -> GPT2Tokenizer:
    """tokenizer.json if the folder has one (it holds everything), else vocab.json + merges.txt."""
    path = os.path.join(folder, "tokenizer.json")
    if os.path.isfile(path):
        tk = _need_tokenizers()
        try:
            tok = GPT2Tokenizer(tk.Tokenizer.from_file(path))
        except Exception as e:  # the Rust library's own message says what is wrong with the file
            raise ValueError(f"{path} could not be read as a Hugging Face tokenizer: {e}") from None
        tok.model_max_length = read_model_max_length(folder)
        return tok
    vocab, merges = os.path.join(folder, "vocab.json"), os.path.join(folder, "merges.txt")
    missing = [os.path.basename(p) for p in (vocab, merges) if not os.path.isfile(p)]
    if missing:
        raise FileNotFoundError(f"{folder} has no tokenizer: it needs tokenizer.json, or vocab.json and merges.txt "
                                f"(missing: {', '.join(missing)})")
    tok = GPT2Tokenizer(_from_vocab_and_merges(vocab, merges))
    tok.model_max_length = read_model_max_length(folder)
    return tok
