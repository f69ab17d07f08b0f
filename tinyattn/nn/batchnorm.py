"""nn.BatchNorm1d and nn.BatchNorm2d, with PyTorch's running statistics and state_dict keys.

In training each channel is normalized with the batch's mean and (biased) variance, and the running
statistics move toward the batch's: running = (1 - momentum) running + momentum batch, the variance
as its unbiased estimate. ``momentum=None`` keeps a plain average over all batches seen instead
(factor 1 / num_batches_tracked). In eval mode the running statistics normalize. Buffers, as
PyTorch names them: running_mean, running_var, num_batches_tracked (int64).
"""
from __future__ import annotations

import numpy as np

from .. import checks
from ..tensor import Tensor, get_default_dtype
from . import functional_conv as FC
from .module import Module, Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "SyncBatchNorm"]


class _BatchNorm(Module):
    _dims: tuple = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        who = type(self).__name__
        checks.device(device, who)
        self.num_features = checks.positive_int("num_features", num_features, who)
        self.eps, self.momentum = eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        dt = np.dtype(dtype if dtype is not None else get_default_dtype())
        if affine:
            self.weight = Parameter(np.ones(num_features, dtype=dt))
            if bias:
                self.bias = Parameter(np.zeros(num_features, dtype=dt))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor(np.zeros(num_features, dtype=dt)))
            self.register_buffer("running_var", Tensor(np.ones(num_features, dtype=dt)))
            self.register_buffer("num_batches_tracked", Tensor(np.array(0, dtype=np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            self.weight.data.fill_(1)
            if self.bias is not None:
                self.bias.data.zero_()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if not isinstance(input, Tensor) or input.ndim not in self._dims:
            got = f"{input.ndim}D input" if isinstance(input, Tensor) else type(input).__name__
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._dims)} input (got {got})")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative average: batch k weighs 1/k
                factor = 1.0 / float(self.num_batches_tracked.item())
        batch_stats = self.training or self.running_mean is None  # no running statistics: always the batch's
        keep = not self.training or self.track_running_stats  # update them only when tracking
        return FC.batch_norm(input, self.running_mean if keep else None, self.running_var if keep else None,
                             self.weight, self.bias, batch_stats, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """BatchNorm1d(num_features): (N, C) or (N, C, L), each of the C channels normalized over the batch."""
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """BatchNorm2d(num_features): (N, C, H, W), each channel normalized over the batch and positions."""
    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """BatchNorm3d(num_features): (N, C, D, H, W), each channel normalized over the batch and positions."""
    _dims = (5,)


class SyncBatchNorm(_BatchNorm):
    """SyncBatchNorm(num_features): batch statistics over every process; in one process, BatchNorm over
    (N, C, *) of any number of dims. convert_sync_batchnorm gives the model back as it is."""
    _dims = (2, 3, 4, 5, 6)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None, dtype=None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        return module  # one process: its batch norms already see the whole batch


class _LazyBatchNormMixin:
    """num_features read from the first input's dim 1; until then every vector has length 0. The first
    forward fills them in (ones, zeros, as at init) and turns the module into a plain BatchNorm."""

    _base: type = _BatchNorm

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        self._base.__init__(self, 1, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.num_features = 0
        self._fill(0)

    def _fill(self, n: int) -> None:
        dt = self.running_mean.dtype if self.running_mean is not None else \
            (self.weight.dtype if self.weight is not None else np.dtype(get_default_dtype()))
        for name, value in (("weight", 1.0), ("bias", 0.0)):
            if getattr(self, name) is not None:
                getattr(self, name).data = np.full(n, value, dtype=dt)
        if self.track_running_stats:
            self.register_buffer("running_mean", Tensor(np.zeros(n, dtype=dt)))
            self.register_buffer("running_var", Tensor(np.ones(n, dtype=dt)))

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if not isinstance(input, Tensor) or input.ndim not in self._dims:
            got = f"{input.ndim}D input" if isinstance(input, Tensor) else type(input).__name__
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._dims)} input (got {got})")
        self.num_features = input.shape[1]
        self._fill(input.shape[1])
        self.__class__ = self._base  # initialised: from now on exactly a BatchNorm
        return self.forward(input)


class LazyBatchNorm1d(_LazyBatchNormMixin, BatchNorm1d):
    """LazyBatchNorm1d(eps=1e-5, momentum=0.1, ...): a BatchNorm1d whose num_features comes from the first input."""
    _base = BatchNorm1d


class LazyBatchNorm2d(_LazyBatchNormMixin, BatchNorm2d):
    """LazyBatchNorm2d(...): a BatchNorm2d whose num_features comes from the first input."""
    _base = BatchNorm2d
