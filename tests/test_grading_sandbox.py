"""The sandbox holds only what the exercise allows, and the judge stays in charge of its own I/O.

Each test is a hostile submission written for one class of attack: what the learner's process can
see (files, sockets, network, terminals, other processes), what it may import, how much it can
take (processes, memory, time), and what it can do to the judge's pipe. The static import check
is bypassed (runner.grade_exercise) where the point is what the sandbox itself allows.
"""
from __future__ import annotations

import json
import subprocess
import os
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from tinyattn.grading.exercises import get
from tinyattn.grading.learner import (LIMITS, SANDBOX_NPROC, LearnerDied, LearnerProcess, LearnerTimeout, PACKAGE_ROOT,
                                     sandbox_problem)
from tinyattn.grading.runner import grade_exercise

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace sandbox is Linux's")
ROOT = Path(__file__).resolve().parents[1]
SEED = 4611686018427388001                 # a seed of record (grade_batch refuses one below 2**48)


def run(ex_id: str, source: str, timeout: float = 20.0, extra: dict[str, str] | None = None) -> dict:
    """Grade `source` as exercise ex_id in the sandbox, without the static check."""
    ex = get(ex_id)
    files = {ex.filename: textwrap.dedent(source), **(extra or {})}
    return grade_exercise(ex.id, files, f"/nowhere/{ex.filename}", SEED, timeout, "sandbox")


def report(result: dict) -> dict:
    """The dict a probe raised as its ValueError message (json), from the first check that failed."""
    for c in result["checks"]:
        if "REPORT" in c["message"]:
            return json.loads(c["message"].split("REPORT", 2)[1])
    raise AssertionError(result["checks"])


PROBE_HEAD = """
import json, os, sys
def out(d):
    raise ValueError("REPORT" + json.dumps(d) + "REPORT")
"""


def test_the_sandbox_works_here():
    assert sandbox_problem() is None


def test_a_numpy_exercise_sees_a_fresh_root_and_nothing_of_the_host():
    secret = ROOT / ".sandbox_test_secret"                  # a 0600 file in the repository root
    secret.write_text("s3cret")
    secret.chmod(0o600)
    try:
        r = run("ex01", PROBE_HEAD + f"""
def attention_scores(Q, K):
    d = {{"root": sorted(os.listdir("/")), "tmp": sorted(os.listdir("/tmp")), "etc": sorted(os.listdir("/etc")),
         "dev": sorted(os.listdir("/dev"))}}
    d["exists"] = [p for p in ({str(ROOT)!r}, {str(ROOT / '.git')!r}, {str(secret)!r}, {PACKAGE_ROOT!r}, "/home",
                               "/run", "/etc/shadow", "/etc/passwd", "/var", "/opt") if os.path.exists(p)]
    try:
        import tinyattn
        d["tinyattn"] = tinyattn.__file__
    except ImportError:
        d["tinyattn"] = None
    import importlib.util
    d["scipy"] = importlib.util.find_spec("scipy") is not None
    import socket
    try:
        s = socket.socket(); s.settimeout(1); s.connect(("1.1.1.1", 53)); d["net"] = "connected"
    except OSError as e:
        d["net"] = type(e).__name__
    d["tty"] = [os.isatty(i) for i in range(3)]
    d["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit()) if os.path.isdir("/proc") else []
    d["sockets"] = []
    for folder, _, names in (w for top in ("/", "/dev", "/etc", "/tmp", "/root", "/run", "/var") for w in os.walk(top)
                             if top != "/" or w[0] == "/"):
        for n in names:
            try:
                if os.path.exists(os.path.join(folder, n)) and __import__("stat").S_ISSOCK(os.stat(os.path.join(folder, n)).st_mode):
                    d["sockets"].append(os.path.join(folder, n))
            except OSError:
                pass
    out(d)
""")
    finally:
        secret.unlink()
    d = report(r)
    assert r["isolation"] == "sandbox" and r["status"] != "passed"
    assert set(d["root"]) <= {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "dev", "proc", "tmp",
                              "root", "opt", "home", "work"} - {"home", "work"} | set(Path(sys.base_prefix).parts[1:2])
    # the private /tmp holds the learner's work, and what the root binds below /tmp: the interpreter's library
    # when Python lives under /tmp, NumPy's folder in a venv under /tmp (at its real path unless that lies in the
    # checkout, a `.venv` in the repository: then at /opt/numpy)
    from tinyattn.grading.root import sandbox_config
    cfg = sandbox_config()
    placed = [dst for _, dst in cfg["binds"]] + [site[-1] if len(site) == 3 else site[0] for site in cfg["sites"]]
    under_tmp = sorted({p.split(os.sep)[2] for p in placed if p.startswith("/tmp/")})
    assert sorted(d["tmp"]) == sorted(["work", *under_tmp]) and set(d["etc"]) <= {"ld.so.cache"}
    assert d["dev"] == ["null", "random", "urandom", "zero"]
    assert d["exists"] == (["/opt"] if cfg["path_last"] == ["/opt/numpy"] else []), d["exists"]   # (NumPy, moved)
    assert d["tinyattn"] is None and d["scipy"] is False
    assert d["net"] != "connected" and d["tty"] == [False, False, False]
    assert d["sockets"] == []
    assert len(d["pids"]) <= 3                       # only the sandbox's own processes (its PID namespace)


