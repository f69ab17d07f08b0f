"""tinyattn.nn layers: init, forward against NumPy, gradients by finite differences, clear errors."""
import math

import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck


def t64(*shape, requires_grad=True):
    return tinyattn.tensor(tinyattn.get_rng().standard_normal(shape), requires_grad=requires_grad)


# ---------------------------------------------------------------- Linear
def test_linear_shapes_and_pytorch_init_bounds():
    lin = nn.Linear(16, 64)
    assert lin.weight.shape == (64, 16) and lin.bias.shape == (64,)
    assert lin.weight.dtype == np.float32 and lin.weight.requires_grad
    bound = 1 / math.sqrt(16)
    for p in (lin.weight.numpy(), lin.bias.numpy()):
        assert np.abs(p).max() <= bound
    assert np.abs(lin.weight.numpy()).max() > 0.95 * bound  # 1024 uniform draws fill the range
    assert abs(lin.weight.numpy().mean()) < 0.03  # centred: std of the mean ~ 0.25/sqrt(3)/32 ~ 0.0045
    assert lin.weight.numpy().std() == pytest.approx(bound / math.sqrt(3), rel=0.1)  # U(-a, a) has std a/sqrt(3)


def test_linear_init_follows_manual_seed():
    tinyattn.manual_seed(5)
    a = nn.Linear(3, 4)
    tinyattn.manual_seed(5)
    b = nn.Linear(3, 4)
    c = nn.Linear(3, 4)
    np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())
    np.testing.assert_array_equal(a.bias.numpy(), b.bias.numpy())
    assert not np.array_equal(a.weight.numpy(), c.weight.numpy())


def test_linear_forward_matches_numpy_and_without_bias():
    lin = nn.Linear(4, 3)
    x = tinyattn.randn(2, 5, 4)
    np.testing.assert_allclose(lin(x).numpy(), x.numpy() @ lin.weight.numpy().T + lin.bias.numpy(), rtol=1e-5, atol=1e-6)
    nob = nn.Linear(4, 3, bias=False)
    assert nob.bias is None
    assert [n for n, _ in nob.named_parameters()] == ["weight"]
    np.testing.assert_allclose(nob(x).numpy(), x.numpy() @ nob.weight.numpy().T, rtol=1e-5, atol=1e-6)


def test_linear_gradcheck(float64):
    lin = nn.Linear(4, 3)
    assert lin.weight.dtype == np.float64
    x = t64(2, 3, 4)
    assert gradcheck(lambda x, w, b: lin(x), [x, lin.weight, lin.bias])


def test_linear_error_names_in_features_and_shape():
    lin = nn.Linear(8, 2)
    with pytest.raises(ValueError, match=r"^linear: x has shape \(2, 5, 7\) but weight has shape \(2, 8\): "
                                         r"x's last dim must equal in_features=8$"):
        lin(tinyattn.randn(2, 5, 7))
    with pytest.raises(ValueError, match="in_features"):
        nn.Linear(0, 3)
    with pytest.raises(TypeError, match="linear expects a floating-point x, got dtype int64"):
        lin(tinyattn.tensor([[1, 2, 3, 4, 5, 6, 7, 8]]))  # token ids fed to Linear instead of Embedding
    # a weight or bias replaced by one of the wrong shape: a clear error, not NumPy's matmul message
    lin.weight = nn.Parameter(tinyattn.randn(2, 5))
    with pytest.raises(ValueError, match=r"^linear: x has shape \(3, 8\) but weight has shape \(2, 5\)"):
        lin(tinyattn.randn(3, 8))
    lin = nn.Linear(8, 2)
    lin.bias = nn.Parameter(tinyattn.randn(3))
    with pytest.raises(ValueError, match=r"^linear: bias must have shape \(out_features,\) = \(2,\), got \(3,\)"):
        lin(tinyattn.randn(3, 8))


def test_linear_repr():
    assert repr(nn.Linear(4, 8, bias=False)) == "Linear(in_features=4, out_features=8, bias=False)"


# ---------------------------------------------------------------- Embedding
def test_embedding_init_and_lookup():
    emb = nn.Embedding(500, 40)
    w = emb.weight.numpy()
    assert w.shape == (500, 40) and w.dtype == np.float32
    assert abs(w.mean()) < 0.02 and w.std() == pytest.approx(1.0, rel=0.02)  # N(0, 1), 20,000 draws
    ids = np.array([[3, 1, 3], [0, 499, 2]])
    out = emb(ids)
    assert out.shape == (2, 3, 40)
    np.testing.assert_array_equal(out.numpy(), w[ids])
    np.testing.assert_array_equal(emb(tinyattn.tensor(ids)).numpy(), w[ids])  # Tensor ids work too


def test_embedding_gradient_accumulates_repeated_ids(float64):
    emb = nn.Embedding(5, 3)
    ids = np.array([[1, 4, 1], [1, 0, 4]])
    assert gradcheck(lambda w: emb(ids), [emb.weight])
    emb.weight.grad = None
    emb(ids).sum().backward()
    np.testing.assert_array_equal(emb.weight.grad.numpy()[:, 0], [1, 3, 0, 0, 2])  # how often each id appears


