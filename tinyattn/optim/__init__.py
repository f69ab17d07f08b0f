"""tinyattn.optim: SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, LBFGS, gradient clipping, and learning-rate
schedules (``lr_scheduler``).

The update rules are PyTorch's documented algorithms, line for line, so a learner can check one
against the other. Each step writes into the parameter's own array (the Parameter object never
changes, so a Module and its optimizer keep pointing at the same thing) and skips parameters
whose ``.grad`` is None (they took no part in the loss).
"""
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
from .rmsprop_adagrad import Adagrad, RMSprop  # noqa: F401
from .adadelta import Adadelta  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from . import lr_scheduler  # noqa: F401
from ..nn.utils import _clip_grad_norm, clip_grad_norm_, param_list

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "Adadelta", "LBFGS", "clip_grad_norm",
           "clip_grad_norm_", "lr_scheduler"]


def clip_grad_norm(params, max_norm: float, error_if_nonfinite: bool = True) -> float:
    """Scale all gradients together, in place, so their joint L2 norm is at most max_norm.

    Returns the total norm BEFORE clipping (useful to log). Clipping all gradients by one factor
    keeps the update's direction; only its length shrinks. max_norm=inf just measures.
    Returns a Python float; ``nn.utils.clip_grad_norm_`` (PyTorch's name, which also takes norm_type)
    returns the same number as a 0-d Tensor, as PyTorch does.
    """
    return _clip_grad_norm(param_list(params, "clip_grad_norm"), max_norm, 2.0, error_if_nonfinite, "clip_grad_norm")