def test_a_tensor_exercise_gets_tinyattn_without_its_attention_code():
    r = run("ex08", PROBE_HEAD + """
import tinyattn
from tinyattn import nn
import tinyattn.nn.functional as F

class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        d = {"file": tinyattn.__file__, "refused": {}}
        for name, f in (("nn.Attention", lambda: nn.Attention(4, 2)),
                        ("nn.MultiheadAttention", lambda: nn.MultiheadAttention(4, 2)),
                        ("F.sdpa", lambda: F.scaled_dot_product_attention(None, None, None)),
                        ("F.attention", lambda: F.attention(None, None, None)),
                        ("masks", lambda: tinyattn.masks.causal_mask(3))):
            try:
                f()
                d["refused"][name] = False
            except ImportError:
                d["refused"][name] = True
        try:
            __import__("importlib").import_module("tinyattn.grading")
            d["grading"] = True
        except ImportError:
            d["grading"] = False
        hits = []
        root = os.path.dirname(tinyattn.__file__)
        for folder, _, names in os.walk(root):
            for n in names:
                text = open(os.path.join(folder, n)).read()
                if "def scaled_dot_product_attention" in text or "def _sdpa" in text or "class Attention(" in text:
                    hits.append(n)
        d["hits"] = hits
        d["softmax"] = float(F.softmax(tinyattn.tensor([0.0, 0.0]), dim=-1).sum().item())
        out(d)
""")
    d = report(r)
    assert d["file"].startswith("/opt/tinyattn/")
    assert all(d["refused"].values()), d["refused"]
    assert d["grading"] is False and d["hits"] == [] and d["softmax"] == 1.0


def test_a_hand_derived_backward_can_not_borrow_numerical_grad():
    # ex02 runs confined (confine.py): `import importlib` is refused there before anything runs
    r = run("ex02", "import importlib\n")
    assert r["status"] == "forbidden" and "import importlib: This exercise runs confined" in r["checks"][0]["message"]
    # and in a plain NumPy exercise, the sandbox holds no tinyattn to borrow from
    r = run("ex01", """
import importlib
numerical_grad = importlib.import_module("tinyattn.gradcheck").numerical_grad
def softmax(x, axis=-1):
    import numpy as np
    e = np.exp(x - x.max(axis, keepdims=True)); return e / e.sum(axis, keepdims=True)
def softmax_backward(y, dy, axis=-1):
    return y
""")
    assert r["status"] == "error" and "No module named 'tinyattn'" in r["checks"][0]["message"]


def test_processes_are_counted_for_the_whole_sandbox():
    r = run("ex01", PROBE_HEAD + """
def attention_scores(Q, K):
    import time, threading
    threading.Thread(target=lambda: None).start()          # a helper thread is honest: it works
    n = 0
    for _ in range(50):
        try:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            n += 1
        except OSError:
            break
    out({"forks": n})
""")
    assert report(r)["forks"] < SANDBOX_NPROC


def test_memory_is_capped_for_the_whole_sandbox():
    # every fork tries to hold 200 MiB more: the address-space limit and the process count bound the total
    r = run("ex01", PROBE_HEAD + """
def attention_scores(Q, K):
    import time, numpy as np
    held = 0
    for _ in range(20):
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            try:
                a = np.ones(200 << 17); os.write(w, b"1"); time.sleep(30)
            except MemoryError:
                os.write(w, b"0")
            os._exit(0)
        held += os.read(r, 1) == b"1"
    out({"held_mib": held * 200})
""")
    held = report(r)["held_mib"]
    assert 0 < held <= SANDBOX_NPROC * (LIMITS["RLIMIT_AS"] >> 20) <= 1600, held


