"""The names the census found missing and that are added here, checked without PyTorch: values derived by
NumPy or by hand, gradients by finite differences in float64 over every element (tinyattn.gradcheck).
The same calls are compared with PyTorch in tests/oracle/test_census_names_torch.py."""
import warnings

import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn.functional as F
from tinyattn import gradcheck

rng = np.random.default_rng(7)


def leaf(*shape):
    return torch.tensor(rng.standard_normal(shape), dtype=torch.float64, requires_grad=True)


# ------------------------------------------------------------------ Tensor methods
def test_memory_layout_answers():
    x = torch.zeros(2, 3)
    assert x.stride() == (3, 1) and x.stride(0) == 3 and x.stride(-1) == 1
    assert x.t().stride() == (1, 3)  # a transpose swaps the steps, as PyTorch's view does
    assert x.element_size() == 4 and x.itemsize == 4 and x.nbytes == 24
    assert torch.zeros(2, dtype=torch.float64).element_size() == 8
    assert x.data_ptr() == x.view(6).data_ptr() and isinstance(x.data_ptr(), int)
    assert x.is_cuda is False


def test_square_lerp_and_their_gradients():
    x = leaf(3, 4)
    np.testing.assert_array_equal(x.square()._data, x._data * x._data)
    assert torch.tensor([3]).square().dtype == torch.int64
    a, b, w = leaf(5), leaf(5), torch.tensor([0.0, 0.2, 0.5, 0.7, 1.0], dtype=torch.float64, requires_grad=True)
    out = a.lerp(b, w)._data
    np.testing.assert_allclose(out, a._data + w._data * (b._data - a._data), rtol=1e-15, atol=1e-15)
    assert out[0] == a._data[0] and out[-1] == b._data[-1]  # exact at both ends
    assert gradcheck(lambda a, b, w: a.lerp(b, w), [a, b, w])
    assert gradcheck(lambda a, b: a.lerp(b, 0.3), [a, b])


def test_triu_and_tril_in_place():
    x = torch.ones(2, 3, 3)
    assert x.triu_(1) is x
    np.testing.assert_array_equal(x._data, np.broadcast_to(np.triu(np.ones((3, 3)), 1), (2, 3, 3)))
    y = torch.full((3, 4), float("inf"))
    y.tril_()  # zeroes, not inf * 0 = nan
    np.testing.assert_array_equal(y._data, np.where(np.tril(np.ones((3, 4))) == 1, np.inf, 0.0))


def test_masked_select_broadcasts_and_passes_gradients():
    x = leaf(2, 3)
    m = torch.tensor([True, False, True])
    np.testing.assert_array_equal(x.masked_select(m)._data, x._data[:, [0, 2]].reshape(-1))
    assert gradcheck(lambda x: x.masked_select(m), [x])
    with pytest.raises(TypeError, match="bool mask"):
        x.masked_select(torch.tensor([1, 0, 1]))


def test_unfold_windows_and_gradient():
    x = leaf(2, 7)
    u = x.unfold(1, 3, 2)  # windows starting at 0, 2, 4
    assert u.shape == (2, 3, 3)
    np.testing.assert_array_equal(u._data[:, 1], x._data[:, 2:5])
    assert torch.arange(5.0).unfold(0, 2, 1).tolist() == [[0, 1], [1, 2], [2, 3], [3, 4]]
    assert leaf(4, 5, 2).unfold(1, 2, 3).shape == (4, 2, 2, 2)
    assert gradcheck(lambda x: x.unfold(1, 3, 2), [x])  # overlapping windows add their gradients
    with pytest.raises(RuntimeError, match="maximum size"):
        x.unfold(1, 8, 1)


