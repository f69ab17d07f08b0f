"""The exercise registry: ids, files, points and what each exercise may import.

What an exercise may import is a whitelist, stated once here and enforced three times: by the
static check of every submitted .py file (static.py), by what exists in the sandbox at all (the
learner's process sees NumPy, the standard library and, for a Tensor exercise, the build of
tinyattn made by allowed.py), and word for word in each exercise's docstring.

* NumPy exercises ("numpy"): NumPy and the Python standard library. No tinyattn at all, so no
  `numerical_grad` either: the exercises that ask for a hand-derived backward (ex02, ex05, ex06,
  ex10) are checked against finite differences by the grader, never by the learner's own copy.
* Tensor exercises ("module", ex08): also the tinyattn modules in TENSOR_LIBRARY, less the names in
  TENSOR_REFUSED; every other module of the package is a stub whose names refuse to be used.
"""
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

# the tinyattn modules a Tensor exercise may import ("x.*": x's submodules too; x itself is listed apart)
TENSOR_LIBRARY = (
    "tinyattn", "tinyattn.amp", "tinyattn.autograd", "tinyattn.backends", "tinyattn.blas", "tinyattn.checks",
    "tinyattn.compiler", "tinyattn.cuda", "tinyattn.defaults", "tinyattn.devices", "tinyattn.distributed",
    "tinyattn.dtypes", "tinyattn.factories", "tinyattn.fastnp", "tinyattn.functions", "tinyattn.gradcheck",
    "tinyattn.sampling", "tinyattn.serialization", "tinyattn.special", "tinyattn.tensor", "tinyattn.compat",
    "tinyattn.compat.*", "tinyattn.nn", "tinyattn.nn.containers", "tinyattn.nn.functional", "tinyattn.nn.init",
    "tinyattn.nn.layers", "tinyattn.nn.loss", "tinyattn.nn.module", "tinyattn.nn.padding", "tinyattn.nn.parallel",
    "tinyattn.nn.positional", "tinyattn.nn.rnn", "tinyattn.nn.utils", "tinyattn.optim", "tinyattn.optim.*",
    "tinyattn.utils", "tinyattn.utils.*",
)
# names cut out of allowed modules: nn.functional's attention functions
TENSOR_REFUSED = ("tinyattn.nn.functional.attention", "tinyattn.nn.functional.scaled_dot_product_attention",
                  "tinyattn.nn.functional.linear_attention", "tinyattn.nn.functional.flash_attention",
                  "tinyattn.nn.functional.multi_head_attention_forward")


def in_tensor_library(module: str) -> bool:
    """Whether a Tensor exercise may import `module` (a tinyattn module name)."""
    for entry in TENSOR_LIBRARY:
        if module == entry or entry.endswith(".*") and module.startswith(entry[:-1]):
            return True
    return False


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
