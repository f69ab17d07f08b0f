"""Idioms of a third round of public codebases, against PyTorch: F.multi_head_attention_forward (values, weights,
every gradient, errors) and the attributes nn.MultiheadAttention declares."""
import warnings

import numpy as np
import pytest
import torch

import tinyattn

CASES = [dict(), dict(unbatched=True), dict(separate=True), dict(bias=False), dict(mask="bool"), dict(mask="float"),
         dict(mask="padding"), dict(mask="both"), dict(need_weights=False), dict(average=False),
         dict(separate=True, mask="padding", query_len=1), dict(mask="per_head")]


def _run(lib, case, arrays):
    T, B, E, H = 4, 2, 6, 3
    L = case.get("query_len", T)
    t = {k: lib.tensor(v, requires_grad=k not in ("attn_mask", "key_padding_mask")) for k, v in arrays.items()}
    q, kv = t["q"], t["kv"]
    if case.get("unbatched"):
        q, kv = q[:, 0], kv[:, 0]
    kw = dict(need_weights=case.get("need_weights", True), average_attn_weights=case.get("average", True))
    if "attn_mask" in t:
        kw["attn_mask"] = t["attn_mask"]
    if "key_padding_mask" in t:
        kw["key_padding_mask"] = t["key_padding_mask"] if not case.get("unbatched") else t["key_padding_mask"][0]
    bias = None if case.get("bias") is False else t["b"]
    if case.get("separate"):
        out, w = lib.nn.functional.multi_head_attention_forward(
            q[:L], kv, kv, E, H, None, bias, None, None, False, 0.0, t["wo"], t["bo"], use_separate_proj_weight=True,
            q_proj_weight=t["W"][:E], k_proj_weight=t["W"][E:2 * E], v_proj_weight=t["W"][2 * E:], **kw)
    else:
        out, w = lib.nn.functional.multi_head_attention_forward(
            q[:L], kv, kv, E, H, t["W"], bias, None, None, False, 0.0, t["wo"], t["bo"], **kw)
    loss = (out * lib.tensor(arrays["g"][:L] if not case.get("unbatched") else arrays["g"][:L, 0])).sum()
    if w is not None:
        loss = loss + (w * w).sum()
    loss.backward()
    grads = {k: None if v.grad is None else v.grad.numpy() for k, v in t.items() if v.requires_grad}
    return out.detach().numpy(), None if w is None else w.detach().numpy(), grads


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_multi_head_attention_forward_matches_pytorch(case):
    rng = np.random.default_rng(len(str(case)))
    T, B, E, H = 4, 2, 6, 3
    arrays = dict(q=rng.standard_normal((T, B, E)), kv=rng.standard_normal((T, B, E)),
                  W=rng.standard_normal((3 * E, E)) / 2, b=rng.standard_normal(3 * E), wo=rng.standard_normal((E, E)),
                  bo=rng.standard_normal(E), g=rng.standard_normal((T, B, E)))
    m = case.get("mask")
    L = case.get("query_len", T)
    if m in ("bool", "both"):
        arrays["attn_mask"] = np.triu(np.ones((L, T), bool), 1)
    if m == "float":
        arrays["attn_mask"] = rng.standard_normal((L, T))
    if m == "per_head":
        arrays["attn_mask"] = rng.standard_normal((B * H, L, T))
    if m in ("padding", "both"):
        arrays["key_padding_mask"] = np.array([[False, False, False, True], [False, True, False, True]])
    want, got = _run(torch, case, arrays), _run(tinyattn, case, arrays)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-13)
    assert (got[1] is None) == (want[1] is None)
    if want[1] is not None:
        assert got[1].shape == want[1].shape
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-13)
    assert set(got[2]) == set(want[2])
    for k in want[2]:
        assert (got[2][k] is None) == (want[2][k] is None), k
        if want[2][k] is not None:
            np.testing.assert_allclose(got[2][k], want[2][k], rtol=1e-10, atol=1e-12, err_msg=k)


@pytest.mark.parametrize("kw", [dict(), dict(bias=False), dict(kdim=5, vdim=3), dict(kdim=5, vdim=3, bias=False),
                                dict(batch_first=True)])
def test_multihead_attention_declares_the_same_attributes(kw):
    names = ["in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "bias_k", "bias_v",
             "add_zero_attn", "_qkv_same_embed_dim", "batch_first", "head_dim", "kdim", "vdim"]
    seen = {}
    for lib in (torch, tinyattn):
        m = lib.nn.MultiheadAttention(8, 2, **kw)
        seen[lib.__name__] = ({n: (getattr(m, n) is None, tuple(getattr(m, n).shape) if hasattr(getattr(m, n), "shape")
                                   else getattr(m, n)) for n in names},
                              [(n, tuple(p.shape)) for n, p in m.named_parameters()], list(m.state_dict()))
    assert seen["tinyattn"] == seen["torch"]


