"""The handle every ``register_*hook`` returns, a tensor's or a module's (PyTorch's ``torch.utils.hooks``)."""
from __future__ import annotations

import itertools


class RemovableHandle:
    """What every ``register_*hook`` returns (a tensor's or a module's): ``handle.remove()`` takes the
    hook off again (twice is harmless); ``with handle:`` removes it when the block ends."""

    _ids = itertools.count()

    def __init__(self, hooks: dict) -> None:
        self.hooks_dict_ref, self.id = hooks, next(RemovableHandle._ids)

    def remove(self) -> None:
        self.hooks_dict_ref.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
