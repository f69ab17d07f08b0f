"""The exercise registry: ids, files, parts and their points, and what each exercise may import.

An exercise is scored part by part: a part earns its points when every check of that part passed
(and the exercise loaded, ran in time and imported only what it may). So ex02's softmax earns its
5 points after notebook 01, before its backward (notebook 02 material) is written.

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

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Part:
    name: str                    # "softmax": what the learner writes for it (a function, or "masks")
    points: int
    after: int                   # the notebook after which the part can be done (01 ... 08)


@dataclass(frozen=True)
class Exercise:
    id: str                      # "ex04"
    filename: str                # "ex04_attention.py", the same name in solutions/ and exercises/
    title: str                   # one line for reports and the Classroom workflow
    functions: tuple[str, ...]   # the names the file must define
    parts: tuple[Part, ...]      # scored separately; one part: all or nothing
    kind: str = "numpy"          # "numpy": plain NumPy in/out; "module": built on tinyattn.nn (ex08)
    real_only: bool = False      # a derived backward: runs confined to real arithmetic (confine.py)

    @property
    def points(self) -> int:
        return sum(p.points for p in self.parts)

    def part(self, name: str | None) -> Part:
        """The part called `name`; None (or any name in a one-part exercise) is the only part."""
        if len(self.parts) == 1 and name in (None, self.parts[0].name):
            return self.parts[0]
        for p in self.parts:
            if p.name == name:
                return p
        raise KeyError(f"{self.id} has no part {name!r}; its parts are {', '.join(p.name for p in self.parts)}")

    def score(self, checks: Iterable[dict]) -> dict[str, int]:
        """{part name: points earned} from check results ({"passed", "part", ...}, as in --json).

        A part earns its points when it has checks and all of them passed. A failed check that
        belongs to no part (the file does not load, times out, imports what it may not) fails every part.
        """
        checks = [c for c in checks if not c.get("advice")]  # advice is shown, never scored
        whole = [c for c in checks if c.get("part") is None]
        earned = {}
        for p in self.parts:
            own = [c for c in checks if c.get("part") == p.name or (len(self.parts) == 1 and c.get("part") is None)]
            ok = bool(own) and all(c["passed"] for c in own) and all(c["passed"] for c in whole)
            earned[p.name] = p.points if ok else 0
        return earned

    def points_line(self) -> str:
        """The line each exercise's docstring states its points with (a test keeps them in step)."""
        if len(self.parts) == 1:
            return f"Points: {self.points} (ready after notebook {self.parts[0].after:02d})."
        return (f"Points: {self.points} in {len(self.parts)} parts, each scored on its own: "
                + ", ".join(f"{p.name} {p.points} (after notebook {p.after:02d})" for p in self.parts) + ".")

    def describe_parts(self) -> str:
        """'softmax 5 points (after notebook 01), softmax_backward 5 points (after notebook 02)'."""
        return ", ".join(f"{p.name} {p.points} points (after notebook {p.after:02d})" for p in self.parts)


def _one(name: str, points: int, after: int) -> tuple[Part, ...]:
    return (Part(name, points, after),)


EXERCISES: tuple[Exercise, ...] = (
    Exercise("ex01", "ex01_scores.py", "attention scores", ("attention_scores",), _one("attention_scores", 5, 1)),
    Exercise("ex02", "ex02_softmax.py", "stable softmax and its backward", ("softmax", "softmax_backward"),
             (Part("softmax", 5, 1), Part("softmax_backward", 5, 2)), real_only=True),
    Exercise("ex03", "ex03_masks.py", "causal masks", ("causal_mask", "apply_mask"),
             (Part("causal_mask", 2, 4), Part("apply_mask", 3, 4))),
    Exercise("ex04", "ex04_attention.py", "scaled dot-product attention", ("attention",),
             (Part("attention", 6, 1), Part("masks", 4, 4))),
    Exercise("ex05", "ex05_attention_backward.py", "attention backward", ("attention_backward",),
             (Part("attention_backward", 10, 2), Part("masks", 5, 4)), real_only=True),
    Exercise("ex06", "ex06_autograd.py", "unbroadcast and matmul backward", ("unbroadcast", "matmul_backward"),
             (Part("unbroadcast", 4, 2), Part("matmul_backward", 6, 2)), real_only=True),
    Exercise("ex07", "ex07_heads.py", "split and merge heads", ("split_heads", "merge_heads"),
             (Part("split_heads", 3, 5), Part("merge_heads", 2, 5))),
    Exercise("ex08", "ex08_multihead.py", "a MultiHeadAttention module", ("MultiHeadAttention",),
             _one("MultiHeadAttention", 15, 5), kind="module"),
    Exercise("ex09", "ex09_positional.py", "sinusoidal positional encoding", ("sinusoidal_encoding",),
             _one("sinusoidal_encoding", 5, 5)),
    Exercise("ex10", "ex10_rnn.py", "RNN forward and backprop through time", ("rnn_forward", "rnn_backward"),
             (Part("rnn_forward", 5, 6), Part("rnn_backward", 10, 6)), real_only=True),
    Exercise("ex11", "ex11_gqa.py", "grouped-query attention", ("repeat_kv", "gqa_attention"),
             (Part("repeat_kv", 3, 8), Part("gqa_attention", 7, 8))),
    Exercise("ex12", "ex12_flash.py", "flash attention forward", ("flash_attention_forward",),
             _one("flash_attention_forward", 15, 8)),
    Exercise("ex13", "ex13_sliding_window.py", "sliding-window masks", ("sliding_window_mask",),
             _one("sliding_window_mask", 5, 4)),
    Exercise("ex14", "ex14_kv_cache.py", "a decoding step with a KV cache", ("decode_step",),
             _one("decode_step", 10, 8)),
    Exercise("ex15", "ex15_patching.py", "activation patching, head by head", ("patch_heads",),
             _one("patch_heads", 10, 11)),
)

# the tinyattn modules a Tensor exercise may import ("x.*": x's submodules too; x itself is listed apart)
TENSOR_LIBRARY = (
    "tinyattn", "tinyattn.amp", "tinyattn.autograd", "tinyattn.backends", "tinyattn.blas", "tinyattn.checks",
    "tinyattn.compiler", "tinyattn.cuda", "tinyattn.defaults", "tinyattn.devices", "tinyattn.distributed",
    "tinyattn.dtypes", "tinyattn.factories", "tinyattn.fastnp", "tinyattn.functions", "tinyattn.gradcheck",
    "tinyattn.sampling", "tinyattn.serialization", "tinyattn.special", "tinyattn.tensor", "tinyattn.tensor",
    "tinyattn.ops", "tinyattn.promotion", "tinyattn.compat",
    "tinyattn.compat.*", "tinyattn.nn", "tinyattn.nn.containers", "tinyattn.nn.functional", "tinyattn.nn.init",
    "tinyattn.nn.layers", "tinyattn.nn.loss", "tinyattn.nn.module", "tinyattn.nn.padding", "tinyattn.nn.parallel",
    "tinyattn.nn.positional", "tinyattn.nn.rnn", "tinyattn.nn.utils", "tinyattn.optim", "tinyattn.optim.*",
    "tinyattn.utils", "tinyattn.utils.*",
    "tinyattn.einops_backend", "tinyattn.jit", "tinyattn.nn.utils.*",  # `import tinyattn` calls einops_backend.install()
    "tinyattn.nn.embedding_functional", "tinyattn.nn.reset",  # F.embedding (nn.Embedding runs it); reset_parameters
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
