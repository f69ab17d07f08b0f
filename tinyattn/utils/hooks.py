"""``torch.utils.hooks``: the handle every ``register_*_hook`` returns (``handle.remove()``)."""
from ..nn.module import RemovableHandle

__all__ = ["RemovableHandle"]
