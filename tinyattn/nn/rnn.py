"""Recurrent layers: RNN, GRU and LSTM with PyTorch's constructor, parameter names, layouts and equations.

As in PyTorch:
  input (T, B, in), or (B, T, in) with ``batch_first=True``, or unbatched (T, in);
  h0 (and LSTM's c0) (num_layers * D, B, H), D = 2 if bidirectional; None means zeros;
  forward returns (output, h_n), LSTM (output, (h_n, c_n)): output is the last layer's hidden
  state at every step, (T, B, D*H) (or (B, T, D*H)), h_n the final state of every layer and direction.
  Parameters are weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k} (``_reverse`` for the
  backward direction), each drawn from U(-1/sqrt(H), 1/sqrt(H)), so a PyTorch state_dict loads key
  for key. ``dropout`` applies between layers (not after the last), in training mode only.

Everything is built from Tensor ops, so autograd gives backpropagation through time for free.

Why the input projection ``x_t @ W_ih^T`` is done inside the loop: it does not depend on
h, so in PyTorch one would compute it for all steps at once, (B, T, in) @ (in, 3H).
Here that is *slower*: the loop must then slice step t out of the (B, T, 3H) result,
and the backward of each slice is a full (B, T, 3H) array of zeros with one step filled
in, T of them. Slicing x_t out of the thinner (B, T, in) input costs far less. Measured
(B=32, in=16, H=64, forward+backward of a GRU): T=64 100 ms vs 60 ms, T=128 305 ms vs 118 ms.

The transposes W^T are taken once, before the loop. Inside it, each step would add a
transpose node, and backward would transpose T gradients and add them up, instead of
adding T gradients and transposing once (same numbers, bit for bit: the sum is in the same order).
"""
from __future__ import annotations

import math

import numpy as np

from tinyattn import checks
from tinyattn.autograd import Function
from tinyattn.functions import cat, stack
from tinyattn.tensor import Tensor, get_default_dtype, get_rng

from . import functional as F
from .module import Module, Parameter
from .utils.rnn import PackedSequence, run_packed

__all__ = ["RNN", "GRU", "LSTM", "RNNCell", "GRUCell", "LSTMCell"]


def _uniform(shape: tuple[int, ...], bound: float, dtype=None) -> Parameter:
    """A Parameter drawn from U(-bound, bound) with the seeded generator (PyTorch's RNN init)."""
    data = get_rng().uniform(-bound, bound, size=shape).astype(dtype or get_default_dtype())
    return Parameter(data)


# ----------------------------------------------------------------------------------------------
# One step of each cell: (x_t (B, in), state) -> new state; w_ih (in, G*H) and w_hh (H, G*H) transposed.
# ----------------------------------------------------------------------------------------------
def _tanh_step(x_t, h, w_ih, w_hh, b_ih, b_hh):
    """h' = tanh(W_ih x + b_ih + W_hh h + b_hh)"""
    return _affine(x_t, w_ih, b_ih, h, w_hh, b_hh).tanh()


def _relu_step(x_t, h, w_ih, w_hh, b_ih, b_hh):
    """h' = relu(W_ih x + b_ih + W_hh h + b_hh)"""
    return _affine(x_t, w_ih, b_ih, h, w_hh, b_hh).relu()


def _affine(x_t, w_ih, b_ih, h, w_hh, b_hh):
    # (B, in) @ (in, H) + (B, H) @ (H, H) -> (B, H), in the order x W_ih + b_ih + h W_hh + b_hh
    pre = x_t @ w_ih
    if b_ih is not None:
        pre = pre + b_ih
    pre = pre + h @ w_hh
    return pre if b_hh is None else pre + b_hh


def _gru_update(gi, gh, h):
    """The GRU's gates from gi = W_ih x + b_ih and gh = W_hh h + b_hh, each (B, 3H); returns h' (B, H).

    One op (_GRUGates below) where the lines of _gru_update_ops are fifteen: a step of a small GRU
    is a few microseconds of arithmetic, so recording fifteen ops per step, and walking them back, was
    most of its time (benchmarks/RESULTS.md). The forward computes the same numbers, bit for bit."""
    return _GRUGates.apply(gi, gh, h)


def _sigmoid(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sigmoid(a), e = exp(-|a|)): ops.Sigmoid's forward, the same numbers (e is what its backward needs)."""
    e = np.exp(-np.abs(a))
    return np.maximum(e, a >= 0) / (1 + e), e



