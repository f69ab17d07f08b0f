"""Seeded synthetic tasks for attention vs recurrence, as batches of integer arrays.

Every task is a small class with the same surface:

    task = make_task("first_token_recall", distance=40)
    batch = task.batch(32, rng=0)      # Batch(inputs (B, T) int64, targets (B, T) int64)
    task.vocab, task.vocab_size, task.seq_len, task.chance
    task.decode(batch.inputs[0])       # -> "C a d b ... ?"

`targets` is aligned with `inputs`: position t holds the token the model should
predict *at* position t, or IGNORE (-100, the default `ignore_index` of
`cross_entropy`) where nothing is scored. `batch.loss_mask` is `targets != IGNORE`.

Why aligned targets and not "next token" targets: in every task except
`induction`, no input token reveals a target, and each target depends only on
inputs at or before its own position. So the same batches train a causal
transformer, a bidirectional encoder and an RNN, and a classifier head can read
the answer off the last position (tasks with `single_label=True` score exactly
one position, the last). `induction` is a next-token task and is `causal_only`.

Randomness: `rng` may be None (the global tinyattn generator, seeded by
`tinyattn.manual_seed`), an int seed, or a `numpy.random.Generator`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from tinyattn import checks

IGNORE = -100  # target value for "not scored"; same as cross_entropy's ignore_index

RngLike = int | np.random.Generator | None


# ----------------------------------------------------------------------------- helpers


def as_rng(rng: RngLike) -> np.random.Generator:
    """None -> tinyattn's global generator; int -> a fresh seeded one; Generator -> itself."""
    if rng is None:
        from tinyattn.tensor import get_rng  # imported late: data only needs it when unseeded

        return get_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(checks.nonneg_int("seed", rng))
    raise TypeError(f"rng must be None, an int seed or a numpy Generator, got {type(rng).__name__}")


def _symbols(n: int, alphabet: str, prefix: str) -> list[str]:
    """n readable token names: single characters while they last, then prefix + number."""
    return [alphabet[i] if i < len(alphabet) else f"{prefix}{i}" for i in range(n)]


LOWER = "abcdefghijklmnopqrstuvwxyz"
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
DIGITS = "0123456789"


@dataclass(frozen=True)
class Batch:
    """One batch: `inputs` (B, T) int64 token ids and aligned `targets` (B, T) int64 (IGNORE = not scored)."""

    inputs: np.ndarray
    targets: np.ndarray

    @property
    def loss_mask(self) -> np.ndarray:
        """(B, T) bool, True where a target is scored."""
        return self.targets != IGNORE

    @property
    def labels(self) -> np.ndarray:
        """(B,) the target at the last position; for single-label (classification) tasks."""
        last = self.targets[:, -1]
        if np.any(last == IGNORE) or self.loss_mask[:, :-1].any():
            raise ValueError("labels needs exactly one scored position per row, the last one; "
                             "this batch scores other positions (use targets and loss_mask)")
        return last

    def __len__(self) -> int:
        return len(self.inputs)


# ----------------------------------------------------------------------------- the task base


class Task:
    """Base class: subclasses set vocab, seq_len, chance and implement `_sample(B, rng) -> (inputs, targets)`."""

    name: str = "task"
    causal_only: bool = False  # True if inputs reveal later targets (next-token tasks)
    single_label: bool = False  # True if only the last position is scored
    vocab: list[str]
    seq_len: int
    chance: float  # accuracy (per scored token) of guessing uniformly / by the majority class

    def batch(self, batch_size: int, rng: RngLike = None) -> Batch:
        """Sample one Batch of `batch_size` sequences: inputs and targets both (batch_size, seq_len) int64."""
        B = checks.positive_int("batch_size", batch_size)
        inputs, targets = self._sample(B, as_rng(rng))
        assert inputs.shape == targets.shape == (B, self.seq_len), (inputs.shape, targets.shape)
        return Batch(inputs.astype(np.int64), targets.astype(np.int64))

    def batches(self, n_batches: int, batch_size: int, rng: RngLike = None) -> Iterator[Batch]:
        """Yield `n_batches` batches from one generator (so a seed gives the same whole stream)."""
        n = checks.positive_int("n_batches", n_batches)
        g = as_rng(rng)
        for _ in range(n):
            yield self.batch(batch_size, g)

    def _sample(self, B: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def token(self, name: str) -> int:
        """The id of the token called `name`."""
        return self.vocab.index(name)

    def decode(self, ids: Sequence[int] | np.ndarray) -> str | list[str]:
        """Token ids -> text: a 1-D sequence gives one string, a 2-D batch a list of strings. IGNORE shows as '.'."""
        a = np.asarray(ids)
        if a.ndim == 2:
            return [self.decode(row) for row in a]
        if a.ndim != 1:
            raise ValueError(f"decode expects a 1-D sequence or a 2-D batch of ids, got shape {a.shape}")
        a = checks.ids_in_range(a, len(self.vocab), "ids", "decode", n_name="vocab_size", ignore=IGNORE)
        return " ".join("·" if i == IGNORE else self.vocab[i] for i in a.tolist())

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seq_len={self.seq_len}, vocab_size={self.vocab_size}, chance={self.chance:.3f})"


