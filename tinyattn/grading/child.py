"""The learner's process: it loads ONE submission and runs the calls the judge asks for.

    python -I -c "$(cat child.py)" CONFIG_JSON      (started by tinyattn.grading.learner, never by hand)

It holds no reference, expected value, seed or verdict: the judge sends inputs over stdin and
reads plain data back on stdout (see wire.py), so nothing this process does can write a grade.
It imports nothing from tinyattn.grading (in the sandbox that folder is not even visible), only
the standard library, NumPy, wire.py's text and, for ex08, tinyattn itself.

Inside the sandbox (CONFIG "sandbox": true) it first, still single-threaded and before any learner code:
  1. makes a new user namespace (its uid map written by the judge when the grader is root, so the
     learner can then become a host uid of its own), then new mount, PID, network, IPC and UTS
     namespaces, and forks: the child is PID 1 of the new PID namespace, and dies with the parent;
  2. builds a fresh root on a tmpfs from exactly what CONFIG lists (see enter_sandbox), makes it
     read-only, adds a private /tmp, and pivots into it: the host's tree is detached;
  3. forks once more: PID 1 stays behind as a reaper that runs no learner code (so nothing the
     learner does can keep the namespace alive once the judge is gone), and the learner's process
     drops every privilege (a uid of its own, or a nested user namespace without capabilities)
     and sets CPU-time, address-space, process-count, file-size and open-file limits.
The process outside the PID namespace watches the judge through a pidfd and kills PID 1 when the
judge is gone; when PID 1 dies, the kernel kills every process of the namespace.
"""
import ctypes
import io
import json
import linecache
import os
import socket
import sys
import traceback
import types

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER = 0x00020000, 0x04000000, 0x08000000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 2, 4, 8, 4096, 16384, 1 << 18
MNT_DETACH = 2
AT_RECURSIVE, MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID = 0x8000, 1, 2
SYS_MOUNT_SETATTR = 442                              # the same number on x86-64 and arm64
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(os.uname().machine, 155)
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
INNER_ID = 1000                                      # the learner's uid inside, when the judge maps a host uid
STDOUT_CAP = 8192                   # characters of print() output kept per call (its end)


class ForbiddenImport(ImportError):
    """A submission imported a module no exercise may use."""


class ImportGuard:
    """Refuses the modules no exercise may use (a courtesy for honest mistakes: the sandbox is the wall)."""

    def __init__(self, blocked, rule=""):
        self.blocked, self.rule = tuple(blocked), rule

    def find_spec(self, fullname, path=None, target=None):
        for b in self.blocked:
            if fullname == b or fullname.startswith(b + "."):
                raise ForbiddenImport(f"importing {fullname} is not allowed" + (f": {self.rule}" if self.rule else
                                                                                 " in the exercises"))
        return None


# ---- the sandbox: namespaces and a fresh root, made here with plain system calls ----------------------

def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    return libc


class SandboxStepFailed(OSError):
    """One step of building the sandbox failed: the step and the errno say why (never a guess)."""


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise SandboxStepFailed(err, f"{what} failed: {_errname(err)} ({os.strerror(err)})")


def _errname(err: int) -> str:
    import errno
    return errno.errorcode.get(err, f"errno {err}")


def _mount(libc, src, target, fstype, flags, data=None) -> None:
    enc = (lambda s: None if s is None else s.encode())
    _check(libc.mount(enc(src), enc(target), enc(fstype), flags, enc(data)), f"mount {fstype or 'bind'} {target!r}")


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        raise SandboxStepFailed(e.errno, f"writing {path} failed: {_errname(e.errno)} ({e.strerror})") from None


def _ensure(root: str, path: str, is_dir: bool) -> str:
    """root + path, creating the missing folders (and the file, for a file mount point) inside the new root."""
    target = root
    parts = [p for p in path.split("/") if p]
    for i, part in enumerate(parts):
        target = os.path.join(target, part)
        last = i == len(parts) - 1
        if os.path.lexists(target):
            continue
        if last and not is_dir:
            open(target, "w").close()
        else:
            os.mkdir(target, 0o755)
    return target


