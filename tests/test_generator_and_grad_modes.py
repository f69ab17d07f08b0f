"""torch.Generator and generator=, set_grad_enabled, inference_mode, Variable, and the *_like and
in-place random fills: the idioms of the makemore lectures and of older tutorials."""
import numpy as np
import pytest

import tinyattn as torch
from tinyattn.autograd import Variable
from tinyattn.utils.data import DataLoader, RandomSampler, TensorDataset, random_split


def test_a_seeded_generator_repeats_its_stream_and_leaves_manual_seeds_alone():
    torch.manual_seed(0)
    expected_global = torch.randn(3).tolist()
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(2147483647)  # manual_seed returns the generator, as in PyTorch
    a = torch.randn((27, 27), generator=g)
    assert a.shape == (27, 27) and g.initial_seed() == 2147483647
    assert torch.randn(3).tolist() == expected_global  # drawing from g did not move the global stream
    g2 = torch.Generator().manual_seed(2147483647)
    np.testing.assert_array_equal(torch.randn(27, 27, generator=g2).numpy(), a.numpy())
    # every sampler takes it
    g, h = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    p = torch.tensor([0.2, 0.3, 0.5])
    draws = [torch.multinomial(p, num_samples=1, replacement=True, generator=x).item() for x in (g, h)]
    assert draws[0] == draws[1] and 0 <= draws[0] < 3
    assert torch.randint(0, 10, (32,), generator=g).tolist() == torch.randint(0, 10, (32,), generator=h).tolist()
    assert torch.rand(4, generator=g).tolist() == torch.rand(4, generator=h).tolist()
    assert torch.randperm(6, generator=g).tolist() == torch.randperm(6, generator=h).tolist()
    assert torch.normal(0.0, 1.0, (2,), generator=g).tolist() == torch.normal(0.0, 1.0, (2,), generator=h).tolist()


def test_a_generator_drives_data_loading_and_init_too():
    ds = TensorDataset(torch.arange(10))
    orders = []
    for _ in range(2):
        g = torch.Generator().manual_seed(3)
        orders.append([b[0].tolist() for b in DataLoader(ds, batch_size=5, shuffle=True, generator=g)])
    assert orders[0] == orders[1] and sorted(sum(orders[0], [])) == list(range(10))
    a = random_split(range(10), [7, 3], generator=torch.Generator().manual_seed(1))
    b = random_split(range(10), [7, 3], generator=torch.Generator().manual_seed(1))
    assert list(a[0]) == list(b[0])
    assert len(list(RandomSampler(range(4), generator=torch.Generator()))) == 4
    w1, w2 = torch.empty(3, 4), torch.empty(3, 4)
    w1.uniform_(-0.1, 0.1, generator=torch.Generator().manual_seed(9))
    torch.nn.init.uniform_(w2, -0.1, 0.1, generator=torch.Generator().manual_seed(9))
    assert w1.tolist() == w2.tolist() and float(w1.abs().max()) <= 0.1
    w1.normal_(0.0, 0.01)
    assert abs(float(w1.mean())) < 0.02 and w1.shape == (3, 4)
    with pytest.raises(TypeError, match="generator must be a tinyattn.Generator, a numpy.random.Generator or None"):
        torch.randn(2, generator=42)
    with pytest.raises(TypeError, match="Generator.manual_seed expects an int, got float"):
        torch.Generator().manual_seed(1.5)
    seeded = torch.Generator()
    s = seeded.seed()  # from the operating system; the generator reports the seed it took
    assert seeded.initial_seed() == s and seeded.device == "cpu"


def test_the_like_factories():
    x = torch.zeros(2, 3, dtype=torch.float64)
    assert torch.randn_like(x).shape == (2, 3) and torch.randn_like(x).dtype == torch.float64
    assert torch.rand_like(x).dtype == torch.float64 and float(torch.rand_like(x).max()) < 1.0
    f = torch.full_like(torch.zeros(2, dtype=torch.int64), 7)
    assert f.tolist() == [7, 7] and f.dtype == torch.int64
    assert torch.full_like(x, 0.5, dtype=torch.float32).dtype == torch.float32


def test_set_grad_enabled_works_as_a_call_and_as_a_block():
    w = torch.ones(2, requires_grad=True)
    with torch.set_grad_enabled(False):
        assert not (w * 2).requires_grad
    assert (w * 2).requires_grad  # back on after the block
    for is_train in (True, False):  # the training-loop idiom
        with torch.set_grad_enabled(is_train):
            assert (w * 2).requires_grad is is_train
    torch.set_grad_enabled(False)  # a plain call switches recording off until switched back
    try:
        assert not torch.is_grad_enabled() and not (w * 2).requires_grad
    finally:
        torch.set_grad_enabled(True)
    assert torch.is_grad_enabled()
    with pytest.raises(TypeError, match="set_grad_enabled expects a bool, got str"):
        torch.set_grad_enabled("no")


def test_inference_mode_as_a_block_and_a_decorator_and_variable():
    w = torch.ones(2, requires_grad=True)
    with torch.inference_mode():
        assert not (w * 2).requires_grad

    @torch.inference_mode()
    def evaluate():
        return w * 3

    assert not evaluate().requires_grad and evaluate().tolist() == [3.0, 3.0]
    with torch.inference_mode(False):
        assert (w * 2).requires_grad
    v = Variable(torch.tensor([2.0]), requires_grad=True)  # pre-0.4 code: a Variable is a tensor
    (v * v).sum().backward()
    assert v.grad.tolist() == [4.0] and Variable(w) is w and isinstance(Variable([1.0]), torch.Tensor)


def test_type_conversions_by_name():
    x = torch.tensor([1.7, -2.2])
    assert x.int().tolist() == [1, -2] and x.int().dtype == torch.int32
    assert x.half().dtype == torch.float16 and torch.tensor([3, 300]).byte().tolist() == [3, 44]  # 300 mod 256
    assert x.is_contiguous() and not torch.ones(2, 3).t().is_contiguous()
