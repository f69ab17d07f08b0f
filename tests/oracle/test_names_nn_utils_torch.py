"""torch.nn.utils' clip_grad_value_, parameters_to_vector, vector_to_parameters and
nn.utils.parametrizations.weight_norm / spectral_norm against PyTorch 2.13 (values, names, every gradient in
float64, errors); and the parametrizations tutorial's calls (Symmetric, Skew, Cayley map, matrix exponential,
eigvalsh, right_inverse, remove_parametrizations), run on both libraries from the same numbers."""
import importlib

import numpy as np
import pytest
import torch

import tinyattn

rng = np.random.default_rng(5)
WEIGHT, BIAS, X = rng.standard_normal((3, 4)), rng.standard_normal(3), rng.standard_normal((5, 4))


def utils(lib, sub=""):
    return importlib.import_module(lib.__name__ + ".nn.utils" + sub)


def linear(lib):
    layer = lib.nn.Linear(4, 3).double()
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(WEIGHT))
        layer.bias.copy_(lib.tensor(BIAS))
    return layer


def test_clip_grad_value_and_the_vector_round_trip_match():
    out = {}
    for lib in (torch, tinyattn):
        layer = linear(lib)
        (layer(lib.tensor(X)) ** 2).sum().backward()
        r1 = utils(lib).clip_grad_value_(layer.parameters(), 1.5)
        g1 = [p.grad.numpy().copy() for p in layer.parameters()]
        r2 = utils(lib).clip_grad_value_(layer.weight, -0.25)  # min > max: clamp gives max everywhere
        vec = utils(lib).parameters_to_vector(layer.parameters())
        (vec * lib.arange(15.0, dtype=lib.float64)).sum().backward()
        utils(lib).vector_to_parameters(lib.arange(16.0, dtype=lib.float64), layer.parameters())  # tail unused
        out[lib.__name__] = (r1, r2, g1, layer.weight.grad.numpy(), vec.detach().numpy(), str(vec.dtype)[-7:],
                             layer.weight.detach().numpy(), layer.bias.detach().numpy(), layer.bias.grad.numpy())
    for got, want in zip(out["tinyattn"], out["torch"]):
        if isinstance(want, list):
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-12)
        elif isinstance(want, np.ndarray):
            np.testing.assert_allclose(got, want, rtol=1e-12)
        else:
            assert got == want
    for lib in (torch, tinyattn):
        with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
            utils(lib).vector_to_parameters([1.0], linear(lib).parameters())