def _bind(libc, src: str, root: str, dst: str) -> None:
    target = _ensure(root, dst, os.path.isdir(src))
    _mount(libc, src, target, None, MS_BIND | MS_REC)


def _setattr(libc, path: str, set_: int, clear: int, recursive: bool, what: str) -> None:
    """mount_setattr (Linux >= 5.12) on the mount at `path` (and every mount below it if `recursive`)."""
    class MountAttr(ctypes.Structure):
        _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                    ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]
    attr = MountAttr(set_, clear, 0, 0)
    rc = libc.syscall(SYS_MOUNT_SETATTR, -100, path.encode(), AT_RECURSIVE if recursive else 0,
                      ctypes.byref(attr), ctypes.sizeof(attr))
    _check(rc, what)


def _namespaces(cfg: dict, libc) -> None:
    """A new user namespace (its uid map written by the judge when the grader is root, else here),
    then new mount, PID, network, IPC and UTS namespaces; fork, so this process's child is PID 1.

    This process (outside the PID namespace) only waits: for PID 1, and for the judge (a pidfd), and
    kills PID 1 when the judge is gone. PID 1 dies with this process (PR_SET_DEATHSIG, set by code
    the learner never runs in), and when PID 1 dies the kernel kills every process of the namespace."""
    try:
        judge = os.pidfd_open(os.getppid())
    except (AttributeError, OSError):                  # Linux < 5.3: the death signal alone
        judge = None
    _check(libc.unshare(CLONE_NEWUSER), "unshare(CLONE_NEWUSER) (a user namespace)")
    if cfg.get("handshake", cfg.get("map_by_judge")):  # the judge moves us into the sandbox's cgroup
        os.write(1, b"U")                               # and (as root) writes uid_map and gid_map now
        if os.read(0, 1) != b"G":
            os._exit(70)
    if not cfg.get("map_by_judge"):
        uid, gid = cfg["outer_ids"]
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"0 {uid} 1")
        _write("/proc/self/gid_map", f"0 {gid} 1")
    os.setgid(0)
    os.setuid(0)
    _check(libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS),
           "unshare(mount, PID, network, IPC, UTS namespaces)")
    _mount(libc, None, "/", None, MS_REC | MS_PRIVATE)
    alive_r, alive_w = os.pipe()                        # closed when this process dies: PID 1 checks it once
    pid = os.fork()
    if pid:                                             # outside: wait for PID 1, leave with its status
        os.close(alive_r)
        os._exit(_wait_outside(pid, judge))
    os.close(alive_w)
    _check(libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")   # the outer one goes: we go too
    import select
    if select.select([alive_r], [], [], 0)[0]:          # it went before the line above: go now
        os._exit(75)
    os.close(alive_r)


def _wait_outside(pid: int, judge) -> int:
    import select
    import signal
    child = None
    try:
        child = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pass
    while True:
        if judge is not None and child is not None:
            ready = select.select([judge, child], [], [])[0]
            if judge in ready:                         # the judge is gone: so is the sandbox
                os.kill(pid, signal.SIGKILL)
        try:
            got, status = os.waitpid(pid, 0 if child is None or judge is None else os.WNOHANG)
        except InterruptedError:
            continue
        if got == pid:
            return os.waitstatus_to_exitcode(status) & 0xFF


def _reaper(libc) -> None:
    """Fork: this process stays PID 1 and only reaps, the child goes on to run the learner's code.

    PID 1 runs no learner code, so nothing the learner does can clear its death signal; the learner
    can not signal it (the kernel drops signals to a namespace's init from inside), nor trace it
    (not dumpable). When the learner's process ends, PID 1 ends with its status, and the kernel
    kills whatever else is left in the namespace."""
    pid = os.fork()
    if pid == 0:
        return
    import signal
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)       # no Python handler: the kernel's init protection holds
    for fd in (0, 1):
        os.close(fd)
    while True:
        try:
            got, status = os.wait()
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(0)
        if got == pid:
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def enter_sandbox(cfg: dict) -> None:
    """Namespaces, then a fresh root made of exactly what cfg lists, then no privilege left.

    The root is a small tmpfs holding: a private writable tmpfs at /tmp (mounted first, so that
    what lies under /tmp on the host, a venv say, can still be bound below it); read-only binds of
    the system folders (/usr, /lib*: the loader and shared libraries), of the interpreter's library
    folder (standard library, lib-dynload, libpython) and of NumPy; every Python package folder
    (site-packages, dist-packages) inside those covered by an empty read-only tmpfs holding NumPy
    alone; for a Tensor exercise, the build of tinyattn it may import at /opt/tinyattn; /dev with
    null, zero, random and urandom only; a fresh /proc of the new PID namespace. No host /tmp,
    /run, /home, /etc (but the loader's cache), venv, checkout, .git or other learner; no network;
    no Unix socket of the host. Any step that fails raises SandboxStepFailed naming it and its errno.
    """
    libc = _libc()
    _namespaces(cfg, libc)
    root = cfg["mount_dir"]
    _mount(libc, "tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0755")
    for target, link in cfg.get("links", []):
        _ensure(root, os.path.dirname(link), True)
        os.symlink(target, root + link)
    _mount(libc, "tmpfs", _ensure(root, "/tmp", True), "tmpfs", MS_NOSUID | MS_NODEV,
           f"size={cfg.get('tmp_size', '64m')},mode=1777")
    for src, dst in cfg.get("binds", []):
        _bind(libc, src, root, dst)
    for path in cfg.get("hide", []):                    # e.g. a checkout that lies inside /usr
        if os.path.isdir(root + path):
            _mount(libc, "tmpfs", root + path, "tmpfs", MS_NOSUID | MS_NODEV, "size=4k,mode=0555")
    for site_dir, keep, *moved in cfg.get("sites", []):  # an empty folder of packages, but for NumPy
        inside = _ensure(root, moved[0] if moved else site_dir, True)   # (moved: NumPy's, out of the checkout)
        _mount(libc, "tmpfs", inside, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755")
        for name in keep:                               # bound from the host's path (still visible here)
            _mount(libc, os.path.join(site_dir, name), _ensure(inside, "/" + name, True), None, MS_BIND | MS_REC)
    for name in ("null", "zero", "random", "urandom"):
        _bind(libc, f"/dev/{name}", root, f"/dev/{name}")
    _ensure(root, "/proc", True)
    try:                                                # the new PID namespace's own /proc (refused in
        _mount(libc, "proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)   # some containers)
    except OSError:
        pass
    _setattr(libc, root, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0, True, "mount_setattr (read-only root)")
    _setattr(libc, root + "/tmp", 0, MOUNT_ATTR_RDONLY, False, "mount_setattr (writable /tmp)")
    # the new root replaces the old one, which is then detached: nothing of the host's tree is left
    os.chdir(root)
    _check(libc.syscall(SYS_PIVOT_ROOT, b".", b"."), "pivot_root")
    _check(libc.umount2(b".", MNT_DETACH), "umount2 (the old root)")
    os.chdir("/")
    _reaper(libc)                                       # PID 1 stays behind; the learner's process goes on
    if cfg.get("map_by_judge"):                        # the grader is root: become a uid of our own on the host
        os.setgroups([])
        os.setgid(INNER_ID)
        os.setuid(INNER_ID)                            # every capability goes with uid 0
    else:                                              # one uid only: lock the mounts in a nested namespace
        _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare (nested user namespace)")

        class Header(ctypes.Structure):
            _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

        class Data(ctypes.Structure):
            _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                        ("inheritable", ctypes.c_uint32)]
        _check(libc.capset(ctypes.byref(Header(0x20080522, 0)), ctypes.byref((Data * 2)())), "capset")
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


def limit_address_space(budget: int) -> None:
    """RLIMIT_AS = what this process maps now + `budget` bytes, soft and hard (it can not be raised
    again): the kernel, not this process, then refuses an allocation over the budget. Set before the
    learner's code loads, never later: code that ran at import can change whatever this process does
    after it (an ex12 file replaced this function, and the limit of a call set when the call started)."""
    import resource
    import numpy as np
    for n in (8, 64, 512):                              # BLAS maps its work buffers on first use: before the budget
        np.ones((n, n)) @ np.ones((n, n))
        np.ones((n, 16)) @ np.ones((16, n))
    try:
        with open("/proc/self/status") as f:
            vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    except (OSError, StopIteration):                   # no /proc (a container refused it): a fixed base
        vm = 1 << 30
    seal_mappings()
    resource.setrlimit(resource.RLIMIT_AS, (vm + budget, vm + budget))


SYS_MSEAL = 462                                         # the same number on every architecture (Linux 6.10+)


def seal_mappings() -> int:
    """Seal every mapping this process holds now against unmapping and remapping (mseal(2), Linux 6.10+), so the
    address-space budget counted on top of them can not be widened by unmapping one: an ex12 call that unmapped
    BLAS's two 32 MiB work buffers (ctypes) held a whole (T, S) score matrix. Returns how many were sealed (0
    where the kernel has no mseal: there the budget rests on RLIMIT_AS alone)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        with open("/proc/self/maps") as f:
            spans = [tuple(int(x, 16) for x in line.split(None, 1)[0].split("-")) for line in f]
    except OSError:
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    sealed = 0
    for start, end in spans:                            # (vsyscall and the like refuse: EINVAL, left as they are)
        if libc.syscall(ctypes.c_long(SYS_MSEAL), ctypes.c_ulong(start), ctypes.c_ulong(end - start),
                        ctypes.c_ulong(0)) == 0:
            sealed += 1
        elif ctypes.get_errno() == 38:                  # ENOSYS: no mseal in this kernel
            return 0
    return sealed


def set_limits(limits: dict) -> None:
    try:
        import resource
    except ImportError:                     # pragma: no cover - not on every platform
        return
    for name, value in limits.items():
        which = getattr(resource, name, None)
        if which is None:
            continue
        soft, hard = resource.getrlimit(which)
        value = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass


# ---- talking to the judge --------------------------------------------------------------------------

class Capture(io.TextIOBase):
    """print() output: the last STDOUT_CAP characters of each call (the end is what explains a failure)."""

    def __init__(self):
        self.text, self.dropped = "", 0

    def writable(self):
        return True

    def write(self, s):
        s = str(s)
        self.text += s
        if len(self.text) > 2 * STDOUT_CAP:
            self.dropped += len(self.text) - STDOUT_CAP
            self.text = self.text[-STDOUT_CAP:]
        return len(s)

    def take(self) -> str:
        text, dropped = self.text[-STDOUT_CAP:], self.dropped + max(len(self.text) - STDOUT_CAP, 0)
        self.text, self.dropped = "", 0
        return (f"... ({dropped} characters before)\n" if dropped else "") + text


def tensor_array(t):
    """The NumPy array inside a tinyattn Tensor (t._data, or t.data before/after the Tensor-data change)."""
    for name in ("_data", "data"):
        a = getattr(t, name, None)
        if isinstance(a, sys.modules["numpy"].ndarray):
            return a
    return t.numpy()


def where_in(exc: BaseException, path: str) -> str:
    """' (line N of file.py: code)' for the deepest traceback frame inside the learner's file."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == path]
    if not frames:
        return ""
    f = frames[-1]
    return f" (line {f.lineno} of {os.path.basename(path)}: {(f.line or '').strip()[:200]})"


def describe(exc: BaseException, path: str) -> dict:
    """What the judge needs to report an exception: its kind, class names, message and place."""
    if isinstance(exc, NotImplementedError):
        kind = "not_implemented"
    elif isinstance(exc, ForbiddenImport):
        kind = "forbidden"
    elif isinstance(exc, SystemExit):
        kind = "exit"
    else:
        kind = "exception"
    try:
        message = str(exc.code if isinstance(exc, SystemExit) else exc)
    except BaseException:  # noqa: BLE001 - a __str__ that raises
        message = "<unprintable>"
    return {"kind": kind, "types": [c.__name__ for c in type(exc).__mro__], "message": message[:2000],
            "code": repr(exc.code)[:200] if isinstance(exc, SystemExit) else None, "where": where_in(exc, path)}


class Learner:
    def __init__(self, cfg: dict, wire):
        self.cfg, self.wire = cfg, wire
        self.module = None
        self.refs: dict[int, object] = {}
        self.path = ""
        self.np = sys.modules["numpy"]
        self.to_learner = self.from_learner = (lambda value: value)
        self.not_real = ()                    # (confined exercises: confine.runtime's NotReal)

    # values -> the pipe: plain data as it is, Tensors as data plus a handle, anything else as a handle
    def encode_hook(self, obj, enc):
        tinyattn = sys.modules.get("tinyattn")
        self.refs[id(obj)] = obj
        if tinyattn is not None and isinstance(obj, tinyattn.Tensor):
            return {"Tn": id(obj), "data": enc(self.np.array(tensor_array(obj))), "rg": bool(obj.requires_grad)}
        mro = [f"{c.__module__}.{c.__qualname__}" for c in type(obj).__mro__]
        return {"R": id(obj), "mro": mro[:20], "callable": callable(obj)}

    def decode_hook(self, tree, dec):
        if "Tn" in tree:                          # a Tensor the judge built: rebuilt here, on the array sent
            import tinyattn                       # (a call's: the judge's memory, see Learner.call)
            return tinyattn.from_numpy(dec(tree["data"])).requires_grad_(bool(tree["rg"]))
        if "R" in tree:
            return self.refs[int(tree["R"])]
        raise self.wire.ProtocolError(f"unexpected value {str(tree)[:60]}")

    def load(self, msg: dict) -> dict:
        np = self.np
        work = os.path.join(self.cfg["workdir"], "submission")
        os.makedirs(work, exist_ok=True)
        for name, source in msg["files"].items():
            parts = name.split("/")
            if not name.endswith(".py") or not all(p and p not in (".", "..") for p in parts):
                continue
            os.makedirs(os.path.join(work, *parts[:-1]), exist_ok=True)
            with open(os.path.join(work, *parts), "w", encoding="utf-8") as f:
                f.write(source)
        sys.path.append(work)                 # appended: the learner's files can not shadow numpy
        # the learner's file is named by its place in this process's own folder: no path of the judge's
        # (the checkout, the batch root) reaches this process, in argv, a code object or a message
        self.path = os.path.join(work, msg["main"])
        source = msg["files"][msg["main"]]
        linecache.cache[self.path] = (len(source), None, source.splitlines(True), self.path)
        if msg.get("kind") == "module":
            import tinyattn
            tinyattn.manual_seed(int(msg["init_seed"]))      # nn.Linear's initial weights (not the grading seed)
            tinyattn.set_default_dtype(np.float64)           # float64 parameters: exact comparisons
        sys.meta_path.insert(0, ImportGuard(msg["blocked"], str(msg.get("rule", ""))))
        module = types.ModuleType(msg["module"])
        module.__file__ = os.path.join(work, msg["main"])
        sys.modules[msg["module"]] = module
        sys.argv = [self.path]
        try:
            if msg.get("confine"):                # real arithmetic only (confine.py): its builtins, NumPy and imports
                confine = types.ModuleType("tinyattn_grading_confine")
                exec(compile(msg["confine"], "confine.py", "exec"), confine.__dict__)
                safe, self.to_learner, self.from_learner, self.not_real = confine.runtime(
                    np, msg["files"], lambda module, text, b: self.run_file(module, text, b, work),
                    ForbiddenImport)
                module.__dict__["__builtins__"] = safe
            exec(compile(source, self.path, "exec"), module.__dict__)
        except BaseException as e:  # noqa: BLE001 - reported to the judge
            return {"raised": self.describe(e)}
        self.module = module
        return {"ok": sorted(k for k, v in vars(module).items() if callable(v) and not k.startswith("__"))}

    def run_file(self, module, source: str, safe: dict, work: str):
        """One of the learner's own files imported by a confined submission: run with the same builtins."""
        module.__dict__["__builtins__"] = safe
        module.__file__ = os.path.join(work, *module.__name__.split(".")) + ".py"
        exec(compile(source, module.__file__, "exec"), module.__dict__)

    def describe(self, e: BaseException) -> dict:
        r = describe(e, self.path)
        if isinstance(e, self.not_real):      # a complex or object value in a confined exercise: a named mistake
            r["kind"] = "not_real"
        return r

    def call(self, msg: dict) -> dict:
        target = getattr(self.module, msg["fn"], None) if "fn" in msg else self.refs.get(int(msg["ref"]))
        if msg.get("attr"):
            target = getattr(target, msg["attr"])
        # the arrays are views of the judge's own memory (wire.py's "M" arrays): the judge, not this process,
        # sees what the call writes into them (shared_inputs.py), so nothing here keeps or compares a copy
        args, kwargs = self.to_learner(msg["args"]), self.to_learner(msg["kwargs"])
        try:
            out = self.from_learner(target(*args, **kwargs))
        except BaseException as e:  # noqa: BLE001 - reported to the judge
            return {"raised": self.describe(e)}
        return {"ok": out}

    def getattr(self, msg: dict) -> dict:
        try:
            return {"ok": getattr(self.refs[int(msg["ref"])], str(msg["name"]))}
        except BaseException as e:  # noqa: BLE001
            return {"raised": describe(e, self.path)}

    def setattr(self, msg: dict) -> dict:
        """obj.name = value (e.g. a parameter's .grad = None before a backward pass)."""
        try:
            setattr(self.refs[int(msg["ref"])], str(msg["name"]), msg["value"])
            return {"ok": None}
        except BaseException as e:  # noqa: BLE001
            return {"raised": describe(e, self.path)}

    def items(self, msg: dict) -> dict:
        """list(obj): e.g. the parameters a module's .parameters() yields."""
        try:
            return {"ok": list(self.refs[int(msg["ref"])])}
        except BaseException as e:  # noqa: BLE001
            return {"raised": describe(e, self.path)}

    def copyto(self, msg: dict) -> dict:
        """Write an array into a Tensor's data in place (the grader choosing a module's weights)."""
        try:
            self.np.copyto(tensor_array(self.refs[int(msg["ref"])]), msg["value"])
            return {"ok": None}
        except BaseException as e:  # noqa: BLE001
            return {"raised": describe(e, self.path)}


class SharedInputs:
    """One message's shared memory: the file the judge sent with it (`get`, at the first "M" array: mapped shared
    and writable), and the hand-back when the call is over (`hand_back`): the same pages, same address, mapped
    private (what the learner's objects still hold of them stays as it is, and later writes stay in this
    process); then "R" to the judge, which seals the file against writes and reads it; its "S" lets the reply go.
    Mapped with mmap(2) itself, unmapped when the last array on it is gone: no descriptor is held past the call
    (Python's mmap keeps one per mapping), and one is kept in reserve for the next file (RLIMIT_NOFILE)."""
    MAP_FIXED = 0x10                                    # the same value on Linux and macOS
    spare = None                                        # the reserved descriptor (/dev/null)
    _libc = None

    def __init__(self, sock):
        self.sock, self.memory, self.fd = sock, None, None

    @staticmethod
    def libc():
        if SharedInputs._libc is None:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.mmap.restype = ctypes.c_void_p
            # off_t as a C long: the `mmap` symbol's own on Linux (32-bit too) and macOS (64-bit only: off_t is int64)
            libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                  ctypes.c_long]
            libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
            SharedInputs._libc = libc
        return SharedInputs._libc

    def get(self):
        if self.memory is None:
            import mmap
            import weakref
            if SharedInputs.spare is not None:
                os.close(SharedInputs.spare)
                SharedInputs.spare = None
            _, fds, _, _ = socket.recv_fds(self.sock, 1, 1)
            if len(fds) != 1:
                raise OSError("a call's inputs came without their file")
            self.fd, size, libc = fds[0], os.fstat(fds[0]).st_size, self.libc()
            address = libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, self.fd, 0)
            if address in (None, ctypes.c_void_p(-1).value):
                raise OSError(ctypes.get_errno(), "the inputs could not be mapped")
            self.memory = (ctypes.c_char * size).from_address(address)
            weakref.finalize(self.memory, libc.munmap, address, size)
        return self.memory

    def hand_back(self) -> None:
        if self.memory is None:
            return
        import mmap
        address, size = ctypes.addressof(self.memory), len(self.memory)
        got = self.libc().mmap(address, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | self.MAP_FIXED,
                               self.fd, 0)
        os.close(self.fd)
        SharedInputs.spare = os.open(os.devnull, os.O_RDONLY)
        self.memory = None
        if got != address:
            raise OSError(ctypes.get_errno(), "the inputs could not be mapped private")
        self.sock.sendall(b"R")
        if self.sock.recv(1) != b"S":
            os._exit(0)                                 # the judge is gone


