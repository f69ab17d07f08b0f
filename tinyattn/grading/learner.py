"""The judge's side of the pipe: start the learner's process (sandboxed where possible), talk to it.

`LearnerProcess` starts `child.py` with a clean environment, sends it the submission's source,
then one request per call the checks make; replies are decoded by wire.py into plain data. A
learner object that is not plain data (ex08's module, a Tensor) stays in the child and comes
back as a `Remote` handle; attribute reads and calls on it are further requests.

Isolation ("isolation" in every result): see the package docstring. "sandbox" is built by child.py
from `sandbox_config()` (when the grader is root, this side writes the child's uid map: ns root =
host root while the root is built, then INNER_ID = a fresh host uid for the learner's code).
"user" and "process" are plain child processes in their own session; at the end, that session and
every descendant that re-parented to the judge (a Linux subreaper) are killed.
"""
from __future__ import annotations

import builtins
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from functools import lru_cache
from pathlib import Path

from . import shared_inputs, wire
from .root import LIBRARY_MOUNT, PACKAGE_ROOT, _numpy_site, sandbox_config  # noqa: F401
from .text import clean_line, clean_text

HERE = Path(__file__).resolve().parent
CHILD, WIRE = str(HERE / "child.py"), str(HERE / "wire.py")
NOBODY = 65534
ISOLATIONS = ("auto", "sandbox", "user", "process")
STDERR_KEEP = 16 * 1024                                 # bytes of the child's stderr kept (its tail)
STDOUT_TAIL = 4096                                      # characters of the learner's printing kept for the report
# One learner's sandbox in all, where no cgroup can be had: at most SANDBOX_NPROC processes and
# threads (RLIMIT_NPROC, counted in the sandbox's own user namespace: threads are allowed, a
# learner's helper thread is honest), each with RLIMIT_AS of address space, and memory outside it
# (memfd, tmpfs files) at most RLIMIT_NOFILE files of RLIMIT_FSIZE bytes each per process
# (fallocate and ftruncate obey RLIMIT_FSIZE too). A process whose memory is MEASURED (an
# address-space budget, ex12) is alone: RLIMIT_NPROC = 1, so no fresh interpreter with an address
# space of its own can be started beside it.
SANDBOX_NPROC = 4
LIMITS = {"RLIMIT_AS": 384 << 20, "RLIMIT_FSIZE": 4 << 20, "RLIMIT_NOFILE": 64, "RLIMIT_CORE": 0}
@lru_cache(maxsize=None)
def _source(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


# the child runs from its source text: it reads no file of the grader's (which may be unreadable to it)
# -S: no site-packages but the ones given; the interpreter by its real path (a venv inside the
# checkout is not named to the learner's process: the venv's own folder is not needed with -S)
CHILD_CMD = [os.path.realpath(sys.executable), "-I", "-S", "-c", _source(CHILD)]
INNER_ID = 1000                                         # child.INNER_ID: the learner's uid inside
FIRST_OUTER_ID = 1 << 28                                # host uids handed to sandboxes start here (root grader)


class ForbiddenImport(ImportError):
    """The learner's code imported a module no exercise may use (reported by its process)."""


class StudentNotImplemented(Exception):
    """The learner's function still raises NotImplementedError."""


class StudentRaised(Exception):
    """The learner's code raised (or called sys.exit); the message says where, `kind` names the type."""

    def __init__(self, message: str, original: BaseException | None = None, kind: str | None = None):
        super().__init__(message)
        self.original = original
        self.kind = kind or (type(original).__name__ if original is not None else "")


class LearnerTimeout(BaseException):
    """The submission did not answer before the exercise's deadline (BaseException: no check catches it)."""


class LearnerOverBudget(BaseException):
    """A call measured for CPU time (`request(cpu_limit=...)`) used more than its limit and was stopped."""

    def __init__(self, used: float):
        super().__init__(f"{used:.2f} s of CPU time")
        self.used = used


class GraderFault(BaseException):
    """The judge could not do its own part of a call (e.g. no space or descriptor for the file of a call's inputs):
    a BaseException, so no check counts it against the learner's code (the exercise ends in an error naming it)."""


class LearnerDied(BaseException):
    """The submission's process ended, or sent something that is not a reply."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def clean_raised(r: dict) -> dict:
    """A learner's exception report with every string neutralised (it is shown to people)."""
    return {"kind": str(r.get("kind", "exception"))[:40], "types": [clean_line(t, 100) for t in r.get("types", [])
                                                                    if isinstance(t, str)][:40],
            "message": clean_line(r.get("message", ""), 2000), "where": clean_line(r.get("where", ""), 400),
            "code": clean_line(r.get("code"), 200) if r.get("code") is not None else None}


# ---- which isolation this machine offers -----------------------------------------------------------

def _map_ids(pid: int, outer: int) -> None:
    """(grader is root) ns uid/gid 0 = host 0 while the root is built, INNER_ID = a host uid of its own after."""
    for kind in ("uid", "gid"):
        with open(f"/proc/{pid}/{kind}_map", "w") as f:
            f.write(f"0 0 1\n{INNER_ID} {outer} 1\n")


def _fresh_host_id() -> int:
    """A host uid no account uses, different for each sandbox: its processes are counted apart
    (RLIMIT_NPROC) and it can not signal or read anything of another learner's."""
    import secrets
    return FIRST_OUTER_ID + secrets.randbelow(1 << 24)


@lru_cache(maxsize=1)
def sandbox_problem() -> str | None:
    """None when the namespace sandbox works here, else why not: the step that failed and its errno
    as the sandbox's process reported it (one line), never a guess about the machine."""
    if not sys.platform.startswith("linux"):
        return f"no Linux namespaces on {sys.platform}"
    proc, rc, why = None, None, ""
    try:
        proc = LearnerProcess("sandbox", 20.0, probe=True)
        rc = proc.proc.wait(timeout=20)
    except LearnerDied as e:
        why = e.message
    except (OSError, subprocess.SubprocessError, LearnerTimeout) as e:
        why = f"{type(e).__name__}: {e}"
    finally:
        if proc is not None:
            proc.close()
    if rc == 0:
        return None
    lines = b"".join(proc.stderr).decode("utf-8", "replace").strip().splitlines() if proc is not None else []
    step = [ln for ln in lines if ln.startswith("sandbox step failed: ")]
    if step:
        return clean_line(step[-1], 300)
    return clean_line(f"the sandbox's process exited with status {rc}: {lines[-1]}" if lines and rc is not None
                      else why or (lines[-1] if lines else f"exit status {rc}"), 300)


def sandbox_advice(problem: str) -> str:
    """What to do about `problem` (sandbox_problem's line): a hint about user namespaces only when the
    step that failed was making one and the kernel said no."""
    if "CLONE_NEWUSER" in problem and any(e in problem for e in ("EPERM", "EACCES", "ENOSPC", "EINVAL")):
        return ("this kernel refuses unprivileged user namespaces: allow them (sysctl "
                "kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 kernel.apparmor_restrict_unprivileged_userns=0; "
                "user.max_user_namespaces > 0), or run the grader as root")
    if "CLONE_NEWUSER" in problem or "uid_map" in problem or "gid_map" in problem or "setgroups" in problem:
        return "the user namespace could not be set up"
    return ""


@lru_cache(maxsize=1)
def user_problem() -> str | None:
    """None when this (root) grader can run Python with NumPy as nobody, else why not."""
    if not (hasattr(os, "geteuid") and os.geteuid() == 0):
        return "the grader is not root"
    try:
        proc = subprocess.run([sys.executable, "-I", "-c", "import numpy"], capture_output=True, timeout=30,
                              env=_env("/"), cwd="/", user=NOBODY, group=NOBODY, extra_groups=[])
    except (OSError, subprocess.SubprocessError) as e:
        return f"nobody can not run {sys.executable}: {e}"
    return None if proc.returncode == 0 else "nobody can not import numpy"


def resolve_isolation(requested: str = "auto") -> str:
    """'sandbox' or 'process'; ValueError when 'sandbox' was asked for and can not be had, RuntimeError
    where no exercise can be graded at all (shared_inputs.problem: Windows)."""
    if requested not in ISOLATIONS:
        raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)}, got {requested!r}")
    if shared_inputs.problem() is not None:            # (Windows: no Unix socket to hand a call's inputs over)
        raise RuntimeError(shared_inputs.problem())
    if requested == "process":
        return "process"
    if requested == "user":
        if user_problem() is not None:
            raise ValueError(f"--isolation user is not available here: {user_problem()}")
        return "user"
    problem = sandbox_problem()
    if problem is None:
        return "sandbox"
    if requested == "sandbox":
        raise ValueError(f"--isolation sandbox is not available here: {problem}")
    return "user" if user_problem() is None else "process"


