"""Issue 38's programs run on PyTorch and on tinyattn: same values, same gradients, same raise-or-not.
(The torch-free versions, with hand-derived values, are in tests/test_engine_views_and_writes.py.)"""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import tinyattn
import tinyattn.nn.functional as AF


def _x(T, rows=((1.0, 2.0, 4.0), (0.0, 3.0, 1.0))):
    return T.tensor([list(r) for r in rows], dtype=T.float64, requires_grad=True)


def expand_view(T, F):
    x = T.tensor([[1.0, 2.0]], dtype=T.float64, requires_grad=True)
    h = x * 2
    e = h.expand(2, 2)
    h[0] = 0.0
    e.sum().backward()
    return x.grad


def expand_fill(T, F):
    x = T.zeros(1, 3)
    e = x.expand(2, 3)
    e.fill_(1.0)
    e[0] = T.tensor([1.0, 2.0, 3.0])
    return x


def expand_add(T, F):
    T.zeros(1, 3).expand(2, 3).add_(1)


def layer_norm_write_output(T, F):
    x = _x(T)
    y = F.layer_norm(x, (3,))
    y.detach().mul_(5)
    (y * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum().backward()
    return x.grad


def layer_norm_write_input(T, F):
    h = _x(T) * 1
    y = F.layer_norm(h, (3,))
    h.add_(1)
    y.sum().backward()


def layer_norm_data(T, F):
    x = _x(T)
    y = F.layer_norm(x, (3,))
    x.data = T.tensor([[0.0, 1.0, 5.0], [2.0, 2.5, 1.0]], dtype=T.float64)
    (y * T.tensor([1.0, 2.0, 3.0], dtype=T.float64)).sum().backward()
    return x.grad


def requires_grad_off(T, F):
    w = _x(T)
    loss = (w * 3).sum()
    w.requires_grad_(False)
    loss.backward()
    return w.grad


def retain_grad_view(T, F):
    x = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    h = x * 2
    h.retain_grad()
    h[1:].mul_(3)
    (h * h).sum().backward()
    return h.grad, x.grad


def index_layout(T, F):
    x = T.arange(24.0).reshape(2, 3, 4)
    ys = (x.index_select(1, T.tensor([0, 2])), x[:, [0, 2]], x.mT[T.tensor([1, 1])], x.permute(2, 0, 1)[:, [1, 0, 1]])
    return [(tuple(y.shape), y.stride(), y.is_contiguous()) for y in ys]


def one_d(T, F):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    return x.t() is x, x.flatten() is x


def tensor_copies(T, F):
    a = np.arange(10.0)
    t, s = T.tensor(a[::2]), T.as_tensor(a)
    a[0] = 99.0
    return t, t.is_contiguous(), s, T.tensor([0.71], dtype=T.float64)


def data_seen(T, F):
    w, x = _x(T), _x(T, ((3.0, 4.0, 5.0), (6.0, 7.0, 8.0)))
    loss = (w * x).sum()
    w.data = T.ones(2, 3, dtype=T.float64) * 10
    loss.backward()
    return x.grad, w.grad


def no_grad_row(T, F):
    emb = _x(T)
    with T.no_grad():
        row = emb[0]
    (emb * 2).sum().backward()
    with T.no_grad():
        emb.sub_(0.1 * emb.grad)
    repr(row)
    return row.requires_grad


def no_grad_view_backward(T, F):
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with T.no_grad():
        v = x[1:]
    (v * 2).sum().backward()
    return v.requires_grad, v.is_leaf, x.grad, v.grad


def sdpa_write(T, F, shape=(1, 2, 3, 4)):
    q = T.tensor(np.random.default_rng(0).normal(size=shape), requires_grad=True)
    y = F.scaled_dot_product_attention(q, q * 0.5, q)
    y += 1
    y.sum().backward()
    return q.grad


def add_alpha_twice(T, F):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    y = T.add(x, x, alpha=2)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    return x.grad


def split_write(T, F):
    q, k, v = (_x(T, ((1.0,) * 6,)) * 1).split(2, dim=1)
    q *= 2


def overlap(T, F):
    y = T.arange(5.0)
    y[1:].add_(y[:-1])


def mul_self(T, F):
    t = T.tensor([1.0, 2.0], requires_grad=True) * 1
    t.mul_(t)
    t.sum().backward()


def setitem_none(T, F):
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    buf = T.zeros(3) * x
    buf[None] = (x * 2).reshape(1, 3)
    buf.sum().backward()
    return x.grad


def autograd_grad(T, F):
    x, z = T.tensor([1.0, 2.0], requires_grad=True), T.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x * z).sum()
    return T.autograd.grad(y, [x, z], retain_graph=True), T.autograd.grad(y, [x, T.ones(1, requires_grad=True)],
                                                                          allow_unused=True)


def inplace_activations(T, F):
    x = T.tensor([-1.0, 2.0], dtype=T.float64, requires_grad=True)
    out = []
    for name in ("relu_", "exp_", "sigmoid_", "tanh_"):
        y = x * 1
        getattr(y, name)()
        y.sum().backward()
        out.append((y, x.grad.clone()))
        x.grad = None
    y = x * 1
    F.relu(y, inplace=True)
    return out, y


PROGRAMS = [expand_view, expand_fill, expand_add, layer_norm_write_output, layer_norm_write_input, layer_norm_data,
            requires_grad_off, retain_grad_view, index_layout, one_d, tensor_copies, data_seen, no_grad_row,
            no_grad_view_backward, sdpa_write, lambda T, F: sdpa_write(T, F, (2, 3, 4)), add_alpha_twice, split_write,
            overlap, mul_self, setitem_none, autograd_grad, inplace_activations]


def _run(program, T, F):
    try:
        return "ok", program(T, F)
    except RuntimeError as e:
        return "raised", type(e).__name__


def _plain(v):
    if isinstance(v, (torch.Tensor, tinyattn.Tensor)):
        return np.asarray(v.detach().numpy(), dtype=np.float64)
    if isinstance(v, (tuple, list)):
        return [_plain(i) for i in v]
    return v


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.allclose(a, b, rtol=1e-6, atol=1e-8)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(i, j) for i, j in zip(a, b))
    return a == b


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: getattr(p, "__name__", "sdpa_3d"))
def test_program_agrees_with_pytorch(program):
    theirs, ours = _run(program, torch, TF), _run(program, tinyattn, AF)
    assert theirs[0] == ours[0], (theirs, ours)
    assert _same(_plain(ours[1]), _plain(theirs[1])), (ours, theirs)