SPAWNER = """
import os, subprocess, sys, threading
def spawn():
    got = {}
    for name, f in (("fork", os.fork), ("thread", lambda: threading.Thread(target=lambda: None).start()),
                    ("subprocess", lambda: subprocess.run([sys.executable, "-c", "pass"])),
                    ("posix_spawn", lambda: os.posix_spawn("/bin/true", ["true"], {}))):
        try:
            pid = f()
            got[name] = "started"
            if pid == 0:
                os._exit(0)
        except (OSError, RuntimeError) as e:
            got[name] = type(e).__name__
    return got
def hold(mib):
    import numpy as np
    a = np.ones(mib << 17)
    return float(a[-1])
"""


def test_a_process_under_an_address_space_budget_is_alone():
    # a fresh interpreter started beside it would have an address space of its own (it computed ex12's
    # full matrix): a budgeted process can start no process and no thread at all
    proc = LearnerProcess("sandbox", 20.0, as_budget=16 << 20)
    try:
        _load(proc, SPAWNER)
        got = proc.request({"op": "call", "fn": "spawn", "args": [], "kwargs": {}})["ok"]
        assert "started" not in got.values(), got
        assert "raised" in proc.request({"op": "call", "fn": "hold", "args": [64], "kwargs": {}})
        assert proc.request({"op": "call", "fn": "hold", "args": [4], "kwargs": {}})["ok"] == 1.0
    finally:
        proc.close()


def test_memory_outside_the_address_space_is_bounded():
    # memfd_create + fallocate is memory no address-space limit counts: each file is capped by
    # RLIMIT_FSIZE and their number by RLIMIT_NOFILE
    r = run("ex01", PROBE_HEAD + """
def attention_scores(Q, K):
    held, fds, refused = 0, [], None
    for i in range(400):
        try:
            fd = os.memfd_create("x")
        except OSError:
            break
        fds.append(fd)
        try:
            os.posix_fallocate(fd, 0, 256 << 20)
            held += 256 << 20
        except OSError as e:
            refused = e.errno
            try:
                os.posix_fallocate(fd, 0, 4 << 20)
                held += 4 << 20
            except OSError:
                pass
    out({"held_mib": held >> 20, "files": len(fds), "refused": refused})
""")
    d = report(r)
    import errno
    assert d["refused"] == errno.EFBIG and d["files"] < LIMITS["RLIMIT_NOFILE"]
    assert d["held_mib"] <= (LIMITS["RLIMIT_NOFILE"] * LIMITS["RLIMIT_FSIZE"]) >> 20 <= 256, d


def test_the_address_space_budget_holds_for_the_whole_sandbox():
    r = run("ex01", PROBE_HEAD + """
def attention_scores(Q, K):
    import numpy as np
    try:
        a = np.ones(512 << 17)               # 512 MiB: over RLIMIT_AS, and there is no second process to ask
        out({"held": True})
    except MemoryError:
        out({"held": False})
""")
    assert report(r) == {"held": False} and LIMITS["RLIMIT_AS"] < 512 << 20


def test_the_wall_clock_deadline_ends_the_sandbox():
    start = time.monotonic()
    r = run("ex01", """
import time
def attention_scores(Q, K):
    while True:
        pass
""", timeout=3.0)
    assert r["status"] == "timeout" and time.monotonic() - start < 15


def test_a_learner_that_stops_reading_can_not_hang_the_judge():
    proc = LearnerProcess("sandbox", 3.0)
    try:
        reply = proc.request({"op": "load", "files": {"ex01_scores.py": textwrap.dedent("""
            import os
            def jam():
                # the judge's requests now go into a pipe nobody reads
                r, w = os.pipe()
                import fcntl
                for fd in range(3, 64):
                    try:
                        fifo = os.fstat(fd).st_mode & 0o170000 == 0o010000
                        if fifo and fd not in (r, w) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDONLY:
                            os.dup2(r, fd)
                    except OSError:
                        pass
            """)}, "main": "ex01_scores.py", "origin": "/x/ex01_scores.py", "module": "m", "kind": "numpy",
            "blocked": [], "rule": "", "init_seed": 1})
        assert reply.get("ok") is not None
        proc.names = ["jam"]
        assert "ok" in proc.request({"op": "call", "fn": "jam", "args": [], "kwargs": {}})
        start = time.monotonic()
        with pytest.raises(LearnerTimeout):
            proc.request({"op": "call", "fn": "jam", "args": [np.zeros(1 << 20)], "kwargs": {}})   # 8 MiB
        assert time.monotonic() - start < 6
    finally:
        proc.close()


def test_a_huge_reply_is_refused_before_it_is_parsed():
    import resource
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss        # KiB: the judge is this process
    start = time.monotonic()
    r = run("ex01", """
def attention_scores(Q, K):
    return ["x" * 64] * 400000            # 27 MB of JSON
""")
    assert r["status"] == "error" and "more than" in r["checks"][0]["message"]
    assert time.monotonic() - start < 10
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 64 << 10       # under 64 MiB more