def test_multi_head_attention_forward_refuses_as_pytorch():
    x = np.random.default_rng(0).standard_normal((3, 2, 4))
    for lib in (torch, tinyattn):
        with pytest.raises(Exception) as e:
            lib.nn.functional.multi_head_attention_forward(lib.tensor(x), lib.tensor(x), lib.tensor(x), 6, 2,
                                                           lib.zeros(18, 6), None, None, None, False, 0.0,
                                                           lib.zeros(6, 6), None)
        assert "was expecting embedding dimension of 6, but got 4" in str(e.value)


@pytest.mark.parametrize("kw", [dict(), dict(padding_idx=1), dict(padding_idx=-1), dict(max_norm=4.0),
                                dict(max_norm=9.0, norm_type=1.0, padding_idx=0), dict(max_norm=2.0, norm_type=3.0)])
def test_functional_embedding_matches_pytorch(kw):
    table = np.random.default_rng(5).standard_normal((5, 4)) * 3
    ids = np.array([[0, 1, 4], [4, 4, 2]])
    g = np.random.default_rng(6).standard_normal((2, 3, 4))
    seen = {}
    for lib in (torch, tinyattn):
        if "max_norm" in kw:  # the table is renormalised in place: a table that is not a leaf needing grad
            w = lib.tensor(table.copy())
            out = lib.nn.functional.embedding(lib.tensor(ids), w, **kw)
            seen[lib.__name__] = (out.numpy(), w.numpy(), None)
            continue
        w = lib.tensor(table.copy(), requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor(ids), w, **kw)
        (out * lib.tensor(g)).sum().backward()
        seen[lib.__name__] = (out.detach().numpy(), w.detach().numpy(), w.grad.numpy())
    for got, want in zip(seen["tinyattn"], seen["torch"]):
        if want is None:
            assert got is None
        else:
            np.testing.assert_allclose(got, want, rtol=1e-14)


def test_layer_subclass_reset_parameters_is_called_as_in_pytorch():
    seen = {}
    for lib in (torch, tinyattn):
        calls = []

        def make(base):
            class Sub(base):
                def reset_parameters(self):
                    calls.append(base.__name__)
                    base.reset_parameters(self)
                    lib.nn.init.constant_(self.weight, 0.25)
            return Sub

        made = [make(lib.nn.Linear)(3, 2), make(lib.nn.Embedding)(4, 2, padding_idx=1), make(lib.nn.Conv1d)(2, 2, 3)]
        seen[lib.__name__] = (calls, [m.weight.detach().numpy().tolist() for m in made],
                              sorted(n for n in ("Linear", "Embedding", "Conv1d", "Conv2d", "ConvTranspose2d",
                                                 "LayerNorm", "GroupNorm") if hasattr(getattr(lib.nn, n), "reset_parameters")),
                              hasattr(lib.nn.MultiheadAttention, "_reset_parameters"))
    assert seen["tinyattn"] == seen["torch"]


STFT = [dict(n_fft=8), dict(n_fft=8, hop_length=3, win_length=5, center=False), dict(n_fft=16, normalized=True),
        dict(n_fft=16, onesided=False), dict(n_fft=400, hop_length=160, hann=True), dict(n_fft=8, pad_mode="constant"),
        dict(n_fft=6, hann=True, return_complex=False), dict(n_fft=7, hop_length=2, win_length=4, hann=True)]


STFT_GRID = [(k, s) for k in STFT for s in [(50,), (2, 50), (3, 1600)] if k["n_fft"] < s[-1]]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw,shape", STFT_GRID, ids=[f"{k}-{s}" for k, s in STFT_GRID])
def test_stft_values_dtype_and_gradient_match_pytorch(kw, shape, dtype):
    x = np.random.default_rng(kw["n_fft"] + shape[-1]).standard_normal(shape)
    seen = {}
    for lib in (torch, tinyattn):
        k = dict(kw)
        hann, rc = k.pop("hann", False), k.pop("return_complex", True)
        if hann:
            k["window"] = lib.hann_window(k.get("win_length", k["n_fft"]), dtype=getattr(lib, dtype))
        else:
            k["window"] = lib.ones(k.get("win_length", k["n_fft"]), dtype=getattr(lib, dtype))
        t = lib.tensor(x, dtype=getattr(lib, dtype), requires_grad=True)
        with warnings.catch_warnings():  # (return_complex=False's deprecation: PyTorch says it once a process)
            warnings.simplefilter("ignore")
            r = lib.stft(t, return_complex=rc, **k)
        ((r.abs() ** 2).sum() if rc else (r ** 2).sum()).backward()
        seen[lib.__name__] = (r.detach().numpy(), t.grad.numpy())
    (a, ga), (b, gb) = seen["torch"], seen["tinyattn"]
    assert a.shape == b.shape and a.dtype == b.dtype
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(b, a, rtol=tol, atol=tol * np.abs(a).max())
    np.testing.assert_allclose(gb, ga, rtol=tol, atol=tol * np.abs(ga).max())


