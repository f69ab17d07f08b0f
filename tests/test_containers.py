"""ModuleDict, ParameterList, ParameterDict and LazyLinear: registration, names, errors."""
import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn
from tinyattn import optim


class GPTish(nn.Module):
    """The layout a GPT often uses: a ModuleDict of embeddings, blocks and a final norm, a tied head."""

    def __init__(self):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(7, 4),
            h=nn.ModuleList([nn.Linear(4, 4) for _ in range(2)]),
            ln_f=nn.LayerNorm(4),
        ))
        self.lm_head = nn.Linear(4, 7, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied

    def forward(self, idx):
        x = self.transformer.wte(idx)
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer["ln_f"](x))


def test_module_dict_registers_entries_under_their_keys():
    m = GPTish()
    assert list(m.transformer.keys()) == ["wte", "h", "ln_f"]
    assert m.transformer["h"] is m.transformer.h and "ln_f" in m.transformer and len(m.transformer) == 3
    names = [n for n, _ in m.named_parameters()]
    assert names == ["transformer.wte.weight", "transformer.h.0.weight", "transformer.h.0.bias",
                     "transformer.h.1.weight", "transformer.h.1.bias", "transformer.ln_f.weight",
                     "transformer.ln_f.bias"]  # the tied head weight is listed once, under its first name
    assert "lm_head.weight" in m.state_dict() and "transformer.wte.weight" in m.state_dict()
    assert m(np.array([[1, 2, 3]])).shape == (1, 3, 7)
    m.eval()
    assert not m.transformer.h[1].training


def test_module_dict_editing_and_order():
    d = nn.ModuleDict([("b", nn.ReLU()), ("a", nn.Identity())])  # pairs keep their order
    assert list(d) == ["b", "a"]
    d["c"] = nn.Linear(2, 2)
    d.update({"b": nn.GELU()})  # an existing key is replaced
    assert [type(v).__name__ for v in d.values()] == ["GELU", "Identity", "Linear"]
    popped = d.pop("a")
    assert isinstance(popped, nn.Identity) and list(d) == ["b", "c"] and not hasattr(d, "a")
    del d["b"]
    assert [k for k, _ in d.items()] == ["c"] and len(list(d.parameters())) == 2
    d.clear()
    assert len(d) == 0 and list(d.parameters()) == []


def test_module_dict_errors():
    d = nn.ModuleDict()
    with pytest.raises(TypeError, match="ModuleDict holds Modules, got int for key 'x'"):
        d["x"] = 3
    with pytest.raises(TypeError, match="keys must be strings, got int"):
        d[0] = nn.ReLU()
    with pytest.raises(KeyError, match="contain '.'"):
        d["a.b"] = nn.ReLU()
    with pytest.raises(KeyError, match="'keys' is already the name of an attribute"):
        d["keys"] = nn.ReLU()
    with pytest.raises(KeyError, match=r"no key 'nope'; its keys are \[\]"):
        d["nope"]
    with pytest.raises(NotImplementedError, match="no forward"):
        d(1)
    with pytest.raises(TypeError, match="expects a dict"):
        nn.ModuleDict(nn.ReLU())


def test_parameter_list_and_dict_register_and_train():
    class Scales(nn.Module):
        def __init__(self):
            super().__init__()
            self.per_layer = nn.ParameterList([nn.Parameter(np.ones(2)), tinyattn.zeros(3, dtype=np.float64)])
            self.gains = nn.ParameterDict({"alpha": nn.Parameter(np.full(2, 2.0))})

    m = Scales()
    assert isinstance(m.per_layer[1], nn.Parameter) and m.per_layer[1].requires_grad  # a Tensor is wrapped
    assert list(m.state_dict()) == ["per_layer.0", "per_layer.1", "gains.alpha"]
    m.gains["beta"] = nn.Parameter(np.zeros(1))
    assert m.gains.beta is m.gains["beta"] and list(m.gains) == ["alpha", "beta"]
    m.per_layer.append(nn.Parameter(np.zeros(1)))
    assert len(m.per_layer) == 3 and m.per_layer[-1] is list(m.per_layer)[2]
    assert isinstance(m.per_layer[:2], nn.ParameterList) and len(m.per_layer[:2]) == 2
    opt = optim.SGD(m.parameters(), lr=0.5)
    loss = (m.per_layer[0] * m.gains["alpha"]).sum() + m.per_layer[1].sum()
    loss.backward()
    opt.step()
    np.testing.assert_allclose(m.per_layer[0].numpy(), [0.0, 0.0])  # 1 - 0.5 * 2
    np.testing.assert_allclose(m.gains["alpha"].numpy(), [1.5, 1.5])  # 2 - 0.5 * 1
    np.testing.assert_allclose(m.per_layer[1].numpy(), [-0.5] * 3)
    m.per_layer[0] = nn.Parameter(np.full(2, 9.0))
    assert list(m.state_dict())[0] == "per_layer.0" and m.state_dict()["per_layer.0"][0] == 9.0
    assert "(alpha): Parameter containing: [float64 of size (2,)]" in repr(m)


def test_parameter_containers_errors():
    with pytest.raises(TypeError, match="ParameterList holds Parameters .* got ndarray"):
        nn.ParameterList([np.zeros(2)])
    with pytest.raises(TypeError, match="ParameterDict holds Parameters .* got float"):
        nn.ParameterDict({"a": 1.0})
    with pytest.raises(IndexError, match="ParameterList index 2 is out of range for length 1"):
        nn.ParameterList([nn.Parameter(np.zeros(1))])[2]
    with pytest.raises(KeyError, match="'update' is already the name"):
        nn.ParameterDict({"update": nn.Parameter(np.zeros(1))})


def test_lazy_linear_reads_in_features_from_its_first_input():
    tinyattn.manual_seed(3)
    lazy = nn.LazyLinear(5)
    assert lazy.weight.shape == (5, 0) and "in_features=0" in repr(lazy)
    opt = optim.SGD(lazy.parameters(), lr=0.1)  # built before the first forward
    w_obj, b_obj = lazy.weight, lazy.bias
    state = tinyattn.get_rng().bit_generator.state
    x = tinyattn.ones(2, 3)
    y = lazy(x)
    assert y.shape == (2, 5) and type(lazy) is nn.Linear and lazy.in_features == 3
    assert lazy.weight is w_obj and lazy.bias is b_obj and lazy.weight.shape == (5, 3)
    tinyattn.get_rng().bit_generator.state = state  # the same draws as a Linear(3, 5) made at that moment
    ref = nn.Linear(3, 5)
    np.testing.assert_array_equal(lazy.weight.numpy(), ref.weight.numpy())
    np.testing.assert_array_equal(lazy.bias.numpy(), ref.bias.numpy())
    y.sum().backward()
    opt.step()  # the optimizer built earlier updates the materialised weights
    np.testing.assert_allclose(lazy.bias.numpy(), ref.bias.numpy() - 0.1 * 2, rtol=1e-6)
    assert nn.LazyLinear(2, bias=False)(tinyattn.ones(4, 6)).shape == (4, 2)
    with pytest.raises(ValueError, match="non-empty last dim"):
        nn.LazyLinear(2)(tinyattn.ones(4, 0))
    with pytest.raises(ValueError, match="out_features must be a positive int, got out_features=0"):
        nn.LazyLinear(0)