def test_no_learner_can_signal_the_judge_or_another_learner(tmp_path):
    from tinyattn.grading import grade_batch
    for name in ("a_killer", "b_honest"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "ex13_sliding_window.py").write_text((ROOT / "solutions" / "ex13_sliding_window.py")
                                                                 .read_text())
    (tmp_path / "a_killer" / "ex13_sliding_window.py").write_text(textwrap.dedent("""
        import os, signal
        for pid in range(1, 4 << 15):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        def sliding_window_mask(T, window):
            raise ValueError("nothing")
        """))
    reports = grade_batch(tmp_path, only=["ex13"], seed=SEED, jobs=2, isolation="sandbox")
    by = {Path(r.path).name: r for r in reports}
    assert by["b_honest"].exercises[0].status == "passed", by["b_honest"].exercises[0].checks
    assert by["a_killer"].exercises[0].status != "passed"


def test_ex08_initialises_from_a_fresh_salt_not_from_the_seed():
    src = """
from tinyattn import nn
class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        raise ValueError(repr(nn.Linear(2, 2).weight.numpy().tolist()))
"""
    first, second = (run("ex08", src)["checks"][0]["message"] for _ in range(2))
    assert "ValueError" in first and first != second


INVISIBLE = ("\u061c\u00ad\u2060\U000e0041\U000e007f\u2028\u2029\u202e\u2066\u2067\u2068\u2069\u200b\u200d"
             "\ufeff\u180e\u2064\ue000")


def test_escape_codes_and_format_characters_never_reach_a_report():
    # U+061C, soft hyphen, word joiner, tag characters, U+2028/2029, bidi isolates and overrides ...
    r = run("ex01", f"""
import sys
def attention_scores(Q, K):
    print("\\x1b[2J\\x1b]0;pwned\\x07 cleared\\r\\x9b31m {INVISIBLE}")
    raise ValueError("\\x1b[31mred\\x1b[0m {INVISIBLE}evil")
""")
    import unicodedata
    shown = [c["message"] for c in r["checks"]] + [r["stdout"]]
    bad = [ch for text in shown for ch in text if ch not in "\n\t" and unicodedata.category(ch) in
           ("Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs")]
    assert bad == [] and "red" in shown[0] and "evil" in shown[0] and "cleared" in r["stdout"]


def test_clean_text_drops_every_format_and_separator_character():
    import unicodedata
    from tinyattn.grading.text import clean_line, clean_text
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    kept = clean_text(every, limit=len(every))
    assert not [ch for ch in kept if ch not in "\n\t" and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs")]
    assert "a\u00e9\u4e2d\U0001f600 " in clean_text("a\u00e9\u4e2d\U0001f600 ")   # letters, CJK, emoji, spaces stay
    assert clean_line("x\u2028y\u2029z\nw") == "xyz w"


def test_no_other_python_packages_are_reachable():
    # the system's own Python packages (Debian's /usr/lib/python3/dist-packages, ...) are emptied too
    r = run("ex01", PROBE_HEAD + """
def attention_scores(Q, K):
    import glob
    found = {}
    for folder in glob.glob("/usr/lib/python3*/*-packages") + glob.glob("/usr/local/lib/python3*/*-packages"):
        found[folder] = sorted(n for n in os.listdir(folder) if not n.startswith("numpy"))
    out(found)
""")
    assert all(names == [] for names in report(r).values()), report(r)


def test_a_learner_can_not_read_another_learners_folder(tmp_path):
    from tinyattn.grading import grade_batch
    (tmp_path / "a_reader").mkdir()
    (tmp_path / "b_victim").mkdir()
    victim = tmp_path / "b_victim" / "ex13_sliding_window.py"
    victim.write_text((ROOT / "solutions" / "ex13_sliding_window.py").read_text())
    (tmp_path / "a_reader" / "ex13_sliding_window.py").write_text(textwrap.dedent(f"""
        import os
        path = {str(victim)!r}
        if os.path.exists(path):
            exec(open(path).read())
        else:
            def sliding_window_mask(T, window):
                raise ValueError("not there: " + str(sorted(os.listdir("/"))))
        """))
    reports = {Path(r.path).name: r.exercises[0] for r in grade_batch(tmp_path, only=["ex13"], seed=SEED, jobs=1,
                                                                       isolation="sandbox")}
    assert reports["b_victim"].status == "passed"
    assert reports["a_reader"].status != "passed" and "not there" in _message(reports["a_reader"])


def _message(result) -> str:
    return " ".join(c["message"] for c in result.checks)


def _alive(marker: str) -> list[int]:
    """The host's processes whose command line holds `marker` (a sandbox's own mount folder)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


def _gone(marker: str, within: float = 10.0) -> bool:
    end = time.monotonic() + within
    while _alive(marker) and time.monotonic() < end:
        time.sleep(0.1)
    return _alive(marker) == []


ESCAPER = """
import ctypes, os, sys
ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)          # PR_SET_PDEATHSIG: none
try:
    os.setsid()                                 # a session of its own
