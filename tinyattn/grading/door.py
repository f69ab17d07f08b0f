"""The one door through which the judge reads a learner's folder.

`read_folder(folder, label)` is the only function of the grader that opens a learner's path. It
walks the folder with directory file descriptors, never following a link: every entry is opened
with O_NOFOLLOW relative to its parent's descriptor, so a symbolic link anywhere (the folder
itself, `exercises/`, one file, a helper package) is refused by name, and so are devices, FIFOs
and sockets. A hard link is a regular file that O_NOFOLLOW lets through: every file read must
have exactly one name (st_nlink == 1, checked on the open descriptor), else it is refused by name. Only regular `.py` files are read (the exercise, the learner's helper modules and
helper packages: a folder beside the exercise), each capped in size, and their number, total
size and depth are capped too. What comes out is text in memory; the learner's process writes it
into its own private folder inside the sandbox. Nothing on the host is read a second time, so a
change on disk after this call (by another learner's code, say) can not change this grade.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

from .text import clean_line

MAX_FILE = 256 << 10        # bytes of one .py file
MAX_TOTAL = 1 << 20         # bytes of all .py files of one submission
MAX_FILES = 200             # .py files of one submission
MAX_DEPTH = 3               # helper packages: folder/pkg/sub/module.py at most
MAX_ENTRIES = 2000          # directory entries looked at in all (a folder of a million files ends here)
SKIP_DIRS = ("__pycache__",)

_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = _FLAGS | getattr(os, "O_DIRECTORY", 0)


@dataclass
class Submission:
    """The learner's .py files by relative path ('ex04_attention.py', 'helpers/__init__.py'), and why
    anything was refused (one line each, naming the path as the instructor sees it)."""
    files: dict[str, str] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)
    missing: bool = False            # the folder itself does not exist


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symbolic link"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special file"


def read_folder(folder: str | os.PathLike, label: str | None = None) -> Submission:
    """Every regular .py file under `folder` (see the module docstring). Never raises for what is on disk.

    `label`: how messages name the folder (default: the path as given)."""
    folder = os.fspath(folder)
    label = clean_line(label if label is not None else folder.rstrip("/") or "/", 300)
    out = Submission()
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        out.missing = True
        return out
    except OSError as e:
        out.refused.append(f"can not read {label}: {e.strerror}")
        return out
    if not stat.S_ISDIR(st.st_mode):
        out.refused.append(f"{_kind(st.st_mode) if not stat.S_ISREG(st.st_mode) else 'a file'} "
                           f"not allowed: {label} (expected a folder)")
        return out
    try:
        fd = os.open(folder, _DIR_FLAGS)
    except OSError as e:
        out.refused.append(f"can not open {label}: {e.strerror}")
        return out
    budget = {"entries": MAX_ENTRIES, "bytes": MAX_TOTAL}
    try:
        _walk(fd, "", label, 0, out, budget)
    finally:
        os.close(fd)
    return out


def _walk(dir_fd: int, rel: str, label: str, depth: int, out: Submission, budget: dict) -> None:
    try:
        names = sorted(os.listdir(dir_fd))
    except OSError as e:
        out.refused.append(f"can not list {label}/{rel}: {e.strerror}")
        return
    for name in names:
        budget["entries"] -= 1
        if budget["entries"] < 0:
            out.refused.append(f"more than {MAX_ENTRIES} entries in {label}: not read further")
            return
        shown = clean_line(f"{label}/{rel}{name}", 300)
        if name.startswith(".") or name in SKIP_DIRS:
            continue
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            if depth >= MAX_DEPTH or not (name.isidentifier() and name.isascii()):
                continue                     # not an importable package name: never read
            try:
                sub = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
            except OSError as e:
                out.refused.append(f"can not open {shown}: {e.strerror}")
                continue
            try:
                _walk(sub, f"{rel}{name}/", label, depth + 1, out, budget)
            finally:
                os.close(sub)
        elif not stat.S_ISREG(st.st_mode):
            # a link (to a file, a folder, /dev/zero, another learner), a device, a FIFO, a socket
            if stat.S_ISLNK(st.st_mode) or name.endswith(".py"):
                out.refused.append(f"{_kind(st.st_mode)} not allowed: {shown}")
        elif name.endswith(".py") and name[:-3].isidentifier() and name.isascii():
            _read_file(dir_fd, name, f"{rel}{name}", shown, out, budget)     # an importable module name


def _read_file(dir_fd: int, name: str, rel: str, shown: str, out: Submission, budget: dict) -> None:
    if len(out.files) >= MAX_FILES:
        out.refused.append(f"more than {MAX_FILES} .py files: {shown} not read")
        return
    try:
        fd = os.open(name, _FLAGS, dir_fd=dir_fd)
    except OSError as e:
        import errno
        out.refused.append(f"symbolic link not allowed: {shown}" if e.errno == errno.ELOOP
                           else f"can not open {shown}: {e.strerror}")
        return
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):     # swapped for something else since the listing
            out.refused.append(f"{_kind(st.st_mode)} not allowed: {shown}")
            return
        if st.st_nlink != 1:                 # a hard link: the same file under another name (a solution,
            out.refused.append(f"hard link not allowed: {shown} has {st.st_nlink} names (copy the file "   # an
                               "instead of linking it)")                                 # instructor's file)
            return
        if st.st_size > MAX_FILE:
            out.refused.append(f"{shown} is {st.st_size} bytes; a .py file may have {MAX_FILE} at most")
            return
        data = b""
        while len(data) <= MAX_FILE:
            chunk = os.read(fd, MAX_FILE + 1 - len(data))
            if not chunk:
                break
            data += chunk
    except OSError as e:
        out.refused.append(f"can not read {shown}: {e.strerror}")
        return
    finally:
        os.close(fd)
    if len(data) > MAX_FILE:
        out.refused.append(f"{shown} is over {MAX_FILE} bytes; a .py file may have {MAX_FILE} at most")
        return
    budget["bytes"] -= len(data)
    if budget["bytes"] < 0:
        out.refused.append(f"the .py files add up to more than {MAX_TOTAL} bytes: {shown} not read")
        return
    try:
        out.files[rel] = data.decode("utf-8")
    except UnicodeDecodeError as e:
        out.refused.append(f"{shown} is not UTF-8 text (byte {e.start})")