def main() -> None:
    cfg = json.loads(sys.argv[1])
    wire_source = cfg["wire"]               # the text of wire.py: this process reads no file of the grader's
    if cfg.get("sandbox"):
        try:
            enter_sandbox(cfg)
        except SandboxStepFailed as e:          # one line naming the step and its errno, for the judge
            os.write(2, f"sandbox step failed: {e.strerror}\n".encode())
            os._exit(72)
        for key in ("links", "binds", "sites", "hide", "mount_dir"):   # the host's paths: the learner's frames see cfg
            cfg.pop(key, None)
    sys.path[:0] = cfg.get("path", [])      # the folder that holds tinyattn (-I left PYTHONPATH out)
    sys.path += [p for p in cfg.get("path_last", []) if p not in sys.path]       # and NumPy's
    set_limits(cfg.get("limits", {}))
    import numpy  # noqa: F401  (before any learner code: the address-space budget starts from here)
    if cfg.get("probe"):
        # the root is the sandbox's (no /etc/passwd) and /tmp is its own private mount, writable
        private_tmp = os.stat("/tmp").st_dev != os.stat("/").st_dev and os.access("/tmp", os.W_OK)
        os._exit(0 if private_tmp and not os.path.exists("/etc/passwd") else 71)
    if cfg.get("as_budget"):
        limit_address_space(int(cfg["as_budget"]))
    os.makedirs(cfg["workdir"], exist_ok=True)
    os.chdir(cfg["workdir"])
    rfd, wfd = os.dup(0), os.dup(1)         # the pipe to the judge; fds 0 and 1 now point nowhere
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    sys.stdin = open(os.devnull, encoding="utf-8")              # input() sees end-of-file instead of hanging
    capture = sys.stdout = Capture()
    sys.dont_write_bytecode = True
    import warnings
    warnings.simplefilter("ignore")        # NumPy overflow warnings etc. are the checks' business
    import numpy  # noqa: F401
    wire = types.ModuleType("tinyattn_grading_wire")
    exec(compile(wire_source, "wire.py", "exec"), wire.__dict__)
    learner = Learner(cfg, wire)
    # family and type named, not guessed from the descriptor (getsockname of an unnamed socketpair's end)
    inputs = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, fileno=cfg["inputs_fd"]) \
        if cfg.get("inputs_fd") is not None else None
    SharedInputs.spare = os.open(os.devnull, os.O_RDONLY)
    handlers = {"load": learner.load, "call": learner.call, "getattr": learner.getattr, "setattr": learner.setattr,
                "list": learner.items, "copyto": learner.copyto}
    while True:
        try:
            shared = SharedInputs(inputs)
            msg = wire.read_message(rfd, hook=learner.decode_hook, shared=shared.get)
        except EOFError:
            os._exit(0)
        if msg.get("op") == "bye":
            os._exit(0)                     # now: threads the learner left running do not hold the exit
        reply = handlers[msg["op"]](msg)
        shared.hand_back()
        reply["stdout"] = capture.take()
        try:
            data = wire.dumps(reply, hook=learner.encode_hook)
        except BaseException as e:  # noqa: BLE001 - e.g. a cyclic list
            data = wire.dumps({"raised": {"kind": "exception", "types": ["TypeError", "Exception"],
                                          "message": f"the result can not be sent back: {type(e).__name__}: {e}",
                                          "code": None, "where": ""}, "stdout": reply["stdout"]})
        view = memoryview(data)
        while view:
            view = view[os.write(wfd, view):]


if __name__ == "__main__":
    main()
