"""A call's array arguments, in memory the judge makes and reads itself (the learner's process works on it).

Whether a call wrote into its arguments is seen by the judge, never reported by the learner's process:
for each call the judge lays its arguments' bytes out in a fresh anonymous file (a memfd), sends the
learner's process that file over a socket (SCM_RIGHTS), and the learner's function gets arrays that
are views of that memory (wire.py's "M" arrays). Every store into them, however it is made (NumPy,
`out=`, `.base`, `as_strided`, ctypes), lands in the judge's pages. When the call is over the learner's
process maps those pages private and says "R"; the judge seals the file against every write (F_SEAL_WRITE,
refused while any process still maps it shared and writable: then no argument is vouched for), reads it
with pread and compares it with its own private copy of what it sent, and only then ("S") may the reply
be sent: a write put back after the answer lands in the learner's private pages. The learner's process is
never asked, so patching anything in it (np.array_equal, os.write, the harness) changes nothing of this.

What the learner's process can still do is hand its function other memory than these views (its
harness is its own code in an unconfined exercise): its function then works on a copy, and the caller,
the judge, gets its arguments back untouched, which is what the rule asks. No grader can tell code that
copies only while it is graded from code that copies always.

The file's size is sealed from the start (memfd: F_SEAL_SHRINK | F_SEAL_GROW), and the judge never maps
it, only reads it (a file the learner could shrink would otherwise stop the judge with SIGBUS). Without
memfd seals (macOS) the file is an unlinked temporary file and nothing is sealed: the order (R, read, S)
still holds, but a process that keeps a writable mapping can put bytes back before the judge reads.
Which of the two is the one decision SEALED (tests set it False to run the unsealed branch on Linux).

Unix only (SCM_RIGHTS, mmap(2)): `problem()` says why grading can not run where it can not (Windows).
"""
from __future__ import annotations

import os
import select
import socket
import sys
import tempfile
import time

import numpy as np

from . import wire


def _can_seal() -> bool:
    try:
        import fcntl
    except ImportError:                                     # (Windows: no fcntl at all)
        return False
    return hasattr(os, "memfd_create") and hasattr(fcntl, "F_ADD_SEALS") and hasattr(fcntl, "F_SEAL_WRITE")


# the one decision: a memfd sealed by the judge (Linux), or an unlinked file of its own, never sealed (macOS)
SEALED = _can_seal()


def problem() -> str | None:
    """None where a call's inputs can be handed to the learner's process, else why not (one line)."""
    if os.name != "posix" or not hasattr(socket, "AF_UNIX") or not hasattr(socket, "send_fds"):
        return (f"grading needs Unix sockets that pass file descriptors (SCM_RIGHTS), which {sys.platform} lacks: "
                "grade on Linux or macOS (Windows: in WSL, or the Docker recipe of exercises/README.md)")
    return None


def place(shared: list) -> int:
    """A fresh file holding each (offset, array) of `shared` (what wire.dumps placed): its descriptor."""
    size = wire.shared_size(shared)
    if SEALED:
        fd = os.memfd_create("tinyattn-inputs", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    else:                                                   # (no memfd: an unlinked file of the judge's own)
        fd, path = tempfile.mkstemp(prefix="tinyattn-inputs-")
        os.unlink(path)
    try:
        os.ftruncate(fd, size)
        for start, arr in shared:
            os.pwrite(fd, arr.tobytes(), start)
        if SEALED:
            import fcntl
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
    except BaseException:
        os.close(fd)
        raise
    return fd


def send(sock: socket.socket, fd: int, deadline: float) -> None:
    """Hand `fd` to the learner's process (one byte with it), never blocking past `deadline` (monotonic)."""
    while True:
        try:
            socket.send_fds(sock, [b"M"], [fd])
            return
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [sock], [], left)[1]:
                raise TimeoutError("the exercise's process stopped taking its inputs") from None


def seal(fd: int) -> bool:
    """Whether the file is now sealed against every write (F_SEAL_WRITE: refused, EBUSY, while any process still
    maps it shared and writable). Without memfd seals (not Linux): True, the learner's word for it."""
    if not SEALED:
        return True
    import fcntl
    try:
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL)
    except OSError:
        return False
    return True


def written(fd: int, shared: list, sealed: bool = True) -> list[list]:
    """[[i, shape], ...] for each array of `shared` whose bytes in the file now differ from the judge's copy
    (NaN where NaN was counts as unchanged, as np.array_equal(equal_nan=True) has it); every array when the
    file is not `sealed` (the learner's process could still write it: the judge can not vouch for any)."""
    if not sealed:
        return [[i, list(arr.shape)] for i, (_, arr) in enumerate(shared)]
    size = wire.shared_size(shared)
    data = os.pread(fd, size, 0)
    data += bytes(size - len(data))                         # (a file shrunk under us: what is gone reads as 0)
    out = []
    for i, (start, arr) in enumerate(shared):
        now = np.frombuffer(data, dtype=arr.dtype, count=arr.size, offset=start).reshape(arr.shape)
        if not np.array_equal(now, arr, equal_nan=arr.dtype.kind in "fc"):
            out.append([i, list(arr.shape)])
    return out