def _env(home: str) -> dict[str, str]:
    """The learner's whole environment: nothing of the grader's (no seed, no tokens)."""
    return {"PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8", "MPLBACKEND": "Agg",
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


# ---- the process ----------------------------------------------------------------------------------

def _set_subreaper() -> bool:
    """Orphans of our children re-parent to us (Linux), so the fallback can find and kill them."""
    try:
        import ctypes
        return ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) == 0          # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _children(pid: int) -> set[int] | None:
    """pid's children from /proc/<pid>/task/*/children (None where the kernel does not offer it)."""
    try:
        out = set()
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out |= {int(c) for c in f.read().split()}
        return out
    except (OSError, ValueError):
        return None


def _descendants(root: int) -> set[int]:
    """Every process whose parent chain reaches `root` (Linux /proc; empty elsewhere)."""
    if _children(root) is None:
        return _descendants_by_scan(root)
    found, frontier = set(), {root}
    while frontier:
        frontier = set().union(*[_children(p) or set() for p in frontier]) - found
        found |= frontier
    return found


def _descendants_by_scan(root: int) -> set[int]:
    parent = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    parent[int(entry)] = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    found, frontier = set(), {root}
    while frontier:
        frontier = {p for p, pp in parent.items() if pp in frontier and p not in found}
        found |= frontier
    return found