def _checked_input(module, x, ndims: tuple, layout: str) -> Tensor:
    """The input of a recurrent layer or cell as a float Tensor with ndim in `ndims` and last dim input_size;
    each error names `layout`, the shapes it may have, and what came."""
    name = type(module).__name__
    x = x if isinstance(x, Tensor) else Tensor(x)
    if x.ndim not in ndims:
        raise ValueError(f"{name} expects input of shape {layout}, with in = {module.input_size}; "
                         f"got shape {tuple(x.shape)}")
    if not np.issubdtype(x.dtype, np.floating):
        raise TypeError(f"{name} expects float input, got dtype {x.dtype} "
                        "(token ids? embed them first, e.g. with nn.Embedding)")
    if x.shape[-1] != module.input_size:
        raise ValueError(f"{name}(input_size={module.input_size}) got input of shape {tuple(x.shape)}: "
                         f"last dim is {x.shape[-1]}, expected {module.input_size}")
    return x

class _GRUGates(Function):
    """h' = (1 - z) n + z h with r = σ(gi_r + gh_r), z = σ(gi_z + gh_z), n = tanh(gi_n + r gh_n).

    Backward, from g = dL/dh': dn = g (1 - z), dz = g (h - n), dh = g z (the direct path; the path
    through gh comes back via W_hh's product); through the tanh da_n = dn (1 - n^2), which is
    d gi_n, and d gh_n = da_n r, dr = da_n gh_n; through each sigmoid da = d e / (1 + e)^2 (ops.Sigmoid's
    form), the same for gi and gh. gi, gh (B, 3H), h (B, H)."""
    new_arrays = True

    @staticmethod
    def forward(ctx, gi, gh, h):
        H = h.shape[-1]
        r, e_r = _sigmoid(gi[:, :H] + gh[:, :H])  # (B, H) reset gate
        z, e_z = _sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])  # (B, H) update gate
        hn = gh[:, 2 * H:]  # (B, H) W_hn h + b_hn: the reset gate scales it, bias included (PyTorch's choice)
        n = np.tanh(gi[:, 2 * H:] + r * hn)  # (B, H) candidate
        ctx.save_for_backward(r, e_r, z, e_z, n, hn, h)
        return (1 - z) * n + z * h  # z near 1 keeps the old state: that is how a GRU carries memory

    @staticmethod
    def backward(ctx, g):
        r, e_r, z, e_z, n, hn, h = ctx.saved_tensors
        H = h.shape[-1]
        d_gi = np.empty(g.shape[:-1] + (3 * H,), dtype=g.dtype)  # (B, 3H): r, z, n columns
        da_n = g * (1 - z) * (1 - n * n)  # dL/d(gi_n + r gh_n)
        d_r = da_n * hn
        d_r *= e_r / ((1 + e_r) * (1 + e_r))
        d_gi[:, :H] = d_r
        d_z = g * (h - n)
        d_z *= e_z / ((1 + e_z) * (1 + e_z))
        d_gi[:, H:2 * H] = d_z
        d_gi[:, 2 * H:] = da_n
        d_gh = d_gi.copy()  # the r and z columns are the same; the n column is scaled by r
        d_gh[:, 2 * H:] *= r
        return d_gi, d_gh, g * z


def _gru_update_ops(gi, gh, h):
    """_GRUGates written as Tensor ops, one line per equation: what it computes (tested equal to it).

    r = σ(W_ir x + b_ir + W_hr h + b_hr);  z = σ(W_iz x + b_iz + W_hz h + b_hz);
    n = tanh(W_in x + b_in + r * (W_hn h + b_hn));  h' = (1 - z) * n + z * h"""
    H = h.shape[-1]
    r = (gi[:, :H] + gh[:, :H]).sigmoid()  # (B, H) reset gate
    z = (gi[:, H:2 * H] + gh[:, H:2 * H]).sigmoid()  # (B, H) update gate
    # The reset gate scales only the hidden part of the candidate, bias b_hn included (PyTorch's choice).
    n = (gi[:, 2 * H:] + r * gh[:, 2 * H:]).tanh()  # (B, H) candidate
    return (1 - z) * n + z * h  # z near 1 keeps the old state: that is how a GRU carries memory


