"""Conv1d/Conv2d, pooling and BatchNorm against PyTorch 2.13: values, every gradient, modules, errors."""
import numpy as np
import pytest
import torch

import tinyattn
import tinyattn.nn.functional as F

RNG = np.random.default_rng(0)


def both(fn_t, fn_a, *arrays):
    """Run the same call on torch and tinyattn tensors (float64); return the outputs and all gradients."""
    tt = [torch.tensor(a, requires_grad=True) for a in arrays]
    aa = [tinyattn.tensor(a.copy(), requires_grad=True) for a in arrays]
    ot, oa = fn_t(*tt), fn_a(*aa)
    extra = None
    if isinstance(ot, tuple):  # (values, indices)
        extra = (ot[1].numpy(), oa[1].numpy())
        ot, oa = ot[0], oa[0]
    assert tuple(ot.shape) == tuple(oa.shape)
    R = RNG.standard_normal(tuple(ot.shape))
    (ot * torch.tensor(R)).sum().backward()
    (oa * tinyattn.tensor(R)).sum().backward()
    np.testing.assert_allclose(oa.detach().numpy(), ot.detach().numpy(), rtol=1e-12, atol=1e-12)
    for a, t in zip(aa, tt):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-12)
    if extra is not None:
        np.testing.assert_array_equal(extra[1], extra[0])


@pytest.mark.parametrize("stride,padding,dilation,groups,K", [
    (1, 0, 1, 1, (3, 3)), (2, 1, 1, 2, (3, 3)), (1, "same", 2, 3, (2, 3)), (3, 2, 2, 1, (3, 1)),
    (1, "valid", 1, 6, (2, 2)), (1, "same", 1, 1, (4, 4)), ((2, 1), (0, 1), (1, 2), 2, (2, 3))])
def test_conv2d(stride, padding, dilation, groups, K):
    x, w, b = RNG.standard_normal((2, 6, 9, 8)), RNG.standard_normal((6, 6 // groups, *K)), RNG.standard_normal(6)
    both(lambda x, w, b: torch.nn.functional.conv2d(x, w, b, stride, padding, dilation, groups),
         lambda x, w, b: F.conv2d(x, w, b, stride, padding, dilation, groups), x, w, b)


@pytest.mark.parametrize("stride,padding,dilation,groups,k", [(1, 0, 1, 1, 3), (2, 1, 1, 2, 3), (1, "same", 2, 4, 4),
                                                              (1, "same", 1, 1, 4)])
def test_conv1d(stride, padding, dilation, groups, k):
    x, w = RNG.standard_normal((3, 4, 11)), RNG.standard_normal((8, 4 // groups, k))
    both(lambda x, w: torch.nn.functional.conv1d(x, w, None, stride, padding, dilation, groups),
         lambda x, w: F.conv1d(x, w, None, stride, padding, dilation, groups), x, w)
    both(lambda x, w: torch.nn.functional.conv1d(x, w), lambda x, w: F.conv1d(x, w), x[0],
         RNG.standard_normal((2, 4, 3)))  # no batch dim


@pytest.mark.parametrize("kwargs", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                    dict(kernel_size=3, stride=2, ceil_mode=True),
                                    dict(kernel_size=(2, 3), stride=(1, 2), dilation=2, padding=1),
                                    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, return_indices=True)])
def test_max_pool2d(kwargs):
    both(lambda x: torch.nn.functional.max_pool2d(x, **kwargs), lambda x: F.max_pool2d(x, **kwargs),
         RNG.standard_normal((2, 3, 9, 8)))


@pytest.mark.parametrize("kwargs", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, return_indices=True),
                                    dict(kernel_size=3, ceil_mode=True), dict(kernel_size=2, stride=1, dilation=3)])
def test_max_pool1d(kwargs):
    both(lambda x: torch.nn.functional.max_pool1d(x, **kwargs), lambda x: F.max_pool1d(x, **kwargs),
         RNG.standard_normal((2, 3, 11)))


@pytest.mark.parametrize("kwargs", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
                                    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
                                    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                                    dict(kernel_size=(2, 3), divisor_override=5)])
def test_avg_pool2d(kwargs):
    both(lambda x: torch.nn.functional.avg_pool2d(x, **kwargs), lambda x: F.avg_pool2d(x, **kwargs),
         RNG.standard_normal((2, 3, 9, 8)))


@pytest.mark.parametrize("size", [1, (3, 5), (None, 3), (4, 4), 7])
def test_adaptive_avg_pool2d(size):
    both(lambda x: torch.nn.functional.adaptive_avg_pool2d(x, size), lambda x: F.adaptive_avg_pool2d(x, size),
         RNG.standard_normal((2, 3, 9, 8)))


def test_avg_and_adaptive_pool1d():
    x = RNG.standard_normal((2, 3, 11))
    both(lambda x: torch.nn.functional.adaptive_avg_pool1d(x, 4), lambda x: F.adaptive_avg_pool1d(x, 4), x)
    both(lambda x: torch.nn.functional.avg_pool1d(x, 3, 2, 1), lambda x: F.avg_pool1d(x, 3, 2, 1), x)


def _copy_into(mine, theirs):
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})


@pytest.mark.parametrize("cls,args,shape", [("Conv1d", (4, 6, 3), (2, 4, 10)),
                                            ("Conv2d", (4, 6, (3, 2)), (2, 4, 7, 6))])
@pytest.mark.parametrize("kwargs", [dict(), dict(stride=2, padding=1, bias=False), dict(padding="same", dilation=2,
                                                                                       groups=2),
                                    dict(padding=1, padding_mode="reflect"), dict(padding=2, padding_mode="circular"),
                                    dict(padding=1, padding_mode="replicate")])
