"""The small names the census found used once, without PyTorch: torch.nn.modules paths, the deprecated
nn.utils.clip_grad_norm, lr_scheduler.MultiStepLR, torch.accelerator, cuda.max_memory_reserved, has_mps."""
import importlib
import warnings

import numpy as np
import pytest

import tinyattn
from tinyattn import nn


@pytest.mark.parametrize("path", ["linear.Linear", "sparse.Embedding", "dropout.Dropout", "rnn.LSTM",
                                  "activation.MultiheadAttention", "container.ModuleList", "normalization.LayerNorm",
                                  "transformer.TransformerEncoderLayer", "conv.ConvTranspose1d", "loss.BCELoss"])
def test_nn_modules_paths_are_the_nn_classes(path):
    mod, name = path.split(".")
    assert getattr(importlib.import_module(f"tinyattn.nn.modules.{mod}"), name) is getattr(nn, name)
    assert getattr(getattr(tinyattn.nn.modules, mod), name) is getattr(nn, name)  # without an import line


def test_non_dynamically_quantizable_linear_is_a_linear():
    from tinyattn.nn.modules.linear import NonDynamicallyQuantizableLinear
    m = NonDynamicallyQuantizableLinear(2, 3)
    assert isinstance(m, nn.Linear) and m(tinyattn.ones(4, 2)).shape == (4, 3)


def test_deprecated_clip_grad_norm_warns_then_clips_as_clip_grad_norm_():
    p = nn.Parameter(tinyattn.ones(4))
    p.grad = tinyattn.ones(4) * 3.0
    with pytest.warns(FutureWarning, match="deprecated in favor of `torch.nn.utils.clip_grad_norm_`"):
        total = nn.utils.clip_grad_norm([p], 1.5)
    assert total.item() == 6.0
    np.testing.assert_allclose(p.grad.numpy(), 3.0 * 1.5 / 6.0 * np.ones(4), rtol=1e-6)


def test_multisteplr_multiplies_by_gamma_at_each_milestone():
    p = nn.Parameter(tinyattn.ones(1))
    opt = tinyattn.optim.SGD([p], lr=1.0)
    sched = tinyattn.optim.lr_scheduler.MultiStepLR(opt, milestones=[4, 2, 4], gamma=0.5)  # 4 listed twice
    seen = []
    for _ in range(6):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert seen == [1.0, 1.0, 0.5, 0.5, 0.125, 0.125]
    state = sched.state_dict()
    again = tinyattn.optim.lr_scheduler.MultiStepLR(tinyattn.optim.SGD([p], lr=1.0), [2, 4, 4], 0.5)
    again.load_state_dict(state)
    assert again.last_epoch == 6 and again.get_last_lr() == sched.get_last_lr()
    with pytest.raises(ValueError, match="milestone"):
        tinyattn.optim.lr_scheduler.MultiStepLR(opt, [-1])


def test_cpu_only_answers():
    assert tinyattn.accelerator.is_available() is False and tinyattn.accelerator.current_accelerator() is None
    assert tinyattn.accelerator.device_count() == 0 and tinyattn.cuda.max_memory_reserved() == 0
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert tinyattn.has_mps is False and tinyattn.has_cuda is False
    assert [str(w.message).split("'")[1] for w in seen] == ["has_mps", "has_cuda"]
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        tinyattn.no_such_name  # noqa: B018


