"""BERT's WordPiece tokenizer from vocab.txt (+ tokenizer_config.json) or tokenizer.json: the known cases."""
from __future__ import annotations

import json
import os

import pytest
from bert_tiny import VOCAB, write_checkpoint

from tinyattn.pretrained import load_bert


@pytest.fixture(params=["vocab", "json"])
def tok(tmp_path, request):
    return load_bert(write_checkpoint(tmp_path / "m", tokenizer=request.param)[0])[1]


@pytest.mark.parametrize("text, pieces", [
    ("The CAT sat", ["the", "cat", "sat"]),                        # an uncased model lower-cases
    ("Café", ["cafe"]),                                            # ... and strips accents
    ("playing", ["play", "##ing"]),                                # the longest piece first, then ## pieces
    ("UNAFFABLE", ["un", "##aff", "##able"]),
    ("cats", ["cat", "##s"]),
    ("it's", ["it", "'", "s"]),                                    # punctuation is a word of its own
    ("she sat!?", ["she", "sat", "!", "?"]),
    ("xylophone", ["[UNK]"]),                                      # no spelling from the pieces: one [UNK]
    ("a [MASK] here", ["a", "[MASK]", "[UNK]"]),                   # [MASK] in a text is the one mask token
    ("  the\tcat\n", ["the", "cat"]),                              # whitespace of any kind separates
])
def test_pieces(tok, text, pieces):
    assert tok.tokenize(text) == pieces
    ids = tok(text)["input_ids"]
    assert tok.convert_ids_to_tokens(ids) == ["[CLS]"] + pieces + ["[SEP]"]
    assert ids[0] == VOCAB.index("[CLS]") and ids[-1] == VOCAB.index("[SEP]")


def test_a_pair_has_two_segments(tok):
    enc = tok("the cat", "it sat")
    assert tok.convert_ids_to_tokens(enc["input_ids"]) == ["[CLS]", "the", "cat", "[SEP]", "it", "sat", "[SEP]"]
    assert enc["token_type_ids"] == [0, 0, 0, 0, 1, 1, 1]
    assert enc["attention_mask"] == [1] * 7


def test_decode_glues_pieces(tok):
    ids = tok("The cats sat playing.")["input_ids"]
    assert tok.decode(ids) == "[CLS] the cats sat playing. [SEP]"
    assert tok.decode(ids, skip_special_tokens=True) == "the cats sat playing."


def test_a_cased_vocabulary_keeps_case_and_accents(tmp_path):
    folder, _, _ = write_checkpoint(tmp_path / "m")
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": False}, f)
    _, tok = load_bert(folder)
    assert tok.tokenize("The cat Café") == ["[UNK]", "cat", "[UNK]"]  # "The" and "Café" are not in the vocabulary


def test_special_tokens_and_padding(tok):
    assert (tok.cls_token, tok.sep_token, tok.pad_token, tok.mask_token, tok.unk_token) == \
        ("[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]")
    assert tok.mask_token_id == VOCAB.index("[MASK]") and tok.pad_token_id == VOCAB.index("[PAD]")
    batch = tok(["the cat", "it"], return_tensors="pt", padding=True)
    assert batch["input_ids"].numpy().tolist()[1][-1] == tok.pad_token_id
    assert batch["attention_mask"].numpy().tolist() == [[1, 1, 1, 1], [1, 1, 1, 0]]
    assert batch["token_type_ids"].numpy().tolist() == [[0] * 4] * 2
    assert len(tok) == len(VOCAB)
