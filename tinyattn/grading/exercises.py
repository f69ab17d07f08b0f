"""The exercise registry: ids, files, points and what each exercise may import."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Exercise:
    id: str                      # "ex04"
    filename: str                # "ex04_attention.py", the same name in solutions/ and exercises/
    title: str                   # one line for reports and the Classroom workflow
    points: int                  # all or nothing: an exercise earns its points only when it passed
    functions: tuple[str, ...]   # the names the file must define
    kind: str = "numpy"          # "numpy": plain NumPy in/out; "module": built on tinyattn.nn (ex08)


EXERCISES: tuple[Exercise, ...] = (
    Exercise("ex01", "ex01_scores.py", "attention scores", 5, ("attention_scores",)),
    Exercise("ex02", "ex02_softmax.py", "stable softmax and its backward", 10, ("softmax", "softmax_backward")),
    Exercise("ex03", "ex03_masks.py", "causal masks", 5, ("causal_mask", "apply_mask")),
    Exercise("ex04", "ex04_attention.py", "scaled dot-product attention", 10, ("attention",)),
    Exercise("ex05", "ex05_attention_backward.py", "attention backward", 15, ("attention_backward",)),
    Exercise("ex06", "ex06_autograd.py", "unbroadcast and matmul backward", 10, ("unbroadcast", "matmul_backward")),
    Exercise("ex07", "ex07_heads.py", "split and merge heads", 5, ("split_heads", "merge_heads")),
    Exercise("ex08", "ex08_multihead.py", "a MultiHeadAttention module", 15, ("MultiHeadAttention",), kind="module"),
    Exercise("ex09", "ex09_positional.py", "sinusoidal positional encoding", 5, ("sinusoidal_encoding",)),
    Exercise("ex10", "ex10_rnn.py", "RNN forward and backprop through time", 15, ("rnn_forward", "rnn_backward")),
    Exercise("ex11", "ex11_gqa.py", "grouped-query attention", 10, ("repeat_kv", "gqa_attention")),
    Exercise("ex12", "ex12_flash.py", "flash attention forward", 15, ("flash_attention_forward",)),
    Exercise("ex13", "ex13_sliding_window.py", "sliding-window masks", 5, ("sliding_window_mask",)),
    Exercise("ex14", "ex14_kv_cache.py", "a decoding step with a KV cache", 10, ("decode_step",)),
)

BY_ID: dict[str, Exercise] = {ex.id: ex for ex in EXERCISES}


def get(ex_id: str) -> Exercise:
    """The exercise called `ex_id` ("ex04", also "4" or "ex4"); ValueError naming the valid ids otherwise."""
    key = ex_id.strip().lower()
    if key.isdigit():
        key = f"ex{int(key):02d}"
    elif key.startswith("ex") and key[2:].isdigit():
        key = f"ex{int(key[2:]):02d}"
    if key not in BY_ID:
        raise ValueError(f"unknown exercise {ex_id!r}; expected one of {', '.join(BY_ID)}")
    return BY_ID[key]