def _lstm_step(x_t, state, w_ih, w_hh, b_ih, b_hh):
    """The LSTM's equations as Tensor ops (_LSTMGates computes them in one op; tested equal to it):
    i, f, o = σ(...), g = tanh(...) from W_i* x + b_i* + W_h* h + b_h* (gate order i, f, g, o);
    c' = f * c + i * g;  h' = o * tanh(c')"""
    h, c = state
    return _lstm_update(_affine(x_t, w_ih, b_ih, h, w_hh, b_hh), c)


def _lstm_update(gates, c):
    """The LSTM's new (h, c) from its gates' pre-activations (B, 4H), order i, f, g, o, and the cell state c."""
    H = c.shape[-1]
    i, f = gates[:, :H].sigmoid(), gates[:, H:2 * H].sigmoid()  # input and forget gates
    g, o = gates[:, 2 * H:3 * H].tanh(), gates[:, 3 * H:].sigmoid()  # candidate and output gate
    c = f * c + i * g  # the cell state: a sum, not a product, so its gradient survives many steps
    return o * c.tanh(), c


class _LSTMGates(Function):
    """[h', c'] side by side (B, 2H) from gi, gh (B, 4H), gate order i, f, g, o, and hc = [h, c] (B, 2H):
    a = gi + gh;  i, f, o = σ(a_i), σ(a_f), σ(a_o);  g = tanh(a_g);  c' = f c + i g;  h' = o tanh(c').

    One op where _lstm_update records thirteen (the GRU's _GRUGates, for the LSTM). Backward, from
    [dh', dc']: dc = dc' + dh' o (1 - tanh(c')^2) (c' reaches the loss directly and through h');
    do = dh' tanh(c'), di = dc g, df = dc c, dg = dc i, d c_prev = dc f; then through each sigmoid
    da = d e / (1 + e)^2 (ops.Sigmoid's form) and through the tanh da = dg (1 - g^2); d gi = d gh = da.
    The forward computes _lstm_update's numbers, bit for bit."""
    new_arrays = True

    @staticmethod
    def forward(ctx, gi, gh, hc):
        H = hc.shape[-1] // 2
        a = gi + gh  # (B, 4H)
        (i, e_i), (f, e_f), (o, e_o) = (_sigmoid(a[:, k * H:(k + 1) * H]) for k in (0, 1, 3))  # (B, H) each
        g = np.tanh(a[:, 2 * H:3 * H])  # (B, H) candidate
        c = hc[:, H:]  # (B, H) the cell state
        out = np.empty_like(hc)  # (B, 2H): h' | c'
        out[:, H:] = f * c + i * g
        tc = np.tanh(out[:, H:])
        out[:, :H] = o * tc
        ctx.save_for_backward(i, e_i, f, e_f, g, o, e_o, c, tc)
        return out

    @staticmethod
    def backward(ctx, grad):
        i, e_i, f, e_f, g, o, e_o, c, tc = ctx.saved_tensors
        H = c.shape[-1]
        dh = grad[:, :H]
        dc = dh * o * (1 - tc * tc) + grad[:, H:]  # (B, H) dL/dc'
        da = np.empty(grad.shape[:-1] + (4 * H,), dtype=grad.dtype)  # (B, 4H): i, f, g, o columns
        da[:, :H] = dc * g * (e_i / ((1 + e_i) * (1 + e_i)))
        da[:, H:2 * H] = dc * c * (e_f / ((1 + e_f) * (1 + e_f)))
        da[:, 2 * H:3 * H] = dc * i * (1 - g * g)
        da[:, 3 * H:] = dh * tc * (e_o / ((1 + e_o) * (1 + e_o)))
        d_hc = np.zeros_like(grad)  # (B, 2H): h enters through W_hh's product, not here
        d_hc[:, H:] = dc * f
        return da, da.copy(), d_hc


