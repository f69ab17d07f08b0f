"""More idioms met in public teaching code, against PyTorch: einsum's dtypes over mixed operands."""
import numpy as np
import pytest
import torch

import tinyattn

EQUATIONS = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk->ijk", [(2, 3), (3, 4)]), ("ij,ij->ij", [(2, 3), (2, 3)]),
             ("ij,ij->i", [(2, 3), (2, 3)]), ("ij,k->i", [(2, 3), (4,)]), ("ij,j->i", [(2, 3), (3,)]),
             ("bld,dn->bldn", [(2, 3, 4), (4, 5)]), ("ii,i->i", [(3, 3), (3,)]), ("ij,k", [(2, 3), (4,)]),
             ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("ij,jk,ik->ijk", [(2, 3), (3, 4), (2, 4)]),
             ("ij,kl,jl->ik", [(2, 3), (4, 5), (3, 5)]), ("ii", [(3, 3)]), ("ij->", [(2, 3)])]
DTYPES = [("float64",), ("int64",), ("bool",), ("float64", "float32"), ("float32", "float64"), ("int64", "float32"),
          ("bool", "bool"), ("uint8", "bool"), ("float32", "float64", "float64"), ("float64", "float64", "float32"),
          ("float32", "float32", "float64"), ("int64", "float32", "float64")]


@pytest.mark.parametrize("eq,shapes,dts", [(e, s, d) for e, s in EQUATIONS for d in DTYPES if len(d) == len(s)])
def test_einsum_dtype_values_gradients_or_error_match_pytorch(eq, shapes, dts):
    rng = np.random.default_rng(len(eq))
    arrays = [rng.standard_normal(s) * 3 for s in shapes]
    out = {}
    for lib in (torch, tinyattn):
        ops = [lib.tensor(a).to(getattr(lib, d)) for a, d in zip(arrays, dts)]
        for t in ops:
            if t.dtype.is_floating_point if lib is torch else t.dtype.kind == "f":
                t.requires_grad_(True)
        try:
            r = lib.einsum(eq, *ops)
        except RuntimeError as e:
            out[lib.__name__] = ("raises", type(e))
            continue
        grads = None
        if r.requires_grad:
            (r * lib.tensor(np.ones(r.shape) * 0.5).to(r.dtype)).sum().backward()
            grads = [None if t.grad is None else (str(t.grad.dtype).split(".")[-1], t.grad.double().numpy()) for t in ops]
        out[lib.__name__] = (str(r.dtype).split(".")[-1], r.double().detach().numpy(), grads)
    want, got = out["torch"], out["tinyattn"]
    assert got[0] == want[0]
    if want[0] != "raises":
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
        assert (got[2] is None) == (want[2] is None)
        for g, w in zip(got[2] or [], want[2] or []):
            assert (g is None) == (w is None)  # (an int operand gets no gradient)
            if g is None:
                continue
            assert g[0] == w[0]
            np.testing.assert_allclose(g[1], w[1], rtol=1e-5)


def _scenario(lib, leave):
    """A LoRA-like run: register (with right_inverse), chain a second, learn one SGD step, assign through
    right_inverse, remove; everything a learner can see is recorded."""
    import importlib
    P = importlib.import_module(lib.__name__ + ".nn.utils.parametrize")
    nn = lib.nn
    rng = np.random.default_rng(0)

    class Scaled(nn.Module):
        def __init__(self, s):
            super().__init__()
            self.s = nn.Parameter(lib.tensor(s, dtype=lib.float64))

        def forward(self, w):
            return self.s * w

        def right_inverse(self, w):
            return w / self.s

    class LowRank(nn.Module):  # W + B @ A, no right_inverse
        def __init__(self):
            super().__init__()
            self.A = nn.Parameter(lib.tensor(rng.standard_normal((2, 3))))
            self.B = nn.Parameter(lib.tensor(rng.standard_normal((4, 2))))

        def forward(self, w):
            return w + self.B @ self.A

    lin = nn.Linear(3, 4).double()
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(rng.standard_normal((4, 3))))
        lin.bias.copy_(lib.tensor(rng.standard_normal(4)))
    seen = {}
    P.register_parametrization(lin, "weight", Scaled(2.0))
    P.register_parametrization(lin, "weight", LowRank())
    seen["class"] = type(lin).__name__
    seen["names"] = [n for n, _ in lin.named_parameters()]
    seen["keys"] = list(lin.state_dict())
    seen["weight"] = lin.weight.detach().numpy().copy()
    opt = lib.optim.SGD(lin.parameters(), lr=0.1)
    x = lib.tensor(rng.standard_normal((5, 3)))
    (lin(x) ** 2).sum().backward()
    seen["grads"] = {n: p.grad.numpy().copy() for n, p in lin.named_parameters()}
    opt.step()
    seen["stepped"] = lin.weight.detach().numpy().copy()
    try:
        lin.weight = lib.ones(4, 3, dtype=lib.float64)
        seen["assign"] = "ok"
    except RuntimeError as e:
        seen["assign"] = str(e)
    P.remove_parametrizations(lin, "weight", leave_parametrized=leave)
    seen["after"] = (type(lin).__name__, [n for n, _ in lin.named_parameters()], lin.weight.detach().numpy().copy())
    return seen


@pytest.mark.parametrize("leave", [True, False])
def test_parametrize_scenario_matches_pytorch(leave):
    want, got = _scenario(torch, leave), _scenario(tinyattn, leave)
    for k in ("class", "names", "keys", "assign"):
        assert got[k] == want[k], k
    np.testing.assert_allclose(got["weight"], want["weight"], rtol=1e-13)
    np.testing.assert_allclose(got["stepped"], want["stepped"], rtol=1e-13)
    assert list(got["grads"]) == list(want["grads"])
    for n in want["grads"]:
        np.testing.assert_allclose(got["grads"][n], want["grads"][n], rtol=1e-12, err_msg=n)
    assert got["after"][:2] == want["after"][:2]
    np.testing.assert_allclose(got["after"][2], want["after"][2], rtol=1e-13)


@pytest.mark.parametrize("what", ["shape", "dtype", "name", "not_parametrized"])
def test_parametrize_refusals_match_pytorch(what):
    import importlib
    errors = {}
    for lib in (torch, tinyattn):
        P = importlib.import_module(lib.__name__ + ".nn.utils.parametrize")

        class Bad(lib.nn.Module):
            def forward(self, w):
                return w[:1] if what == "shape" else w.double()

        lin = lib.nn.Linear(3, 2)
        try:
            if what == "not_parametrized":
                P.remove_parametrizations(lin, "weight")
            else:
                P.register_parametrization(lin, "w" if what == "name" else "weight", Bad())
            errors[lib.__name__] = None
        except Exception as e:  # noqa: BLE001 (the type is what is compared)
            errors[lib.__name__] = type(e)
    assert errors["tinyattn"] is errors["torch"] is ValueError
