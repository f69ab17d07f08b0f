"""The GPT-2 tokenizer load_gpt2 returns: byte-level BPE's known cases (spaces, newlines, multi-byte
characters, the 'Ġ' prefix, <|endoftext|>), round trips, and bad input, from both file formats.
"""
from __future__ import annotations

import numpy as np
import pytest
from gpt2_tiny import VOCAB, write_checkpoint

from tinyattn.pretrained import load_gpt2


@pytest.fixture
def ckpt(tmp_path):
    return write_checkpoint(tmp_path / "gpt2-tiny")


@pytest.mark.parametrize("kind", ["bpe", "json"])
def test_byte_level_cases(tmp_path, kind):
    folder, _, _ = write_checkpoint(tmp_path / kind, tokenizer=kind)
    _, tok = load_gpt2(folder)
    sym = tok.convert_ids_to_tokens
    # A space belongs to the word after it: "the" at the start is spelled differently from " the".
    assert sym(tok.encode(" the cat")) == ["Ġthe", "Ġcat"]
    assert sym(tok.encode("the")) == ["t", "he"]
    assert tok.encode(" the") == [VOCAB["Ġthe"]]
    # Runs of spaces: all but the last stand alone, the last joins the next word.
    assert sym(tok.encode("  the")) == ["Ġ", "Ġthe"]
    assert sym(tok.encode("sing ")) == ["s", "ing", "Ġ"]
    # A newline is byte 10, written with a stand-in character; é is two UTF-8 bytes, so two tokens.
    assert sym(tok.encode("a\nb")) == ["a", "Ċ", "b"]
    assert sym(tok.encode("é")) == ["Ã", "©"]
    assert tok.decode(tok.encode("é")[:1]) == "\ufffd"  # half a character decodes to U+FFFD
    assert tok.encode("<|endoftext|>") == [VOCAB["<|endoftext|>"]] and tok.eos_token_id == VOCAB["<|endoftext|>"]


@pytest.mark.parametrize("text", ["", "the cat sat", "  two  spaces ", "tabs\tand\nnewlines\r\n",
                                  "Unicode: é ß 漢字 🙂", "it's 3.14159, isn't it?", "<|endoftext|>the end"])
def test_round_trip(ckpt, text):
    _, tok = load_gpt2(ckpt[0])
    ids = tok.encode(text)
    assert all(isinstance(i, int) for i in ids)
    assert tok.decode(ids) == text
    assert tok.decode(np.array(ids, dtype=np.int64)) == text


def test_tokenizer_input_errors(ckpt):
    _, tok = load_gpt2(ckpt[0])
    with pytest.raises(TypeError, match="expects a str"):
        tok.encode([1, 2])
    with pytest.raises(ValueError, match=rf"decode: ids holds id {len(VOCAB)} at position \(1,\), outside "
                                         rf"\[0, {len(VOCAB) - 1}\] \(vocab_size={len(VOCAB)}\)"):
        tok.decode([1, len(VOCAB)])
    with pytest.raises(TypeError, match="decode: ids must be integer ids"):
        tok.decode([1.5])
    with pytest.raises(TypeError, match="1-D sequence of integer"):
        tok.decode([[1, 2]])


def test_partial_character_tokens_are_shown_as_bytes(ckpt):
    """`tinyattn gpt2`'s top-k list: a token that is part of a UTF-8 character shows its bytes, not U+FFFD."""
    from tinyattn.pretrained.cli import _token_text

    _, tok = load_gpt2(ckpt[0])
    euro = tok.encode("€")  # three bytes, three tokens in this vocabulary (no merges for them)
    assert len(euro) == 3 and all(tok.decode([i]) == "\ufffd" for i in euro)  # decode can't tell them apart
    shown = [_token_text(tok, i) for i in euro]
    assert shown == [repr(b"\xe2"), repr(b"\x82"), repr(b"\xac")]
    assert _token_text(tok, tok.encode(" cat")[0]) == repr(" cat")
    assert _token_text(tok, tok.eos_token_id) == repr("<|endoftext|>")
    assert tok.token_bytes(euro[0]) + tok.token_bytes(euro[1]) + tok.token_bytes(euro[2]) == "€".encode()
