"""The small names the census found used once, against PyTorch 2.13: torch.nn.modules paths, the deprecated
nn.utils.clip_grad_norm, lr_scheduler.MultiStepLR, torch.accelerator, cuda.max_memory_reserved, has_mps."""
import warnings

import numpy as np
import pytest
import torch

import tinyattn

PATHS = ["activation.MultiheadAttention", "container.ModuleList", "dropout.Dropout", "linear.Linear",
         "linear.NonDynamicallyQuantizableLinear", "normalization.LayerNorm", "normalization.GroupNorm", "rnn.GRU",
         "rnn.LSTM", "rnn.RNN", "sparse.Embedding", "transformer.TransformerEncoder", "transformer.TransformerEncoderLayer",
         "conv.ConvTranspose2d", "pooling.MaxPool3d", "loss.BCEWithLogitsLoss", "padding.ZeroPad2d", "module.Module",
         "batchnorm.BatchNorm1d"]


@pytest.mark.parametrize("path", PATHS)
def test_torch_nn_modules_paths_name_the_same_classes(path):
    mod, name = path.split(".")
    ours = getattr(getattr(tinyattn.nn.modules, mod), name)
    theirs = getattr(getattr(torch.nn.modules, mod), name)
    assert ours.__name__ == theirs.__name__
    if name != "NonDynamicallyQuantizableLinear":
        assert ours is getattr(tinyattn.nn, name)
    else:
        assert issubclass(ours, tinyattn.nn.Linear) and repr(ours(2, 3)) == repr(theirs(2, 3))


def test_deprecated_clip_grad_norm_warns_and_clips():
    got = []
    for lib in (torch, tinyattn):
        p = lib.nn.Parameter(lib.ones(3))
        p.grad = lib.ones(3) * 2
        with pytest.warns(FutureWarning, match="clip_grad_norm_"):
            total = lib.nn.utils.clip_grad_norm([p], 1.0)
        got.append((total.item(), p.grad.numpy()))
    assert np.isclose(got[0][0], got[1][0], rtol=1e-6)
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-6)


@pytest.mark.parametrize("milestones,gamma", [([2, 4], 0.5), ([3, 1, 3], 0.1), ([], 0.5)])
def test_multisteplr_matches_pytorch(milestones, gamma):
    lrs = []
    for lib in (torch, tinyattn):
        p = lib.nn.Parameter(lib.ones(1))
        opt = lib.optim.SGD([p], lr=0.8)
        sched = lib.optim.lr_scheduler.MultiStepLR(opt, milestones, gamma)
        seq = []
        for _ in range(7):
            seq.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        lrs.append(seq + sched.get_last_lr())
    np.testing.assert_allclose(lrs[1], lrs[0], rtol=1e-15)


def test_cpu_only_answers():
    for lib in (torch, tinyattn):
        assert lib.accelerator.is_available() is False and lib.accelerator.current_accelerator() is None
        assert lib.accelerator.device_count() == 0 and lib.cuda.max_memory_reserved() == 0
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            assert lib.has_mps is False
        assert "'has_mps' is deprecated" in str(seen[0].message)


def test_normal_distribution_matches_pytorch():
    got = []
    for lib in (torch, tinyattn):
        loc = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        scale = lib.tensor([2.0, 0.5, 1.0], dtype=lib.float64, requires_grad=True)
        d = lib.distributions.Normal(loc, scale)
        v = lib.tensor([1.0, -0.5, 0.0], dtype=lib.float64)
        q = lib.distributions.Normal(lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64))
        outs = [d.log_prob(v), d.entropy(), d.cdf(v), d.icdf(lib.tensor([0.1, 0.5, 0.975], dtype=lib.float64)),
                lib.distributions.kl_divergence(d, q), d.variance, d.stddev]
        sum(o.sum() for o in outs).backward()
        got.append([o.detach().numpy() for o in outs] + [loc.grad.numpy(), scale.grad.numpy()])
        assert tuple(d.batch_shape) == (3,) and tuple(d.sample((4,)).shape) == (4, 3)
        assert d.rsample().requires_grad and not d.sample().requires_grad
    for a, b in zip(*got):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)
    for lib in (torch, tinyattn):
        with pytest.raises(ValueError, match="to satisfy the constraint GreaterThan"):
            lib.distributions.Normal(lib.zeros(2), lib.tensor([1.0, -1.0]))


