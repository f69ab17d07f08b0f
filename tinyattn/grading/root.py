"""The sandbox's root, as a positive list: what child.enter_sandbox mounts, computed on the judge's side.

The system's shared libraries and loader (/usr, /lib*), the interpreter's library folder (its
standard library, lib-dynload, libpython: wherever Python is installed, a venv's base, conda, the
hosted tool cache), NumPy, and for a Tensor exercise the build of tinyattn it may import. Every
folder of Python packages inside those trees (site-packages, dist-packages: any Python's, a venv's
base interpreter's included) is covered by an empty one that holds NumPy alone. Nothing of a venv,
conda env or pipx env is bound but its NumPy; a venv under /tmp works (child.py mounts the
sandbox's private /tmp first and binds below it).
"""
from __future__ import annotations

import os
import site
import sys
from functools import lru_cache
from pathlib import Path

PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])     # the folder that holds tinyattn/
LIBRARY_MOUNT = "/opt/tinyattn"                         # where a Tensor exercise's tinyattn lies in the sandbox
NUMPY_MOUNT = "/opt/numpy"                              # where NumPy's folder lies when its own path is the checkout's


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _numpy_site() -> str:
    """The folder NumPy is installed in (the user site when it came from `pip install --user`)."""
    import numpy
    return os.path.dirname(os.path.dirname(os.path.realpath(numpy.__file__)))


def _site_dirs() -> list[str]:
    """Every site-packages folder this interpreter knows of: its own, its base's (a venv's base
    interpreter), the user site and NumPy's."""
    import sysconfig
    dirs = list(getattr(site, "getsitepackages", lambda: [])())
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)):
        dirs += [sysconfig.get_path(kind, vars={"base": prefix, "platbase": prefix}) for kind in ("purelib", "platlib")]
    dirs += [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], _numpy_site()]
    user = getattr(site, "getusersitepackages", lambda: None)()
    dirs += [user] if isinstance(user, str) else []
    return [d for d in dict.fromkeys(os.path.realpath(d) for d in dirs if d) if os.path.isdir(d)]


# The sandbox's root is a positive list (see child.enter_sandbox): the system's shared libraries and
# loader, the interpreter's library folder (its standard library, lib-dynload, libpython), NumPy,
# and for a Tensor exercise the build of tinyattn it may import. Every folder of Python packages
# inside those trees (site-packages, dist-packages: any Python's) is covered by an empty one that
# holds NumPy alone. Nothing of a venv, conda env or pipx env is bound but its NumPy.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
DEVICES_SHOWN = ("/etc/ld.so.cache",)                   # the loader's cache: Python's C modules find their libraries
PACKAGE_DIRS = ("{}/python*/*-packages", "{}/lib*/python*/*-packages", "{}/local/lib*/python*/*-packages",
                "{}/lib*/*/python*/*-packages")         # where any Python's packages lie below a bound tree
NUMPY_NAMES = ("numpy", "numpy.libs", "numpy.dylibs")


def _bound(path: str, trees: list[str]) -> bool:
    return any(_under(path, t) for t in trees)


def _python_trees() -> list[str]:
    """The folders the interpreter needs after it started: its standard library, lib-dynload and
    the folder of libpython and the shared libraries its C modules load (a conda env's lib/)."""
    import sysconfig
    paths = sysconfig.get_paths()
    found = [paths.get("stdlib"), paths.get("platstdlib"), sysconfig.get_config_var("DESTSHARED")]
    libdir = sysconfig.get_config_var("LIBDIR")
    if libdir and sysconfig.get_config_var("LDLIBRARY") and \
            os.path.exists(os.path.join(libdir, sysconfig.get_config_var("LDLIBRARY"))):
        found.append(libdir)                          # a shared libpython lies there (and a conda env's libraries)
    for mod in ("os", "_ctypes", "math"):             # where this interpreter really loads them from
        f = getattr(sys.modules.get(mod) or __import__(mod), "__file__", None)
        if f:
            found.append(os.path.dirname(f))
    real = [os.path.realpath(p) for p in found if p and os.path.isdir(p)]
    # a venv holds no standard library, only packages (its platstdlib is venv/lib/pythonX.Y): none of it is a tree
    venv = os.path.realpath(sys.prefix) if os.path.realpath(sys.prefix) != os.path.realpath(sys.base_prefix) else None
    real = [p for p in real if not (venv and _under(p, venv))]
    return [p for p in dict.fromkeys(real) if not any(p != q and _under(p, q) for q in real)]


