"""nn.Module: registration, traversal, train/eval, state_dict/save/load, containers, repr."""
import copy

import numpy as np
import pytest

import tinyattn
import tinyattn.nn as nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.drop = nn.Dropout(0.5)
        self.scale = nn.Parameter(np.ones(d, dtype=np.float32))  # (float64 would make the next Linear refuse its input, as PyTorch)
        self.note = "not a parameter"  # plain attributes stay plain

    def forward(self, x):
        return self.drop(self.norm(self.fc(x))) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(7, 4)
        self.blocks = nn.ModuleList([Block(4), Block(4)])
        self.head = nn.Linear(4, 7, bias=False)
        self.head.weight = self.emb.weight  # tied weights, as in GPT-2

    def forward(self, idx):
        x = self.emb(idx)
        for b in self.blocks:
            x = b(x)
        return self.head(x)


def test_parameter_is_a_float_tensor_requiring_grad():
    p = nn.Parameter([1, 2, 3])
    assert isinstance(p, tinyattn.Tensor)
    assert p.requires_grad and p.dtype == np.float32
    src = np.zeros(3)
    q = nn.Parameter(src)
    src[0] = 5.0
    assert q.numpy()[0] == 0.0 and q.dtype == np.float64  # a copy, float dtype kept
    assert nn.Parameter(tinyattn.ones(2), requires_grad=False).requires_grad is False


def test_named_parameters_dotted_and_tied_listed_once():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == [
        "emb.weight",
        "blocks.0.scale", "blocks.0.fc.weight", "blocks.0.fc.bias", "blocks.0.norm.weight", "blocks.0.norm.bias",
        "blocks.1.scale", "blocks.1.fc.weight", "blocks.1.fc.bias", "blocks.1.norm.weight", "blocks.1.norm.bias",
    ]
    assert net.head.weight is net.emb.weight
    assert len(list(net.parameters())) == 11
    assert net.num_parameters() == 7 * 4 + 2 * (4 + 16 + 4 + 4 + 4)
    assert net.blocks[0].note == "not a parameter"


def test_children_and_modules():
    net = Net()
    assert [type(m).__name__ for m in net.children()] == ["Embedding", "ModuleList", "Linear"]
    mods = list(net.modules())
    assert mods[0] is net
    assert sum(isinstance(m, nn.Linear) for m in mods) == 3
    assert [n for n, _ in net.named_modules()][:4] == ["", "emb", "blocks", "blocks.0"]


