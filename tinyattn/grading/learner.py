"""The judge's side of the pipe: start the learner's process (sandboxed where possible), talk to it.

`LearnerProcess` starts `child.py` with a clean environment, sends it the submission's source,
then one request per call the checks make; replies are decoded by wire.py into plain data. A
learner object that is not plain data (ex08's module, a Tensor) stays in the child and comes
back as a `Remote` handle; attribute reads and calls on it are further requests.

Isolation ("isolation" in every result):
* "sandbox": `unshare --user --map-root-user --pid --fork --kill-child --net --mount
  --mount-proc`, finished from inside by child.py (read-only filesystem, the grader, solutions,
  tests and learners' folders hidden, a private tmpfs, nested namespace, no capabilities). Ending
  the `unshare` process ends the PID namespace and with it every process the submission started,
  `setsid` or not.
* "user": as "process" below, but the grader is root, so the learner's process runs as nobody
  (uid 65534): it can not read the grader's memory or write files; it can read world-readable ones.
* "process": a plain child process in its own session (no namespaces on this machine: macOS,
  Docker's default seccomp profile, or unprivileged user namespaces turned off). It still never
  holds the references or the seed, but it can read files the grader's user can read, so
  `tinyattn grade` warns. At the end its session and every descendant that re-parented to the
  judge (a Linux subreaper) are killed.
"""
from __future__ import annotations

import builtins
import json
import os
import select
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from functools import lru_cache
from pathlib import Path

from . import wire

HERE = Path(__file__).resolve().parent
CHILD, WIRE = str(HERE / "child.py"), str(HERE / "wire.py")
NOBODY = 65534
PACKAGE_ROOT = str(HERE.parents[1])                     # the folder that holds tinyattn/
ISOLATIONS = ("auto", "sandbox", "user", "process")
STDERR_KEEP = 16 * 1024                                 # bytes of the child's stderr kept (its tail)
STDOUT_TAIL = 4096                                      # characters of the learner's printing kept for the report
LIMITS = {"RLIMIT_AS": 4 << 30, "RLIMIT_FSIZE": 64 << 20, "RLIMIT_NOFILE": 256, "RLIMIT_CORE": 0}
@lru_cache(maxsize=None)
def _source(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


# the child runs from its source text: it reads no file of the grader's (which may be unreadable to it)
CHILD_CMD = [sys.executable, "-I", "-c", _source(CHILD)]
UNSHARE = ["unshare", "--user", "--map-root-user", "--pid", "--fork", "--kill-child", "--net", "--mount",
           "--mount-proc", "--"]


class LearnerTimeout(BaseException):
    """The submission did not answer before the exercise's deadline (BaseException: no check catches it)."""


class LearnerDied(BaseException):
    """The submission's process ended, or sent something that is not a reply."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


# ---- which isolation this machine offers -----------------------------------------------------------

def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _numpy_site() -> str:
    """The folder NumPy is installed in (the user site when it came from `pip install --user`)."""
    import numpy
    return os.path.dirname(os.path.dirname(os.path.realpath(numpy.__file__)))


def _site_dirs() -> list[str]:
    dirs = list(getattr(site, "getsitepackages", lambda: [])())
    import sysconfig
    dirs += [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], _numpy_site()]
    return [d for d in dict.fromkeys(os.path.realpath(d) for d in dirs) if os.path.isdir(d)]


def _needed() -> list[str]:
    """Paths the learner's process must still see: Python, NumPy and tinyattn."""
    import numpy
    return [os.path.realpath(p) for p in (sys.executable, sys.prefix, sys.base_prefix, PACKAGE_ROOT,
                                          os.path.dirname(numpy.__file__))]


def sandbox_config(hide: tuple[str, ...] = ()) -> dict:
    """What child.py's enter_sandbox needs: the private tmp, the hidden paths, the filtered site dirs."""
    needed = _needed()
    tmp = next((t for t in ("/tmp", "/dev/shm", "/var/tmp")
                if os.path.isdir(t) and not any(_under(n, t) for n in needed)), None)
    if tmp is None:
        raise OSError("no folder for a private tmpfs (/tmp, /dev/shm and /var/tmp hold Python or tinyattn)")
    hidden = [str(HERE), os.path.join(PACKAGE_ROOT, "solutions"), os.path.join(PACKAGE_ROOT, "tests")]
    hidden += [os.path.realpath(h) for h in hide]
    # never hide a folder Python or tinyattn lives in (that would hide them too)
    hidden = [h for h in dict.fromkeys(hidden) if not any(_under(n, h) for n in needed) or h == str(HERE)]
    filters = []
    for d in _site_dirs():
        if _under(PACKAGE_ROOT, d) and PACKAGE_ROOT != d:
            continue                        # tinyattn lives below this folder: leave it whole
        keep = [n for n in os.listdir(d) if n.startswith("numpy") or (PACKAGE_ROOT == d and n == "tinyattn")]
        filters.append([d, keep])
    return {"tmp": tmp, "hide": hidden, "filter": filters}


@lru_cache(maxsize=1)
def sandbox_problem() -> str | None:
    """None when the namespace sandbox works here, else why not (one line)."""
    if not sys.platform.startswith("linux"):
        return f"no Linux namespaces on {sys.platform}"
    if shutil.which("unshare") is None:
        return "the `unshare` command (util-linux) is not installed"
    try:
        cfg = {**sandbox_config(), "sandbox": True, "probe": True, "wire": "", "workdir": "/"}
        proc = subprocess.run(UNSHARE + CHILD_CMD + [json.dumps(cfg)], capture_output=True,
                              timeout=20, env=_env("/"))
    except (OSError, subprocess.SubprocessError) as e:
        return f"unshare failed: {e}"
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"unshare failed: {err[-1][:200] if err else f'exit status {proc.returncode}'}"
    return None


@lru_cache(maxsize=1)
def user_problem() -> str | None:
    """None when this (root) grader can run Python with NumPy as nobody, else why not."""
    if not (hasattr(os, "geteuid") and os.geteuid() == 0):
        return "the grader is not root"
    try:
        proc = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path[:0] = {[PACKAGE_ROOT]!r}; "
                               "import numpy, tinyattn"], capture_output=True, timeout=30, env=_env("/"), cwd="/",
                              user=NOBODY, group=NOBODY, extra_groups=[])
    except (OSError, subprocess.SubprocessError) as e:
        return f"nobody can not run {sys.executable}: {e}"
    return None if proc.returncode == 0 else "nobody can not import numpy and tinyattn"


