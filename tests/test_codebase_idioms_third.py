"""Idioms met while running a third round of public codebases on tinyattn (torch-free; expected values from NumPy).

- A contrastive image-text model pools a ResNet's feature map with attention: it keeps three separate
  ``nn.Linear`` projections and calls ``F.multi_head_attention_forward`` itself, sequence first, with
  ``use_separate_proj_weight=True``, the q/k/v weights passed one by one and their biases concatenated.
- The same model's half-precision converter walks every ``nn.MultiheadAttention`` and reads the attributes
  ``in_proj_weight``, ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight``, ``in_proj_bias``, ``bias_k``,
  ``bias_v`` by name: the ones not in use are declared and None, as in PyTorch.
- A low-rank adapter library subclasses ``nn.Linear``/``nn.Embedding``/``nn.Conv2d``, overrides
  ``reset_parameters`` (called by the base class's constructor, so it guards with ``hasattr``) and calls the
  base one; its embedding looks the factor up with ``F.embedding(x, A.T, padding_idx, max_norm, norm_type,
  scale_grad_by_freq, sparse)``.
"""
import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck


def _softmax(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _numpy_attention(x, wq, wk, wv, b, wo, bo, H, add=None):
    """Sequence-first x (T, B, E) attending to itself -> (out (T, B, E), weights (B, H, T, T))."""
    T, B, E = x.shape
    xb = x.transpose(1, 0, 2)  # (B, T, E)
    heads = lambda y: y.reshape(B, T, H, E // H).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = (heads(xb @ w.T + b[i * E:(i + 1) * E]) for i, w in enumerate((wq, wk, wv)))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(E // H)
    if add is not None:
        s = s + add
    w = _softmax(s)
    out = (w @ v).transpose(0, 2, 1, 3).reshape(B, T, E) @ wo.T + bo
    return out.transpose(1, 0, 2), w


class _Pool(nn.Module):
    """An attention pool over a feature map (B, C, H, W): the mean of the positions is the query's token."""

    def __init__(self, side, dim, heads, out_dim):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(side * side + 1, dim, dtype=torch.float64) / dim ** 0.5)
        self.q, self.k, self.v = (nn.Linear(dim, dim).double() for _ in range(3))
        self.c = nn.Linear(dim, out_dim).double()
        self.heads = heads

    def forward(self, x):
        x = x.flatten(start_dim=2).permute(2, 0, 1)  # (B, C, H, W) -> (HW, B, C)
        x = torch.cat([x.mean(dim=0, keepdim=True), x], dim=0) + self.pos[:, None, :]
        out, _ = F.multi_head_attention_forward(
            query=x[:1], key=x, value=x, embed_dim_to_check=x.shape[-1], num_heads=self.heads,
            q_proj_weight=self.q.weight, k_proj_weight=self.k.weight, v_proj_weight=self.v.weight,
            in_proj_weight=None, in_proj_bias=torch.cat([self.q.bias, self.k.bias, self.v.bias]),
            bias_k=None, bias_v=None, add_zero_attn=False, dropout_p=0, out_proj_weight=self.c.weight,
            out_proj_bias=self.c.bias, use_separate_proj_weight=True, training=self.training, need_weights=False)
        return out.squeeze(0)


def test_attention_pool_with_separate_projections_matches_numpy_and_finite_differences():
    torch.manual_seed(0)
    pool = _Pool(side=2, dim=8, heads=2, out_dim=3)
    fmap = np.random.default_rng(0).standard_normal((2, 8, 2, 2))
    got = pool(torch.tensor(fmap))
    assert got.shape == (2, 3)
    x = fmap.reshape(2, 8, 4).transpose(2, 0, 1)
    x = np.concatenate([x.mean(0, keepdims=True), x], 0) + pool.pos.detach().numpy()[:, None, :]
    n = lambda lin: (lin.weight.detach().numpy(), lin.bias.detach().numpy())  # noqa: E731
    (wq, bq), (wk, bk), (wv, bv), (wo, bo) = n(pool.q), n(pool.k), n(pool.v), n(pool.c)
    E, H = 8, 2
    xb = x.transpose(1, 0, 2)  # (B, S, E)
    heads = lambda y: y.reshape(2, -1, H, E // H).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = heads(xb[:, :1] @ wq.T + bq), heads(xb @ wk.T + bk), heads(xb @ wv.T + bv)
    w = _softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(E // H))
    want = ((w @ v).transpose(0, 2, 1, 3).reshape(2, 1, E) @ wo.T + bo)[:, 0]
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12)
    inp = torch.tensor(fmap, requires_grad=True)
    assert gradcheck(lambda t: pool(t), [inp])
    assert gradcheck(lambda *_: pool(torch.tensor(fmap)), list(pool.parameters()))  # reads the weights itself


@pytest.mark.parametrize("mask", [None, "bool", "float", "padding"])
def test_functional_packed_weights_is_what_the_module_runs(mask):
    rng = np.random.default_rng(1)
    m = nn.MultiheadAttention(6, 3).double()
    x = rng.standard_normal((4, 2, 6))  # (T, B, E)
    add, kw = None, {}
    if mask == "bool":
        blocked = np.triu(np.ones((4, 4), bool), 1)
        kw["attn_mask"], add = torch.tensor(blocked), np.where(blocked, -np.inf, 0.0)
    elif mask == "float":
        f = rng.standard_normal((4, 4))
        kw["attn_mask"], add = torch.tensor(f), f
    elif mask == "padding":
        pad = np.array([[False, False, True, True], [False, False, False, True]])
        kw["key_padding_mask"], add = torch.tensor(pad), np.where(pad, -np.inf, 0.0)[:, None, None, :]
    W, b = m.in_proj_weight.detach(), m.in_proj_bias.detach()
    out, w = F.multi_head_attention_forward(
        torch.tensor(x), torch.tensor(x), torch.tensor(x), 6, 3, m.in_proj_weight, m.in_proj_bias, None, None,
        False, 0.0, m.out_proj.weight, m.out_proj.bias, average_attn_weights=False, **kw)
    Wn = W.numpy()
    want, want_w = _numpy_attention(x, Wn[:6], Wn[6:12], Wn[12:], b.numpy(), m.out_proj.weight.detach().numpy(),
                                    m.out_proj.bias.detach().numpy(), 3, add)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(w.detach().numpy(), want_w, rtol=1e-12, atol=1e-14)
    mod_out, mod_w = m(torch.tensor(x), torch.tensor(x), torch.tensor(x), **kw)
    np.testing.assert_array_equal(mod_out.detach().numpy(), out.detach().numpy())
    np.testing.assert_allclose(mod_w.detach().numpy(), want_w.mean(1), rtol=1e-12, atol=1e-14)


def test_unused_projection_attributes_are_declared_none():
    packed = nn.MultiheadAttention(8, 2)
    for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight", "bias_k", "bias_v"):
        assert getattr(packed, name) is None, name
    assert packed.add_zero_attn is False
    assert [n for n, _ in packed.named_parameters()] == ["in_proj_weight", "in_proj_bias", "out_proj.weight",
                                                         "out_proj.bias"]
    separate = nn.MultiheadAttention(8, 2, kdim=5, vdim=3, bias=False)
    assert separate.in_proj_weight is None and separate.in_proj_bias is None
    assert [n for n, _ in separate.named_parameters()] == ["q_proj_weight", "k_proj_weight", "v_proj_weight",
                                                           "out_proj.weight"]
    assert separate.k_proj_weight.shape == (8, 5) and separate.v_proj_weight.shape == (8, 3)

    # the half-precision converter's walk: every attribute it names is there, the ones in use are cast
    def to_half(layer):
        if isinstance(layer, nn.MultiheadAttention):
            for attr in ["in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                         "bias_k", "bias_v"]:
                t = getattr(layer, attr)
                if t is not None:
                    t.data = t.data.half()
    model = nn.Sequential(packed, separate)
    model.apply(to_half)
    assert packed.in_proj_weight.dtype == torch.float16 and separate.q_proj_weight.dtype == torch.float16
    # a separate-projection layer still runs (kdim and vdim differ from the embedding)
    m = nn.MultiheadAttention(4, 2, kdim=3, vdim=5, batch_first=True)
    out, w = m(torch.randn(2, 6, 4), torch.randn(2, 7, 3), torch.randn(2, 7, 5))
    assert out.shape == (2, 6, 4) and w.shape == (2, 6, 7)


def test_functional_refuses_missing_weights_and_a_wrong_width():
    x = torch.randn(3, 2, 4)
    w, ow = torch.randn(12, 4), torch.randn(4, 4)
    with pytest.raises(ValueError, match="use_separate_proj_weight is True but q_proj_weight"):
        F.multi_head_attention_forward(x, x, x, 4, 2, None, None, None, None, False, 0.0, ow, None,
                                       use_separate_proj_weight=True, k_proj_weight=ow, v_proj_weight=ow)
    with pytest.raises(ValueError, match="use_separate_proj_weight is False but in_proj_weight is None"):
        F.multi_head_attention_forward(x, x, x, 4, 2, None, None, None, None, False, 0.0, ow, None)
    with pytest.raises(ValueError, match="was expecting embedding dimension of 6, but got 4"):
        F.multi_head_attention_forward(x, x, x, 6, 2, w, None, None, None, False, 0.0, ow, None)
    with pytest.raises(NotImplementedError, match="bias_k/bias_v"):
        F.multi_head_attention_forward(x, x, x, 4, 2, w, None, torch.zeros(1, 1, 4), torch.zeros(1, 1, 4), False,
                                       0.0, ow, None)


# ---------------------------------------------------------------------------------------------------------
# reset_parameters, and a low-rank adapter written as subclasses of the standard layers
# ---------------------------------------------------------------------------------------------------------
class _LowRankLinear(nn.Linear):
    """A frozen Linear plus a learned B @ A (B starts at zero), as an adapter library writes it."""

    def __init__(self, n_in, n_out, r):
        nn.Linear.__init__(self, n_in, n_out)  # calls self.reset_parameters() before A and B exist
        self.A = nn.Parameter(torch.zeros(r, n_in))
        self.B = nn.Parameter(torch.zeros(n_out, r))
        self.weight.requires_grad = False
        self.reset_parameters()

    def reset_parameters(self):
        nn.Linear.reset_parameters(self)
        if hasattr(self, "A"):
            nn.init.ones_(self.A)
            nn.init.zeros_(self.B)


def test_a_subclass_reset_parameters_runs_at_construction_and_the_base_one_redraws_in_place():
    calls = []

    class Counted(nn.Linear):
        def reset_parameters(self):
            calls.append(self.weight.shape)
            nn.init.constant_(self.weight, 0.5)

    m = Counted(3, 2)
    assert calls == [(2, 3)] and np.all(m.weight.detach().numpy() == 0.5)
    lr = _LowRankLinear(4, 3, r=2)
    assert np.all(lr.A.detach().numpy() == 1) and np.all(lr.B.detach().numpy() == 0)
    w = lr.weight
    assert np.abs(w.detach().numpy()).max() <= 0.5 and not w.requires_grad  # U(-1/sqrt(4), 1/sqrt(4))
    before = w.detach().numpy().copy()
    lr.reset_parameters()
    assert lr.weight is w and not np.array_equal(w.detach().numpy(), before)  # the same Parameter, new values


def test_reset_parameters_of_the_standard_layers_follow_their_init():
    torch.manual_seed(0)
    lin, conv, convt = nn.Linear(16, 5), nn.Conv2d(4, 3, 3), nn.ConvTranspose1d(2, 6, 5)
    emb, ln, gn, mha = nn.Embedding(7, 3, padding_idx=2), nn.LayerNorm(4), nn.GroupNorm(2, 4), nn.MultiheadAttention(4, 2)
    with torch.no_grad():
        for p in [*lin.parameters(), *conv.parameters(), *convt.parameters(), *emb.parameters(), *ln.parameters(),
                  *gn.parameters(), *mha.parameters()]:
            p.fill_(9.0)
    held = [id(p) for m in (lin, conv, convt, emb, ln, gn) for p in m.parameters()]
    for m in (lin, conv, convt, emb, ln, gn):
        m.reset_parameters()
    mha._reset_parameters()
    assert held == [id(p) for m in (lin, conv, convt, emb, ln, gn) for p in m.parameters()]
    for m, fan_in in ((lin, 16), (conv, 4 * 9), (convt, 6 * 5)):  # a transposed conv's weight is (in, out, k)
        for p in (m.weight, m.bias):
            assert np.abs(p.detach().numpy()).max() <= 1 / np.sqrt(fan_in)
        assert np.abs(m.weight.detach().numpy()).max() > 0.8 / np.sqrt(fan_in)  # (30+ draws: spread to the bound)
    assert np.all(emb.weight.detach().numpy()[2] == 0) and np.all(emb.weight.detach().numpy()[[0, 1, 3]] != 9)
    for m in (ln, gn):
        assert m.weight.tolist() == [1.0] * 4 and m.bias.tolist() == [0.0] * 4
    assert mha.in_proj_bias.tolist() == [0.0] * 12 and mha.out_proj.bias.tolist() == [0.0] * 4
    assert np.abs(mha.in_proj_weight.detach().numpy()).max() <= np.sqrt(6 / (4 + 12))  # Xavier on (12, 4)
    assert mha.out_proj.weight.detach().numpy().max() == 9.0  # out_proj's weight is its Linear's, left as it was


# ---------------------------------------------------------------------------------------------------------
# F.embedding with the layer's arguments (an adapter looks its low-rank factor up with them)
# ---------------------------------------------------------------------------------------------------------
def test_functional_embedding_padding_idx_stops_the_gradient_and_max_norm_renormalises_in_place():
    table = np.arange(12.0).reshape(4, 3)
    w = torch.tensor(table, requires_grad=True)
    ids = torch.tensor([[0, 2, 2], [3, 0, 1]])
    out = F.embedding(ids, w, padding_idx=-2)  # -2 is row 2
    np.testing.assert_array_equal(out.detach().numpy(), table[ids.numpy()])
    out.sum().backward()
    assert w.grad.tolist() == [[2.0] * 3, [1.0] * 3, [0.0] * 3, [1.0] * 3]  # counts, none for the padding row
    w2 = torch.tensor(table)
    out = F.embedding(torch.tensor([1, 3]), w2, max_norm=5.0)
    norms = np.linalg.norm(table, axis=1)
    want = table.copy()
    want[[1, 3]] *= (5.0 / (norms[[1, 3]] + 1e-7))[:, None]  # rows looked up and too long: scaled to 5
    np.testing.assert_allclose(w2.numpy(), want, rtol=1e-15)  # the table itself changed
    np.testing.assert_allclose(out.numpy(), want[[1, 3]], rtol=1e-15)
    with pytest.raises(NotImplementedError, match="scale_grad_by_freq and sparse"):
        F.embedding(ids, w, None, None, 2.0, True, False)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(ids, w, padding_idx=4)


# ---------------------------------------------------------------------------------------------------------
# a speech model: a sparse bool table of alignment heads, and the log-mel front end's stft
# ---------------------------------------------------------------------------------------------------------
def test_to_sparse_lists_the_set_entries_in_row_major_order_and_survives_module_casts():
    heads = torch.zeros(4, 3, dtype=torch.bool)
    heads[2:] = True
    heads[0, 1] = True
    s = heads.to_sparse()
    assert s.is_sparse and not heads.is_sparse and repr(s.layout) == "torch.sparse_coo"
    assert s.indices().T.tolist() == [[0, 1], [2, 0], [2, 1], [2, 2], [3, 0], [3, 1], [3, 2]]
    assert s.values().tolist() == [True] * 7 and s._nnz() == 7 and s.shape == (4, 3)
    assert (s.sparse_dim(), s.dense_dim(), s.is_coalesced()) == (2, 0, True)
    np.testing.assert_array_equal(s.to_dense().numpy(), heads.numpy())
    m = nn.Module()
    m.register_buffer("heads", s, persistent=False)
    m.double()  # only floating tensors are cast: the bool table stays bool
    assert m.heads.dtype == torch.bool and list(m.state_dict()) == []
    x = torch.tensor([[0.0, 1.5], [0.0, 0.0], [2.0, 0.0]])
    rows = x.to_sparse(1)  # the first dim sparse: each row that holds a non-zero, whole
    assert rows.indices().tolist() == [[0, 2]] and rows.values().tolist() == [[0.0, 1.5], [2.0, 0.0]]
    assert rows.double().dtype == torch.float64 and rows.to_dense().tolist() == x.tolist()
    with pytest.raises(TypeError, match=r"call \.to_dense\(\) first"):
        x + rows
    with pytest.raises(RuntimeError, match="sparse_dim must be in"):
        x.to_sparse(3)


def test_stft_is_the_dft_of_windowed_centred_frames():
    rng = np.random.default_rng(3)
    sig = rng.standard_normal((2, 40))
    n_fft, hop = 8, 3
    win = torch.hann_window(n_fft, dtype=torch.float64)
    got = torch.stft(torch.tensor(sig), n_fft, hop, window=win, return_complex=True)
    padded = np.pad(sig, ((0, 0), (4, 4)), mode="reflect")
    starts = range(0, padded.shape[1] - n_fft + 1, hop)
    frames = np.stack([padded[:, s:s + n_fft] for s in starts], 1) * win.numpy()  # (B, n_frames, n_fft)
    want = np.fft.rfft(frames, axis=-1).transpose(0, 2, 1)  # (B, n_freq, n_frames)
    assert got.shape == (2, 5, 14) and got.dtype == torch.complex128
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-13)
    # the power spectrum's gradient, by finite differences
    x = torch.tensor(sig[0], requires_grad=True)
    assert gradcheck(lambda t: torch.stft(t, n_fft, hop, window=win, return_complex=True).abs() ** 2, [x])
    with pytest.raises(RuntimeError, match="requires the return_complex parameter"):
        torch.stft(torch.tensor(sig), n_fft)
    with pytest.raises(RuntimeError, match="expected a 1D window tensor of size equal to win_length=8"):
        torch.stft(torch.tensor(sig), n_fft, window=torch.ones(5), return_complex=True)
    with pytest.warns(UserWarning, match="A window was not provided"):
        torch.stft(torch.tensor(sig), n_fft, return_complex=True)


# ---------------------------------------------------------------------------------------------------------
# the deprecated scale-first overloads of older tutorials and hand-written optimizers
# ---------------------------------------------------------------------------------------------------------
def test_scale_first_overloads_compute_the_current_signature_and_warn_with_it():
    p = torch.tensor([1.0, 2.0, 3.0])
    g = torch.tensor([0.5, -1.0, 2.0])
    with pytest.warns(UserWarning, match=r"add_\(Number alpha, Tensor other\)[\s\S]*add_\(Tensor other, \*, Number alpha = 1\)"):
        p.add_(-0.1, g)  # a char-RNN tutorial's update: p.data.add_(-learning_rate, p.grad.data)
    np.testing.assert_allclose(p.numpy(), [0.95, 2.1, 2.8], rtol=1e-7)
    m, v = torch.zeros(3), torch.zeros(3)
    with pytest.warns(UserWarning, match="deprecated"):
        m.mul_(0.9).add_(1 - 0.9, g)  # an Adam written out by hand
        v.mul_(0.999).addcmul_(1 - 0.999, g, g)
        p.addcdiv_(-0.01, m, v.sqrt() + 1e-8)
    np.testing.assert_allclose(m.numpy(), 0.1 * g.numpy(), rtol=1e-6)
    np.testing.assert_allclose(v.numpy(), 0.001 * g.numpy() ** 2, rtol=1e-6)
    with pytest.warns(UserWarning, match=r"addcmul\(Number value, Tensor tensor1, Tensor tensor2\)"):
        assert torch.addcmul(torch.ones(2), 3, torch.ones(2), torch.full((2,), 2.0)).tolist() == [7.0, 7.0]
    with pytest.warns(UserWarning, match=r"sub\(Number alpha, Tensor other\)"):
        assert torch.sub(torch.ones(2), 2, torch.ones(2)).tolist() == [-1.0, -1.0]
    # the gradient is the current signature's: d/dx (x + a y) = 1, d/dy = a
    x, y = torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor([3.0, 4.0], requires_grad=True)
    with pytest.warns(UserWarning):
        x.add(-2.5, y).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0] and y.grad.tolist() == [-2.5, -2.5]


def test_a_scale_given_twice_or_after_the_tensor_is_refused():
    x = torch.ones(2)
    with pytest.raises(TypeError, match="unrecognized keyword arguments: alpha"):
        x.add(2, torch.ones(2), alpha=3)
    with pytest.raises(TypeError, match=r"add_\(\) takes 1 positional argument but 2 were given"):
        x.add_(torch.ones(2), 2)
    with pytest.raises(TypeError, match=r"add\(\) takes 2 positional arguments but 3 were given"):
        torch.add(x, torch.ones(2), 2)
    with pytest.raises(TypeError, match=r"addcmul_\(\) takes 2 positional arguments but 3 were given"):
        x.addcmul_(torch.ones(2), torch.ones(2), 2)


# ---------------------------------------------------------------------------------------------------------
# the examples' optimizers: Adadelta (the MNIST examples), L-BFGS with a closure (the time-series example)
# ---------------------------------------------------------------------------------------------------------
def test_adadelta_follows_its_update_rule():
    w0, A = np.array([1.0, -2.0, 0.5]), np.array([3.0, 1.0, 0.2])
    w = nn.Parameter(torch.tensor(w0))
    opt = torch.optim.Adadelta([w], lr=0.5, rho=0.8, eps=1e-6, weight_decay=0.1)
    ref, v, u = w0.copy(), np.zeros(3), np.zeros(3)
    for _ in range(3):
        opt.zero_grad()
        (torch.tensor(A) * w * w).sum().backward()  # grad = 2 A w
        opt.step()
        g = 2 * A * ref + 0.1 * ref
        v = 0.8 * v + 0.2 * g * g
        delta = np.sqrt(u + 1e-6) / np.sqrt(v + 1e-6) * g
        u = 0.8 * u + 0.2 * delta * delta
        ref = ref - 0.5 * delta
    np.testing.assert_allclose(w.detach().numpy(), ref, rtol=1e-14)
    with pytest.raises(ValueError, match="Invalid rho value"):
        torch.optim.Adadelta([w], rho=1.5)


def _quadratic():
    A = np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 1.0]])
    b = np.array([1.0, -1.0, 0.5])
    return A, b