def test_scatter_scatter_add_and_index_copy():
    idx = torch.tensor([[0, 2], [1, 1]])
    s = leaf(2, 2)
    base = leaf(2, 3)
    out = base.scatter(1, idx, s)
    expect = base._data.copy()
    expect[0, 0], expect[0, 2], expect[1, 1] = s._data[0, 0], s._data[0, 1], s._data[1, 1]  # the last write wins
    np.testing.assert_array_equal(out._data[0], expect[0])
    np.testing.assert_array_equal(out._data[1, [0, 2]], base._data[1, [0, 2]])  # row 1 writes only its column 1
    assert out._data[1, 1] in (s._data[1, 0], s._data[1, 1])  # written twice: PyTorch leaves which one unspecified
    assert gradcheck(lambda b, s: b.scatter(1, torch.tensor([[0, 2], [1, 0]]), s), [base, s])
    added = base.scatter_add(1, idx, s)
    expect = base._data.copy()
    np.add.at(expect, (np.array([[0, 0], [1, 1]]), idx._data), s._data)  # both writes to [1, 1] add up
    np.testing.assert_allclose(added._data, expect, rtol=1e-15)
    assert gradcheck(lambda b, s: b.scatter_add(1, idx, s), [base, s])
    z = torch.zeros(3)
    assert z.scatter_add_(0, torch.tensor([0, 0, 2]), torch.ones(3)) is z and z.tolist() == [2, 0, 1]
    src = leaf(2, 2)
    copied = base.index_copy(1, torch.tensor([2, 0]), src)
    np.testing.assert_array_equal(copied._data[:, [2, 0]], src._data)
    np.testing.assert_array_equal(copied._data[:, 1], base._data[:, 1])
    assert gradcheck(lambda b, s: b.index_copy(1, torch.tensor([2, 0]), s), [base, src])
    w = torch.zeros(2, 3)
    assert w.index_copy_(0, torch.tensor([1]), torch.ones(1, 3)) is w and w.tolist() == [[0, 0, 0], [1, 1, 1]]


def test_new_empty_and_empty_like_have_the_asked_shape_and_dtype():
    x = torch.ones(2, 3, dtype=torch.float64)
    assert x.new_empty(4).shape == (4,) and x.new_empty((2, 5)).dtype == torch.float64
    assert x.new_empty(2, dtype=torch.int64).dtype == torch.int64
    e = torch.empty_like(torch.ones(2, 3, dtype=torch.int64))
    assert e.shape == (2, 3) and e.dtype == torch.int64
    assert torch.empty_like(x, dtype=torch.float32).dtype == torch.float32
    assert torch.empty_like(x, requires_grad=True).requires_grad


def test_gpu_only_methods_raise_a_cpu_builds_errors():
    x = torch.ones(2)
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        x.cuda()
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        x.cuda(0)
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        x.pin_memory()
    with pytest.raises(TypeError, match="NumPy has no bfloat16"):
        x.bfloat16()