class LearnerProcess:
    """One submission's process for one exercise."""

    def __init__(self, isolation: str, timeout: float, hide: tuple[str, ...] = (), library: str | None = None,
                 as_budget: int | None = None, probe: bool = False, alone: bool = False):
        """timeout: seconds the learner's code may take in all, counted while the judge waits for it
        (the judge's own work, e.g. finite differences of the reference, does not count).
        library: the build of tinyattn the exercise may import (None: no tinyattn on the path).
        as_budget: bytes of address space the learner's code may add (the kernel enforces it).
        alone: the process can start no other process and no thread (RLIMIT_NPROC = 1), so its CPU
        time (cpu_seconds) is all the work its calls do: for a call whose cost is measured."""
        self.isolation, self.left = isolation, float(timeout)
        self.deadline = time.monotonic() + self.left
        self.stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._printed = ""
        self.names: list[str] = []
        self._tmp, self._before, self._stuck, self._mount_dir = None, set(), False, None
        self._closing = False
        self._budget = None
        self._cpu_stop: float | None = None              # cpu_seconds() at which the running call is stopped
        self.also_counted: list[LearnerProcess] = []     # processes whose CPU time cpu_seconds adds in
        user = {}
        if isolation == "sandbox":
            self._mount_dir = tempfile.mkdtemp(prefix="tinyattn-root-")     # empty: only a mount point
            cfg = {**sandbox_config(library, hide), "sandbox": True, "mount_dir": self._mount_dir}
            root = hasattr(os, "geteuid") and os.geteuid() == 0
            cfg["map_by_judge"] = root
            from .budget import Budget
            self._budget = Budget.open()                 # one cgroup for the whole sandbox, where we may
            cfg["handshake"] = root or self._budget is not None
            cfg["outer_ids"] = [os.getuid(), os.getgid()]
            limits = {**LIMITS, "RLIMIT_NPROC": 1 if as_budget or alone else SANDBOX_NPROC}
            home = "/tmp"
        else:
            self._tmp = tempfile.mkdtemp(prefix="tinyattn-learner-")
            # NumPy by a link in the private folder: a venv inside the checkout puts NumPy's own path there
            os.symlink(_numpy_site(), numpy_link := os.path.join(self._tmp, "numpy-site"))
            cfg = {"workdir": self._tmp, "path": [library] if library else [], "path_last": [numpy_link]}
            if isolation == "user":   # root without namespaces: a uid of its own (not even nobody's), so no
                uid = _fresh_host_id()  # learner can signal or read another's processes
                os.chown(self._tmp, uid, uid)
                user = {"user": uid, "group": uid, "extra_groups": []}
            _set_subreaper()
            self._before = _descendants(os.getpid())     # ours already: never killed at the end
            limits, home = dict(LIMITS), self._tmp
            if alone:                                    # no fork: every cycle of its calls is counted here
                limits["RLIMIT_NPROC"] = 1
        # CPU seconds: the wall-clock deadline is the real limit; this one also stops a forked spinner
        limits["RLIMIT_CPU"] = max(1, int(timeout) + 5)
        cfg.update(wire=_source(WIRE), limits=limits, probe=probe, as_budget=as_budget)
        try:
            self._start(cfg, home, user)
        except BaseException:
            if self._budget is not None:
                self._budget.close()
            raise

    def _start(self, cfg: dict, home: str, user: dict) -> None:
        # a call's inputs go over this socket as files the judge made (shared_inputs.py); the judge only sends
        self._inputs, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._inputs.setblocking(False)
        try:
            self.proc = subprocess.Popen(CHILD_CMD + [json.dumps({**cfg, "inputs_fd": theirs.fileno()})],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         env=_env(home), cwd=self._tmp or "/", start_new_session=True,
                                         pass_fds=(theirs.fileno(),), **user)
        except BaseException:
            self._inputs.close()
            raise
        finally:
            theirs.close()
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        if cfg.get("handshake"):
            try:
                self._handshake(cfg["map_by_judge"])
            except BaseException:
                self.close()                           # no process, cgroup or folder left behind
                raise

    def _handshake(self, map_ids: bool) -> None:
        """The child made its user namespace and waits: move it into the sandbox's cgroup (before it
        starts any other process), write its uid and gid maps when the grader is root (root only can
        map a second host uid), then let it go on."""
        try:
            got = b""
            while not got:
                self._wait_for(self.proc.stdout, False, min(self.left, 20.0))
                got = os.read(self.proc.stdout.fileno(), 1)
                if not got:
                    raise EOFError
            if got != b"U":
                raise OSError("unexpected start byte")
            if self._budget is not None:
                self._budget.add(self.proc.pid)
            if map_ids:
                _map_ids(self.proc.pid, _fresh_host_id())
            os.write(self.proc.stdin.fileno(), b"G")
        except (EOFError, OSError):
            raise LearnerDied(self._death()) from None

    def _read_stderr(self) -> None:
        """The child's stderr, read from its raw descriptor with a short select: close() can always stop
        this thread (a blocked read on the buffered file would hold its lock, and closing it would
        wait forever for a process that never closes its copy of the pipe)."""
        fd = self.proc.stderr.fileno()
        while not self._closing:
            try:
                if not select.select([fd], [], [], 0.1)[0]:
                    continue
                chunk = os.read(fd, 4096)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            self.stderr.append(chunk)
            self._stderr_size += len(chunk)
            while self._stderr_size - len(self.stderr[0]) > STDERR_KEEP and len(self.stderr) > 1:
                self._stderr_size -= len(self.stderr.popleft())

    def _wait_for(self, f, write: bool, left: float) -> None:
        if left <= 0 or not select.select([] if write else [f], [f] if write else [], [], left)[0 if not write else 1]:
            self._stuck = True
            raise LearnerTimeout()

    def _wait_readable(self, f=None) -> None:
        f = f if f is not None else self.proc.stdout
        if self._cpu_stop is None:
            self._wait_for(f, False, self.deadline - time.monotonic())
            return
        while True:                                       # a measured call: look at its CPU time 20 times a second
            left = self.deadline - time.monotonic()
            if left > 0 and select.select([f], [], [], min(left, 0.05))[0]:
                return
            used = self.cpu_seconds()
            if used > self._cpu_stop:
                self._stuck = True
                raise LearnerOverBudget(used - self._cpu_stop + self._cpu_limit)
            if left <= 0:
                self._stuck = True
                raise LearnerTimeout()

    def cpu_seconds(self) -> float:
        """CPU seconds (user + system) used so far by the learner's process and every process below it,
        read by the judge from /proc: the learner's code can neither see nor change this count. Children
        already reaped count through their parent's cutime/cstime; parents are read before children, so a
        process reaped between the two reads is missed, never counted twice."""
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        pids = [self.proc.pid] + sorted(_descendants(self.proc.pid))
        for other in self.also_counted:              # the submission's other process, idle while this one
            pids += [other.proc.pid] + sorted(_descendants(other.proc.pid))     # is measured
        for pid in pids:
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                total += sum(int(v) for v in fields[11:15])      # utime, stime, cutime, cstime
            except (OSError, ValueError, IndexError):
                pass
        return total / tick

    def _send(self, data: bytes) -> None:
        """Write one request, never blocking past the deadline (a learner that stops reading can not hang us)."""
        data = memoryview(data)
        fd = self.proc.stdin.fileno()
        os.set_blocking(fd, False)
        while data:
            self._wait_for(self.proc.stdin, True, self.deadline - time.monotonic())
            try:
                data = data[os.write(fd, data):]
            except BlockingIOError:
                continue

    def request(self, msg: dict, cpu_limit: float | None = None) -> dict:
        """Send one request and return the reply (a dict with 'ok' or 'raised', 'stdout', ...).

        cpu_limit: seconds of CPU time the request may use (cpu_seconds, read from outside); past it the
        process is stopped and LearnerOverBudget raised. The reply's "cpu" is what the request used.

        A call's array arguments travel in a file the judge made (shared_inputs.py); the reply's "mutated"
        ([[i, shape], ...]: the arguments the call wrote into) is the judge's own reading of that file."""
        start = time.monotonic()
        self.deadline = start + self.left
        cpu_start = self.cpu_seconds() if cpu_limit is not None else 0.0
        if cpu_limit is not None:
            self._cpu_limit, self._cpu_stop = float(cpu_limit), cpu_start + float(cpu_limit)
        shared, inputs = [] if msg.get("op") == "call" else None, None
        try:
            data = wire.dumps(msg, hook=self._encode, shared=shared)
            if shared:
                try:
                    inputs = shared_inputs.place(shared)
                except OSError as e:                  # the judge's own failure, not the learner's process dying
                    raise GraderFault(f"the grader could not lay out a call's inputs in a file: {e}") from None
                shared_inputs.send(self._inputs, inputs, self.deadline)
            self._send(data)
            if inputs is not None:
                mutated = self._take_back(inputs, shared)
            reply = wire.read_message(self.proc.stdout.fileno(), hook=self._decode, wait=self._wait_readable)
            if isinstance(reply, dict):
                reply["mutated"] = mutated if inputs is not None else []
        except TimeoutError:
            self._stuck = True
            raise LearnerTimeout() from None
        except (EOFError, BrokenPipeError, OSError):
            raise LearnerDied(self._death()) from None
        except wire.ProtocolError as e:
            raise LearnerDied(f"the exercise's process sent something that is not a reply ({e})") from None
        finally:
            self.left -= time.monotonic() - start
            self._cpu_stop = None
            if inputs is not None:
                os.close(inputs)
        if not isinstance(reply, dict) or not ("ok" in reply or "raised" in reply):
            raise LearnerDied("the exercise's process sent something that is not a reply")
        out = reply.get("stdout")
        if isinstance(out, str) and out:
            self._printed = (self._printed + clean_text(out[-4 * STDOUT_TAIL:], 4 * STDOUT_TAIL))[-(STDOUT_TAIL + 1):]
        if isinstance(reply.get("raised"), dict):
            reply["raised"] = clean_raised(reply["raised"])
        if cpu_limit is not None:
            reply["cpu"] = self.cpu_seconds() - cpu_start
            if reply["cpu"] > cpu_limit:                     # it answered between two looks: still over
                raise LearnerOverBudget(reply["cpu"])
        return reply

    def _take_back(self, inputs: int, shared: list) -> list:
        """The call is over when the learner's process says "R" (its pages of the file now private): seal the
        file against every write, then read it; the reply may come only after the judge's "S" (see child.py).
        A reply already waiting at the seal was written before it: the process broke the protocol."""
        self._wait_readable(self._inputs)
        if self._inputs.recv(1) != b"R":
            raise EOFError
        mutated = shared_inputs.written(inputs, shared, sealed=shared_inputs.seal(inputs))
        if select.select([self.proc.stdout], [], [], 0)[0]:
            raise wire.ProtocolError("a reply sent before its inputs were handed back")
        self._inputs.send(b"S")
        return mutated

    def _death(self) -> str:
        try:
            rc = self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            rc = None
        self._reader.join(timeout=1.0)
        lines = b"".join(self.stderr).decode("utf-8", "replace").strip().splitlines()
        last = clean_line(lines[-1].strip(), 300) if lines else ""      # the learner's text: no escape codes
        return (f"the exercise's process exited with status {rc} before reporting a result"
                + (" (os._exit or a crash?)" if rc == 0 else "") + (f"; last error line: {last}" if last else ""))

    @property
    def stdout(self) -> str:
        """The end of what the learner's code printed: its last STDOUT_TAIL characters, from a line start."""
        text = self._printed
        if len(text) > STDOUT_TAIL:
            text = text[-STDOUT_TAIL:]
            text = text[text.index("\n") + 1:] if "\n" in text else text
        return text

    # ---- values crossing the pipe ------------------------------------------------------------------
    def _encode(self, obj, enc):
        if isinstance(obj, Remote):
            return {"R": obj._ref}
        tinyattn = sys.modules.get("tinyattn")
        if tinyattn is not None and isinstance(obj, tinyattn.Tensor):              # a Tensor the check built
            return {"Tn": None, "data": enc(obj.numpy()), "rg": bool(obj.requires_grad)}
        raise TypeError(f"can not send a {type(obj).__name__} to the learner's process")

    def _decode(self, tree, dec):
        if "Tn" in tree:
            return RemoteTensor(self, int(tree["Tn"]), dec(tree["data"]), bool(tree.get("rg")))
        if "R" in tree:
            mro = [clean_line(m, 200) for m in tree.get("mro", [])][:20] if isinstance(tree.get("mro"), list) else []
            return Remote(self, int(tree["R"]), mro, bool(tree.get("callable")))
        raise wire.ProtocolError(f"unexpected value {str(tree)[:60]}")

    # ---- the end -----------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop the process and everything it started. Never raises."""
        try:
            if self.proc.poll() is None and not self._stuck:
                try:
                    wire.write_message(self.proc.stdin.fileno(), {"op": "bye"})
                    self.proc.wait(timeout=0.5)               # it leaves at once (os._exit), threads or not
                except (OSError, subprocess.TimeoutExpired):
                    pass
            for _ in range(3):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)   # sandbox: unshare's death ends the PID namespace
                except (ProcessLookupError, PermissionError):
                    pass
                if self.isolation != "sandbox":
                    for pid in _descendants(os.getpid()) - self._before - {self.proc.pid}:
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except (ProcessLookupError, PermissionError):
                            pass
                        try:
                            os.waitpid(pid, os.WNOHANG)
                        except ChildProcessError:
                            pass
            try:
                self.proc.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self._reader.join(timeout=0.5)             # what it has read so far; then it stops, EOF or not
            self._closing = True
            self._reader.join(timeout=1.0)
            for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr, self._inputs):
                try:
                    f.close()
                except OSError:
                    pass
        finally:
            if self._budget is not None:
                self._budget.close()
            if self._tmp:
                shutil.rmtree(self._tmp, ignore_errors=True)
            if self._mount_dir:
                try:
                    os.rmdir(self._mount_dir)               # the tmpfs on it lived in the sandbox's namespace
                except OSError:
                    pass