@lru_cache(maxsize=None)
def _base_config() -> tuple:
    """The part of the sandbox's root that does not depend on the exercise (computed once)."""
    import glob
    links, binds, trees = [], [], []
    for d in SYSTEM:
        if os.path.islink(d):
            links.append([os.readlink(d), d])
        elif os.path.isdir(d):
            binds.append([d, d])
            trees.append(d)
    for f in DEVICES_SHOWN:
        if os.path.isfile(f):
            binds.append([f, f])
    for p in _python_trees():
        if not _bound(p, trees):
            binds.append([p, p])
            trees.append(p)
    numpy_site = os.path.realpath(_numpy_site())
    sites = set(_site_dirs())
    for t in trees:
        for pattern in PACKAGE_DIRS:
            sites.update(os.path.realpath(d) for d in glob.glob(pattern.format(glob.escape(t))) if os.path.isdir(d))
    # every package folder inside a bound tree is covered (NumPy's wherever it lies): NumPy alone in it
    sites = sorted(d for d in sites if _bound(d, trees) or d == numpy_site)
    keep = []
    for d in sites:
        try:
            names = sorted(n for n in os.listdir(d) if n in NUMPY_NAMES and os.path.isdir(os.path.join(d, n)))
        except OSError:
            names = []
        keep.append([d, names])
    return links, binds, trees, keep, numpy_site


def sandbox_config(library: str | None = None, hide: tuple[str, ...] = ()) -> dict:
    """What child.py's enter_sandbox builds the fresh root from (every path is the host's and the sandbox's).

    library: the folder holding the build of tinyattn a Tensor exercise may import (None: no tinyattn).
    hide: more folders to keep out should they lie inside a bound tree (a batch's root, the checkout)."""
    links, binds, trees, keep, numpy_site = _base_config()
    binds = [list(b) for b in binds]
    hidden = [os.path.realpath(h) for h in (PACKAGE_ROOT, *hide)]
    # (a folder that holds a bound tree or a package folder is left to those: they are emptied anyway)
    hidden = [h for h in dict.fromkeys(hidden) if _bound(h, trees) and not any(_under(t, h) for t in trees)
              and not any(_under(d, h) for d, _ in keep)]
    if library is not None:
        binds.append([library, LIBRARY_MOUNT])
    # A venv inside the checkout (`python -m venv .venv` in the repository) holds NumPy there: its folder is
    # mounted at NUMPY_MOUNT instead, so that no path of the checkout (nor the checkout's folder) exists inside.
    private = [os.path.realpath(h) for h in (PACKAGE_ROOT, *hide)]
    moved = not _bound(numpy_site, trees) and any(_under(numpy_site, h) for h in private)
    sites = [[d, list(n)] + ([NUMPY_MOUNT] if moved and d == numpy_site else []) for d, n in keep]
    inside = [t for t in trees + [s[-1] if len(s) == 3 else s[0] for s in sites] if _under(t, "/tmp")]
    workdir = next(w for w in ("/tmp/work", *(f"/tmp/work{i}" for i in range(1, 100)))
                   if not any(_under(t, w) or _under(w, t) for t in inside))
    return {"links": [list(x) for x in links], "binds": binds, "sites": sites,
            "hide": hidden, "workdir": workdir, "path": [LIBRARY_MOUNT] if library is not None else [],
            "path_last": [NUMPY_MOUNT if moved else numpy_site]}
