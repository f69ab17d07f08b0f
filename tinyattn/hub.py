"""torch.hub's download helpers: ``download_url_to_file`` and ``load_state_dict_from_url`` (pretrained
weights fetched once into a cache directory, then read from there), and ``get_dir``/``set_dir``.

The cache is PyTorch's: ``$TORCH_HOME/hub`` (``$XDG_CACHE_HOME/torch/hub`` or ``~/.cache/torch/hub`` when
TORCH_HOME is unset), checkpoints under ``checkpoints/``. The file is read with ``tinyattn.load`` (a file
``tinyattn.save`` wrote) or, for a ``.safetensors`` file, with safetensors; pickled ``torch.save`` files
are refused, as ``tinyattn.load`` refuses them (a pickle can run code when it is read).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import urllib.request
from typing import Any
from urllib.parse import urlparse

__all__ = ["download_url_to_file", "get_dir", "load_state_dict_from_url", "set_dir"]

_hub_dir: list[str | None] = [None]
_HASH = re.compile(r"-([a-f0-9]*)\.")  # PyTorch's rule: name-<sha256 prefix>.ext


def get_dir() -> str:
    """The hub cache directory (set_dir's, else $TORCH_HOME/hub, else $XDG_CACHE_HOME/torch/hub or ~/.cache/torch/hub)."""
    if _hub_dir[0] is not None:
        return _hub_dir[0]
    home = os.environ.get("TORCH_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.join(os.path.expanduser("~"), ".cache")), "torch")
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d: str | os.PathLike) -> None:
    _hub_dir[0] = os.path.expanduser(os.fspath(d))


def download_url_to_file(url: str, dst: str | os.PathLike, hash_prefix: str | None = None,
                         progress: bool = True) -> None:
    """Copy the object at url to dst (through a temporary file beside it, so dst is never half written);
    with hash_prefix, the file's SHA-256 must start with it, else RuntimeError and nothing is kept."""
    dst = os.path.expanduser(os.fspath(dst))
    folder = os.path.dirname(dst) or "."
    os.makedirs(folder, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url) as src:  # noqa: S310 (the caller's URL)
            while True:
                block = src.read(1 << 16)
                if not block:
                    break
                out.write(block)
                digest.update(block)
        if hash_prefix is not None and not digest.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest.hexdigest()}")')
        shutil.move(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location: Any = None, progress: bool = True,
                             check_hash: bool = False, file_name: str | None = None,
                             weights_only: bool = False) -> dict:
    """The state_dict at url, downloaded into model_dir (get_dir()/checkpoints) unless already there."""
    model_dir = model_dir or os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    name = file_name or os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, name)
    if not os.path.exists(cached):
        match = _HASH.search(name) if check_hash else None
        download_url_to_file(url, cached, match.group(1) if match else None, progress=progress)
    if cached.endswith(".safetensors"):
        from safetensors.numpy import load_file

        from .tensor import Tensor
        return {k: Tensor(v) for k, v in load_file(cached).items()}
    from .serialization import load
    return load(cached, map_location=map_location, weights_only=weights_only)
