"""``torch.utils.hooks``: the handle every ``register_*_hook`` returns (``handle.remove()``)."""
from ..compat.hooks import RemovableHandle

__all__ = ["RemovableHandle"]
