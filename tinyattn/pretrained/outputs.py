"""Hugging Face's calling convention, shared by the GPT-2, BERT and DistilBERT tokenizers and models.

    inputs = tokenizer(["a text", "another"], return_tensors="pt", padding=True)  # dict of (B, T) int tensors
    outputs = model(**inputs, output_attentions=True)
    outputs.last_hidden_state  # (B, T, C)
    outputs.attentions         # a tuple over layers of (B, H, T, T)
    outputs.logits             # (B, T, V), where the checkpoint has a head

Padding goes on the right; attention_mask is 1 on real tokens and 0 on padding, so the model masks the
padded keys (a padded position's own output is computed too, and is meaningless, as in Hugging Face).
"""
from __future__ import annotations

import json
import os
import warnings

import numpy as np

from .. import Tensor, checks

__all__ = ["ModelOutput", "BatchEncoding", "HFTokenizer"]


class ModelOutput:
    """A model's outputs by name: ``out.logits`` or ``out["logits"]``; a field the model did not make is None."""

    def __init__(self, **fields) -> None:
        self._fields = fields

    def __getattr__(self, name):
        fields = self.__dict__.get("_fields", {})
        if name in fields:
            return fields[name]
        if name in ("last_hidden_state", "logits", "attentions", "hidden_states"):
            return None  # not asked for (output_attentions=False) or no head: None, as in Hugging Face
        raise AttributeError(f"{type(self).__name__} has no field {name!r}; it has {sorted(fields)}")

    def __getitem__(self, key):
        if isinstance(key, int):  # out[0]: the fields that are set, in order, as a tuple would give them
            return self.to_tuple()[key]
        return self._fields[key]

    def keys(self):
        return [k for k, v in self._fields.items() if v is not None]

    def to_tuple(self) -> tuple:
        return tuple(self._fields[k] for k in self.keys())

    def __repr__(self) -> str:
        def show(v):
            if isinstance(v, tuple):
                return f"tuple of {len(v)} x {tuple(v[0].shape)}" if v else "()"
            return f"shape {tuple(v.shape)}"
        return f"{type(self).__name__}(" + ", ".join(f"{k}: {show(self._fields[k])}" for k in self.keys()) + ")"


class BatchEncoding(dict):
    """What a tokenizer returns: a dict (``**inputs`` into the model), whose keys also read as attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"BatchEncoding has no {name!r}; it has {list(self)}") from None

    def to(self, device):
        """Only the CPU exists here (tinyattn.device): returns the same encoding."""
        if str(device).split(":")[0] != "cpu":
            raise ValueError(f"tinyattn runs on the CPU only; got device {device!r}")
        return self


_PADDING = {False: False, "do_not_pad": False, True: "longest", "longest": "longest", "max_length": "max_length"}
# Hugging Face's truncation strategies -> the `tokenizers` library's names (None: no truncation).
_TRUNCATION = {False: None, "do_not_truncate": None, True: "longest_first", "longest_first": "longest_first",
               "only_first": "only_first", "only_second": "only_second"}
_TENSORS = (None, "pt", "np")


def _texts(x, name: str) -> tuple[list[str], bool]:
    """str -> ([str], single=True); a list/tuple of str -> (list, False)."""
    if isinstance(x, str):
        return [x], True
    if isinstance(x, (list, tuple)) and x and all(isinstance(t, str) for t in x):
        return list(x), False
    raise TypeError(f"{name} must be a str or a non-empty list of str, got {type(x).__name__}"
                    + (f" holding {type(x[0]).__name__}" if isinstance(x, (list, tuple)) and x else ""))


NO_LIMIT = int(1e30)  # Hugging Face's model_max_length when a tokenizer's files give none; as Hugging Face,
_UNLIMITED = int(1e20)  # any model_max_length above 1e20 means "no known limit"


def read_model_max_length(folder: str) -> int:
    """tokenizer_config.json's model_max_length (BERT's 512, GPT-2's 1024), or NO_LIMIT where it gives none."""
    path = os.path.join(folder, "tokenizer_config.json")
    if not os.path.isfile(path):
        return NO_LIMIT
    with open(path, encoding="utf-8") as f:
        value = json.load(f).get("model_max_length")
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return NO_LIMIT
    return value  # (some files store 1e30 itself, written out as an int: no limit, see _UNLIMITED)