def resolve_isolation(requested: str = "auto") -> str:
    """'sandbox' or 'process'; ValueError when 'sandbox' was asked for and can not be had."""
    if requested not in ISOLATIONS:
        raise ValueError(f"isolation must be one of {', '.join(ISOLATIONS)}, got {requested!r}")
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
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8",
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

    def __init__(self, isolation: str, timeout: float, hide: tuple[str, ...] = ()):
        """timeout: seconds the learner's code may take in all, counted while the judge waits for it
        (the judge's own work, e.g. finite differences of the reference, does not count)."""
        self.isolation, self.left = isolation, float(timeout)
        self.deadline = time.monotonic() + self.left
        self.stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._printed = ""
        self.names: list[str] = []
        self._tmp, self._before, self._stuck = None, set(), False
        user = {}
        if isolation == "sandbox":
            cfg = {**sandbox_config(hide), "sandbox": True}
            cfg["workdir"] = os.path.join(cfg["tmp"], "work")
            cmd = UNSHARE + CHILD_CMD
        else:
            self._tmp = tempfile.mkdtemp(prefix="tinyattn-learner-")
            cfg = {"workdir": self._tmp}
            cmd = CHILD_CMD
            if isolation == "user":                       # root without namespaces: the learner runs as nobody
                os.chown(self._tmp, NOBODY, NOBODY)
                user = {"user": NOBODY, "group": NOBODY, "extra_groups": []}
            _set_subreaper()
            self._before = _descendants(os.getpid())     # ours already: never killed at the end
        # CPU seconds: the wall-clock deadline is the real limit; this one also stops a forked spinner
        cpu = max(1, int(timeout) + 5)
        # -I leaves out PYTHONPATH and the user site: tinyattn's folder first, NumPy's wherever it is
        cfg.update(wire=_source(WIRE), path=[PACKAGE_ROOT], path_last=[_numpy_site()],
                   limits={**LIMITS, "RLIMIT_CPU": cpu})
        self.proc = subprocess.Popen(cmd + [json.dumps(cfg)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=_env(cfg["workdir"] if self._tmp else cfg["tmp"]),
                                     cwd=self._tmp or "/", start_new_session=True, **user)
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()

    def _read_stderr(self) -> None:
        for chunk in iter(lambda: self.proc.stderr.read1(4096), b""):
            self.stderr.append(chunk)
            self._stderr_size += len(chunk)
            while self._stderr_size - len(self.stderr[0]) > STDERR_KEEP and len(self.stderr) > 1:
                self._stderr_size -= len(self.stderr.popleft())

    def _wait_readable(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
            self._stuck = True
            raise LearnerTimeout()

    def request(self, msg: dict) -> dict:
        """Send one request and return the reply (a dict with 'ok' or 'raised', 'stdout', ...)."""
        start = time.monotonic()
        self.deadline = start + self.left
        try:
            wire.write_message(self.proc.stdin.fileno(), msg, hook=self._encode)
            reply = wire.read_message(self.proc.stdout.fileno(), hook=self._decode, wait=self._wait_readable)
        except (EOFError, BrokenPipeError, OSError):
            raise LearnerDied(self._death()) from None
        except wire.ProtocolError as e:
            raise LearnerDied(f"the exercise's process sent something that is not a reply ({e})") from None
        finally:
            self.left -= time.monotonic() - start
        if not isinstance(reply, dict) or not ("ok" in reply or "raised" in reply):
            raise LearnerDied("the exercise's process sent something that is not a reply")
        out = reply.get("stdout")
        if isinstance(out, str) and out:
            self._printed = (self._printed + out)[-(STDOUT_TAIL + 1):]
        return reply

    def _death(self) -> str:
        try:
            rc = self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            rc = None
        self._reader.join(timeout=1.0)
        lines = b"".join(self.stderr).decode("utf-8", "replace").strip().splitlines()
        last = lines[-1].strip() if lines else ""
        if len(last) > 300:
            last = last[:300] + f"... ({len(last) - 300} more characters)"
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
            mro = [str(m) for m in tree.get("mro", [])] if isinstance(tree.get("mro"), list) else []
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
            self._reader.join(timeout=1.0)
            for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                try:
                    f.close()
                except OSError:
                    pass
        finally:
            if self._tmp:
                shutil.rmtree(self._tmp, ignore_errors=True)


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
        super().__init__(proc, ref, ["tinyattn._tensor.Tensor"], False)
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
    from .checkkit import StudentNotImplemented, StudentRaised
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