except OSError:
    pass
os._exit = lambda *a: None                      # the judge's 'bye' can not end it
def spin():
    while True:
        pass
"""


def _load(proc: LearnerProcess, source: str) -> None:
    reply = proc.request({"op": "load", "files": {"ex01_scores.py": source}, "main": "ex01_scores.py",
                          "origin": "/x/ex01_scores.py", "module": "m", "kind": "numpy", "blocked": [], "rule": "",
                          "init_seed": 1})
    assert "ok" in reply, reply


@pytest.mark.parametrize("close_stderr", [False, True])
def test_a_learner_that_leaves_its_session_dies_with_the_sandbox_and_close_has_a_deadline(close_stderr):
    # with its stderr open, the judge once waited forever for its end; with it closed, the grade ended
    # and the learner's process lived on
    proc = LearnerProcess("sandbox", 5.0)
    marker = proc._mount_dir
    try:
        _load(proc, ESCAPER + ("\nos.close(2)" if close_stderr else ""))
        assert _alive(marker)
    finally:
        start = time.monotonic()
        proc.close()
        assert time.monotonic() - start < 10
    assert _gone(marker)


def test_the_sandbox_dies_with_the_judge():
    judge = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT)!r})
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from tinyattn.grading.learner import LearnerProcess
        from test_grading_sandbox import ESCAPER, _load
        proc = LearnerProcess("sandbox", 60.0)
        _load(proc, ESCAPER)
        print(proc._mount_dir, flush=True)
        proc.request({{"op": "call", "fn": "spin", "args": [], "kwargs": {{}}}})
        """)], stdout=subprocess.PIPE, text=True)
    try:
        marker = judge.stdout.readline().strip()
        assert marker and _alive(marker)
        time.sleep(0.5)
        judge.kill()                             # the judge is gone without a word: no close(), no atexit
        judge.wait(timeout=10)
        assert _gone(marker)
    finally:
        judge.kill()


HOG = """
import os, time
def hog(mib_each):
    import numpy as np
    held = 0
    for _ in range(3):                           # three children and this process, each holding mib_each
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            got = 0
            try:
                for _ in range(mib_each // 4):   # memfd pages: no address-space limit counts them
                    fd = os.memfd_create("x")
                    os.posix_fallocate(fd, 0, 4 << 20)
                    got += 4
            except OSError:
                pass
            try:
                a = np.ones(300 << 17)            # and 300 MiB of address space, touched
                got += 300
            except MemoryError:
                pass
            os.write(w, str(got).encode())
            time.sleep(30)
            os._exit(0)
        os.close(w)                              # so a child the OOM killer took reads as EOF, not a hang
        held += int(os.read(r, 16) or b"0")
    return held
"""


def test_one_memory_budget_for_the_whole_sandbox_where_the_kernel_offers_it():
    from tinyattn.grading import budget
    proc = LearnerProcess("sandbox", 30.0)
    try:
        if budget.problem() is not None:          # no cgroup here: said why, and the per-process bounds hold
            assert proc._budget is None and "cgroup" in budget.problem()
            return
        assert proc._budget is not None
        _load(proc, HOG)
        try:
            reply = proc.request({"op": "call", "fn": "hog", "args": [240], "kwargs": {}})
            tried = reply.get("ok")
        except LearnerDied:                       # the kernel's OOM killer took the learner's process
            tried = None
        peak = proc._budget.peak()
        # 3 x (240 MiB of memfd pages + 300 MiB of arrays) asked for, more than the sandbox's budget: the
        # cgroup counted them all (without it, each process's own limits allow all of it)
        assert 3 * (240 + 300) << 20 > budget.MEMORY and peak is not None and peak <= budget.MEMORY, (tried, peak)
        assert tried is None or tried << 20 <= budget.MEMORY, tried
    finally:
        proc.close()
    assert not [d for d in os.listdir(os.path.dirname(proc._budget.folders[0])) if d == os.path.basename(
        proc._budget.folders[0])]                 # the cgroup is gone with the sandbox