# ---- learner objects, seen from the judge -----------------------------------------------------------

class Remote:
    """A learner object that lives in the child. Attribute reads are requests; calls go through
    `Session.invoke`. Its `__class__` is the tinyattn class it is an instance of (the first one in
    its MRO the judge knows), so `isinstance(m, nn.Module)` in a check reads as it would in-process;
    the judge never runs any of its code."""

    def __init__(self, proc: LearnerProcess, ref: int, mro: list[str], is_callable: bool):
        object.__setattr__(self, "_proc", proc)
        object.__setattr__(self, "_ref", ref)
        object.__setattr__(self, "_mro", mro)
        object.__setattr__(self, "_callable", is_callable)

    @property
    def type_name(self) -> str:
        return self._mro[0].rsplit(".", 1)[-1] if self._mro else "object"

    @property
    def __class__(self):                      # noqa: D401 - see the class docstring
        for name in self._mro:
            mod, _, qual = name.rpartition(".")
            if mod.split(".")[0] == "tinyattn" and mod in sys.modules:
                cls = getattr(sys.modules[mod], qual, None)
                if isinstance(cls, type):
                    return cls
        return type(self)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        reply = self._proc.request({"op": "getattr", "ref": self._ref, "name": name})
        if "raised" in reply:
            r = reply["raised"]
            raise AttributeError(f"{self.type_name}.{name}: {r.get('message', '')}" if isinstance(r, dict) else name)
        return reply["ok"]

    def __setattr__(self, name, value):
        _answer(self._proc.request({"op": "setattr", "ref": self._ref, "name": name, "value": value}),
                f"setting {self.type_name}.{name}")

    def __iter__(self):
        return iter(_answer(self._proc.request({"op": "list", "ref": self._ref}), f"iterating a {self.type_name}"))

    def __call__(self, *args, **kwargs):
        return _answer(self._proc.request({"op": "call", "ref": self._ref, "args": list(args), "kwargs": kwargs}),
                       self.type_name)

    def __repr__(self) -> str:
        return f"<learner's {self.type_name}>"


