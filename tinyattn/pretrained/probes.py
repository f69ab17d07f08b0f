"""Two things a learner does with a pretrained model: fill a mask, and compare a minimal pair.

* ``fill_mask``: an encoder trained on masked language modelling predicts a hidden word from BOTH sides
  of it; the top predictions for each [MASK] are the model's own task.
* ``minimal_pairs``: two sentences that differ in one detail (the lawyer asked the doctor / the doctor
  asked the lawyer), a word in each ("she"), and the attention from that word to each candidate word
  ("lawyer", "doctor") in every layer and head, side by side. It prints what was measured; whether a head
  "resolves" the pronoun is a question the weights alone can't settle (see notebook 09).
"""
from __future__ import annotations

import re

import numpy as np

from .. import no_grad

__all__ = ["fill_mask", "minimal_pairs", "word_positions", "MinimalPairs"]


def fill_mask(model, tokenizer, text: str, top_k: int = 5) -> list[list[tuple[str, float]]]:
    """For each mask token in ``text`` (left to right): the top_k (token, probability) predictions."""
    if getattr(model, "head", None) is None or getattr(tokenizer, "mask_token_id", None) is None:
        raise ValueError("fill_mask needs a masked-LM model (a BERT or DistilBERT checkpoint with its head) "
                         "and a tokenizer with a mask token")
    inputs = tokenizer(text, return_tensors="pt")
    ids = inputs["input_ids"].numpy()[0]  # (T,)
    where = np.flatnonzero(ids == tokenizer.mask_token_id)
    if where.size == 0:
        raise ValueError(f"fill_mask: the text has no {tokenizer.mask_token}: write it where a word should be "
                         f"predicted, e.g. 'The cat sat on the {tokenizer.mask_token}.'")
    with no_grad():
        logits = model(**inputs).logits.numpy()[0].astype(np.float64)  # (T, V)
    out = []
    for t in where:
        p = np.exp(logits[t] - logits[t].max())
        p /= p.sum()  # softmax over the vocabulary, at the masked position
        best = np.argsort(-p, kind="stable")[:top_k]
        out.append([(tokenizer.convert_ids_to_tokens(int(i)), float(p[i])) for i in best])
    return out


def word_positions(tokenizer, text: str, word: str) -> list[int]:
    """The positions of the tokens that spell the first whole-word occurrence of ``word`` in ``text``
    (case ignored), in the token sequence ``tokenizer(text)`` gives, special tokens included."""
    m = re.search(r"(?<!\w)" + re.escape(word) + r"(?!\w)", text, flags=re.IGNORECASE)
    if m is None:
        raise ValueError(f"{word!r} is not a word of {text!r}")
    enc = tokenizer._tok.encode(text)  # the same tokens tokenizer(text) gives, with their character spans
    found = [t for t, ((a, b), special) in enumerate(zip(enc.offsets, enc.special_tokens_mask))
             if not special and a < m.end() and b > m.start()]
    if not found:  # pragma: no cover - every character of a text belongs to some token
        raise ValueError(f"no token of {text!r} covers {word!r}")
    return found


class MinimalPairs:
    """What ``minimal_pairs`` measured: ``weights`` (n_texts, L, H, n_candidates), printed as a table."""

    def __init__(self, texts, word, candidates, weights, tokens):
        self.texts, self.word, self.candidates, self.weights, self.tokens = texts, word, candidates, weights, tokens

    def table(self) -> str:
        n, L, H, C = self.weights.shape
        width = max(7, *(len(c) for c in self.candidates))
        lines = [f"attention from {self.word!r} to each candidate (summed over the candidate's tokens), in every "
                 "layer.head; '>' marks the larger in each text"]
        lines += [f"  text {i}: {t}" for i, t in enumerate(self.texts)]
        cols = [f"text {i}: " + " ".join(f"{c:>{width}}" for c in self.candidates) for i in range(n)]
        lines += ["layer.head | " + " | ".join(cols)]
        lines += ["-" * len(lines[-1])]
        for l in range(L):
            for h in range(H):
                cells = []
                for i in range(n):
                    row, top = self.weights[i, l, h], int(np.argmax(self.weights[i, l, h]))
                    cells.append(" " * len(f"text {i}: ") + " ".join(
                        f"{'>' if c == top else ''}{row[c]:.3f}".rjust(width) for c in range(C)))
                lines.append(f"{f'{l}.{h}':>10} | " + " | ".join(cells))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return self.table()


def minimal_pairs(model, tokenizer, texts, word: str, candidates) -> MinimalPairs:
    """For each text, the attention from ``word`` (its first token) to each candidate word (summed over that
    word's tokens), in every layer and head: weights (n_texts, L, H, n_candidates), as measured."""
    if isinstance(texts, str) or isinstance(candidates, str):
        raise TypeError("minimal_pairs takes a list of texts and a list of candidate words")
    rows, tokens = [], []
    for text in texts:
        inputs = tokenizer(text, return_tensors="pt")
        q = word_positions(tokenizer, text, word)[0]
        keys = [word_positions(tokenizer, text, c) for c in candidates]
        with no_grad():
            att = model(**inputs, output_attentions=True).attentions  # L of (1, H, T, T)
        w = np.stack([a.numpy()[0] for a in att])  # (L, H, T, T)
        rows.append(np.stack([w[:, :, q, k].sum(-1) for k in keys], axis=-1))  # (L, H, n_candidates)
        tokens.append(tokenizer.convert_ids_to_tokens(inputs["input_ids"][0]))
    return MinimalPairs(list(texts), word, list(candidates), np.stack(rows), tokens)


def differing_words(a: str, b: str) -> list[str]:
    """The words of ``a`` whose place in ``b`` holds another word (a minimal pair's candidates), in order."""
    wa, wb = re.findall(r"\w+", a.lower()), re.findall(r"\w+", b.lower())
    if len(wa) != len(wb):
        return []
    return list(dict.fromkeys(x for x, y in zip(wa, wb) if x != y))
