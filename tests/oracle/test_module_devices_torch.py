"""Module.cpu/cuda/half/type/requires_grad_ against PyTorch 2.13 (CPU build): returned object, dtypes of every
state entry, which call raises and with what, and the gradients a frozen module lets through."""
import numpy as np
import pytest
import torch

import tinyattn


def _both(build):
    """The same module on both libraries, tinyattn's holding torch's values."""
    t = build(torch)
    a = build(tinyattn)
    a.load_state_dict({k: tinyattn.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, a


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # the error type is what is compared
        return type(e).__name__
    return r


def _dtypes(m):
    return {k: str(v.dtype).split(".")[-1] for k, v in m.state_dict().items()}


@pytest.mark.parametrize("build", [
    lambda L: L.nn.Linear(3, 2), lambda L: L.nn.BatchNorm1d(3), lambda L: L.nn.ReLU(),
    lambda L: L.nn.Sequential(L.nn.Linear(2, 2), L.nn.LayerNorm(2)),
])
@pytest.mark.parametrize("call", ["cpu", "cuda", "cuda0", "half", "type64", "typename", "typeint", "frozen_typeint"])
def test_device_and_dtype_moves_match_pytorch(build, call):
    res = {}
    for lib, m in zip((torch, tinyattn), _both(build)):
        def go():
            if call == "cpu":
                return m.cpu() is m
            if call == "cuda":
                return m.cuda() is m
            if call == "cuda0":
                return m.cuda(0) is m
            if call == "half":
                return m.half() is m
            if call == "type64":
                return m.type(lib.float64) is m
            if call == "typename":
                return m.type("torch.DoubleTensor") is m
            if call == "typeint":
                return m.type(lib.int32) is m
            m.requires_grad_(False)
            return m.type(lib.int32) is m
        res[lib.__name__] = (_outcome(go), _dtypes(m) if call != "typeint" else None)
    assert res["tinyattn"] == res["torch"]


def test_values_survive_type_and_half_as_in_pytorch():
    t, a = _both(lambda L: L.nn.BatchNorm1d(3))
    x = np.random.default_rng(0).standard_normal((4, 3))
    for m, L in ((t, torch), (a, tinyattn)):
        m(L.tensor(x, dtype=L.float32))  # running statistics move
        m.type(L.float64)
    for k, v in t.state_dict().items():
        np.testing.assert_array_equal(a.state_dict()[k].numpy(), v.numpy())
    t.half(); a.half()
    for k, v in t.state_dict().items():
        np.testing.assert_array_equal(a.state_dict()[k].numpy(), v.numpy())


def test_a_frozen_module_passes_gradients_to_its_input_only_as_in_pytorch():
    t, a = _both(lambda L: L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(), L.nn.Linear(4, 2)))
    x = np.random.default_rng(1).standard_normal((5, 3))
    got = {}
    for m, L in ((t, torch), (a, tinyattn)):
        assert m.requires_grad_(False) is m
        m[2].requires_grad_(True)
        xi = L.tensor(x, dtype=L.float32, requires_grad=True)
        (m(xi) ** 2).sum().backward()
        got[L.__name__] = (xi.grad.numpy(), m[2].weight.grad.numpy(), m[0].weight.grad)
    np.testing.assert_allclose(got["tinyattn"][0], got["torch"][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["tinyattn"][1], got["torch"][1], rtol=1e-5, atol=1e-6)
    assert got["tinyattn"][2] is None and got["torch"][2] is None