class HFTokenizer:
    """The Hugging Face calling convention on top of a ``tokenizers.Tokenizer`` (``self._tok``).

    Subclasses set ``model_input_names`` and the special tokens (``pad_token``, ``mask_token``, ...).
    """

    model_input_names: tuple[str, ...] = ("input_ids", "attention_mask")
    pad_token: str | None = None
    mask_token: str | None = None
    cls_token: str | None = None
    sep_token: str | None = None
    unk_token: str | None = None
    eos_token: str | None = None

    model_max_length: int = NO_LIMIT  # the longest input the model takes: tokenizer_config.json's, set by the loader

    def _id(self, token: str | None) -> int | None:
        return None if token is None else self._tok.token_to_id(token)

    @property
    def pad_token_id(self) -> int | None:
        return self._id(self.pad_token)

    @property
    def mask_token_id(self) -> int | None:
        return self._id(self.mask_token)

    @property
    def cls_token_id(self) -> int | None:
        return self._id(self.cls_token)

    @property
    def sep_token_id(self) -> int | None:
        return self._id(self.sep_token)

    @property
    def unk_token_id(self) -> int | None:
        return self._id(self.unk_token)

    @property
    def all_special_tokens(self) -> list[str]:
        names = (self.cls_token, self.sep_token, self.pad_token, self.mask_token, self.unk_token, self.eos_token)
        return list(dict.fromkeys(t for t in names if t is not None))

    def __len__(self) -> int:
        return self.vocab_size

    # ---------------------------------------------------------------- text -> ids
    def __call__(self, text, text_pair=None, return_tensors=None, padding=False, truncation=False,
                 max_length=None, add_special_tokens=True) -> BatchEncoding:
        """text (str or list of str) [, text_pair] -> BatchEncoding with self.model_input_names.

        return_tensors: None (lists), "pt" (tinyattn int64 tensors (B, T)) or "np" (arrays (B, T)).
        padding: False, True / "longest" (to the longest text) or "max_length" (each text shorter than max_length
        to max_length; a longer one stays longer unless truncated); on the right, with pad_token.
        truncation: True / "longest_first" cuts each text (or pair, the longer part first) to max_length tokens,
        special tokens included; "only_first" / "only_second" cut only that part of a pair. Without max_length,
        both use model_max_length (tokenizer_config.json's); where that is not known, neither cuts nor pads.
        """
        texts, single = _texts(text, "text")
        if single and text_pair == "":  # as Hugging Face's tokenizers: an empty second text is no second text
            text_pair = None
        if text_pair is not None:
            pairs, single_pair = _texts(text_pair, "text_pair")
            if single_pair != single or len(pairs) != len(texts):
                raise ValueError(f"text has {len(texts)} texts but text_pair has {len(pairs)}: give one pair per text")
            inputs = list(zip(texts, pairs))
        else:
            inputs = texts
        if return_tensors not in _TENSORS:
            raise ValueError(f"return_tensors must be one of {_TENSORS}, got {return_tensors!r}")
        if padding not in _PADDING:
            raise ValueError(f"padding must be one of {list(_PADDING)}, got {padding!r}")
        pad = _PADDING[padding]
        if truncation not in _TRUNCATION:
            raise ValueError(f"truncation must be one of {list(_TRUNCATION)}, got {truncation!r}")
        strategy = _TRUNCATION[truncation]
        if (pad == "max_length" or strategy) and max_length is None:
            if self.model_max_length <= _UNLIMITED:  # as Hugging Face: the model's longest input
                max_length = self.model_max_length
            else:  # as Hugging Face: no length known, so nothing is cut or padded to one, and a warning says so
                warnings.warn(f"padding={padding!r}, truncation={truncation!r} without max_length, and this "
                              "tokenizer has no model_max_length (tokenizer_config.json): nothing is "
                              f"{'cut' if strategy else 'padded to a length'}; pass max_length=N", stacklevel=2)
                pad, strategy = (False if pad == "max_length" else pad), None
        if max_length is not None:
            checks.positive_int("max_length", max_length)
        if pad and self.pad_token_id is None:
            raise ValueError("padding needs a pad token and this tokenizer has none (GPT-2 has none): set one, "
                             "e.g. tokenizer.pad_token = tokenizer.eos_token, or call with padding=False")
        if strategy:
            self._tok.enable_truncation(max_length, strategy=strategy)
        try:
            encs = self._tok.encode_batch(inputs, add_special_tokens=add_special_tokens)
        except Exception as e:  # the library's own message: "Second sequence not provided", "... too short ..."
            if not strategy:
                raise
            raise ValueError(f"truncation={truncation!r}, max_length={max_length}: {e}") from None
        finally:
            self._tok.no_truncation()
        rows = {"input_ids": [list(e.ids) for e in encs], "token_type_ids": [list(e.type_ids) for e in encs],
                "attention_mask": [[1] * len(e.ids) for e in encs]}
        lengths = [len(r) for r in rows["input_ids"]]
        if pad:
            width = max(lengths) if pad == "longest" else max_length  # a text longer than max_length stays so
            fill = {"input_ids": self.pad_token_id, "token_type_ids": 0, "attention_mask": 0}
            for key, value in fill.items():
                rows[key] = [r + [value] * max(0, width - len(r)) for r in rows[key]]
            lengths = [len(r) for r in rows["input_ids"]]
        out = BatchEncoding()
        for key in self.model_input_names:
            out[key] = rows[key]
        if return_tensors is None:
            return BatchEncoding({k: v[0] for k, v in out.items()}) if single else out
        if len(set(lengths)) > 1:
            fix = "truncation=True (or a larger max_length)" if pad == "max_length" else "padding=True"
            raise ValueError(f"the texts have different lengths ({sorted(set(lengths))} tokens): a tensor needs "
                             f"one length, so call with {fix}")
        for key in out:
            arr = np.array(out[key], dtype=np.int64)  # (B, T)
            out[key] = Tensor(arr) if return_tensors == "pt" else arr
        return out

    def convert_tokens_to_ids(self, tokens):
        """One token -> its id (the unknown token's id if absent); a list -> a list."""
        if isinstance(tokens, str):
            i = self._tok.token_to_id(tokens)
            return self.unk_token_id if i is None else i
        return [self.convert_tokens_to_ids(t) for t in tokens]

    # ---------------------------------------------------------------- ids -> text
    def _ids(self, ids, where: str) -> list[int]:
        arr = np.asarray(ids.numpy() if isinstance(ids, Tensor) else ids)
        if arr.ndim != 1:
            raise TypeError(f"{where} expects one id or a 1-D sequence of integer token ids, got shape {arr.shape} "
                            f"dtype {arr.dtype} (for a batch, pass one row: ids[0])")
        given = ids if isinstance(ids, (list, tuple)) else arr  # a list keeps its ints even when empty
        return [int(i) for i in checks.ids_in_range(given, self.vocab_size, "ids", where, n_name="vocab_size")]

    def convert_ids_to_tokens(self, ids, skip_special_tokens: bool = False):
        """Ids -> the vocabulary's tokens ('##ing' for BERT, 'Ġcat' for GPT-2); one int -> one str."""
        if isinstance(ids, (int, np.integer)) or (isinstance(ids, (Tensor, np.ndarray)) and np.ndim(ids) == 0):
            return self.convert_ids_to_tokens([int(np.asarray(getattr(ids, "_data", ids)))])[0]
        special = set(self.all_special_tokens) if skip_special_tokens else set()
        tokens = [self._tok.id_to_token(i) for i in self._ids(ids, "convert_ids_to_tokens")]
        return [t for t in tokens if t not in special]

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        """Token ids -> text (BERT: pieces joined, '##' glued to the piece before)."""
        if isinstance(ids, (int, np.integer)):
            ids = [ids]
        return self._tok.decode(self._ids(ids, "decode"), skip_special_tokens=skip_special_tokens)


