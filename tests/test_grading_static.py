"""The AST import check: what each kind of exercise may and may not import (no code is run)."""
import ast

import pytest

from tinyattn.grading.exercises import get
from tinyattn.grading.static import check_source

NUMPY_EX, MODULE_EX = get("ex04"), get("ex08")


@pytest.mark.parametrize("src", [
    "import numpy as np\nimport math",
    "import scipy.linalg",
    "from .helpers import thing",
    "from typing import Optional\nfrom __future__ import annotations",
])
def test_numpy_exercise_allowed(src):
    assert check_source(src, NUMPY_EX) == []


@pytest.mark.parametrize("src, words", [
    ("import torch", "torch"),
    ("import torch.nn.functional as F", "torch"),
    ("from torch import nn", "torch"),
    ("from scipy.special import softmax", "scipy.special"),
    ("from scipy import special", "scipy.special"),
    ("import scipy\ny = scipy.special.softmax", "scipy.special"),
    ("import jax.numpy as jnp", "jax"),
    ("from tinyattn.nn.functional import attention", "tinyattn.nn.functional"),
    ("import tinyattn.nn.functional as F", "tinyattn.nn.functional"),
    ("from tinyattn.masks import causal_mask", "tinyattn.masks"),
    ("from tinyattn import masks", "tinyattn.masks"),
    ("from tinyattn.grading.references import attention", "tinyattn.grading"),
    ("import tinyattn", "plain NumPy"),
    ("from tinyattn import softmax", "plain NumPy"),
    ("from tinyattn.tensor import unbroadcast", "plain NumPy"),
    ("import tinyattn.gradcheck\nf = tinyattn.softmax", "tinyattn.softmax"),
    # no tinyattn at all in a NumPy exercise: a hand-derived backward may not lean on numerical_grad
    ("from tinyattn.gradcheck import numerical_grad", "plain NumPy"),
    ("from tinyattn import gradcheck", "plain NumPy"),
    # an import whose name is computed can not be checked, so it is refused
    ("m = __import__('tiny' + 'attn')", "computed name"),
    ("import importlib\nname = 'tinyattn'\nm = importlib.import_module(name)", "computed name"),
    ("m = __import__('torch')", "torch"),
    ("import importlib\nm = importlib.import_module('scipy.special')", "scipy.special"),
    ("import numpy as np\nf = getattr(x, 'scaled_dot_product_attention')", "scaled_dot_product_attention"),
])
def test_numpy_exercise_forbidden(src, words):
    problems = check_source(src, NUMPY_EX)
    assert problems and words in " ".join(problems) and problems[0].startswith("line ")


@pytest.mark.parametrize("src", [
    "import math\nimport numpy as np\nfrom tinyattn import nn",
    "import tinyattn\nimport tinyattn.nn as nn\nt = tinyattn.tensor([1.0])",
    "from tinyattn.nn import Module, Linear",
    "from tinyattn import Tensor",
    "class MultiHeadAttention(nn.Module):\n    pass",
    # nn.functional's building blocks are not attention code
    "import tinyattn.nn.functional as F\nw = F.softmax(s, dim=-1)",
    "from tinyattn.nn import functional as F\ny = F.linear(x, w, b)",
    "from tinyattn.nn.functional import softmax, dropout",
    "from tinyattn import nn\nw = nn.functional.softmax(s)",
    "class MultiHeadAttention(nn.Module):\n    def forward(self, x):\n        return self.attention(x)",
])
def test_module_exercise_allowed(src):
    assert check_source(src, MODULE_EX) == []


@pytest.mark.parametrize("src, words", [
    ("from tinyattn.nn import Attention", "Attention"),
    ("from tinyattn import nn\nm = nn.Attention(8, 2)", "Attention"),
    ("import tinyattn.nn.functional as F\ny = F.scaled_dot_product_attention(q, k, v)", "F.scaled_dot_product_attention"),
    ("from tinyattn.nn import functional as G\ny, w = G.attention(q, k, v)", "F.attention"),
    ("from tinyattn.nn.functional import attention", "tinyattn.nn.functional.attention"),
    ("from tinyattn.nn.functional import flash_attention as fa", "flash_attention"),
    ("from tinyattn import nn\nF = nn.functional\ny = F.attention(q, k, v)", "F.attention"),
    ("from tinyattn import nn\ny = nn.functional.scaled_dot_product_attention(q, k, v)", "scaled_dot_product_attention"),
    ("from tinyattn import nn\nblock = nn.TransformerBlock(8, 2)", "TransformerBlock"),
    ("from tinyattn.nn import TransformerBlock", "TransformerBlock"),
    ("import torch", "torch"),
])
def test_module_exercise_forbidden(src, words):
    problems = check_source(src, MODULE_EX)
    assert problems and words in " ".join(problems)


def test_line_numbers_are_reported():
    assert check_source("import numpy\n\nimport torch\n", NUMPY_EX) == ["line 3: torch is not allowed in any exercise"]


def test_syntax_error_is_raised_for_the_caller_to_report():
    with pytest.raises(SyntaxError):
        check_source("def f(:\n", NUMPY_EX)


def test_the_rule_in_each_docstring_is_the_rule_the_grader_states():
    """One sentence per kind of exercise, word for word in the exercise's docstring and the grader's message."""
    from pathlib import Path

    from tinyattn.grading.exercises import EXERCISES
    from tinyattn.grading.static import NEVER_RULE, rule

    root = Path(__file__).resolve().parents[1]
    for ex in EXERCISES:
        for folder in ("solutions", "exercises"):
            path = root / folder / ex.filename
            if path.is_file():
                doc = " ".join(ast.get_docstring(ast.parse(path.read_text())).split())
                assert rule(ex) in doc and NEVER_RULE in doc, (folder, ex.id)