def test_functional_embedding_is_the_layer_and_gradchecks():
    w = tinyattn.tensor(np.random.default_rng(3).standard_normal((5, 3)), requires_grad=True)
    ids = np.array([[0, 4, 4], [2, 0, 1]])
    np.testing.assert_array_equal(F.embedding(ids, w).numpy(), w.numpy()[ids])  # (2, 3) ids -> (2, 3, 3)
    assert gradcheck(lambda t: F.embedding(ids, t), [w])  # rows 0 and 4 are picked twice: their gradients add
    with pytest.raises(ValueError, match=r"embedding: weight must be 2-D"):
        F.embedding(ids, w[0])


def test_embedding_errors():
    emb = nn.Embedding(10, 4)
    with pytest.raises(TypeError, match=r"embedding: input must be integer ids .*got dtype float64"):
        emb(np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"embedding: input holds id 10 at position \(0, 1\), outside \[0, 9\] "
                                         r"\(num_embeddings=10\)$"):
        emb(np.array([[1, 10]]))
    with pytest.raises(ValueError, match=r"holds id -1 at position \(0,\), outside \[0, 9\]"):
        emb(np.array([-1, 2]))
    with pytest.raises(ValueError, match=r"holds id 12 at position \(1,\)"):  # the first bad id, not the largest
        F.embedding(np.array([3, 12, 15]), emb.weight)


# ---------------------------------------------------------------- LayerNorm
def test_layernorm_init_and_forward():
    ln = nn.LayerNorm(6)
    np.testing.assert_array_equal(ln.weight.numpy(), np.ones(6))
    np.testing.assert_array_equal(ln.bias.numpy(), np.zeros(6))
    x = tinyattn.randn(3, 4, 6) * 5 + 2
    y = ln(x).numpy()
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-5)
    np.testing.assert_allclose(y.std(-1), 1, rtol=1e-3)
    ln.weight.data[:] = 2.0
    ln.bias.data[:] = -1.0
    np.testing.assert_allclose(ln(x).numpy(), 2 * y - 1, rtol=1e-5, atol=1e-5)


def test_layernorm_gradcheck(float64):
    ln = nn.LayerNorm(5)
    ln.weight.data[:] = tinyattn.get_rng().standard_normal(5)  # away from the init, so weight matters
    ln.bias.data[:] = tinyattn.get_rng().standard_normal(5)
    x = t64(2, 3, 5)
    assert gradcheck(lambda x, w, b: ln(x), [x, ln.weight, ln.bias])


def test_layernorm_without_affine_has_no_parameters():
    ln = nn.LayerNorm((2, 3), elementwise_affine=False)
    assert list(ln.parameters()) == []
    x = tinyattn.randn(4, 2, 3)
    np.testing.assert_allclose(ln(x).numpy(), F.layer_norm(x, (2, 3)).numpy())


def test_layernorm_error_names_shapes():
    with pytest.raises(ValueError, match=r"layer_norm: expected input with trailing shape \(8,\).*got shape \(2, 5, 7\)"):
        nn.LayerNorm(8)(tinyattn.randn(2, 5, 7))


# ---------------------------------------------------------------- Dropout, ReLU, GELU
def test_dropout_module_train_vs_eval():
    drop = nn.Dropout(0.5)
    x = tinyattn.ones(50, 40)
    y = drop(x).numpy()
    assert set(np.unique(y)) == {0.0, 2.0}
    assert abs((y == 0).mean() - 0.5) < 0.03
    drop.eval()
    np.testing.assert_array_equal(drop(x).numpy(), x.numpy())
    drop.train()
    assert (drop(x).numpy() == 0).any()


def test_dropout_module_deterministic_and_validates_p():
    x = tinyattn.ones(8, 8)
    tinyattn.manual_seed(1)
    a = nn.Dropout(0.3)(x).numpy()
    tinyattn.manual_seed(1)
    b = nn.Dropout(0.3)(x).numpy()
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match=r"got p=1"):
        nn.Dropout(1.0)
    assert repr(nn.Dropout(0.1)) == "Dropout(p=0.1)"


def test_relu_and_gelu_modules_match_functional(float64):
    x = t64(3, 4)
    np.testing.assert_array_equal(nn.ReLU()(x).numpy(), np.maximum(x.numpy(), 0))
    np.testing.assert_array_equal(nn.GELU()(x).numpy(), F.gelu(x, approximate="none").numpy())  # PyTorch's default
    np.testing.assert_array_equal(nn.GELU("tanh")(x).numpy(), F.gelu(x, approximate="tanh").numpy())
    assert not np.array_equal(nn.GELU()(x).numpy(), nn.GELU("tanh")(x).numpy())
    assert repr(nn.GELU()) == "GELU(approximate='none')"
    assert gradcheck(nn.GELU(), [x])
    assert gradcheck(nn.GELU(approximate="tanh"), [x])
    with pytest.raises(ValueError, match="approximate"):
        nn.GELU("erf")
    assert list(nn.ReLU().parameters()) == [] and repr(nn.ReLU()) == "ReLU()"


def test_small_mlp_gradcheck_end_to_end(float64):
    mlp = nn.Sequential(nn.Linear(3, 5), nn.GELU(), nn.LayerNorm(5), nn.Linear(5, 4))
    x = t64(2, 3)
    targets = np.array([1, 3])
    params = list(mlp.parameters())
    assert gradcheck(lambda x, *ps: F.cross_entropy(mlp(x), targets), [x, *params])
