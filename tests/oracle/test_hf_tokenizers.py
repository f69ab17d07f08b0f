"""tinyattn's GPT-2 and WordPiece tokenizers against transformers' fast and slow tokenizers built from the same
files: a byte-level BPE and a WordPiece vocabulary trained here with the `tokenizers` library, fed random
mixtures of accents (composed and combining), CJK, emoji (ZWJ sequences, flags), control and zero-width
characters, whitespace runs of every kind, and special tokens written in the text; single texts, pairs and
batches, under every padding and truncation option tinyattn takes. Where transformers raises, tinyattn must
raise too (a ValueError carrying the library's message).
"""
import json
import os
import random
import warnings

import pytest
import tokenizers as tk
import transformers

from tinyattn.pretrained.tokenizer import load_tokenizer
from tinyattn.pretrained.wordpiece import load_wordpiece

TEXT = ("The quick brown fox jumps over the lazy dog. Hello world! It's 2024; naïve café, résumé. I can't believe "
        "it's not butter. Attention is all you need.") * 20
PIECES = ["the", "The", "quick", "fox", "naïve", "café", "Café", "résumé", "e\u0301", "A\u030a", "ǅ", "ß", "İ", "ﬁ",
          "中文", "東京", "日本語", "한국어", "😀", "👩\u200d👩\u200d👧", "🇫🇷", "\x00", "\x07", "\u200b", "\ufeff", "\u00ad",
          "\x7f", " ", "  ", "   ", "\t", "\n", "\r\n", "\u3000", "\xa0", "\u2028", "[MASK]", "[mask]", "[CLS]",
          "[SEP]",
          "[PAD]", "[UNK]", "<|endoftext|>", "<|ENDOFTEXT|>", "'s", "can't", "!", "?", "...", "—", "«", "$5.00", "3.14",
          "x²", "Ω", "\U0001d400", "ｶ", "#", "##", "##ing", "unaffable"]
OPTIONS = [dict(padding=True), dict(padding="max_length", max_length=16), dict(padding="max_length", max_length=3),
           dict(truncation=True, max_length=7), dict(padding=True, truncation=True, max_length=6),
           dict(truncation="longest_first", max_length=5), dict(truncation="only_first", max_length=9),
           dict(truncation="only_second", max_length=9), dict(padding="longest", add_special_tokens=False)]


def _text(rng):
    return "".join(rng.choice(PIECES) + rng.choice(["", " ", ""]) for _ in range(rng.randint(0, 12)))


def _call(tok, names, *args, **kw):
    try:
        out = tok(*args, **kw)
    except Exception:  # noqa: BLE001 -- transformers raises the Rust library's plain Exception
        return "raises"
    return {k: out[k] for k in names}


@pytest.fixture(scope="module")
def bpe_folder(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("bpe"))
    tok = tk.Tokenizer(tk.models.BPE())
    tok.pre_tokenizer = tk.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train_from_iterator([TEXT], tk.trainers.BpeTrainer(vocab_size=600, special_tokens=["<|endoftext|>"],
                                                           initial_alphabet=tk.pre_tokenizers.ByteLevel.alphabet()))
    tok.model.save(folder)
    return folder


@pytest.fixture(scope="module")
def wordpiece_folder(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("wordpiece"))
    tok = tk.Tokenizer(tk.models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = tk.normalizers.BertNormalizer(lowercase=False)  # keep cased and accented pieces too
    tok.pre_tokenizer = tk.pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator([TEXT, "中文 字 東京 😀 日本語 ñ é ü NAÏVE"], tk.trainers.WordPieceTrainer(
        vocab_size=400, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1])))
    return folder


def test_byte_level_bpe_matches_gpt2_tokenizers(bpe_folder):
    ours = load_tokenizer(bpe_folder)
    files = (os.path.join(bpe_folder, "vocab.json"), os.path.join(bpe_folder, "merges.txt"))
    refs = [transformers.GPT2TokenizerFast(*files), transformers.GPT2Tokenizer(*files)]
    rng = random.Random(0)
    for _ in range(300):
        text = _text(rng)
        for ref in refs:
            ids = ref.encode(text)
            assert ours.encode(text) == ids, text
            assert ours.convert_ids_to_tokens(ids) == ref.convert_ids_to_tokens(ids), text
            for skip in (False, True):
                assert ours.decode(ids, skip_special_tokens=skip) == ref.decode(ids, skip_special_tokens=skip), text
    ours.pad_token = ours.eos_token
    refs[0].pad_token = refs[0].eos_token
    for _ in range(60):
        texts = [_text(rng) or "a" for _ in range(rng.randint(1, 4))]
        for kw in OPTIONS[:6]:
            assert _call(ours, ours.model_input_names, texts, **kw) == _call(refs[0], ours.model_input_names, texts,
                                                                             **kw), (texts, kw)


