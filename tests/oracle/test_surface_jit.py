"""torch.jit: a scripted or traced model computes what PyTorch's scripted one does (same weights)."""
import numpy as np
import torch

import tinyattn


def _model(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 2)

        @lib.jit.ignore
        def helper(self) -> int:
            return 1

        @lib.jit.export
        def twice(self, x):
            return self.lin(x) * 2

        def forward(self, x):
            return self.lin(x).relu()
    return Net()


def test_scripted_and_traced_models_match_pytorchs():
    theirs, mine = _model(torch).double(), _model(tinyattn).double()
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 3))
    st, sm = torch.jit.script(theirs), tinyattn.jit.script(mine)
    tt, tm = torch.jit.trace(theirs, torch.tensor(x)), tinyattn.jit.trace(mine, tinyattn.tensor(x))
    for a, b in ((sm, st), (tm, tt)):
        np.testing.assert_allclose(a(tinyattn.tensor(x)).detach().numpy(), b(torch.tensor(x)).detach().numpy(),
                                   rtol=1e-14)
    np.testing.assert_allclose(sm.twice(tinyattn.tensor(x)).detach().numpy(),
                               st.twice(torch.tensor(x)).detach().numpy(), rtol=1e-14)
    assert torch.jit.is_scripting() is tinyattn.jit.is_scripting() is False
