"""The notebooks' setup: one call that makes a kernel work in the course folder, wherever it started.

Jupyter starts a notebook's kernel in the notebook's own folder, ``notebooks/``. The exercises'
instructions (exercises/README.md) are written for the course folder, the one that holds
``exercises/``: ``%load exercises/ex04_attention.py``, ``sys.path.insert(0, "exercises")`` then
``import ex04_attention``, ``!tinyattn grade --only ex04``. So every notebook's setup cell calls
``tinyattn.course.setup()``, which moves the kernel there (the notebooks write no files, so no
relative path of theirs changes meaning) and sets NumPy's BLAS threads for small matrices.
"""
from __future__ import annotations

import os
from pathlib import Path

from . import blas


def course_root(start: str | os.PathLike | None = None) -> Path | None:
    """The nearest folder holding ``exercises/``: ``start`` (default: the working directory) or above it."""
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "exercises").is_dir():
            return folder
    return None


def setup(threads: int = 1) -> Path | None:
    """Work in the course folder (found upward from here) and use ``threads`` BLAS threads.

    Returns the course folder, or None when there is none above the working directory (a notebook
    copied elsewhere): the kernel then stays where it is. The thread count follows
    ``tinyattn.blas.course_threads``: an ``OPENBLAS_NUM_THREADS`` set before Jupyter started wins.
    """
    blas.course_threads(threads)
    root = course_root()
    if root is not None:
        os.chdir(root)
    return root