# ------------------------------------------------------------------ torch.* and F.*
def test_triangle_indices():
    assert torch.triu_indices(3, 4, 1).tolist() == [list(r) for r in np.triu_indices(3, 1, 4)]
    assert torch.tril_indices(3, 3).tolist() == [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    assert torch.triu_indices(0, 3).shape == (2, 0) and torch.triu_indices(2, 2).dtype == torch.int64
    assert torch.triu_indices(2, 2, dtype=torch.int32).dtype == torch.int32
    with pytest.raises(NotImplementedError, match="integer dtype"):
        torch.triu_indices(2, 2, dtype=torch.float32)


def test_trapezoid_against_the_rule_by_hand_and_gradients():
    y = leaf(3, 5)
    x = torch.tensor(np.sort(rng.standard_normal(5)), dtype=torch.float64, requires_grad=True)
    yy, xx = y._data, x._data
    by_hand = ((xx[1:] - xx[:-1]) * (yy[:, 1:] + yy[:, :-1]) / 2).sum(1)
    np.testing.assert_allclose(torch.trapezoid(y, x)._data, by_hand, rtol=1e-14)
    np.testing.assert_allclose(torch.trapezoid(y, dx=0.5, dim=0)._data, 0.5 * (yy[1:] + yy[:-1]).sum(0) / 2,
                               rtol=1e-14)
    assert torch.trapezoid(torch.tensor([1.0, 2.0, 4.0])).item() == 4.5
    assert torch.trapezoid(torch.zeros(0, 3), dim=0).tolist() == [0, 0, 0]
    assert gradcheck(lambda y, x: torch.trapezoid(y, x), [y, x])
    assert gradcheck(lambda y: torch.trapezoid(y, dx=0.3, dim=0), [y])


def test_normalize_l1_loss_softplus_values_and_gradients():
    x = leaf(4, 3)
    n = np.sqrt((x._data ** 2).sum(1, keepdims=True))
    np.testing.assert_allclose(F.normalize(x)._data, x._data / n, rtol=1e-15)
    np.testing.assert_allclose(F.normalize(x, p=1, dim=0)._data,
                               x._data / np.abs(x._data).sum(0, keepdims=True), rtol=1e-15)
    assert F.normalize(torch.zeros(2, 3)).tolist() == [[0, 0, 0], [0, 0, 0]]  # eps keeps 0/0 away
    assert gradcheck(lambda x: F.normalize(x), [x]) and gradcheck(lambda x: F.normalize(x, p=3, dim=0), [x])
    t = leaf(4, 3)
    np.testing.assert_allclose(F.l1_loss(x, t)._data, np.abs(x._data - t._data).mean(), rtol=1e-15)
    assert F.l1_loss(x, t, reduction="none").shape == (4, 3)
    np.testing.assert_allclose(F.l1_loss(x, t, reduction="sum")._data, np.abs(x._data - t._data).sum(), rtol=1e-15)
    np.testing.assert_allclose(F.l1_loss(x, t, reduce=False)._data, np.abs(x._data - t._data), rtol=1e-15)
    assert gradcheck(lambda x, t: F.l1_loss(x, t), [x, t])
    with pytest.raises(ValueError, match="must match"):
        F.l1_loss(x, t.view(12))
    s = torch.tensor([-3.0, 0.5, 9.0, 40.0], dtype=torch.float64, requires_grad=True)
    out = F.softplus(s, beta=2, threshold=20)._data
    np.testing.assert_allclose(out[:3], np.log1p(np.exp(2 * s._data[:3])) / 2, rtol=1e-15)
    assert out[3] == 40.0  # beta x = 80 > threshold: x itself, no overflow
    assert gradcheck(lambda s: F.softplus(s, beta=2, threshold=20), [s])


def test_dtype_and_set_default_tensor_type():
    assert isinstance(torch.float32, torch.dtype) and isinstance(torch.int64, torch.dtype)
    assert isinstance(torch.ones(2).dtype, torch.dtype) and not isinstance(3, torch.dtype)
    with pytest.raises(TypeError):
        torch.dtype()
    try:
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            torch.set_default_tensor_type("torch.DoubleTensor")
        assert torch.get_default_dtype() == torch.float64 and torch.tensor([1.5]).dtype == torch.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.set_default_tensor_type(torch.FloatTensor)
            assert torch.get_default_dtype() == torch.float32
            with pytest.raises(TypeError, match="only floating-point types"):
                torch.set_default_tensor_type("torch.LongTensor")
            with pytest.raises(TypeError, match="Torch not compiled with CUDA enabled"):
                torch.set_default_tensor_type(torch.cuda.FloatTensor)
    finally:
        torch.set_default_dtype(torch.float32)


def test_rng_state_round_trip_and_fork_rng():
    torch.manual_seed(3)
    state = torch.get_rng_state()
    assert state.dtype == torch.uint8 and state.shape == (37,)
    first = torch.randn(5).tolist()
    torch.set_rng_state(state)
    assert torch.randn(5).tolist() == first
    with torch.random.fork_rng():
        torch.randn(100)
        torch.manual_seed(99)
        torch.rand(3)
    after_fork = torch.randn(2).tolist()
    torch.set_rng_state(state)
    torch.randn(5)
    assert torch.randn(2).tolist() == after_fork  # the block moved nothing
    with pytest.raises(TypeError, match="ByteTensor"):
        torch.set_rng_state(torch.zeros(37))
    with pytest.raises(RuntimeError, match="size to be 3"):
        torch.set_rng_state(torch.zeros(3, dtype=torch.uint8))


def test_matmul_precision_and_kernel_choices_change_no_number():
    assert torch.get_float32_matmul_precision() == "highest"
    try:
        torch.set_float32_matmul_precision("high")
        assert torch.get_float32_matmul_precision() == "high"
        with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
            torch.set_float32_matmul_precision("fast")
        assert torch.get_float32_matmul_precision() == "high"
    finally:
        torch.set_float32_matmul_precision("highest")
    from tinyattn.nn.attention import SDPBackend, sdpa_kernel
    q = leaf(1, 2, 3, 4)
    plain = F.scaled_dot_product_attention(q, q, q)._data
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]):
        np.testing.assert_array_equal(F.scaled_dot_product_attention(q, q, q)._data, plain)
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with sdpa_kernel("math"):
            pass
    assert SDPBackend.MATH == 0 and SDPBackend.ERROR == -1
    with pytest.warns(FutureWarning, match="sdp_kernel\\(\\)` is deprecated"):
        with torch.backends.cuda.sdp_kernel(enable_flash=False):
            pass


