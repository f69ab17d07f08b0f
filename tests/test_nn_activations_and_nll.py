"""nn.Tanh, Sigmoid, SiLU, Softmax, LogSoftmax, Flatten, ReLU(inplace=...), and NLLLoss / F.nll_loss,
which with LogSoftmax is cross entropy in two steps (the seq2seq and char-RNN tutorials' idiom)."""
import math

import numpy as np
import pytest

import tinyattn as torch
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn.gradcheck import gradcheck

rng = np.random.default_rng(29)


def test_activation_modules_compute_their_functions():
    x = torch.tensor([[-1.0, 0.0, 2.0]])
    assert nn.Tanh()(x).tolist()[0] == pytest.approx([math.tanh(-1), 0.0, math.tanh(2)])
    assert nn.Sigmoid()(x).tolist()[0] == pytest.approx([1 / (1 + math.e), 0.5, 1 / (1 + math.exp(-2))])
    assert nn.SiLU()(x).tolist()[0] == pytest.approx([-1 / (1 + math.e), 0.0, 2 / (1 + math.exp(-2))])
    y = x.clone()  # inplace=True writes into its input and returns it, as PyTorch's
    assert nn.ReLU(inplace=True)(y) is y and y.tolist() == [[0.0, 0.0, 2.0]] and x.tolist() == [[-1.0, 0.0, 2.0]]
    e = [math.exp(v) for v in (-1.0, 0.0, 2.0)]
    assert nn.Softmax(dim=1)(x).tolist()[0] == pytest.approx([v / sum(e) for v in e])
    assert nn.LogSoftmax(dim=-1)(x).tolist()[0] == pytest.approx([math.log(v / sum(e)) for v in e], rel=1e-6)
    with pytest.raises(TypeError, match=r"Softmax\(\) needs the dim to normalise over, e.g. nn.Softmax\(dim=-1\)"):
        nn.Softmax()(x)
    assert repr(nn.LogSoftmax(dim=1)) == "LogSoftmax(dim=1)"
    assert nn.Flatten()(torch.zeros(2, 3, 4)).shape == (2, 12) and nn.Flatten(0, 1)(torch.zeros(2, 3, 4)).shape == (6, 4)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2), nn.LogSoftmax(dim=1))
    assert model(torch.zeros(5, 3)).shape == (5, 2) and len(list(model.parameters())) == 4


def test_nll_of_log_softmax_is_cross_entropy():
    z = torch.tensor(rng.standard_normal((6, 4)), requires_grad=True)
    t = torch.tensor([0, 3, 1, 1, 2, 0])
    ce = F.cross_entropy(z, t)
    nll = F.nll_loss(F.log_softmax(z, dim=1), t)
    assert nll.item() == pytest.approx(ce.item(), rel=1e-14)
    assert nn.NLLLoss()(nn.LogSoftmax(dim=1)(z), t).item() == pytest.approx(ce.item(), rel=1e-14)
    assert gradcheck(lambda z: F.nll_loss(z.log_softmax(-1), t), [z])
    # by hand: the mean of -input[i, t_i]
    logp = torch.tensor([[-0.1, -2.0], [-1.5, -0.3]])
    assert F.nll_loss(logp, torch.tensor([0, 1])).item() == pytest.approx((0.1 + 0.3) / 2)
    assert F.nll_loss(logp, torch.tensor([0, 1]), reduction="sum").item() == pytest.approx(0.4)
    assert F.nll_loss(logp, torch.tensor([0, 1]), reduction="none").tolist() == pytest.approx([0.1, 0.3])


def test_nll_with_weights_ignore_index_and_a_time_axis():
    logp = torch.tensor([[-0.1, -2.0], [-1.5, -0.3], [-0.7, -0.7]])
    w = torch.tensor([1.0, 3.0])
    # weighted mean: (1 * 0.1 + 3 * 0.3) / (1 + 3); the third row is ignored
    loss = F.nll_loss(logp, torch.tensor([0, 1, -100]), weight=w)
    assert loss.item() == pytest.approx((0.1 + 0.9) / 4)
    crit = nn.NLLLoss(weight=w, ignore_index=1)
    assert crit(logp, torch.tensor([0, 1, 0])).item() == pytest.approx((0.1 + 0.7) / 2)
    assert "weight" in crit.state_dict()
    seq = torch.tensor(rng.standard_normal((2, 3, 5)), requires_grad=True)  # (B, T, C), classes last
    tgt = torch.tensor([[1, 4, 0], [2, 2, 3]])
    assert F.nll_loss(seq.log_softmax(-1), tgt).item() == pytest.approx(F.cross_entropy(seq, tgt).item(), rel=1e-14)
    assert gradcheck(lambda s: F.nll_loss(s.log_softmax(-1), tgt, weight=torch.tensor([1.0, 2, 3, 4, 5],
                                                                                        dtype=torch.float64)), [seq])


def test_nll_rejects_what_cross_entropy_rejects_with_its_own_name():
    logp = torch.zeros(2, 3)
    with pytest.raises(ValueError, match=r"nll_loss: input has shape \(2, 3\), so targets must have shape \(2,\)"):
        F.nll_loss(logp, torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="nll_loss: every target equals ignore_index=-100"):
        F.nll_loss(logp, torch.tensor([-100, -100]))
    with pytest.raises(ValueError, match="nll_loss: reduction must be 'mean', 'sum' or 'none'"):
        F.nll_loss(logp, torch.tensor([0, 1]), reduction="avg")
    with pytest.raises(ValueError, match="nll_loss: weight must be a finite 1-D tensor with one entry per class"):
        F.nll_loss(logp, torch.tensor([0, 1]), weight=torch.ones(2))


def test_layer_norm_without_a_bias():
    ln = nn.LayerNorm(4, bias=False)  # PyTorch 2.1's option: keep the scale, drop the shift
    assert ln.bias is None and [n for n, _ in ln.named_parameters()] == ["weight"]
    y = ln(torch.tensor([[1.0, 2.0, 3.0, 6.0]]))
    assert abs(float(y.mean())) < 1e-6 and y.shape == (1, 4)
