"""F.pad: PyTorch's (before, after)-from-the-last-dim widths, every mode against hand-written results, gradchecks."""
import numpy as np
import pytest

import tinyattn
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck


def t64(*shape, seed=0):
    return tinyattn.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=True)


def test_constant_pad_last_dim_and_two_dims_by_hand():
    x = tinyattn.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert F.pad(x, (1, 2)).tolist() == [[0, 1, 2, 0, 0], [0, 3, 4, 0, 0]]
    # (0, 0) for the last dim, (1, 0) for the one before: a row of 9s in front
    assert F.pad(x, (0, 0, 1, 0), value=9.0).tolist() == [[9, 9], [1, 2], [3, 4]]
    assert F.pad(x, [1, 0, 0, 1], "constant", -1.0).tolist() == [[-1, 1, 2], [-1, 3, 4], [-1, -1, -1]]


def test_negative_widths_crop():
    x = tinyattn.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert F.pad(x, (-1, 1)).tolist() == [[2, 3, 0], [5, 6, 0]]
    assert F.pad(x, (0, -2, -1, 0)).tolist() == [[4]]


def test_integer_tensor_pad_keeps_dtype():
    ids = tinyattn.tensor([0, 5, 7, 1])  # token ids padded to a fixed length with a pad id
    out = F.pad(ids, (0, 3), value=2)
    assert out.dtype == np.int64 and out.tolist() == [0, 5, 7, 1, 2, 2, 2]
    with pytest.raises(TypeError, match="can not be padded with 0.5"):
        F.pad(ids, (0, 1), value=0.5)


def test_reflect_replicate_circular_by_hand():
    x = tinyattn.tensor([[1.0, 2.0, 3.0]])
    assert F.pad(x, (2, 1), mode="reflect").tolist() == [[3, 2, 1, 2, 3, 2]]
    assert F.pad(x, (2, 1), mode="replicate").tolist() == [[1, 1, 1, 2, 3, 3]]
    assert F.pad(x, (2, 1), mode="circular").tolist() == [[2, 3, 1, 2, 3, 1]]


@pytest.mark.parametrize("pad", [(1, 2), (0, 1, 2, 0), (-1, 1, 1, -1), (1, 1, 1, 1, 1, 1), (0, 0)])
def test_constant_pad_gradcheck_any_number_of_dims(pad):
    x = t64(2, 3, 4)
    assert gradcheck(lambda a: F.pad(a, pad, value=0.5), [x])


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_indexed_modes_gradcheck(mode):
    x = t64(2, 3, 4, seed=1)
    assert gradcheck(lambda a: F.pad(a, (2, 1, 1, 2), mode=mode), [x])


def test_pad_errors_name_the_problem():
    x = t64(2, 3)
    with pytest.raises(TypeError, match="even length"):
        F.pad(x, (1, 2, 3))
    with pytest.raises(ValueError, match="pad 3 dims"):
        F.pad(x, (1, 1, 1, 1, 1, 1))
    with pytest.raises(ValueError, match="remove more than"):
        F.pad(x, (-2, -2))
    with pytest.raises(ValueError, match="mode must be"):
        F.pad(x, (1, 1), mode="mirror")
    with pytest.raises(ValueError, match="widths < the dim's size"):
        F.pad(x, (3, 0), mode="reflect")