@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm_names_values_and_gradients_match(dim):
    out = {}
    for lib in (torch, tinyattn):
        layer = utils(lib, ".parametrizations").weight_norm(linear(lib), dim=dim)
        names = [n for n, _ in layer.named_parameters()]
        g, v = layer.parametrizations.weight.original0, layer.parametrizations.weight.original1
        y = layer(lib.tensor(X))
        (y * lib.tensor(np.sin(np.arange(15.0)).reshape(5, 3))).sum().backward()
        out[lib.__name__] = (names, type(layer).__name__, tuple(g.shape), g.detach().numpy(), y.detach().numpy(),
                             g.grad.numpy(), v.grad.numpy(), layer.bias.grad.numpy())
    got, want = out["tinyattn"], out["torch"]
    assert got[:3] == want[:3]
    for a, b in zip(got[3:], want[3:]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("make,dim", [(lambda l: l.nn.Linear(4, 3), None), (lambda l: l.nn.Conv2d(2, 3, 2), None),
                                      (lambda l: l.nn.ConvTranspose1d(2, 3, 2), None),
                                      (lambda l: l.nn.Conv1d(2, 3, 2), 2)])
def test_spectral_norm_from_the_same_u_v_matches_in_training_and_eval(make, dim):
    torch.manual_seed(0)
    ref = utils(torch, ".parametrizations").spectral_norm(make(torch).double(), dim=dim)
    mine = make(tinyattn).double()
    with tinyattn.no_grad():
        mine.weight.copy_(tinyattn.tensor(ref.parametrizations.weight.original.detach().numpy()))
    mine = utils(tinyattn, ".parametrizations").spectral_norm(mine, dim=dim)
    assert [n for n, _ in mine.named_buffers()] == [n for n, _ in ref.named_buffers()]
    for name in ("_u", "_v"):  # start both from PyTorch's u, v (the random start differs)
        getattr(mine.parametrizations.weight[0], name).copy_(
            tinyattn.tensor(getattr(ref.parametrizations.weight[0], name).numpy()))
    for mode in ("train", "eval", "train"):
        for lib, m in ((torch, ref), (tinyattn, mine)):
            getattr(m, mode)()
            m.zero_grad()
        ws = [m.weight for m in (ref, mine)]
        np.testing.assert_allclose(ws[1].detach().numpy(), ws[0].detach().numpy(), rtol=1e-10)
        upstream = np.cos(np.arange(ws[0].numel())).reshape(tuple(ws[0].shape))
        for lib, w, m in ((torch, ws[0], ref), (tinyattn, ws[1], mine)):
            (w * lib.tensor(upstream)).sum().backward()
        np.testing.assert_allclose(mine.parametrizations.weight.original.grad.numpy(),
                                   ref.parametrizations.weight.original.grad.numpy(), rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(mine.parametrizations.weight[0]._u.numpy(),
                                   ref.parametrizations.weight[0]._u.numpy(), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("call", [
    lambda l: utils(l, ".parametrizations").spectral_norm(l.nn.Linear(4, 3), n_power_iterations=0),
    lambda l: utils(l, ".parametrizations").spectral_norm(l.nn.Linear(4, 3), name="nope"),
    lambda l: utils(l, ".parametrizations").spectral_norm(l.nn.Linear(4, 3), dim=2),
    lambda l: utils(l, ".parametrizations").weight_norm(l.nn.Linear(4, 3), name="nope"),
])
def test_errors_match(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(tinyattn)
    assert str(got.value) == str(want.value)


def tutorial(lib):
    """The parametrizations tutorial's steps, with its random matrices drawn by NumPy so both see the same."""
    nn, P = lib.nn, utils(lib, ".parametrize")
    r = np.random.default_rng(11)

    def put(layer, n):
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(r.uniform(-0.5, 0.5, (n, n)), dtype=lib.float32))
        return layer

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    class Skew(nn.Module):
        def forward(self, X):
            A = X.triu(1)
            return A - A.transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu(1)

    class CayleyMap(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.register_buffer("Id", lib.eye(n))

        def forward(self, X):
            return lib.linalg.solve(self.Id - X, self.Id + X)

        def right_inverse(self, A):
            return lib.linalg.solve(A + self.Id, self.Id - A)

    class MatrixExponential(nn.Module):
        def forward(self, X):
            return lib.matrix_exp(X)

    seen = []
    layer = put(nn.Linear(3, 3), 3)
    P.register_parametrization(layer, "weight", Skew())
    P.register_parametrization(layer, "weight", CayleyMap(3))
    X = layer.weight
    seen += [X.detach().numpy(), lib.dist(X.T @ X, lib.eye(3)).item() < 1e-5]
    orth = put(nn.Linear(3, 3), 3)
    P.register_parametrization(orth, "weight", Skew())
    P.register_parametrization(orth, "weight", MatrixExponential())
    X = orth.weight
    (X * lib.arange(9.0).reshape(3, 3)).sum().backward()
    seen += [X.detach().numpy(), orth.parametrizations.weight.original.grad.numpy()]
    spd = put(nn.Linear(3, 3), 3)
    P.register_parametrization(spd, "weight", Symmetric())
    P.register_parametrization(spd, "weight", MatrixExponential())
    X = spd.weight
    ev = lib.linalg.eigvalsh(X)
    ev.sum().backward()
    seen += [lib.dist(X, X.T).item(), bool((ev > 0.0).all()), ev.detach().numpy(),
             spd.parametrizations.weight.original.grad.numpy()]
    cay = put(nn.Linear(3, 3), 3)
    P.register_parametrization(cay, "weight", Skew())
    P.register_parametrization(cay, "weight", CayleyMap(3))
    Q = lib.tensor(np.linalg.qr(r.standard_normal((3, 3)))[0], dtype=lib.float32)
    if Q.det() < 0.0:
        Q[0].neg_()
    cay.weight = Q
    seen += [lib.dist(cay.weight, Q).item() < 1e-5, cay.parametrizations.weight.original.detach().numpy()]
    P.remove_parametrizations(cay, "weight", leave_parametrized=False)
    seen += [type(cay).__name__, cay.weight.detach().numpy()]
    return seen


def test_the_parametrizations_tutorial_gives_pytorchs_numbers():
    want, got = tutorial(torch), tutorial(tinyattn)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        if isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6, err_msg=f"step {i}")
        elif isinstance(w, float):
            assert abs(g - w) < 1e-5, i
        else:
            assert g == w, (i, g, w)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_the_deprecated_hook_weight_norm_matches(dim):
    out = {}
    for lib in (torch, tinyattn):
        with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
            layer = lib.nn.utils.weight_norm(linear(lib), dim=dim)
        names = [n for n, _ in layer.named_parameters()]
        y = layer(lib.tensor(X))
        (y * lib.tensor(np.sin(np.arange(15.0)).reshape(5, 3))).sum().backward()
        grads = [layer.weight_g.grad.numpy(), layer.weight_v.grad.numpy()]
        with lib.no_grad():
            layer.weight_g.mul_(2.0)
        y2 = layer(lib.tensor(X)).detach().numpy()  # the hook recomputes weight from the new g
        lib.nn.utils.remove_weight_norm(layer)
        after = ([n for n, _ in layer.named_parameters()], type(layer.weight).__name__, layer.weight.detach().numpy())
        with pytest.raises(ValueError) as err:
            lib.nn.utils.remove_weight_norm(layer)
        out[lib.__name__] = (names, after[:2], str(err.value), y.detach().numpy(), *grads, y2, after[2])
    got, want = out["tinyattn"], out["torch"]
    assert got[:3] == want[:3]
    for a, b in zip(got[3:], want[3:]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("make", [lambda l: l.nn.Linear(4, 3), lambda l: l.nn.ConvTranspose1d(2, 3, 2),
                                  lambda l: l.nn.Conv2d(2, 3, 2)])
def test_the_hook_spectral_norm_from_the_same_u_v_matches(make):
    torch.manual_seed(1)
    ref = torch.nn.utils.spectral_norm(make(torch).double(), n_power_iterations=2)
    mine = make(tinyattn).double()
    with tinyattn.no_grad():
        mine.weight.copy_(tinyattn.tensor(ref.weight_orig.detach().numpy()))
        mine.bias.copy_(tinyattn.tensor(ref.bias.detach().numpy()))
    mine = tinyattn.nn.utils.spectral_norm(mine, n_power_iterations=2)
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in ref.named_parameters()]
    assert list(mine.state_dict()) == list(ref.state_dict())
    for name in ("weight_u", "weight_v"):
        getattr(mine, name).copy_(tinyattn.tensor(getattr(ref, name).numpy()))
    np.testing.assert_array_equal(mine.weight.numpy(), ref.weight.detach().numpy())  # the raw weight until a forward
    shape = {2: (2, 4), 3: (2, 2, 5), 4: (2, 2, 4, 4)}[ref.weight_orig.ndim]
    x = np.random.default_rng(0).standard_normal(shape)
    for mode in ("train", "train", "eval"):
        outs = []
        for lib, m in ((torch, ref), (tinyattn, mine)):
            getattr(m, mode)()
            m.zero_grad()
            y = m(lib.tensor(x))
            (y * lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))).sum().backward()
            outs.append((y.detach().numpy(), m.weight_orig.grad.numpy(), m.weight_u.numpy(), m.weight_v.numpy()))
        for g, w in zip(outs[1], outs[0]):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-13)
    for lib, m in ((torch, ref), (tinyattn, mine)):
        lib.nn.utils.remove_spectral_norm(m)
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in ref.named_parameters()]
    assert [n for n, _ in mine.named_buffers()] == []
    np.testing.assert_allclose(mine.weight.detach().numpy(), ref.weight.detach().numpy(), rtol=1e-10)
