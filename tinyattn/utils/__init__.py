"""tinyattn.utils: ``tinyattn.utils.data`` (Dataset, DataLoader, samplers, random_split), as in PyTorch."""
from . import checkpoint, data  # noqa: F401
