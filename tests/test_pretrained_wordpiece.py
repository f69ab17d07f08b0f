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


# ---------------------------------------------------------------------------- truncation and padding options
def _pieces(tok, enc):
    return [tok.convert_ids_to_tokens(row) for row in enc["input_ids"]]


def test_truncation_strategies_cut_the_part_they_name(tok):
    a, b = "the lawyer asked the doctor", "she could help"  # 5 and 3 pieces; with [CLS] [SEP] [SEP]: 11
    only_second = tok([a], [b], truncation="only_second", max_length=9)
    assert _pieces(tok, only_second) == [["[CLS]", "the", "lawyer", "asked", "the", "doctor", "[SEP]", "she", "[SEP]"]]
    assert only_second["token_type_ids"] == [[0] * 7 + [1] * 2]
    only_first = tok([a], [b], truncation="only_first", max_length=9)
    assert _pieces(tok, only_first) == [["[CLS]", "the", "lawyer", "asked", "[SEP]", "she", "could", "help", "[SEP]"]]
    for longest in (True, "longest_first"):  # the longer part loses tokens first, until both are equally long
        assert _pieces(tok, tok([a], [b], truncation=longest, max_length=9)) == [
            ["[CLS]", "the", "lawyer", "asked", "[SEP]", "she", "could", "help", "[SEP]"]]
        assert _pieces(tok, tok([a], [b], truncation=longest, max_length=8)) == [
            ["[CLS]", "the", "lawyer", "asked", "[SEP]", "she", "could", "[SEP]"]]  # (3, 2): the longer part first
    for off in (False, "do_not_truncate"):
        assert len(tok(a, b, truncation=off, max_length=4)["input_ids"]) == 11


def test_truncation_that_cannot_be_done_or_is_misspelled(tok):
    with pytest.raises(ValueError, match="truncation='only_second', max_length=4: .*Second sequence not provided"):
        tok("the lawyer asked the doctor", truncation="only_second", max_length=4)
    with pytest.raises(ValueError, match="truncation='only_first', max_length=5: .*too short"):
        tok("it", "she could help", truncation="only_first", max_length=5)  # [CLS] it [SEP] + 4: nothing to cut
    with pytest.raises(ValueError, match=r"truncation must be one of \[False, 'do_not_truncate', True, "
                                         r"'longest_first', 'only_first', 'only_second'\], got 'only_third'"):
        tok("it", truncation="only_third", max_length=4)


def test_max_length_padding_leaves_a_longer_text_as_it_is(tok):
    enc = tok(["it", "the lawyer asked the doctor"], padding="max_length", max_length=4)
    assert [len(r) for r in enc["input_ids"]] == [4, 7]  # padded to 4; 7 tokens stay 7 (no truncation asked)
    assert enc["attention_mask"] == [[1, 1, 1, 0], [1] * 7]
    with pytest.raises(ValueError, match=r"different lengths \(\[4, 7\] tokens\).* truncation=True"):
        tok(["it", "the lawyer asked the doctor"], padding="max_length", max_length=4, return_tensors="pt")
    cut = tok(["it", "the lawyer asked the doctor"], padding="max_length", truncation=True, max_length=4,
              return_tensors="np")
    assert cut["input_ids"].shape == (2, 4)


def test_an_empty_second_text_is_no_second_text(tok):
    assert tok("she sat", "") == tok("she sat")  # a lone "" pair: as Hugging Face, a single text
    assert tok(["she sat"], [""])["input_ids"] == [tok("she sat")["input_ids"] + [tok.sep_token_id]]  # a list: a pair
