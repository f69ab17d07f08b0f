"""torch.nn.modules: PyTorch's own file layout of the layer classes, so ``from torch.nn.modules.linear import
Linear`` and pickles or isinstance checks that name these paths work. Each submodule re-exports the classes
PyTorch keeps in its file of that name; the classes themselves are tinyattn.nn's (the same objects)."""
from .. import Module  # noqa: F401
from . import (  # noqa: F401
    activation, batchnorm, container, conv, dropout, instancenorm, linear, loss, module, normalization, padding,
    pixelshuffle, pooling, rnn, sparse, transformer,
)
