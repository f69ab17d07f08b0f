"""A checkpoint named by a folder, or by a model name found in the local Hugging Face cache (never the network).

``hf download NAME`` (the hub package's command line) leaves a model in the cache as
``<cache>/models--<org>--<name>/snapshots/<commit>/`` with ``refs/main`` holding the commit. The cache is
``$HF_HUB_CACHE`` (or its older name ``$HUGGINGFACE_HUB_CACHE``) if set, else ``$HF_HOME/hub``, else
``$XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub``: the places the hub package itself
looks, in its order.
"""
from __future__ import annotations

import importlib
import os
import re

__all__ = ["resolve", "hub_cache", "download_command", "require_extra", "INSTALL_EXTRA"]

# The one line that installs what the loaders need: safetensors, tokenizers, and with them huggingface_hub,
# whose `hf` command fetches a checkpoint.
INSTALL_EXTRA = 'python -m pip install -e ".[pretrained]"'

# A Hugging Face model id: "gpt2" or "org/name"; letters, digits, '-', '_', '.'.
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")
# What a loader reads: every file it may need matches one of these (hf download wants --include once per pattern).
_PATTERNS = ("*.json", "*.txt", "*.safetensors")


def hub_cache() -> str:
    """The folder the Hugging Face hub caches models in, from the environment as the hub package reads it."""
    def path(p: str) -> str:
        return os.path.expanduser(os.path.expandvars(p))

    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):  # the second is the older name of the first
        if os.environ.get(var):
            return path(os.environ[var])
    if os.environ.get("HF_HOME"):
        return os.path.join(path(os.environ["HF_HOME"]), "hub")
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(path(xdg), "huggingface", "hub")


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def require_extra(loader: str) -> None:
    """Raise ImportError naming the install line when the `pretrained` extra is missing.

    Checked before anything else a loader does, so a newcomer learns the install step first (the `hf`
    command the next message suggests comes with that same extra)."""
    missing = [m for m in ("safetensors", "tokenizers") if not _importable(m)]
    if missing:
        raise ImportError(f"{loader} needs the 'pretrained' extra ({', '.join(missing)} not installed). "
                          f"Install it from the repository root with: {INSTALL_EXTRA}")


def download_command(name: str) -> str:
    """The one command that puts what the loaders read for model ``name`` into the cache."""
    return f"hf download {name} " + " ".join(f'--include "{p}"' for p in _PATTERNS)


def _snapshot(name: str) -> str | None:
    """The cached snapshot folder of model ``name`` (refs/main's commit, else the newest snapshot), or None."""
    repo = os.path.join(hub_cache(), "models--" + name.replace("/", "--"))
    snapshots = os.path.join(repo, "snapshots")
    if not os.path.isdir(snapshots):
        return None
    try:
        with open(os.path.join(repo, "refs", "main"), encoding="utf-8") as f:
            commit = f.read().strip()
        if os.path.isdir(os.path.join(snapshots, commit)):
            return os.path.join(snapshots, commit)
    except OSError:
        pass  # no refs/main (downloaded at a pinned revision): take the newest snapshot
    found = [os.path.join(snapshots, d) for d in os.listdir(snapshots) if os.path.isdir(os.path.join(snapshots, d))]
    return max(found, key=os.path.getmtime) if found else None


def resolve(path, loader: str, needs: str) -> str:
    """A checkpoint folder: ``path`` itself if it is a folder, else the cached snapshot of the model it names.

    loader: the caller's name for the message; needs: what such a folder holds, for the message.
    """
    require_extra(loader)
    folder = os.fspath(path)
    if os.path.isdir(folder):
        return folder
    if _REPO_ID.match(folder) and not os.path.exists(folder):
        snap = _snapshot(folder)
        if snap is not None:
            return snap
        raise FileNotFoundError(
            f"{loader}: {folder!r} is neither a folder nor a model in the local Hugging Face cache "
            f"({hub_cache()}), and nothing is fetched from the network. To fetch it once, run: "
            f"{download_command(folder)}  (the `hf` command comes with the 'pretrained' extra: {INSTALL_EXTRA}; "
            f"or pass the path of a folder with {needs})")
    raise FileNotFoundError(f"{loader}: {folder!r} is not a folder (expected a Hugging Face checkpoint folder "
                            f"with {needs}, or a model name in the local Hugging Face cache)")