def test_categorical_kl_divergence_matches_pytorch():
    p, q = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]]), np.array([[0.25, 0.7, 0.05], [0.1, 0.1, 0.8]])
    got = [lib.distributions.kl_divergence(lib.distributions.Categorical(probs=lib.tensor(p)),
                                           lib.distributions.Categorical(probs=lib.tensor(q))).numpy()
           for lib in (torch, tinyattn)]
    np.testing.assert_allclose(got[1], got[0], rtol=1e-12)


def test_torch_func_transforms_match_pytorch():
    rng = np.random.default_rng(11)
    w0, x0, batch = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal((5, 3))
    got = []
    for lib in (torch, tinyattn):
        f = (lambda w, x: ((w * x).sum() ** 2 + w.exp().sum()))
        w, x = lib.tensor(w0), lib.tensor(x0)
        g = lib.func.grad(f)(w, x)
        g01 = lib.func.grad(f, argnums=(0, 1))(w, x)
        gv = lib.func.grad_and_value(f)(w, x)
        aux = lib.func.grad(lambda w: ((w ** 3).sum(), w.mean()), has_aux=True)(w)
        per_sample = lib.func.vmap(lib.func.grad(f), in_dims=(None, 0))(w, lib.tensor(batch))
        mapped = lib.func.vmap(lambda a, b: a * b, in_dims=(0, None), out_dims=1)(lib.tensor(batch), w)
        m = lib.nn.Linear(3, 2).double()
        params = {"weight": lib.tensor(batch[:2]), "bias": lib.tensor(w0[:2])}
        y = lib.func.functional_call(m, params, (lib.tensor(batch),))
        y2 = lib.func.functional_call(m, ({"weight": lib.tensor(batch[:2])}, {"bias": lib.tensor(w0[:2])}), lib.tensor(batch))
        assert m.weight.shape == (2, 3) and not np.allclose(m.weight.detach().numpy(), batch[:2])  # put back
        got.append([g, *g01, *gv, aux[0], aux[1], per_sample, mapped, y, y2])
    for a, b in zip(*got):
        assert a.requires_grad == b.requires_grad
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-13)
    for lib in (torch, tinyattn):
        with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
            lib.func.grad(lambda x: x * 2)(lib.ones(3))


def test_hub_cache_directory_and_hash_error_are_pytorchs(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert tinyattn.hub.get_dir() == torch.hub.get_dir()
    src = tmp_path / "blob.bin"
    src.write_bytes(b"tinyattn")
    for i, lib in enumerate((torch, tinyattn)):
        with pytest.raises(RuntimeError, match='invalid hash value \\(expected "00ff", got "[0-9a-f]{64}"\\)'):
            lib.hub.download_url_to_file(src.as_uri(), tmp_path / f"dst{i}", hash_prefix="00ff", progress=False)
        lib.hub.download_url_to_file(src.as_uri(), tmp_path / f"ok{i}", progress=False)
        assert (tmp_path / f"ok{i}").read_bytes() == b"tinyattn"


def test_sync_batch_norm_and_safe_globals_match_pytorch():
    x = np.random.default_rng(15).standard_normal((4, 3, 5))
    got = []
    for lib in (torch, tinyattn):
        m = lib.nn.SyncBatchNorm(3)
        y = m(lib.tensor(x, dtype=lib.float32))
        got.append((y.detach().numpy(), m.running_var.numpy(), repr(m)))
        lib.serialization.clear_safe_globals()
        with lib.serialization.safe_globals([int]):
            assert lib.serialization.get_safe_globals() == [int]
        assert lib.serialization.get_safe_globals() == []
    np.testing.assert_allclose(got[1][0], got[0][0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-5)
    assert got[1][2] == got[0][2]
    assert int(tinyattn.distributed.reduce_op.SUM) == int(torch.distributed.ReduceOp.SUM)


def test_initial_seed_answers_as_pytorch():
    for lib in (torch, tinyattn):
        lib.manual_seed(-1)
        assert lib.initial_seed() == 18446744073709551615
        lib.manual_seed(5)
        assert lib.initial_seed() == 5
        s = lib.seed()
        assert isinstance(s, int) and lib.initial_seed() == s
    tinyattn.manual_seed(0)