@pytest.mark.parametrize("call", ["no_return_complex", "3d", "window_size", "short_reflect"])
def test_stft_refuses_as_pytorch(call):
    args = {"no_return_complex": ((50,), dict(n_fft=8, window="ones")),
            "3d": ((2, 3, 50), dict(n_fft=8, return_complex=True, window="ones")),
            "window_size": ((50,), dict(n_fft=8, window=5, return_complex=True)),
            "short_reflect": ((3,), dict(n_fft=8, return_complex=True, window="ones"))}[call]
    for lib in (torch, tinyattn):
        k = dict(args[1])
        w = k.pop("window")
        k["window"] = lib.ones(8 if w == "ones" else w)
        with pytest.raises(RuntimeError):
            lib.stft(lib.randn(*args[0]), **k)


@pytest.mark.parametrize("sparse_dim", [None, 1, 2])
@pytest.mark.parametrize("dtype", ["bool", "float64", "int64"])
def test_to_sparse_indices_values_and_dense_match_pytorch(sparse_dim, dtype):
    a = np.random.default_rng(2).standard_normal((3, 4, 2))
    a[np.abs(a) < 0.8] = 0
    seen = {}
    for lib in (torch, tinyattn):
        t = lib.tensor(a).to(getattr(lib, dtype))
        s = t.to_sparse() if sparse_dim is None else t.to_sparse(sparse_dim)
        m = lib.nn.Module()
        m.register_buffer("s", s, persistent=False)
        m.double()
        seen[lib.__name__] = (s.is_sparse, t.is_sparse, repr(s.layout), s.indices().tolist(), s.values().tolist(),
                              s.to_dense().tolist(), s._nnz(), s.sparse_dim(), s.dense_dim(), tuple(s.shape),
                              str(m.s.dtype).split(".")[-1], str(s.double().dtype).split(".")[-1])
    assert seen["tinyattn"] == seen["torch"]


OVERLOADS = ["x.add(-0.5, y)", "x.sub(2, y)", "x.clone().add_(-0.5, y)", "x.clone().sub_(3, y)", "x.add(3, 4)",
             "x.addcmul(0.5, y, z)", "x.addcdiv(-2, y, z)", "x.clone().addcmul_(0.5, y, z)", "x.clone().addcdiv_(2, y, z)",
             "lib.add(x, 2, y)", "lib.sub(x, 2, y)", "lib.addcmul(x, 2, y, z)", "lib.addcdiv(x, 2, y, z)",
             "x.add(True, y)", "x.add(2, y, alpha=3)", "x.add(y, 2)", "x.clone().add_(y, 2)", "lib.add(x, y, 2)",
             "x.addcmul_(y, z, 2)", "x.add(2, 3, 4)", "xi.add(2.5, yi)", "xi.clone().add_(2, yi)"]