def test_conv_modules_with_pytorchs_weights(cls, args, shape, kwargs):
    theirs = getattr(torch.nn, cls)(*args, **kwargs).double()
    mine = getattr(tinyattn.nn, cls)(*args, **kwargs).double()
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert repr(mine) == repr(theirs)
    _copy_into(mine, theirs)
    x = RNG.standard_normal(shape)
    xt, xa = torch.tensor(x, requires_grad=True), tinyattn.tensor(x, requires_grad=True)
    ot, oa = theirs(xt), mine(xa)
    np.testing.assert_allclose(oa.detach().numpy(), ot.detach().numpy(), rtol=1e-12, atol=1e-12)
    (ot ** 2).sum().backward()
    (oa ** 2).sum().backward()
    np.testing.assert_allclose(xa.grad.numpy(), xt.grad.numpy(), rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(mine.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-11, atol=1e-11)


def test_conv_init_bounds_as_pytorch():
    for ctor in (lambda nn: nn.Conv2d(6, 3, (3, 2), groups=3), lambda nn: nn.Conv1d(5, 2, 4)):
        torch.manual_seed(0)
        theirs, mine = ctor(torch.nn), ctor(tinyattn.nn)
        for name in ("weight", "bias"):
            t, a = getattr(theirs, name).detach().numpy(), getattr(mine, name).numpy()
            assert a.shape == t.shape and a.dtype == t.dtype
            bound_t, bound_a = np.abs(t).max(), np.abs(a).max()  # both ~U(-1/sqrt(fan_in), 1/sqrt(fan_in))
            assert abs(bound_t - bound_a) < 0.25 * max(bound_t, bound_a)


@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (6, 3, 5)),
                                       ("BatchNorm2d", (4, 3, 5, 2))])
@pytest.mark.parametrize("kwargs", [dict(), dict(momentum=None), dict(affine=False), dict(track_running_stats=False),
                                    dict(momentum=0.3, eps=1e-3)])
def test_batchnorm_train_steps_state_and_eval(cls, shape, kwargs):
    theirs = getattr(torch.nn, cls)(3, **kwargs).double()
    mine = getattr(tinyattn.nn, cls)(3, **kwargs).double()
    assert repr(mine) == repr(theirs)
    for _ in range(3):
        x, R = RNG.standard_normal(shape) * 2 + 1, RNG.standard_normal(shape)
        xt, xa = torch.tensor(x, requires_grad=True), tinyattn.tensor(x, requires_grad=True)
        ot, oa = theirs(xt), mine(xa)
        (ot * torch.tensor(R)).sum().backward()
        (oa * tinyattn.tensor(R)).sum().backward()
        np.testing.assert_allclose(oa.detach().numpy(), ot.detach().numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(xa.grad.numpy(), xt.grad.numpy(), rtol=1e-11, atol=1e-11)
        if theirs.weight is not None:
            np.testing.assert_allclose(mine.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-11, atol=1e-11)
    st, sa = theirs.state_dict(), mine.state_dict()
    assert list(sa) == list(st)
    for k in st:
        assert sa[k].dtype == st[k].numpy().dtype
        np.testing.assert_allclose(sa[k].numpy(), st[k].numpy(), rtol=1e-12)
    theirs.eval()
    mine.eval()
    x = RNG.standard_normal(shape)
    np.testing.assert_allclose(mine(tinyattn.tensor(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda nn, t: nn.Conv1d(2, 4, 3, stride=2, padding="same"), lambda nn, t: nn.Conv1d(3, 4, 3, groups=2),
    lambda nn, t: nn.Conv1d(4, 3, 3, groups=2), lambda nn, t: nn.Conv2d(2, 4, 3, padding="full"),
    lambda nn, t: nn.Conv1d(2, 4, 3)(t.ones(1, 3, 5)), lambda nn, t: nn.Conv1d(2, 4, 3)(t.ones(1, 2, 2)),
    lambda nn, t: nn.MaxPool2d(3, padding=2)(t.ones(1, 1, 5, 5)), lambda nn, t: nn.BatchNorm1d(3)(t.ones(1, 3)),
    lambda nn, t: nn.BatchNorm1d(3)(t.ones(4, 3, 2, 2)), lambda nn, t: nn.BatchNorm2d(3)(t.ones(4, 3, 2)),
    lambda nn, t: nn.BatchNorm1d(3)(t.ones(4, 2))])
def test_errors_are_raised_where_pytorch_raises_them_with_its_type(call):
    with pytest.raises(Exception) as theirs:
        call(torch.nn, torch)
    with pytest.raises(type(theirs.value)) as mine:
        call(tinyattn.nn, tinyattn)
    assert str(theirs.value).split(",")[0][:40] in str(mine.value)


@pytest.mark.parametrize("make,shape", [(lambda nn: nn.LazyConv2d(4, 3, stride=2), (2, 3, 7, 7)),
                                        (lambda nn: nn.LazyConv1d(4, 2, groups=2), (2, 6, 5)),
                                        (lambda nn: nn.LazyBatchNorm1d(), (4, 3)),
                                        (lambda nn: nn.LazyBatchNorm2d(momentum=None), (4, 3, 2, 2))])
def test_lazy_modules(make, shape):
    theirs, mine = make(torch.nn), make(tinyattn.nn)
    assert repr(mine) == repr(theirs)
    x = RNG.standard_normal(shape).astype(np.float32)
    theirs(torch.tensor(x))
    mine(tinyattn.tensor(x))
    assert repr(mine) == repr(theirs) and type(mine).__name__ == type(theirs).__name__
    assert {k: tuple(v.shape) for k, v in mine.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    mine.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    np.testing.assert_allclose(mine(tinyattn.tensor(x)).detach().numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
