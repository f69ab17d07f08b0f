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
