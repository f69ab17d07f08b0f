"""``tinyattn.distributions``: the Categorical distribution, as ``torch.distributions.Categorical``.

Decoders sample the next token with ``Categorical(logits=logits / temperature).sample()``; policy
gradients read ``log_prob`` and ``entropy``. Given ``probs`` (normalised along the last dim) or
``logits`` (made log-probabilities with logsumexp), along the last dim; samples come from
``tinyattn.multinomial`` and so from the generator ``manual_seed`` seeds (NumPy's numbers, not PyTorch's).
"""
from __future__ import annotations

import math

import numpy as np

from .functions import logsumexp
from .sampling import multinomial
from .tensor import Tensor

__all__ = ["Categorical", "Distribution"]


class Distribution:
    """The base class of PyTorch's distributions, so ``isinstance(d, Distribution)`` holds."""


class Categorical(Distribution):
    """K categories (the last dim of probs or logits), over a batch of any leading shape."""

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        given = given if isinstance(given, Tensor) else Tensor(given)
        if given.ndim < 1:
            raise ValueError("`probs` parameter must be at least one-dimensional.")
        if probs is not None:
            if validate_args is not False and ((given._data < 0).any() or not np.isfinite(given._data).all()):
                raise ValueError(f"Expected parameter probs (Tensor of shape {tuple(given.shape)}) to hold "
                                 "non-negative finite values")
            self._probs, self._logits = given / given.sum(-1, keepdim=True), None
        else:
            self._probs, self._logits = None, given - logsumexp(given, -1, keepdim=True)  # log-probabilities
        self._num_events = given.shape[-1]
        self.batch_shape = tuple(given.shape[:-1])
        self.event_shape = ()

    @property
    def probs(self) -> Tensor:
        return self._probs if self._probs is not None else self._logits.exp()

    @property
    def logits(self) -> Tensor:
        """log probs; from probs, PyTorch's rule: clamp to [eps, 1 - eps] first, so a 0 gives log(eps), not -inf."""
        if self._logits is not None:
            return self._logits
        eps = float(np.finfo(self._probs.dtype).eps)
        return self._probs.clamp(min=eps, max=1 - eps).log()

    @property
    def param_shape(self) -> tuple:
        return self.batch_shape + (self._num_events,)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    def sample(self, sample_shape=()) -> Tensor:
        """Category ids of shape sample_shape + batch_shape (int64), drawn with replacement."""
        shape = tuple(sample_shape) if not isinstance(sample_shape, int) else (sample_shape,)
        n = math.prod(shape)
        probs_2d = self.probs.detach().reshape(-1, self._num_events)  # (B, K)
        ids = multinomial(probs_2d, n, True)  # (B, n)
        return ids.t().reshape(*(shape + self.batch_shape))  # (n, B) -> sample_shape + batch_shape

    def log_prob(self, value) -> Tensor:
        """log p(value): value holds category ids and broadcasts against the batch shape."""
        v = value if isinstance(value, Tensor) else Tensor(np.asarray(value))
        logits = self.logits
        shape = np.broadcast_shapes(tuple(v.shape) + (1,), tuple(logits.shape))
        idx = v.long().unsqueeze(-1).expand(*shape[:-1], 1)  # (..., 1)
        return logits.expand(*shape).gather(-1, idx).squeeze(-1)

    def entropy(self) -> Tensor:
        """-sum p log p over the categories (logits clamped at the dtype's min, so p = 0 adds 0, not nan)."""
        logits = self.logits.clamp(min=float(np.finfo(self.logits.dtype).min))
        return -(logits * self.probs).sum(-1)

    def __repr__(self) -> str:
        which = "probs" if self._probs is not None else "logits"
        return f"Categorical({which}: {getattr(self, which).shape})"


_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class Normal(Distribution):
    """The normal distribution N(loc, scale^2), loc and scale broadcast together (tensors or numbers): a VAE's
    posterior, a Gaussian policy. ``rsample`` draws loc + scale * eps, so gradients reach loc and scale (the
    reparameterisation trick); ``sample`` draws without a gradient. Draws come from manual_seed's generator."""

    def __init__(self, loc, scale, validate_args=None) -> None:
        from .tail_functions import broadcast_tensors
        as_t = (lambda v: v if isinstance(v, Tensor) else Tensor(np.asarray(v, dtype=np.float32)))
        self.loc, self.scale = broadcast_tensors(as_t(loc), as_t(scale))
        self.batch_shape, self.event_shape = tuple(self.loc.shape), ()
        if validate_args is not False and not (self.scale._data > 0).all():
            raise ValueError(f"Expected parameter scale (Tensor of shape {tuple(self.scale.shape)}) of distribution "
                             f"{self!r} to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid "
                             f"values:\n{self.scale}")

    mean = property(lambda self: self.loc)
    mode = property(lambda self: self.loc)
    stddev = property(lambda self: self.scale)
    variance = property(lambda self: self.scale * self.scale)

    def _eps(self, sample_shape) -> Tensor:
        from .defaults import get_rng
        shape = (tuple(sample_shape) if not isinstance(sample_shape, int) else (sample_shape,)) + self.batch_shape
        return Tensor(get_rng().standard_normal(shape).astype(self.loc.dtype))  # sample_shape + batch_shape

    def rsample(self, sample_shape=()) -> Tensor:
        return self.loc + self._eps(sample_shape) * self.scale

    def sample(self, sample_shape=()) -> Tensor:
        return self.rsample(sample_shape).detach()

    def log_prob(self, value) -> Tensor:
        v = value if isinstance(value, Tensor) else Tensor(np.asarray(value, dtype=self.loc.dtype))
        z = v - self.loc
        return -(z * z) / (2 * self.variance) - self.scale.log() - _LOG_SQRT_2PI

    def entropy(self) -> Tensor:
        return 0.5 + _LOG_SQRT_2PI + self.scale.log()

    def cdf(self, value) -> Tensor:
        v = value if isinstance(value, Tensor) else Tensor(np.asarray(value, dtype=self.loc.dtype))
        return 0.5 * (1 + ((v - self.loc) / (self.scale * math.sqrt(2))).erf())

    def icdf(self, value) -> Tensor:
        p = value if isinstance(value, Tensor) else Tensor(np.asarray(value, dtype=self.loc.dtype))
        return self.loc + self.scale * (2 * p - 1).erfinv() * math.sqrt(2)

    def __repr__(self) -> str:
        def show(t):
            return t.shape if t.numel() != 1 else (t.item() if t.ndim == 0 else t)
        return f"Normal(loc: {show(self.loc)}, scale: {show(self.scale)})"


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) for two Normals (a VAE's KL term) or two Categoricals, per batch element."""
    if isinstance(p, Normal) and isinstance(q, Normal):
        ratio = p.scale / q.scale
        diff = (p.loc - q.loc) / q.scale
        return 0.5 * (ratio * ratio + diff * diff - 1) - ratio.log()
    if isinstance(p, Categorical) and isinstance(q, Categorical):
        from .functions import where
        t = p.probs * (p.logits - q.logits)
        t = where(Tensor(np.broadcast_to(q.probs._data == 0, t.shape)), t * 0 + math.inf, t)
        return where(Tensor(np.broadcast_to(p.probs._data == 0, t.shape)), t * 0, t).sum(-1)
    raise NotImplementedError(f"kl_divergence: no formula for {type(p).__name__} and {type(q).__name__}")


__all__ += ["Normal", "kl_divergence"]