def model_inputs(input_ids, attention_mask, vocab_size: int, max_len: int, where: str):
    """input_ids (B, T) and attention_mask (B, T) 0/1 or None -> (ids int64 (B, T), keep bool (B, T) or None)."""
    if input_ids is None or isinstance(input_ids, str):
        raise TypeError(f"{where}: input_ids must be integer token ids of shape (B, T) (tokenizer(text, "
                        f"return_tensors='pt')['input_ids']), got {type(input_ids).__name__}")
    ids = np.asarray(getattr(input_ids, "_data", input_ids))
    if ids.ndim != 2 or 0 in ids.shape:
        raise ValueError(f"{where}: input_ids must have shape (B, T) with B, T >= 1, got shape {ids.shape}")
    ids = checks.ids_in_range(ids, vocab_size, "input_ids", where, n_name="vocab_size").astype(np.int64, copy=False)
    if ids.shape[1] > max_len:
        raise ValueError(f"{where}: input_ids has T={ids.shape[1]} tokens, more than the model's {max_len} "
                         "positions (truncate: tokenizer(..., truncation=True, max_length=N))")
    if attention_mask is None:
        return ids, None
    keep = np.asarray(getattr(attention_mask, "_data", attention_mask))
    if keep.shape != ids.shape:
        raise ValueError(f"{where}: attention_mask has shape {keep.shape} but input_ids has {ids.shape}")
    if not np.isin(keep, (0, 1)).all():
        raise ValueError(f"{where}: attention_mask must hold 0 (padding) and 1 (real token), got values "
                         f"{np.unique(keep)[:5].tolist()}")
    keep = keep.astype(bool)
    empty = np.flatnonzero(~keep.any(axis=1))
    if empty.size:
        raise ValueError(f"{where}: rows {empty.tolist()} of attention_mask are all 0: each sequence needs a real "
                         "token")
    return ids, keep
