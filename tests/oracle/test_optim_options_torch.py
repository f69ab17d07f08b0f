"""Optimizer keywords against PyTorch: amsgrad, maximize, decoupled_weight_decay, fused/foreach; same steps."""
import numpy as np
import pytest
import torch

import tinyattn

CASES = [
    ("Adam", dict(lr=1e-2, weight_decay=0.1, amsgrad=True)),
    ("Adam", dict(lr=1e-2, betas=(0.8, 0.5), amsgrad=True, maximize=True)),
    ("Adam", dict(lr=1e-2, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=6e-4, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1, fused=False)),  # build-nanogpt
    ("AdamW", dict(lr=1e-2, amsgrad=True, maximize=True, foreach=False)),
    ("AdamW", dict(lr=1e-2, fused=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01, maximize=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, foreach=False)),
]


@pytest.mark.parametrize("name,kw", CASES)
def test_steps_and_options_match_pytorch(name, kw):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((3, 4))
    grads = [rng.standard_normal((3, 4)) * s for s in (1.0, 0.1, 0.01, 2.0)]
    out, groups = {}, {}
    for lib in (torch, tinyattn):
        w = lib.nn.Parameter(lib.tensor(w0.copy()))
        opt = getattr(lib.optim, name)([w], **kw)
        for g in grads:
            w.grad = lib.tensor(g.copy())
            opt.step()
        out[lib.__name__] = w.detach().numpy()
        groups[lib.__name__] = {k: v for k, v in opt.param_groups[0].items() if k != "params"}
    np.testing.assert_allclose(out["tinyattn"], out["torch"], rtol=0, atol=1e-14)
    assert groups["tinyattn"] == groups["torch"]  # the same options, under the same names
