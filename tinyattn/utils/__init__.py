"""tinyattn.utils: ``tinyattn.utils.data`` (Dataset, DataLoader, samplers, random_split), as in PyTorch."""
from . import data  # noqa: F401