def test_one_process_names():
    from tinyattn.utils.data import DistributedSampler, get_worker_info
    assert get_worker_info() is None
    assert list(DistributedSampler(list(range(5)), num_replicas=2, rank=1, shuffle=False)) == [1, 3, 0]
    assert torch.distributed.ReduceOp.SUM == 0 and torch.distributed.ReduceOp.AVG == 1
    lin = torch.nn.Linear(2, 2)
    x = torch.ones(1, 2)
    assert torch.nn.DataParallel(lin)(x).tolist() == lin(x).tolist()
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        torch.cuda.set_device("cpu")
    with pytest.raises(ValueError, match="with a specified index"):
        torch.cuda.set_device("cuda")


def test_categorical_probabilities_log_prob_entropy_and_samples():
    logits = leaf(3, 5)
    d = torch.distributions.Categorical(logits=logits)
    lp = logits._data - np.log(np.exp(logits._data).sum(-1, keepdims=True))  # log-softmax by hand
    np.testing.assert_allclose(d.logits._data, lp, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(d.probs._data, np.exp(lp), rtol=1e-14)
    v = np.array([[1, 0, 4], [2, 2, 2]])  # (2, 3): broadcast against the batch of 3
    np.testing.assert_allclose(d.log_prob(torch.tensor(v))._data, np.take_along_axis(
        np.broadcast_to(lp, (2, 3, 5)), v[..., None], -1)[..., 0], rtol=1e-15)
    np.testing.assert_allclose(d.entropy()._data, -(np.exp(lp) * lp).sum(-1), rtol=1e-14)
    assert gradcheck(lambda l: torch.distributions.Categorical(logits=l).entropy(), [logits])
    assert gradcheck(lambda l: torch.distributions.Categorical(logits=l).log_prob(torch.tensor([4, 0, 1])), [logits])
    p = torch.tensor([[0.0, 2.0, 6.0]], dtype=torch.float64)
    dp = torch.distributions.Categorical(probs=p)
    np.testing.assert_allclose(dp.probs._data, [[0, 0.25, 0.75]], rtol=1e-15)
    assert dp.logits._data[0, 0] == np.log(np.finfo(np.float64).eps)  # a 0 clamps to eps, as PyTorch
    assert dp.entropy()._data[0] == pytest.approx(-(0.25 * np.log(0.25) + 0.75 * np.log(0.75)), rel=1e-14)
    torch.manual_seed(0)
    draws = dp.sample((20000,))
    assert draws.shape == (20000, 1) and draws.dtype == torch.int64 and d.sample().shape == (3,)
    freq = np.bincount(draws._data.ravel(), minlength=3) / 20000
    assert freq[0] == 0 and abs(freq[2] - 0.75) < 5 * np.sqrt(0.75 * 0.25 / 20000)  # within 5 standard errors
    assert dp.mode.tolist() == [2] and dp.batch_shape == (1,) and dp.param_shape == (1, 3)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        torch.distributions.Categorical()


def test_checkpoint_gives_the_functions_values_and_gradients():
    from tinyattn.utils.checkpoint import checkpoint, get_device_states, set_device_states
    x = leaf(3, 4)
    w = leaf(4, 2)
    direct = (x @ w).tanh()
    out = checkpoint(lambda a, b: (a @ b).tanh(), x, w, use_reentrant=False)
    np.testing.assert_array_equal(out._data, direct._data)
    assert gradcheck(lambda a, b: checkpoint(lambda p, q: (p @ q).tanh(), a, b, use_reentrant=False), [x, w])
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(lambda a: a * 2, x)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: scale"):
        checkpoint(lambda a, scale: a * scale, x, use_reentrant=True, scale=2)
    assert get_device_states(x) == ([], []) and set_device_states([], []) is None