def test_lbfgs_with_a_closure_reaches_the_minimum_of_a_quadratic_and_keeps_its_history():
    A, b = _quadratic()
    w = nn.Parameter(torch.zeros(3, dtype=torch.float64))
    opt = torch.optim.LBFGS([w], lr=1, max_iter=4, history_size=2)
    calls = []

    def closure():
        opt.zero_grad()
        loss = 0.5 * w @ torch.tensor(A) @ w - torch.tensor(b) @ w
        loss.backward()
        calls.append(loss.item())
        return loss

    first = opt.step(closure)
    assert first.item() == 0.0 and len(calls) == 4  # the first loss; one closure call per iteration
    # the first move is along -g, scaled to min(1, 1 / |g|_1) lr
    assert calls[1] == pytest.approx(0.5 * (b / 2.5) @ A @ (b / 2.5) - b @ (b / 2.5), rel=1e-12)
    opt.step(closure)
    state = opt.state[w]
    assert state["n_iter"] == 8 and len(state["old_dirs"]) == 2  # carried across calls; the oldest pairs dropped
    # with the stopping tests off, the fixed-step iteration reaches the minimiser
    w.data = torch.zeros(3, dtype=torch.float64)
    opt = torch.optim.LBFGS([w], lr=1, max_iter=40, history_size=2, tolerance_change=0, tolerance_grad=1e-12)
    opt.step(closure)
    np.testing.assert_allclose(w.detach().numpy(), np.linalg.solve(A, b), rtol=1e-11)
    with pytest.raises(NotImplementedError, match="line_search_fn='strong_wolfe'"):
        torch.optim.LBFGS([w], line_search_fn="strong_wolfe")
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        torch.optim.LBFGS([{"params": [w]}, {"params": [nn.Parameter(torch.ones(1))]}])


def test_step_with_a_closure_returns_its_loss_for_every_optimizer():
    w = nn.Parameter(torch.tensor([1.0, 2.0]))
    opt = torch.optim.SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with torch.no_grad():  # the closure runs with gradients on, whatever the caller's mode
        loss = opt.step(closure)
    assert loss.item() == 5.0 and w.tolist() == pytest.approx([0.8, 1.6])
    assert opt.step() is None