def test_normal_distribution_formulas_and_reparameterised_gradients():
    from tinyattn.distributions import Normal, kl_divergence
    loc = tinyattn.tensor([0.5, -1.0], dtype=tinyattn.float64, requires_grad=True)
    scale = tinyattn.tensor([2.0, 0.5], dtype=tinyattn.float64, requires_grad=True)
    d = Normal(loc, scale)
    v = np.array([1.0, 0.0])
    want = -((v - [0.5, -1.0]) ** 2) / (2 * np.array([4.0, 0.25])) - np.log([2.0, 0.5]) - 0.5 * np.log(2 * np.pi)
    np.testing.assert_allclose(d.log_prob(tinyattn.tensor(v)).detach().numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(d.icdf(d.cdf(tinyattn.tensor(v))).detach().numpy(), v, atol=1e-12)
    kl = kl_divergence(d, Normal(tinyattn.zeros(2, dtype=tinyattn.float64), tinyattn.ones(2, dtype=tinyattn.float64)))
    np.testing.assert_allclose(kl.detach().numpy(), 0.5 * (np.array([4.0, 0.25]) + np.array([0.25, 1.0]) - 1)
                               - np.log([2.0, 0.5]), rtol=1e-14)
    assert tinyattn.gradcheck(lambda m, s: Normal(m, s).log_prob(tinyattn.tensor(v)), (loc, scale))
    tinyattn.manual_seed(0)
    draws = Normal(loc, scale).rsample((20000,))
    assert draws.shape == (20000, 2) and draws.requires_grad
    np.testing.assert_allclose(draws.detach().numpy().mean(0), [0.5, -1.0], atol=0.05)
    np.testing.assert_allclose(draws.detach().numpy().std(0), [2.0, 0.5], rtol=0.03)
    draws.sum().backward()
    assert loc.grad.tolist() == [20000.0, 20000.0]  # d(loc + eps * scale)/d loc = 1 per draw
    with pytest.raises(ValueError, match="GreaterThan"):
        Normal(0.0, -1.0)


def test_func_transforms_give_finite_difference_gradients_and_swap_parameters_back():
    from tinyattn import func
    rng = np.random.default_rng(12)
    w0, batch = rng.standard_normal(3), rng.standard_normal((4, 3))

    def f(w, x):
        return ((w * x).sum() ** 2 + w.exp().sum())
    g = func.grad(f)(tinyattn.tensor(w0), tinyattn.tensor(batch[0]))
    eps = 1e-6
    fd = [(f(tinyattn.tensor(w0 + eps * e), tinyattn.tensor(batch[0])).item()
           - f(tinyattn.tensor(w0 - eps * e), tinyattn.tensor(batch[0])).item()) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(g.numpy(), fd, rtol=1e-7)
    per = func.vmap(func.grad(f), in_dims=(None, 0))(tinyattn.tensor(w0), tinyattn.tensor(batch))
    assert per.shape == (4, 3)
    np.testing.assert_allclose(per.numpy()[0], g.numpy(), rtol=1e-14)
    grad_w, value = func.grad_and_value(f)(tinyattn.tensor(w0), tinyattn.tensor(batch[0]))
    assert value.item() == f(tinyattn.tensor(w0), tinyattn.tensor(batch[0])).item() and not value.requires_grad
    m = nn.Linear(3, 2).double()
    before = m.weight.detach().numpy().copy()
    w = tinyattn.tensor(batch[:2], requires_grad=True)
    out = func.functional_call(m, {"weight": w, "bias": tinyattn.zeros(2, dtype=tinyattn.float64)},
                               (tinyattn.tensor(batch),))
    np.testing.assert_allclose(out.detach().numpy(), batch @ batch[:2].T, rtol=1e-14)
    out.sum().backward()
    assert w.grad is not None and np.array_equal(m.weight.detach().numpy(), before) and m.weight.grad is None
    with pytest.raises(RuntimeError, match="Unexpected key"):
        func.functional_call(m, {"nope": w}, (tinyattn.tensor(batch),), strict=True)
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        func.vmap(lambda a, b: a + b)(tinyattn.ones(3, 2), tinyattn.ones(4, 2))


def test_set_printoptions_changes_how_tensors_print_until_reset():
    from tinyattn import defaults
    saved = dict(defaults._print_opts)
    x = tinyattn.tensor([1.123456789, 2e-5, 300.0])
    try:
        assert repr(x) == "tensor([1.1235e+00, 2.0000e-05, 3.0000e+02])"
        tinyattn.set_printoptions(precision=2)
        assert repr(x) == "tensor([1.12e+00, 2.00e-05, 3.00e+02])"
        tinyattn.set_printoptions(sci_mode=False)
        assert "300." in repr(x) and "e+" not in repr(x)
        tinyattn.set_printoptions(threshold=5, edgeitems=1)
        assert repr(tinyattn.arange(10.0)) == "tensor([0., ..., 9.])"
        tinyattn.set_printoptions(profile="full")
        assert "..." not in repr(tinyattn.arange(2000.0))
    finally:
        defaults._print_opts.clear()
        defaults._print_opts.update(saved)
    assert repr(x) == "tensor([1.1235e+00, 2.0000e-05, 3.0000e+02])"


def test_hub_downloads_once_checks_the_hash_and_loads(tmp_path, monkeypatch):
    import hashlib
    m = nn.Linear(2, 3)
    src = tmp_path / "w.pt"
    tinyattn.save(m.state_dict(), src)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    named = tmp_path / f"w-{digest[:8]}.pt"
    src.rename(named)
    cache = tmp_path / "cache"
    sd = tinyattn.hub.load_state_dict_from_url(named.as_uri(), model_dir=str(cache), check_hash=True)
    assert list(sd) == ["weight", "bias"] and np.array_equal(sd["weight"].numpy(), m.weight.detach().numpy())
    named.unlink()  # read from the cache the second time: the URL is gone
    assert list(tinyattn.hub.load_state_dict_from_url(named.as_uri(), model_dir=str(cache))) == ["weight", "bias"]
    other = tmp_path / "other.pt"
    tinyattn.save({"a": tinyattn.ones(1)}, other)
    with pytest.raises(RuntimeError, match='invalid hash value \\(expected "00ff"'):
        tinyattn.hub.download_url_to_file(other.as_uri(), tmp_path / "dst.pt", hash_prefix="00ff")
    assert not (tmp_path / "dst.pt").exists() and not list(tmp_path.glob("*.partial"))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert tinyattn.hub.get_dir() == str(tmp_path / "th" / "hub")


def test_sync_batch_norm_is_batch_norm_in_one_process():
    x = tinyattn.randn(4, 3, 2, 2)
    sync, plain = nn.SyncBatchNorm(3), nn.BatchNorm2d(3)
    assert np.array_equal(sync(x).detach().numpy(), plain(x).detach().numpy())
    assert np.array_equal(sync.running_mean.numpy(), plain.running_mean.numpy())
    assert sync(tinyattn.randn(4, 3)).shape == (4, 3)  # any (N, C, *)
    model = nn.Sequential(nn.BatchNorm1d(3))
    assert nn.SyncBatchNorm.convert_sync_batchnorm(model) is model
    assert repr(sync) == "SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"


def test_safe_globals_keep_their_list_and_load_is_unchanged(tmp_path):
    from tinyattn import serialization
    before = serialization.get_safe_globals()
    try:
        with serialization.safe_globals([int]):
            assert serialization.get_safe_globals() == before + [int]
            tinyattn.save({"w": tinyattn.ones(2)}, tmp_path / "w.pt")
            assert tinyattn.load(tmp_path / "w.pt")["w"].tolist() == [1.0, 1.0]
        assert serialization.get_safe_globals() == before
        serialization.add_safe_globals([float])
        assert serialization.get_safe_globals()[-1] is float
    finally:
        serialization.clear_safe_globals()
        serialization.add_safe_globals(before)


def test_distributed_and_xpu_names_answer_as_one_cpu_process():
    dist = tinyattn.distributed
    for call in (lambda: dist.send(tinyattn.ones(2), 1), lambda: dist.recv(tinyattn.ones(2), 0),
                 lambda: dist.reduce_scatter_tensor(tinyattn.ones(2), tinyattn.ones(4))):
        with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
            call()
    assert dist.reduce_op.SUM == dist.ReduceOp.SUM == 0
    assert tinyattn.xpu.is_available() is False and tinyattn.xpu.device_count() == 0
    with pytest.raises(AssertionError, match="XPU"):
        tinyattn.xpu.get_device_properties(0)


def test_initial_seed_and_seed():
    from tinyattn import defaults
    before = defaults.initial_seed_value
    try:
        tinyattn.manual_seed(-1)
        assert tinyattn.initial_seed() == 2 ** 64 - 1 == tinyattn.random.initial_seed()  # PyTorch's answer
        s = tinyattn.seed()
        assert isinstance(s, int) and 0 <= s < 2 ** 64 and tinyattn.initial_seed() == s
        a = tinyattn.rand(3)
        tinyattn.manual_seed(s)
        assert tinyattn.rand(3).tolist() == a.tolist()  # seed() seeded the generator with what it returned
    finally:
        tinyattn.manual_seed(before)