def test_assignment_rules_and_clear_errors():
    class Forgot(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(np.ones(2))  # no super().__init__()

    with pytest.raises(AttributeError, match=r"super\(\).__init__\(\)"):
        Forgot()

    class ForgotToo(nn.Module):
        def __init__(self):
            self.n = 3  # a plain attribute slips through, so the mistake shows up later

    with pytest.raises(AttributeError, match=r"never ran; call super\(\).__init__\(\)"):
        list(ForgotToo().parameters())
    lin = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign ndarray to parameter 'weight'"):
        lin.weight = np.zeros((2, 2))
    lin.bias = None  # switching the bias off is allowed
    assert [n for n, _ in lin.named_parameters()] == ["weight"]
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'wieght'"):
        lin.wieght  # noqa: B018
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(1)


def test_zero_grad_and_train_eval_recursive():
    net = Net()
    net(np.array([[1, 2, 3]])).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    assert net.eval() is net
    assert all(not m.training for m in net.modules())
    out1 = net(np.array([[1, 2]])).numpy()
    np.testing.assert_array_equal(out1, net(np.array([[1, 2]])).numpy())  # dropout off: deterministic
    net.train()
    assert all(m.training for m in net.modules())


def test_state_dict_holds_detached_tensors_sharing_the_models_memory_as_in_pytorch():
    net = Net()
    sd = net.state_dict()
    assert "head.weight" in sd and "emb.weight" in sd  # a tied weight appears under each name, as in PyTorch
    assert all(isinstance(v, tinyattn.Tensor) and not v.requires_grad for v in sd.values())
    before = sd["blocks.0.fc.weight"].clone()
    net.blocks[0].fc.weight.data += 1.0  # the model changes: so does its state_dict (same memory)
    np.testing.assert_array_equal(sd["blocks.0.fc.weight"].numpy(), before.numpy() + 1.0)
    with tinyattn.no_grad():
        sd["emb.weight"].copy_(tinyattn.zeros(sd["emb.weight"].shape))  # nanoGPT's from_pretrained writes this way
    assert not net.emb.weight.numpy().any() and not net.head.weight.numpy().any()  # tied: both names, one array
    snapshot = copy.deepcopy(net.state_dict())  # the PyTorch way to keep a state that training will not touch
    net.blocks[0].fc.weight.data -= 5.0
    np.testing.assert_array_equal(snapshot["blocks.0.fc.weight"].numpy(), before.numpy() + 1.0)
    kept = net.state_dict(keep_vars=True)
    assert kept["blocks.0.fc.weight"] is net.blocks[0].fc.weight and kept["emb.weight"].requires_grad
    assert list(net.state_dict(prefix="model.")) == ["model." + k for k in sd]


def test_shared_submodule_listed_once_in_children_but_under_each_name_in_state_dict():
    # PyTorch: named_children()/modules() list a module registered under two names once, while
    # state_dict() does not deduplicate (keys 'a.weight' AND 'alias.weight'), so its state dicts load here.
    class Shared(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 3)
            self.b = nn.Linear(3, 1)
            self.alias = self.a

    m = Shared()
    assert [n for n, _ in m.named_children()] == ["a", "b"]
    assert [n for n, _ in m.named_modules()] == ["", "a", "b"]
    calls = []
    m.apply(lambda mod: calls.append(type(mod).__name__))
    assert calls == ["Linear", "Linear", "Shared"]  # the shared Linear once
    sd = m.state_dict()
    assert list(sd) == ["a.weight", "a.bias", "b.weight", "b.bias", "alias.weight", "alias.bias"]
    np.testing.assert_array_equal(sd["alias.weight"], m.a.weight.numpy())
    sd["a.weight"] = sd["alias.weight"] = np.full((3, 2), 0.5)
    m.load_state_dict(sd)  # every key is expected: no 'unexpected keys alias.*'
    np.testing.assert_array_equal(m.alias.weight.numpy(), np.full((3, 2), 0.5))


def test_load_state_dict_round_trip_keeps_parameter_objects():
    tinyattn.manual_seed(1)
    a = Net().eval()
    tinyattn.manual_seed(2)
    b = Net().eval()
    idx = np.array([[0, 3, 6, 2]])
    assert not np.allclose(a(idx).numpy(), b(idx).numpy())
    w_obj = b.blocks[1].fc.weight
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"  # what a notebook cell prints, as in PyTorch
    assert b.blocks[1].fc.weight is w_obj  # loaded in place: an optimizer over b keeps working
    np.testing.assert_array_equal(a(idx).numpy(), b(idx).numpy())


def test_load_state_dict_errors_and_no_partial_write():
    net = Net()
    sd = net.state_dict()
    original = net.emb.weight.numpy().copy()
    missing = {k: v for k, v in sd.items() if k != "blocks.1.fc.bias"}
    with pytest.raises(ValueError, match=r"missing keys \['blocks.1.fc.bias'\]"):
        net.load_state_dict(missing)
    with pytest.raises(ValueError, match=r"unexpected keys \['extra'\]"):
        net.load_state_dict({**sd, "extra": np.zeros(1)})
    bad = {k: (v + 1 if k == "emb.weight" else v) for k, v in sd.items()}
    bad["blocks.0.fc.weight"] = np.zeros((4, 5))
    with pytest.raises(ValueError, match=r"'blocks.0.fc.weight' has shape \(4, 4\) in the model but \(4, 5\)"):
        net.load_state_dict(bad)
    np.testing.assert_array_equal(net.emb.weight.numpy(), original)  # nothing was written
    res = net.load_state_dict({**missing, "extra": np.zeros(1)}, strict=False)
    assert res.missing_keys == ["blocks.1.fc.bias"] and res.unexpected_keys == ["extra"]
    assert repr(res) == "_IncompatibleKeys(missing_keys=['blocks.1.fc.bias'], unexpected_keys=['extra'])"
    with pytest.raises(TypeError, match="dict"):
        net.load_state_dict([1, 2])


def test_save_load_npz_round_trip(tmp_path):
    tinyattn.manual_seed(3)
    a = Net().eval()
    tinyattn.manual_seed(4)
    b = Net().eval()
    path = tmp_path / "model.npz"
    a.save(path)
    assert b.load(path) is b
    idx = np.array([[1, 5, 0]])
    np.testing.assert_array_equal(a(idx).numpy(), b(idx).numpy())
    a.save(tmp_path / "noext")  # np.savez adds .npz; load finds it
    tinyattn.manual_seed(5)
    c = Net().eval().load(tmp_path / "noext")
    np.testing.assert_array_equal(a(idx).numpy(), c(idx).numpy())


def test_buffers_persist_unless_marked_otherwise():
    class WithBuf(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("running", np.arange(3.0))
            self.register_buffer("scratch", np.zeros(2), persistent=False)

    m = WithBuf()
    assert list(m.state_dict()) == ["running"]
    assert list(m.parameters()) == []
    m.load_state_dict({"running": np.full(3, 7.0)})
    np.testing.assert_array_equal(m.running, [7.0, 7.0, 7.0])
    m.register_buffer("scratch", np.ones(2))  # registered again, persistent this time (as in PyTorch)
    assert list(m.state_dict()) == ["running", "scratch"]


def test_to_float64_casts_parameters():
    lin = nn.Linear(2, 3).double()
    assert lin.weight.dtype == np.float64 and lin.bias.dtype == np.float64
    assert isinstance(lin.weight, nn.Parameter)


def test_sequential():
    seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = tinyattn.randn(5, 3)
    np.testing.assert_array_equal(seq(x).numpy(), seq[2](seq[1](seq[0](x))).numpy())
    assert len(seq) == 3 and seq[-1] is seq[2]
    assert isinstance(seq[:2], nn.Sequential) and len(seq[:2]) == 2
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    with pytest.raises(IndexError, match="index 3 is out of range for length 3"):
        seq[3]
    with pytest.raises(TypeError, match="Sequential expects Modules, got function"):
        nn.Sequential(lambda x: x)


def test_modulelist():
    ml = nn.ModuleList([nn.Linear(2, 2)])
    ml.append(nn.Linear(2, 3))
    ml.extend([nn.ReLU()])
    assert len(ml) == 3 and isinstance(ml[-1], nn.ReLU)
    assert [type(m).__name__ for m in ml] == ["Linear", "Linear", "ReLU"]
    assert len(list(ml.parameters())) == 4
    ml[0] = nn.Linear(2, 5)
    assert ml[0].out_features == 5 and [n for n, _ in ml.named_children()] == ["0", "1", "2"]
    with pytest.raises(TypeError, match="ModuleList holds Modules, got int"):
        ml.append(3)
    with pytest.raises(NotImplementedError, match="loop over it"):
        ml(1)


def test_repr_is_a_tree_like_pytorch():
    seq = nn.Sequential(nn.Linear(3, 4), nn.Sequential(nn.ReLU(), nn.Dropout(0.1)))
    assert repr(seq) == (
        "Sequential(\n"
        "  (0): Linear(in_features=3, out_features=4, bias=True)\n"
        "  (1): Sequential(\n"
        "    (0): ReLU()\n"
        "    (1): Dropout(p=0.1)\n"
        "  )\n"
        ")"
    )


def test_attribute_and_registry_always_name_the_same_object():
    """Registered parts are also plain attributes (fast lookup in forward); every way of changing one
    must keep `m.name` and the registry in step, or forward would use a stale weight."""
    import copy

    m = nn.Linear(3, 4)
    w2 = nn.Parameter(np.zeros((4, 3)))
    m.weight = w2  # reassign a parameter
    assert m.weight is w2 and m._parameters["weight"] is w2
    m.register_parameter("weight", nn.Parameter(np.ones((4, 3))))
    assert m.weight is m._parameters["weight"] and m.weight is not w2
    m.bias = None  # switch the bias off
    assert m.bias is None and m._parameters["bias"] is None
    del m.weight
    assert "weight" not in m._parameters
    with pytest.raises(AttributeError, match="has no attribute 'weight'"):
        m.weight

    b = Block(4)
    b.register_buffer("stat", np.zeros(4))
    b.stat = np.ones(4)  # assigning a registered buffer replaces it
    assert b.stat is b._buffers["stat"] and b.stat[0] == 1
    b.to(np.float32)  # to() replaces float buffers with cast copies
    assert b.stat is b._buffers["stat"] and b.stat.dtype == np.float32
    b.fc = nn.Linear(4, 4)  # replace a child
    assert b.fc is b._modules["fc"]
    b.fc = None
    assert b.fc is None and b._modules["fc"] is None
    b.fc = nn.Parameter(np.ones(2))  # the same name becomes a parameter: gone from _modules
    assert b.fc is b._parameters["fc"] and "fc" not in b._modules
    del b.fc
    b.fc = 5  # after del, a plain attribute
    assert b.fc == 5 and "fc" not in b._parameters and "fc" not in b._modules

    lst = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2)])
    new = nn.Linear(2, 2)
    lst[1] = new
    assert lst[1] is new and getattr(lst, "1") is new

    net = Net()
    clone = copy.deepcopy(net)  # the copy's attributes point at the copy's registered objects
    assert clone.head.weight is clone.head._parameters["weight"] is clone.emb.weight
    assert clone.head.weight is not net.head.weight
    net.load_state_dict({k: np.full(v.shape, 2.0) for k, v in net.state_dict().items()})
    assert np.all(net.head.weight.numpy() == 2.0) and net.head.weight is net.emb.weight


