"""nn.init's other fills (eye_, dirac_, orthogonal_, trunc_normal_, sparse_) and PyTorch's deprecated names
without the underscore, each warning as PyTorch 2.13 does."""
import math
import warnings

import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn as nn
import tinyattn.nn.init as init

DEPRECATED = ["constant", "dirac", "eye", "kaiming_normal", "kaiming_uniform", "normal", "orthogonal", "sparse",
              "uniform", "xavier_normal", "xavier_uniform"]  # every one PyTorch 2.13 still has


@pytest.mark.parametrize("old", DEPRECATED)
def test_each_old_name_warns_and_fills_as_the_new_one(old):
    t = torch.empty(4, 2, 3) if old == "dirac" else torch.empty(6, 4)
    extra = (0.5,) if old in ("constant", "sparse") else ()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.manual_seed(3)
        got = getattr(init, old)(t, *extra).numpy().copy()
    assert [(w.category, str(w.message)) for w in caught] == [
        (FutureWarning, f"`nn.init.{old}` is now deprecated in favor of `nn.init.{old}_`.")]
    u = torch.empty(*t.shape)
    torch.manual_seed(3)
    np.testing.assert_array_equal(got, getattr(init, old + "_")(u, *extra).numpy())  # the same draws


def test_eye_and_dirac_are_identities():
    assert init.eye_(torch.empty(2, 3)).tolist() == [[1, 0, 0], [0, 1, 0]]
    lin = nn.Linear(3, 3, bias=False)
    init.eye_(lin.weight)
    assert lin(torch.tensor([[1.0, 2.0, 3.0]])).tolist() == [[1.0, 2.0, 3.0]]
    w = init.dirac_(torch.empty(4, 2, 3)).numpy()  # out channel i copies in channel i at the centre tap (1)
    expected = np.zeros((4, 2, 3))
    expected[0, 0, 1] = expected[1, 1, 1] = 1  # out channels 2, 3 have no input channel to copy
    np.testing.assert_array_equal(w, expected)
    w2 = init.dirac_(torch.empty(4, 2, 3), groups=2).numpy()  # two groups of 2: each copies channels 0, 1
    expected[2, 0, 1] = expected[3, 1, 1] = 1
    np.testing.assert_array_equal(w2, expected)


def test_orthogonal_gives_orthonormal_columns_or_rows_scaled_by_gain():
    torch.manual_seed(0)
    tall = init.orthogonal_(torch.empty(6, 4, dtype=torch.float64)).numpy()
    np.testing.assert_allclose(tall.T @ tall, np.eye(4), atol=1e-12)
    wide = init.orthogonal_(torch.empty(3, 5, dtype=torch.float64), gain=2.0).numpy()
    np.testing.assert_allclose(wide @ wide.T, 4 * np.eye(3), atol=1e-12)  # gain^2 on the diagonal


def test_trunc_normal_stays_inside_a_and_b():
    torch.manual_seed(0)
    x = init.trunc_normal_(torch.empty(4000, dtype=torch.float64), mean=1.0, std=2.0, a=0.0, b=3.0).numpy()
    assert x.min() >= 0.0 and x.max() <= 3.0
    # the mean of N(1, 4) truncated to [0, 3]: 1 + 2 (phi(-1/2) - phi(1)) / (Phi(1) - Phi(-1/2)) = 1.40
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    Phi = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))
    want = 1 + 2 * (phi(-0.5) - phi(1.0)) / (Phi(1.0) - Phi(-0.5))
    assert abs(x.mean() - want) < 4 * x.std() / math.sqrt(len(x))  # within 4 standard errors


def test_sparse_zeroes_the_same_number_in_every_column():
    torch.manual_seed(0)
    w = init.sparse_(torch.empty(10, 3), sparsity=0.25).numpy()
    assert ((w == 0).sum(0) == 3).all()  # ceil(0.25 * 10) = 3 per column


@pytest.mark.parametrize("call,message", [
    (lambda: init.eye_(torch.empty(3)), "Only tensors with 2 dimensions are supported"),
    (lambda: init.orthogonal_(torch.empty(3)), "Only tensors with 2 or more dimensions are supported"),
    (lambda: init.dirac_(torch.empty(2, 2)), "Only tensors with 3, 4, or 5 dimensions are supported"),
    (lambda: init.sparse_(torch.empty(2, 2, 2), 0.5), "Only tensors with 2 dimensions are supported")])
def test_wrong_shapes_are_refused_with_pytorchs_words(call, message):
    with pytest.raises(ValueError, match=message):
        call()