class _RNNBase(Module):
    """The layers, directions and layouts shared by RNN, GRU and LSTM; a subclass names its step and gates."""

    gates = 1  # weight rows per hidden unit: 1 (RNN), 3 (GRU), 4 (LSTM)

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False) -> None:
        super().__init__()
        name = type(self).__name__
        self.input_size = checks.positive_int("input_size", input_size, name)
        self.hidden_size = checks.positive_int("hidden_size", hidden_size, name)
        self.num_layers = checks.positive_int("num_layers", num_layers, name)
        self.dropout = checks.probability("dropout", dropout, name)
        for flag, value in (("bias", bias), ("batch_first", batch_first), ("bidirectional", bidirectional)):
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{name}: {flag} must be a bool, got {value!r} (pass the sizes positionally "
                                f"and the options by name, e.g. {name}(16, 32, num_layers=2, batch_first=True))")
        self.bias, self.batch_first, self.bidirectional = bool(bias), bool(batch_first), bool(bidirectional)
        D, H, k = 2 if bidirectional else 1, self.hidden_size, 1.0 / math.sqrt(hidden_size)
        # Registered (and so drawn) in PyTorch's order: layer by layer, forward direction first.
        for layer in range(self.num_layers):
            n_in = self.input_size if layer == 0 else D * H  # a later layer reads both directions
            for suffix in [f"_l{layer}", f"_l{layer}_reverse"][:D]:
                setattr(self, "weight_ih" + suffix, _uniform((self.gates * H, n_in), k))
                setattr(self, "weight_hh" + suffix, _uniform((self.gates * H, H), k))
                if self.bias:
                    setattr(self, "bias_ih" + suffix, _uniform((self.gates * H,), k))
                    setattr(self, "bias_hh" + suffix, _uniform((self.gates * H,), k))

    def _weights(self, suffix: str) -> tuple:
        """(W_ih^T (in, G*H), W_hh^T (H, G*H), b_ih, b_hh): transposed once, not once per step."""
        b = (getattr(self, "bias_ih" + suffix), getattr(self, "bias_hh" + suffix)) if self.bias else (None, None)
        return (getattr(self, "weight_ih" + suffix).T, getattr(self, "weight_hh" + suffix).T) + b

    def _check(self, x, state, what: str) -> tuple:
        """x as (B, T, in), and the expected shape of each initial state; names the layout in errors."""
        name = type(self).__name__
        layout = "(B, T, in)" if self.batch_first else "(T, B, in)"
        x = _checked_input(self, x, (2, 3), f"{layout} (batch_first={self.batch_first}) or (T, in) unbatched")
        unbatched = x.ndim == 2
        x = x.unsqueeze(0) if unbatched else (x if self.batch_first else x.transpose(0, 1))  # (B, T, in)
        if x.shape[1] == 0:
            raise ValueError(f"{name} got an empty sequence (T=0) in input of shape {tuple(x.shape)}")
        LD, B = self.num_layers * (2 if self.bidirectional else 1), x.shape[0]
        want = (LD, self.hidden_size) if unbatched else (LD, B, self.hidden_size)
        expected = (f"(num_layers * num_directions, H) = {want} for unbatched input" if unbatched
                    else f"(num_layers * num_directions, B, H) = {want}")
        states = []
        for s in state:
            if s is None:
                s = Tensor(np.zeros((LD, B, self.hidden_size), dtype=x.dtype))
            else:
                s = s if isinstance(s, Tensor) else Tensor(s)
                if tuple(s.shape) != want:
                    raise ValueError(f"{name}: {what} has shape {tuple(s.shape)}, expected {expected}")
                s = s.unsqueeze(1) if unbatched else s
            states.append(s)
        return x, unbatched, states

    def _run(self, x: Tensor, states: list) -> tuple:
        """x (B, T, in), states [(L*D, B, H), ...] -> (output (B, T, D*H), final states [(L*D, B, H), ...])."""
        step = self._step()
        D = 2 if self.bidirectional else 1
        steps = list(x.unbind(1))  # (B, in) per step (unbind, not x[:, t]: its backward is O(T log T), not O(T^2))
        finals = []
        for layer in range(self.num_layers):
            outs_by_direction = []
            for d, suffix in enumerate([f"_l{layer}", f"_l{layer}_reverse"][:D]):
                weights = self._weights(suffix)
                state = tuple(s[layer * D + d] for s in states)  # each (B, H)
                state = state[0] if len(state) == 1 else state
                order = reversed(steps) if d == 1 else steps  # the reverse direction reads from the end
                outs = []
                for x_t in order:
                    state = step(x_t, state, *weights)
                    outs.append(state if isinstance(state, Tensor) else state[0])
                outs_by_direction.append(outs[::-1] if d == 1 else outs)  # back in time order
                finals.append(state if isinstance(state, tuple) else (state,))
            steps = outs_by_direction[0] if D == 1 else [cat(pair, dim=-1) for pair in zip(*outs_by_direction)]
            if self.dropout and self.training and layer < self.num_layers - 1:  # between layers only
                steps = list(F.dropout(stack(steps, dim=1), self.dropout).unbind(1))
        output = stack(steps, dim=1)  # (B, T, D*H)
        return output, [stack([f[i] for f in finals], dim=0) for i in range(len(states))]  # each (L*D, B, H)

    def _run_fused(self, x: Tensor, states: list) -> tuple:
        """As _run, for GRU and LSTM, with the input projection of every step in one product before the loop:
        gi = x W_ih^T + b_ih is one (B*T, in) @ (in, G*H) GEMM, unbound into T steps (unbind's backward
        writes each step's gradient into one array), and a step is W_hh h + b_hh and one fused op for the
        gates (_GRUGates, _LSTMGates; the subclass's _fused_step) instead of five ops and a dozen more.
        (The module docstring's measurement against this was of slicing the projection per step, x[:, t],
        whose backward makes a (B, T, 3H) array per step.)"""
        D = 2 if self.bidirectional else 1
        layer_in, finals = x, []  # (B, T, in)
        for layer in range(self.num_layers):
            outs_by_direction = []
            for d, suffix in enumerate([f"_l{layer}", f"_l{layer}_reverse"][:D]):
                b_ih, b_hh = (getattr(self, "bias_ih" + suffix), getattr(self, "bias_hh" + suffix)) if self.bias \
                    else (None, None)
                gis = F.linear(layer_in, getattr(self, "weight_ih" + suffix), b_ih).unbind(1)  # T x (B, G*H)
                w_hh, state = getattr(self, "weight_hh" + suffix), self._start(states, layer * D + d)  # (G*H, H)
                outs = []
                for gi in (reversed(gis) if d == 1 else gis):  # the reverse direction reads from the end
                    h, state = self._fused_step(gi, state, w_hh, b_hh)  # h (B, H)
                    outs.append(h)
                outs_by_direction.append(stack(outs[::-1] if d == 1 else outs, dim=1))  # (B, T, H), time order
                finals.append(self._finals(state))
            layer_in = outs_by_direction[0] if D == 1 else cat(outs_by_direction, dim=-1)  # (B, T, D*H)
            if self.dropout and self.training and layer < self.num_layers - 1:  # between layers only
                layer_in = F.dropout(layer_in, self.dropout)
        return layer_in, [stack([f[k] for f in finals], dim=0) for k in range(len(states))]  # each (L*D, B, H)

    def _layout(self, output: Tensor, finals: list, unbatched: bool) -> tuple:
        """Back to the caller's layout: (T, B, ...) unless batch_first; no batch dim for unbatched input."""
        if unbatched:
            return output.squeeze(0), [f.squeeze(1) for f in finals]  # (T, D*H), (L*D, H)
        return (output if self.batch_first else output.transpose(0, 1)), finals

    @property
    def _flat_weights_names(self) -> list:
        """The weights' names in PyTorch's order (layer by layer, forward direction first; ih, hh, then the
        biases): a textbook initialises a GRU through it (``for n in rnn._flat_weights_names``)."""
        return [n for n in self._parameters if n.startswith(("weight_", "bias_"))]

    @property
    def _flat_weights(self) -> list:
        return [self._parameters[n] for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        """One list of Parameters per layer and direction, as PyTorch's ``all_weights``."""
        per = 4 if self.bias else 2
        w = self._flat_weights
        return [w[i:i + per] for i in range(0, len(w), per)]

    def flatten_parameters(self) -> None:
        """PyTorch packs the weights into one block for cuDNN here; on NumPy there is nothing to do."""

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        defaults = dict(num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False)
        return s + "".join(f", {k}={getattr(self, k)}" for k, v in defaults.items() if getattr(self, k) != v)


class RNN(_RNNBase):
    """Elman RNN: h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh), act = tanh or relu.

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True, batch_first=False,
    dropout=0.0, bidirectional=False)``; forward(x, h0=None) -> (output, h_n) (layouts in the module docstring).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional)
        self.nonlinearity = nonlinearity

    def _step(self):
        return _tanh_step if self.nonlinearity == "tanh" else _relu_step

    def forward(self, x: Tensor, h0: Tensor | None = None) -> tuple[Tensor, Tensor]:
        if isinstance(x, PackedSequence):  # each sequence stops at its own length (nn/utils/rnn.py)
            return run_packed(self, x, h0)
        x, unbatched, states = self._check(x, [h0], "h0")
        output, (h_n,) = self._layout(*self._run(x, states), unbatched)
        return output, h_n

    def extra_repr(self) -> str:
        s = super().extra_repr()
        return s if self.nonlinearity == "tanh" else s + f", nonlinearity={self.nonlinearity!r}"


class GRU(_RNNBase):
    """GRU (PyTorch's equations, gate order r, z, n; see _gru_update_ops).

    ``GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False)``; forward(x, h0=None) -> (output, h_n).
    """

    gates = 3

    def forward(self, x: Tensor, h0: Tensor | None = None) -> tuple[Tensor, Tensor]:
        if isinstance(x, PackedSequence):  # each sequence stops at its own length (nn/utils/rnn.py)
            return run_packed(self, x, h0)
        x, unbatched, states = self._check(x, [h0], "h0")
        output, (h_n,) = self._layout(*self._run(x, states), unbatched)
        return output, h_n

    def _run(self, x: Tensor, states: list) -> tuple:
        return self._run_fused(x, states)

    @staticmethod
    def _start(states: list, i: int) -> Tensor:
        return states[0][i]  # (B, H)

    @staticmethod
    def _fused_step(gi, state, w_hh, b_hh) -> tuple:
        h = _GRUGates.apply(gi, F.linear(state, w_hh, b_hh), state)  # (B, H)
        return h, h

    @staticmethod
    def _finals(state) -> tuple:
        return (state,)


class LSTM(_RNNBase):
    """LSTM (PyTorch's equations, gate order i, f, g, o; see _lstm_step).

    ``LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False)``; forward(x, (h0, c0)=None) -> (output, (h_n, c_n)).
    """

    gates = 4

    def _run(self, x: Tensor, states: list) -> tuple:
        return self._run_fused(x, states)

    @staticmethod
    def _start(states: list, i: int) -> tuple:
        h0, c0 = states[0][i], states[1][i]  # (B, H) each
        return h0, cat([h0, c0], dim=-1)  # h, and [h, c] (B, 2H) for _LSTMGates

    @staticmethod
    def _fused_step(gi, state, w_hh, b_hh) -> tuple:
        h, hc = state
        hc = _LSTMGates.apply(gi, F.linear(h, w_hh, b_hh), hc)  # (B, 2H): h' | c'
        h = hc[:, :hc.shape[-1] // 2]  # (B, H)
        return h, (h, hc)

    @staticmethod
    def _finals(state) -> tuple:
        h, hc = state
        return h, hc[:, h.shape[-1]:]  # h_n, c_n

    def forward(self, x: Tensor, hx: tuple | None = None) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        if hx is not None and not (isinstance(hx, (tuple, list)) and len(hx) == 2):
            raise TypeError("LSTM: the initial state is a pair (h0, c0), each (num_layers * num_directions, B, H)")
        if isinstance(x, PackedSequence):  # each sequence stops at its own length (nn/utils/rnn.py)
            return run_packed(self, x, hx)
        x, unbatched, states = self._check(x, list(hx) if hx is not None else [None, None], "h0/c0")
        output, (h_n, c_n) = self._layout(*self._run(x, states), unbatched)
        return output, (h_n, c_n)


# ----------------------------------------------------------------------------------------------
# Cells: one step, the caller writes the loop (a decoder feeding back its own output, teacher forcing).
# ----------------------------------------------------------------------------------------------
class _CellBase(Module):
    """RNNCell, GRUCell and LSTMCell: weight_ih (G*H, in), weight_hh (G*H, H), bias_ih, bias_hh (G*H,),
    all drawn from U(-1/sqrt(H), 1/sqrt(H)) in that order, as PyTorch's cells register and draw them."""

    gates = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        name = type(self).__name__
        checks.device(device)
        self.input_size = checks.positive_int("input_size", input_size, name)
        self.hidden_size = checks.positive_int("hidden_size", hidden_size, name)
        if not isinstance(bias, (bool, np.bool_)):
            raise TypeError(f"{name}: bias must be a bool, got {bias!r}")
        self.bias = bool(bias)
        G, H, k = self.gates, self.hidden_size, 1.0 / math.sqrt(hidden_size)
        self.weight_ih = _uniform((G * H, self.input_size), k, dtype)
        self.weight_hh = _uniform((G * H, H), k, dtype)
        if self.bias:
            self.bias_ih = _uniform((G * H,), k, dtype)
            self.bias_hh = _uniform((G * H,), k, dtype)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)

    def _check(self, x, states: list, what: str) -> tuple:
        """x as (B, in) and each state as (B, H) (zeros for None); whether the input came unbatched."""
        name = type(self).__name__
        x = _checked_input(self, x, (1, 2), f"(B, {self.input_size}) or ({self.input_size},) unbatched")
        unbatched = x.ndim == 1
        x = x.unsqueeze(0) if unbatched else x  # (B, in)
        want = (self.hidden_size,) if unbatched else (x.shape[0], self.hidden_size)
        out = []
        for s in states:
            if s is None:
                s = Tensor(np.zeros((x.shape[0], self.hidden_size), dtype=x.dtype))
            else:
                s = s if isinstance(s, Tensor) else Tensor(s)
                if tuple(s.shape) != want:
                    raise ValueError(f"{name}: {what} has shape {tuple(s.shape)}, expected {want} for input of "
                                     f"shape {tuple(x.shape[1:] if unbatched else x.shape)}")
                s = s.unsqueeze(0) if unbatched else s
            out.append(s)
        return x, out, unbatched

    def _gates(self, x: Tensor, h: Tensor) -> tuple[Tensor, Tensor]:
        """(W_ih x + b_ih, W_hh h + b_hh), each (B, G*H): one F.linear each (no transpose node per step)."""
        return F.linear(x, self.weight_ih, self.bias_ih), F.linear(h, self.weight_hh, self.bias_hh)

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(_CellBase):
    """h' = act(W_ih x + b_ih + W_hh h + b_hh), act = tanh or relu.

    ``RNNCell(input_size, hidden_size, bias=True, nonlinearity='tanh')``; forward(x, h=None) -> h':
    x (B, in) or (in,), h (B, H) or (H,), zeros when None.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, x: Tensor, hx: Tensor | None = None) -> Tensor:
        x, (h,), unbatched = self._check(x, [hx], "hx")
        gi, gh = self._gates(x, h)  # (B, H) each
        h = (gi + gh).tanh() if self.nonlinearity == "tanh" else (gi + gh).relu()  # (B, H)
        return h.squeeze(0) if unbatched else h

    def extra_repr(self) -> str:
        s = super().extra_repr()
        return s if self.nonlinearity == "tanh" else s + f", nonlinearity={self.nonlinearity!r}"


class GRUCell(_CellBase):
    """One GRU step with PyTorch's equations and gate order r, z, n (see _gru_update_ops).

    ``GRUCell(input_size, hidden_size, bias=True)``; forward(x, h=None) -> h' (shapes as RNNCell).
    """

    gates = 3

    def forward(self, x: Tensor, hx: Tensor | None = None) -> Tensor:
        x, (h,), unbatched = self._check(x, [hx], "hx")
        h = _gru_update(*self._gates(x, h), h)  # (B, H)
        return h.squeeze(0) if unbatched else h


class LSTMCell(_CellBase):
    """One LSTM step with PyTorch's equations and gate order i, f, g, o (see _lstm_step).

    ``LSTMCell(input_size, hidden_size, bias=True)``; forward(x, (h, c)=None) -> (h', c'), each (B, H) or (H,).
    """

    gates = 4

    def forward(self, x: Tensor, hx: tuple | None = None) -> tuple[Tensor, Tensor]:
        if hx is not None and not (isinstance(hx, (tuple, list)) and len(hx) == 2):
            raise TypeError("LSTMCell: the state is a pair (h, c), each (B, H) or (H,) for unbatched input")
        x, (h, c), unbatched = self._check(x, list(hx) if hx is not None else [None, None], "h/c")
        hc = _LSTMGates.apply(*self._gates(x, h), cat([h, c], dim=-1))  # (B, 2H): h' | c', from (B, 4H) gates
        h, c = hc[:, :self.hidden_size], hc[:, self.hidden_size:]  # (B, H) each
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)
