"""``torch.utils.hooks``: the handle every ``register_*_hook`` returns (``handle.remove()``)."""
from ..autograd import RemovableHandle

__all__ = ["RemovableHandle"]