# ----------------------------------------------------------------------------- copy / reverse / sort


class _Transduction(Task):
    """x1 .. xL = _ _ .. _  -> the answer appears, one token per blank.

    inputs  (B, 2L+1): L symbols, the separator '=', then L blanks '_'.
    targets (B, 2L+1): IGNORE on the first L+1 positions, then the answer.
    The blanks carry no information, so nothing leaks, and a causal model can
    see every symbol it needs from any blank. Chance = 1 / n_symbols per token.
    """

    def __init__(self, length: int = 8, n_symbols: int = 8):
        self.length = checks.positive_int("length", length)
        self.n_symbols = checks.int_at_least("n_symbols", n_symbols, 2)
        self.vocab = ["=", "_"] + _symbols(self.n_symbols, LOWER, "s")
        self.seq_len = 2 * self.length + 1
        self.chance = 1.0 / self.n_symbols

    def _answer(self, x: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _sample(self, B, rng):
        L = self.length
        x = rng.integers(0, self.n_symbols, size=(B, L)) + 2  # (B, L) symbol ids, after '=' and '_'
        inputs = np.concatenate([x, np.full((B, 1), 0), np.full((B, L), 1)], axis=1)  # (B, 2L+1)
        targets = np.full((B, 2 * L + 1), IGNORE)
        targets[:, L + 1:] = self._answer(x)
        return inputs, targets


class Copy(_Transduction):
    """Copy: 'a c b = _ _ _' -> 'a c b'. Chance = 1/n_symbols per token."""

    name = "copy"

    def _answer(self, x):
        return x


class Reverse(_Transduction):
    """Reverse: 'a c b = _ _ _' -> 'b c a'. Chance = 1/n_symbols per token."""

    name = "reverse"

    def _answer(self, x):
        return x[:, ::-1]


class Sort(_Transduction):
    """Sort: 'c a b = _ _ _' -> 'a b c' (duplicates allowed). Chance = 1/n_symbols per token."""

    name = "sort"

    def _answer(self, x):
        return np.sort(x, axis=1)


# ----------------------------------------------------------------------------- first-token recall


class FirstTokenRecall(Task):
    """Remember the first token for `distance` steps: 'C a d b ... d ?' -> C.

    inputs (B, distance+1): a key (one of n_keys upper-case tokens) at position 0,
    distance-1 noise tokens, then '?' at position `distance`.
    targets: IGNORE everywhere except the last position, which holds the key.
    With `distinct_noise=True` noise comes from its own lower-case symbols, so
    attention can find the key by content; with False the noise is drawn from
    the key symbols too and only position tells the key apart.
    Chance = 1 / n_keys.
    """

    name = "first_token_recall"
    single_label = True

    def __init__(self, distance: int = 40, n_keys: int = 8, n_noise: int = 8, distinct_noise: bool = True):
        self.distance = checks.positive_int("distance", distance)
        self.n_keys = checks.int_at_least("n_keys", n_keys, 2)
        self.n_noise = checks.positive_int("n_noise", n_noise)
        self.distinct_noise = bool(distinct_noise)
        noise = _symbols(self.n_noise, LOWER, "n") if self.distinct_noise else []
        self.vocab = ["?"] + _symbols(self.n_keys, UPPER, "K") + noise
        self.seq_len = self.distance + 1
        self.chance = 1.0 / self.n_keys

    def _sample(self, B, rng):
        T = self.distance
        key = rng.integers(0, self.n_keys, size=B) + 1  # (B,) ids of the keys, after '?'
        if self.distinct_noise:
            noise = rng.integers(0, self.n_noise, size=(B, T - 1)) + 1 + self.n_keys  # (B, T-1)
        else:
            noise = rng.integers(0, self.n_keys, size=(B, T - 1)) + 1
        inputs = np.concatenate([key[:, None], noise, np.zeros((B, 1), dtype=np.int64)], axis=1)  # (B, T+1)
        targets = np.full((B, T + 1), IGNORE)
        targets[:, -1] = key
        return inputs, targets


# ----------------------------------------------------------------------------- associative recall


class AssociativeRecall(Task):
    """Multi-query associative recall (MQAR): 'A 3 C 7 B 1  C B' -> 7 at C, 1 at B.

    inputs (B, 2P+Q): P key/value pairs (distinct upper-case keys, values from
    digits, repeats allowed), then Q of those keys again as queries.
    targets: IGNORE on the pairs; at each query, the value bound to that key.
    Solving it means "find the earlier copy of this key, read the token after it":
    one attention layer to attach each key to its value, one to look it up.
    Chance = 1 / n_values per query.
    """

    name = "associative_recall"

    def __init__(self, n_pairs: int = 4, n_queries: int | None = None, n_keys: int = 16, n_values: int = 16):
        self.n_pairs = checks.positive_int("n_pairs", n_pairs)
        self.n_queries = self.n_pairs if n_queries is None else checks.positive_int("n_queries", n_queries)
        self.n_keys = checks.int_at_least("n_keys", n_keys, 2)
        self.n_values = checks.int_at_least("n_values", n_values, 2)
        if self.n_pairs > self.n_keys:
            raise ValueError(f"n_pairs={self.n_pairs} needs that many distinct keys but n_keys={self.n_keys}")
        if self.n_queries > self.n_pairs:
            raise ValueError(f"n_queries={self.n_queries} must be <= n_pairs={self.n_pairs} "
                             "(queries are distinct keys)")
        self.vocab = _symbols(self.n_keys, UPPER, "K") + _symbols(self.n_values, DIGITS + LOWER, "v")
        self.seq_len = 2 * self.n_pairs + self.n_queries
        self.chance = 1.0 / self.n_values

    def _sample(self, B, rng):
        P, Q = self.n_pairs, self.n_queries
        # distinct keys per row: the first P of a random permutation of all keys
        keys = np.argsort(rng.random((B, self.n_keys)), axis=1)[:, :P]  # (B, P)
        values = rng.integers(0, self.n_values, size=(B, P)) + self.n_keys  # (B, P) ids after the keys
        pairs = np.stack([keys, values], axis=2).reshape(B, 2 * P)  # (B, 2P): k1 v1 k2 v2 ...
        which = np.argsort(rng.random((B, P)), axis=1)[:, :Q]  # (B, Q) distinct pair indices to query
        rows = np.arange(B)[:, None]
        inputs = np.concatenate([pairs, keys[rows, which]], axis=1)  # (B, 2P+Q)
        targets = np.full((B, 2 * P + Q), IGNORE)
        targets[:, 2 * P:] = values[rows, which]
        return inputs, targets


# ----------------------------------------------------------------------------- induction


class Induction(Task):
    """Induction heads: a random sequence, then the same sequence again; predict the next token.

    inputs (B, 2L): r1 .. rL r1 .. rL, with r's distinct within a row (so "what
    followed this token last time" has one answer). targets: next token, scored
    at positions L .. 2L-2 of the second copy (the first copy is unpredictable).
    Inputs reveal later targets, so this task is `causal_only`.
    Chance = 1 / n_symbols per token.
    """

    name = "induction"
    causal_only = True

    def __init__(self, length: int = 8, n_symbols: int = 16):
        self.length = checks.int_at_least("length", length, 2)
        self.n_symbols = checks.int_at_least("n_symbols", n_symbols, 2)
        if self.length > self.n_symbols:
            raise ValueError(f"length={self.length} distinct tokens need n_symbols >= {self.length}, "
                             f"got n_symbols={self.n_symbols}")
        self.vocab = _symbols(self.n_symbols, LOWER, "s")
        self.seq_len = 2 * self.length
        self.chance = 1.0 / self.n_symbols

    def _sample(self, B, rng):
        L = self.length
        r = np.argsort(rng.random((B, self.n_symbols)), axis=1)[:, :L]  # (B, L) distinct tokens
        inputs = np.concatenate([r, r], axis=1)  # (B, 2L)
        targets = np.full((B, 2 * L), IGNORE)
        targets[:, L:2 * L - 1] = r[:, 1:]  # at second-copy position L+i the answer is r[i+1]
        return inputs, targets


# ----------------------------------------------------------------------------- agreement / coreference


NOUNS = {
    "he": ["king", "boy", "man", "father", "prince"],
    "she": ["queen", "girl", "woman", "mother", "princess"],
    "it": ["table", "box", "stone", "car", "lamp"],
    "they": ["dogs", "kids", "men", "trees", "birds"],
}
PREPS = ["near", "with", "behind"]
VERBS = ["slept", "smiled", "fell", "waited", "stayed"]
FILLERS = ["then", "later", "again", "soon"]


class Agreement(Task):
    """Toy coreference: 'the queen near the boxes slept . later ?' -> she.

    A sentence: 'the SUBJECT PREP the DISTRACTOR VERB .', 0..max_fillers filler
    words, then '?' where a pronoun goes. The pronoun refers to the subject and
    must agree with it: he (masculine), she (feminine), it (thing), they (plural).
    The distractor noun always has a different pronoun class and sits closer to
    '?', so "copy the nearest noun's class" scores 0%. Sentences are left-padded
    with '<pad>' to one length; only the last position ('?') is scored.
    Chance = 1/4 (subject classes are uniform).
    """

    name = "agreement"
    single_label = True
    PRONOUNS = ["he", "she", "it", "they"]

    def __init__(self, max_fillers: int = 4):
        self.max_fillers = checks.nonneg_int("max_fillers", max_fillers)
        nouns = [n for p in self.PRONOUNS for n in NOUNS[p]]
        self.vocab = ["<pad>", "the", ".", "?"] + PREPS + VERBS + FILLERS + nouns + self.PRONOUNS
        self.seq_len = 8 + self.max_fillers  # the S P the D V . fillers ?
        self.chance = 1.0 / len(self.PRONOUNS)

    def _sample(self, B, rng):
        tok = self.token
        inputs = np.full((B, self.seq_len), tok("<pad>"))
        targets = np.full((B, self.seq_len), IGNORE)
        for b in range(B):  # tiny Python loop: sentences vary in length and words
            cls = int(rng.integers(4))
            other = (cls + 1 + int(rng.integers(3))) % 4  # any class but the subject's
            subj = NOUNS[self.PRONOUNS[cls]][rng.integers(5)]
            dist = NOUNS[self.PRONOUNS[other]][rng.integers(5)]
            n_fill = int(rng.integers(self.max_fillers + 1))
            words = (["the", subj, PREPS[rng.integers(len(PREPS))], "the", dist, VERBS[rng.integers(len(VERBS))], "."]
                     + [FILLERS[i] for i in rng.integers(len(FILLERS), size=n_fill)] + ["?"])
            inputs[b, self.seq_len - len(words):] = [tok(w) for w in words]  # left-pad so '?' is last
            targets[b, -1] = tok(self.PRONOUNS[cls])
        return inputs, targets


# ----------------------------------------------------------------------------- registry


TASKS: dict[str, Callable[..., Task]] = {
    cls.name: cls for cls in (Copy, Reverse, Sort, FirstTokenRecall, AssociativeRecall, Induction, Agreement)
}


def make_task(name: str, **params: Any) -> Task:
    """Build the task called `name` (see TASKS) with its parameters, e.g. make_task('copy', length=5)."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; choose from: {', '.join(TASKS)}")
    cls = TASKS[name]
    import inspect

    allowed = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = [p for p in params if p not in allowed]
    if unknown:
        raise TypeError(f"task {name!r} has no parameter {unknown[0]!r}; it takes: {', '.join(allowed)}")
    return cls(**params)