@pytest.mark.parametrize("family", ["bert", "distilbert"])
@pytest.mark.parametrize("settings", [{}, {"do_lower_case": False}, {"do_lower_case": True, "strip_accents": False},
                                      {"do_lower_case": False, "strip_accents": True},
                                      {"tokenize_chinese_chars": False}], ids=str)
def test_wordpiece_matches_bert_tokenizers(wordpiece_folder, family, settings, tmp_path):
    vocab = os.path.join(wordpiece_folder, "vocab.txt")
    folder = str(tmp_path)
    with open(vocab, encoding="utf-8") as src, open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as dst:
        dst.write(src.read())
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump(settings, f)
    ours = load_wordpiece(folder, family)
    fast_cls = transformers.DistilBertTokenizerFast if family == "distilbert" else transformers.BertTokenizerFast
    refs = [fast_cls(vocab, **settings), transformers.BertTokenizer(vocab, **settings)]
    names = ours.model_input_names
    rng = random.Random(1)
    for _ in range(300):
        a, b = _text(rng), _text(rng)
        for ref in refs:
            assert ours.tokenize(a) == ref.tokenize(a), a
            assert _call(ours, names, a) == _call(ref, names, a), a
            assert _call(ours, names, a, b) == _call(ref, names, a, b), (a, b)
            ids = ref(a, b)["input_ids"]
            for skip in (False, True):
                assert ours.decode(ids, skip_special_tokens=skip) == ref.decode(ids, skip_special_tokens=skip), (a, b)
    for _ in range(80):
        texts = [_text(rng) for _ in range(rng.randint(1, 4))]
        pairs = [_text(rng) for _ in texts] if rng.random() < 0.5 else None
        for kw in OPTIONS:
            assert _call(ours, names, texts, pairs, **kw) == _call(refs[0], names, texts, pairs, **kw), \
                (texts, pairs, kw)


@pytest.mark.parametrize("limit", [None, 7, 10**30])  # no tokenizer_config.json field, BERT's 512 cut short, 1e30
@pytest.mark.parametrize("family", ["bert", "gpt2"])
def test_without_max_length_the_model_max_length_decides(wordpiece_folder, bpe_folder, tmp_path, limit, family):
    """truncation / padding="max_length" with no max_length read tokenizer_config.json's model_max_length, as
    transformers' from_pretrained does; where there is none, nothing is cut or padded to a length."""
    src = wordpiece_folder if family == "bert" else bpe_folder
    folder = str(tmp_path)
    for name in os.listdir(src):
        with open(os.path.join(src, name), encoding="utf-8") as a, open(os.path.join(folder, name), "w",
                                                                        encoding="utf-8") as b:
            b.write(a.read())
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({} if limit is None else {"model_max_length": limit}, f)
    if family == "bert":
        ours, ref = load_wordpiece(folder, "bert"), transformers.BertTokenizerFast.from_pretrained(folder)
    else:
        ours, ref = load_tokenizer(folder), transformers.GPT2TokenizerFast.from_pretrained(folder)
        ours.pad_token = ours.eos_token
        ref.pad_token = ref.eos_token
    assert ours.model_max_length == ref.model_max_length
    rng = random.Random(2)
    for _ in range(40):
        texts = [_text(rng) or "a" for _ in range(rng.randint(1, 3))]
        pairs = [_text(rng) or "b" for _ in texts] if family == "bert" and rng.random() < 0.5 else None
        for kw in (dict(truncation=True), dict(padding=True, truncation=True), dict(padding="max_length"),
                   dict(padding="max_length", truncation=True), dict(truncation="only_second")):
            if pairs is None and kw.get("truncation") == "only_second":
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (no length known: both warn that nothing is cut)
                got = _call(ours, ours.model_input_names, texts, pairs, **kw)
            assert got == _call(ref, ours.model_input_names, texts, pairs, **kw), (texts, pairs, kw)
