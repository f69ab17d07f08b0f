"""truncation=True and padding="max_length" without max_length: the tokenizer's model_max_length decides
(tokenizer_config.json's, as Hugging Face's from_pretrained reads it), and where none is known nothing is cut
or padded to a length, with a warning, as Hugging Face does (its oracle: tests/oracle/test_hf_tokenizers.py)."""
import json
import os

import pytest
from bert_tiny import write_vocab

from tinyattn.pretrained.wordpiece import load_wordpiece

TEXTS = ["the cat sat on the mat", "the cat"]  # 6 and 2 words, one token each, + [CLS] and [SEP]


def _tokenizer(tmp_path, settings):
    write_vocab(str(tmp_path))
    if settings is not None:
        with open(os.path.join(tmp_path, "tokenizer_config.json"), "w") as f:
            json.dump(settings, f)
    return load_wordpiece(str(tmp_path), "bert")


def test_model_max_length_is_the_default_length(tmp_path):
    tok = _tokenizer(tmp_path, {"model_max_length": 5})
    assert tok.model_max_length == 5
    out = tok(TEXTS, truncation=True)
    assert [len(r) for r in out["input_ids"]] == [5, 4]
    assert out["input_ids"][0][-1] == tok.sep_token_id  # cut inside the text: [SEP] stays last
    out = tok(TEXTS, padding="max_length", truncation=True)
    assert [len(r) for r in out["input_ids"]] == [5, 5] and out["attention_mask"][1] == [1, 1, 1, 1, 0]
    assert [len(r) for r in tok(TEXTS, truncation=True, max_length=3)["input_ids"]] == [3, 3]  # asked for: wins


@pytest.mark.parametrize("settings", [None, {}, {"model_max_length": 10**30}, {"model_max_length": int(1e30)}])
def test_no_known_length_cuts_and_pads_nothing(tmp_path, settings):
    tok = _tokenizer(tmp_path, settings)
    assert tok.model_max_length > 10**20
    with pytest.warns(UserWarning, match=r"truncation=True without max_length, and this tokenizer has no "
                                         r"model_max_length \(tokenizer_config.json\): nothing is cut"):
        out = tok(TEXTS, padding=True, truncation=True)
    assert [len(r) for r in out["input_ids"]] == [8, 8]  # padded to the longest, nothing cut
    with pytest.warns(UserWarning, match="nothing is padded to a length"):
        out = tok(TEXTS, padding="max_length")
    assert [len(r) for r in out["input_ids"]] == [8, 4]