def test_a_part_written_into_its_registry_is_what_the_attribute_and_parameters_give():
    # No attribute mirror to go stale: the registry is the only place a part lives (as in PyTorch).
    lin = nn.Linear(2, 3)
    new = nn.Parameter(np.ones((3, 2)))
    lin._parameters["weight"] = new
    assert lin.weight is new
    assert next(lin.parameters()) is new
    np.testing.assert_array_equal(lin(tinyattn.tensor(np.ones((1, 2)))).numpy() - lin.bias.numpy(), [[2.0, 2.0, 2.0]])
    lin.weight = nn.Parameter(np.zeros((3, 2)))
    assert lin._parameters["weight"] is lin.weight and "weight" not in vars(lin)
    del lin.weight
    with pytest.raises(AttributeError):
        lin.weight


def test_replacing_a_submodule_or_parameter_keeps_its_place():
    # word_language_model subclasses nn.Transformer and then sets self.decoder = nn.Linear(...);
    # tying sets decoder.weight = encoder.weight. PyTorch keeps both where they were registered, so a
    # state_dict or parameter list keeps its order.
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(5, 4)
            self.decoder = nn.Linear(4, 5)
            self.head = nn.Linear(5, 1)

    net = Net()
    net.decoder = nn.Linear(4, 5)
    net.decoder.weight = nn.Parameter(np.zeros((5, 4)))
    assert list(net.state_dict()) == ["encoder.weight", "decoder.weight", "decoder.bias", "head.weight", "head.bias"]
    net.register_buffer("table", np.ones(2))
    net.register_buffer("other", np.ones(1))
    net.register_buffer("table", np.zeros(2))  # re-registered: same place, new value
    keys = list(net.state_dict())
    assert keys.index("table") < keys.index("other") and net.table.sum() == 0
