"""One memory and process budget for a whole sandbox, where the kernel lets the grader have one.

A cgroup holds every process of one learner's sandbox: its memory limit counts all their pages,
memfd and tmpfs pages included (the kernel charges shared memory to the cgroup that touched it),
and its pids limit counts every process and thread. Two layouts are tried:

- cgroup v2, where the grader's own cgroup is delegated to it (writable, with `memory` and `pids`
  in its cgroup.subtree_control: e.g. `systemd-run --user --scope -p Delegate=yes`);
- cgroup v1, where the grader may make folders in its own `memory` and `pids` hierarchies (root).

Where neither can be had (a plain user on most CI machines), `Budget.open` returns None with the
reason, and the sandbox keeps its per-process bounds only (learner.LIMITS: RLIMIT_NPROC counted in
the sandbox's own user namespace, RLIMIT_AS per process, RLIMIT_FSIZE x RLIMIT_NOFILE per process
for memory outside the address space).
"""
from __future__ import annotations

import os
import secrets
import time
from functools import lru_cache

ROOT = "/sys/fs/cgroup"
MEMORY = 512 << 20                   # bytes of memory for one sandbox, every process and memfd counted
#                                      (every solution graded: 29 MiB at most, measured)
PIDS = 8                             # processes and threads of one sandbox (its two of ours included)


def _own_paths() -> dict[str, str]:
    """{controller or '' (v2): this process's cgroup path} from /proc/self/cgroup."""
    out = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, names, path = line.rstrip("\n").split(":", 2)
                for name in names.split(",") if names else [""]:
                    out[name] = path
    except (OSError, ValueError):
        pass
    return out


def _writable_dir(path: str) -> bool:
    return os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK)


@lru_cache(maxsize=1)
def layout() -> tuple[str | None, list[str], str]:
    """(kind 'v2' | 'v1' | None, the parent folders to make each sandbox's cgroup in, why not)."""
    own = _own_paths()
    if "" in own and os.path.isfile(f"{ROOT}/cgroup.controllers"):
        parent = os.path.normpath(f"{ROOT}/{own['']}")
        try:
            with open(f"{parent}/cgroup.subtree_control") as f:
                enabled = f.read().split()
        except OSError:
            enabled = []
        if {"memory", "pids"} <= set(enabled) and _writable_dir(parent):
            return "v2", [parent], ""
        v2_why = f"cgroup v2: {parent} is not delegated to the grader (memory and pids in its subtree_control)"
    else:
        v2_why = "no cgroup v2 hierarchy at /sys/fs/cgroup"
    parents = []
    for name in ("memory", "pids"):
        if name not in own or not os.path.isdir(f"{ROOT}/{name}"):
            return None, [], f"{v2_why}; no cgroup v1 {name} hierarchy"
        parent = os.path.normpath(f"{ROOT}/{name}/{own[name]}")
        if not _writable_dir(parent):
            return None, [], f"{v2_why}; cgroup v1 {parent} is not writable by the grader"
        parents.append(parent)
    return "v1", parents, ""


def problem() -> str | None:
    """None when each sandbox gets a cgroup here, else why not (one line)."""
    kind, _, why = layout()
    return None if kind else why


class Budget:
    """The cgroup (v2: one folder; v1: one in `memory`, one in `pids`) of one sandbox."""

    def __init__(self, kind: str, folders: list[str]):
        self.kind, self.folders = kind, folders

    @classmethod
    def open(cls, memory: int = MEMORY, pids: int = PIDS) -> Budget | None:
        """A fresh cgroup with these limits, or None where none can be had (see problem())."""
        kind, parents, _ = layout()
        if kind is None:
            return None
        name = f"tinyattn-{os.getpid()}-{secrets.token_hex(4)}"
        for parent in parents:
            _sweep(parent)
        folders = []
        try:
            for parent in parents:
                os.mkdir(f"{parent}/{name}")
                folders.append(f"{parent}/{name}")
            budget = cls(kind, folders)
            if kind == "v2":
                budget._write(folders[0], "memory.max", memory)
                budget._write(folders[0], "memory.swap.max", 0, optional=True)
                budget._write(folders[0], "pids.max", pids)
            else:
                budget._write(folders[0], "memory.limit_in_bytes", memory)
                budget._write(folders[0], "memory.memsw.limit_in_bytes", memory, optional=True)
                budget._write(folders[1], "pids.max", pids)
            return budget
        except OSError:
            for f in folders:
                try:
                    os.rmdir(f)
                except OSError:
                    pass
            return None

    @staticmethod
    def _write(folder: str, name: str, value: int, optional: bool = False) -> None:
        try:
            with open(f"{folder}/{name}", "w") as f:
                f.write(str(value))
        except OSError:
            if not optional:
                raise

    def add(self, pid: int) -> None:
        """Move `pid` in (before it starts any other process: its children are born inside)."""
        for folder in self.folders:
            with open(f"{folder}/cgroup.procs", "w") as f:
                f.write(str(pid))

    def peak(self) -> int | None:
        """The most memory the sandbox held at once, in bytes (None where the kernel does not say)."""
        for name in ("memory.peak", "memory.max_usage_in_bytes"):
            try:
                with open(f"{self.folders[0]}/{name}") as f:
                    return int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
        return None

    def close(self, deadline: float = 2.0) -> None:
        """Kill whatever is left in it and remove it; never raises, never waits past `deadline` seconds."""
        if self.kind == "v2":
            self._write(self.folders[0], "cgroup.kill", 1, optional=True)
        end = time.monotonic() + deadline
        for folder in self.folders:
            while True:
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > end:
                        break
                    self._kill_all(folder)
                    time.sleep(0.02)

    @staticmethod
    def _kill_all(folder: str) -> None:
        try:
            with open(f"{folder}/cgroup.procs") as f:
                pids = [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            return
        for pid in pids:
            try:
                os.kill(pid, 9)
            except OSError:
                pass


def _sweep(parent: str) -> None:
    """Remove the empty cgroups of graders that died without closing theirs (a judge killed by SIGKILL)."""
    try:
        names = [n for n in os.listdir(parent) if n.startswith("tinyattn-")]
    except OSError:
        return
    for n in names:
        try:
            os.kill(int(n.split("-")[1]), 0)
            continue                              # its grader still runs
        except ProcessLookupError:
            pass
        except (ValueError, IndexError, PermissionError):
            continue
        try:
            os.rmdir(f"{parent}/{n}")              # refused while a process is still inside
        except OSError:
            pass