@pytest.mark.parametrize("expr", OVERLOADS)
def test_scale_first_overloads_match_pytorch(expr):
    seen = {}
    for lib in (torch, tinyattn):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True) * 1  # (not a leaf: in-place forms are allowed)
        y = lib.tensor([0.5, 1.5, -1.0], requires_grad=True)
        z = lib.tensor([2.0, -4.0, 0.25], requires_grad=True)
        xi, yi = lib.tensor([1, 2, 3]), lib.tensor([4, 5, 6])
        try:
            with warnings.catch_warnings(record=True):
                warnings.simplefilter("always")
                r = eval(expr)
        except (TypeError, RuntimeError) as e:
            seen[lib.__name__] = ("raises", type(e).__name__)
            continue
        grads = None
        if r.requires_grad:
            (r * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
            grads = [None if t.grad is None else t.grad.tolist() for t in (y, z)]
        seen[lib.__name__] = (r.tolist(), str(r.dtype).split(".")[-1], grads)
    assert seen["tinyattn"] == seen["torch"]


def test_the_deprecation_warning_names_the_same_signatures():
    texts = {}
    for lib in (torch, tinyattn):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.ones(2).addcdiv_(2, lib.ones(2), lib.ones(2))
        texts[lib.__name__] = [str(m.message).split(" (Triggered internally")[0] for m in w]
    if texts["torch"]:  # PyTorch says it once a process: only when no earlier test made it speak
        assert texts["tinyattn"] == texts["torch"]
    assert texts["tinyattn"] == ["This overload of addcdiv_ is deprecated:\n\taddcdiv_(Number value, Tensor tensor1, "
                                 "Tensor tensor2)\nConsider using one of the following signatures instead:\n\t"
                                 "addcdiv_(Tensor tensor1, Tensor tensor2, *, Number value = 1)"]


def _tiny_regression(lib, seed=0):
    """A two-layer tanh network on fixed data: parameters and a loss, the same in both libraries."""
    rng = np.random.default_rng(seed)
    w1, b1, w2 = rng.standard_normal((4, 3)), rng.standard_normal(4), rng.standard_normal((1, 4))
    x, y = rng.standard_normal((10, 3)), rng.standard_normal((10, 1))
    ps = [lib.nn.Parameter(lib.tensor(a)) for a in (w1, b1, w2)]

    def loss_fn():
        h = (lib.tensor(x) @ ps[0].T + ps[1]).tanh()
        return ((h @ ps[2].T - lib.tensor(y)) ** 2).mean()
    return ps, loss_fn


# (a fixed-step run amplifies rounding once it wanders, ~1e-12 by the 17th iteration here and 1e-8 by the 50th:
# the runs below stay within the first 16 iterations, where both libraries agree to the last bits)
LBFGS_KW = [dict(max_iter=8), dict(lr=0.5, history_size=3, max_iter=8), dict(max_iter=7, max_eval=5),
            dict(lr=0.8, tolerance_change=1e-2, max_iter=8), dict(history_size=1, max_iter=8),
            dict(tolerance_grad=5e-2, max_iter=8)]


@pytest.mark.parametrize("kw", LBFGS_KW, ids=[str(k) for k in LBFGS_KW])
def test_lbfgs_trajectory_matches_pytorch(kw):
    seen = {}
    for lib in (torch, tinyattn):
        ps, loss_fn = _tiny_regression(lib)
        opt = lib.optim.LBFGS(ps, **kw)
        calls, firsts = [], []

        def closure():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            calls.append(loss.item())
            return loss
        for _ in range(2):
            firsts.append(opt.step(closure).item())
        st = opt.state[ps[0]]
        seen[lib.__name__] = (calls, firsts, [p.detach().numpy() for p in ps], st["n_iter"], st["func_evals"],
                              len(st["old_dirs"]))
    got, want = seen["tinyattn"], seen["torch"]
    assert len(got[0]) == len(want[0]) and got[3:] == want[3:]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10)
    for a, b in zip(got[2], want[2]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kw", [dict(), dict(lr=0.3, rho=0.5, eps=1e-4), dict(weight_decay=0.1), dict(maximize=True)])
def test_adadelta_and_closure_steps_match_pytorch(kw):
    seen = {}
    for lib in (torch, tinyattn):
        ps, loss_fn = _tiny_regression(lib, seed=1)
        opt = lib.optim.Adadelta(ps, **kw)
        losses = []
        for _ in range(4):
            def closure():
                opt.zero_grad()
                loss = loss_fn()
                loss.backward()
                return loss
            losses.append(opt.step(closure).item())
        seen[lib.__name__] = (losses, [p.detach().numpy() for p in ps],
                              {k: v for k, v in opt.param_groups[0].items() if k != "params"})
    got, want = seen["tinyattn"], seen["torch"]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-13)
    for a, b in zip(got[1], want[1]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    assert got[2] == want[2]


def test_lbfgs_state_dict_carries_the_history_as_pytorch():
    seen = {}
    for lib in (torch, tinyattn):
        ps, loss_fn = _tiny_regression(lib, seed=2)
        opt = lib.optim.LBFGS(ps, max_iter=5, history_size=3)

        def closure():
            opt.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss
        opt.step(closure)
        sd = opt.state_dict()
        again = lib.optim.LBFGS(ps, max_iter=5, history_size=3)
        again.load_state_dict(sd)
        opt = again  # (the closure zeroes the new optimizer's gradients)
        again.step(closure)
        seen[lib.__name__] = (sorted(sd["state"][0]), [p.detach().numpy() for p in ps], again.state[ps[0]]["n_iter"])
    assert seen["tinyattn"][0] == seen["torch"][0] and seen["tinyattn"][2] == seen["torch"][2]
    for a, b in zip(seen["tinyattn"][1], seen["torch"][1]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