class RemoteTensor(Remote):
    """A learner's Tensor: its data came back as a plain array (a copy: write with `copy_into`);
    .grad, .backward etc. are requests."""

    def __init__(self, proc, ref, data, requires_grad):
        super().__init__(proc, ref, ["tinyattn.tensor.Tensor"], False)
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "_data", data)
        object.__setattr__(self, "requires_grad", requires_grad)

    def copy_into(self, value) -> None:
        """np.copyto(this tensor's array, value), done in the learner's process."""
        _answer(self._proc.request({"op": "copyto", "ref": self._ref, "value": value}), "writing a Tensor")
        self.data[...] = value

    @property
    def shape(self) -> tuple:
        return self.data.shape

    def numpy(self):
        return self.data

    def __array__(self, dtype=None, copy=None):
        return self.data if dtype is None else self.data.astype(dtype)


class RemoteFunction:
    """A function of the learner's module, called through `Session.invoke`."""

    def __init__(self, proc: LearnerProcess, name: str):
        self.proc, self.name = proc, name


def _answer(reply: dict, label: str):
    """reply['ok'], or the learner's exception as the checks' StudentRaised / StudentNotImplemented."""
    if "raised" not in reply:
        return reply["ok"]
    r = reply["raised"] if isinstance(reply["raised"], dict) else {}
    msg, where = str(r.get("message", ""))[:2000], str(r.get("where", ""))[:400]
    if r.get("kind") == "not_implemented":
        raise StudentNotImplemented(msg or f"{label} is not implemented yet")
    name = ([str(t) for t in r.get("types", [])] or ["Exception"])[0]
    raise StudentRaised(f"{label} raised {name}: {msg}{where}", rebuild_exception(r))


def rebuild_exception(raised: dict) -> BaseException:
    """A builtin exception standing for the learner's (the most derived builtin class in its MRO)."""
    for name in raised.get("types", []):
        cls = getattr(builtins, str(name), None)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            try:
                return cls(str(raised.get("message", "")))
            except Exception:  # noqa: BLE001 - e.g. UnicodeDecodeError wants 5 arguments
                continue
    return Exception(str(raised.get("message", "")))
