"""Every reduction called with the tensor as the keyword input= (torch.sum(input=x, dim=1)), against PyTorch 2.13:
values, dtypes, the gradient, and the same calls with NumPy's axis=/keepdims= names where PyTorch takes them."""
import numpy as np
import pytest
import torch

import tinyattn

X = np.array([[1.0, 5.0, 2.0], [4.0, 0.0, 3.0]])
OTHER = np.array([3.0, 2.0, 2.5])
CALLS = {
    "sum": dict(dim=1), "mean": dict(dim=0, keepdim=True), "amax": dict(dim=1), "amin": dict(dim=0),
    "logsumexp": dict(dim=1), "std": dict(dim=1), "var": dict(dim=0), "nansum": {},
    "max": dict(other=OTHER), "min": dict(dim=1), "argmax": dict(dim=1), "argmin": {},
    "all": dict(dim=1), "any": {},
}


def run(lib, name, kwargs, numpy_names=False):
    boolean = name in ("all", "any")
    x = lib.tensor(X > 2 if boolean else X, requires_grad=not boolean and not name.startswith("arg"))
    kw = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    if numpy_names:
        kw = {{"dim": "axis", "keepdim": "keepdims"}.get(k, k): v for k, v in kw.items()}
    try:
        out = getattr(lib, name)(input=x, **kw)
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return ("raises", type(e).__name__)
    out = out[0] if isinstance(out, tuple) else out
    grad = None
    if out.requires_grad:
        out.sum().backward()
        grad = x.grad.numpy().tolist()
    return out.detach().numpy().tolist(), str(out.dtype).split(".")[-1], grad


@pytest.mark.parametrize("name", sorted(CALLS))
def test_reduction_takes_input_by_keyword_as_pytorch(name):
    want = run(torch, name, CALLS[name])
    assert want[0] != "raises"  # (PyTorch takes input= for every one of these)
    got = run(tinyattn, name, CALLS[name])
    assert got[1] == want[1]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    if want[2] is not None:
        np.testing.assert_allclose(got[2], want[2], rtol=1e-12)


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "std", "logsumexp", "all"])
def test_numpy_names_beside_input_keyword(name):
    want, got = run(torch, name, CALLS[name], True), run(tinyattn, name, CALLS[name], True)
    assert (want[0] == "raises") == (got[0] == "raises")
    if want[0] != "raises":
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
