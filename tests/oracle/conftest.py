"""Tests against the real libraries: PyTorch, einops, TransformerLens, Hugging Face transformers.

tinyattn never depends on them, and the main suite never imports them. These files are collected
only where the libraries they compare with are installed (CI installs them into a separate venv and
runs this folder there); elsewhere they are not collected at all, so nothing is reported as skipped.
A file's name says what it needs: ``test_lens_*`` TransformerLens and transformers, ``test_einops_*``
einops, ``test_hf_*`` transformers; every file needs torch.
"""
import importlib.util


def _missing(*names: str) -> bool:
    return any(importlib.util.find_spec(n) is None for n in names)


collect_ignore_glob = []
if _missing("torch"):
    collect_ignore_glob.append("test_*.py")
if _missing("transformers", "transformer_lens"):
    collect_ignore_glob.append("test_lens_*.py")
if _missing("einops"):
    collect_ignore_glob.append("test_einops_*.py")
if _missing("transformers"):
    collect_ignore_glob.append("test_hf_*.py")
