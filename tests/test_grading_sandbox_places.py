"""The sandbox starts wherever Python is installed, and holds nothing of any site-packages but NumPy.

Each test makes a real venv under /tmp (one in a folder whose name has spaces), runs a grade in
the sandbox from that venv's interpreter, and asserts that it works and that the packages of the
base interpreter (pytest, hypothesis: installed here, allowed to no exercise) are not importable
inside, even when the learner's code puts every site-packages folder it can name on sys.path.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the namespace sandbox is Linux's")
ROOT = Path(__file__).resolve().parents[1]

# run by the venv's interpreter: grades ex13's solution, then a probe that reports what it can import
SCRIPT = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from tinyattn.grading.runner import grade_exercise
    from tinyattn.grading.learner import sandbox_problem
    out = {"problem": sandbox_problem(), "prefix": sys.prefix}
    src = open(sys.argv[1] + "/solutions/ex13_sliding_window.py").read()
    r = grade_exercise("ex13", {"ex13_sliding_window.py": src}, "/x/ex13_sliding_window.py", 5, 60, "sandbox")
    out["solution"] = [r["status"], r["isolation"]]
    probe = """
    import importlib, json, numpy, sys
    def sliding_window_mask(T, window):
        sys.path += %r
        found = {}
        for m in ("pytest", "hypothesis", "scipy"):
            try:
                importlib.import_module(m)
                found[m] = True
            except ImportError:
                found[m] = False
        raise ValueError("REPORT" + json.dumps({"found": found, "numpy": numpy.__file__}) + "REPORT")
    """ % (sys.argv[2:],)
    r = grade_exercise("ex13", {"ex13_sliding_window.py": probe}, "/x/ex13_sliding_window.py", 5, 60, "sandbox")
    out["probe"] = json.loads(r["checks"][0]["message"].split("REPORT")[1])
    print(json.dumps(out))
''')


def _site_paths(python: str) -> list[str]:
    """Every site-packages folder the venv's interpreter and its base know of (the learner may name them all)."""
    code = ("import site, sys, sysconfig, json; p = set(site.getsitepackages()) | {site.getusersitepackages()}; "
            "p |= {sysconfig.get_path(k, vars={'base': b, 'platbase': b}) for k in ('purelib', 'platlib') "
            "for b in (sys.prefix, sys.base_prefix)}; print(json.dumps(sorted(p)))")
    return json.loads(subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60,
                                     check=True).stdout)


def _grade_from(python: str) -> dict:
    paths = _site_paths(python)
    proc = subprocess.run([python, "-c", SCRIPT, str(ROOT), *paths], capture_output=True, text=True, timeout=240,
                          cwd="/", env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _base_numpy() -> Path:
    return Path(np.__file__).resolve().parent


@pytest.fixture(params=["/tmp", "/var/tmp"])
def tmp_root(request):
    folder = tempfile.mkdtemp(dir=request.param, prefix="tinyattn venv test ")       # a name with spaces
    yield Path(folder)
    shutil.rmtree(folder, ignore_errors=True)


def test_a_venv_under_tmp_with_numpy_of_its_own(tmp_root):
    venv = tmp_root / "my env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    site_dir = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    for name in ("numpy", "numpy.libs"):                     # NumPy copied into the venv, as pip would put it
        if (_base_numpy().parent / name).is_dir():
            shutil.copytree(_base_numpy().parent / name, site_dir / name, symlinks=True)
    out = _grade_from(python)
    assert out["problem"] is None and out["prefix"] == str(venv)
    assert out["solution"] == ["passed", "sandbox"]
    assert out["probe"]["numpy"].startswith(str(site_dir))   # the venv's own NumPy, under /tmp
    assert out["probe"]["found"] == {"pytest": False, "hypothesis": False, "scipy": False}


def test_a_venv_under_tmp_that_takes_numpy_from_its_base():
    tmp_root = Path(tempfile.mkdtemp(dir="/tmp", prefix="tinyattn-venv-"))
    try:
        _system_site_venv(tmp_root / "venv")
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)


def _system_site_venv(venv: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)], check=True,
                   timeout=120)
    python = str(venv / "bin" / "python")
    # the base interpreter's site-packages holds pytest and hypothesis (the suite runs on them): they are reachable
    # from the venv outside the sandbox, and not inside it
    check = subprocess.run([python, "-c", "import pytest, hypothesis"], capture_output=True, timeout=60)
    assert check.returncode == 0, ("this test needs pytest and hypothesis in the base interpreter's site-packages "
                                   "(run the suite from an interpreter that has them, or from a venv of one): "
                                   + check.stderr.decode(errors="replace"))
    out = _grade_from(python)
    assert out["problem"] is None and out["solution"] == ["passed", "sandbox"]
    # the NumPy this venv takes from its base (when the suite itself runs in a venv, from that venv's base interpreter)
    outside = subprocess.run([python, "-c", "import numpy, os; print(os.path.realpath(numpy.__file__))"],
                             capture_output=True, text=True, timeout=60, check=True).stdout.strip()
    assert out["probe"]["numpy"] == outside
    assert out["probe"]["found"] == {"pytest": False, "hypothesis": False, "scipy": False}


def test_the_system_interpreter_reaches_no_other_package_either():
    out = _grade_from(sys.executable)
    assert out["problem"] is None and out["solution"] == ["passed", "sandbox"]
    assert out["probe"]["found"] == {"pytest": False, "hypothesis": False, "scipy": False}


def test_the_root_is_a_positive_list():
    from tinyattn.grading.learner import sandbox_config
    cfg = sandbox_config()
    bound = [b[0] for b in cfg["binds"]]
    sites = {d: keep for d, keep in cfg["sites"]}
    # no venv and no site-packages folder is bound as a whole: each one that lies in a bound tree is covered
    assert not any(p.endswith(("site-packages", "dist-packages")) for p in bound)
    for d in {sysconfig.get_paths()["purelib"], str(_base_numpy().parent)}:
        assert os.path.realpath(d) in sites
    assert all(set(keep) <= {"numpy", "numpy.libs", "numpy.dylibs"} for keep in sites.values())


# run by a venv's interpreter whose NumPy lies inside the folder it is told is the checkout (`hide`), as a
# `.venv` in the repository does
INSIDE = textwrap.dedent('''
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from tinyattn.grading.runner import grade_exercise
    checkout = sys.argv[2]
    src = open(sys.argv[1] + "/solutions/ex13_sliding_window.py").read()
    r = grade_exercise("ex13", {"ex13_sliding_window.py": src}, "/x/ex13_sliding_window.py", 5, 60, "sandbox",
                       hide=(checkout,))
    out = {"solution": [r["status"], r["isolation"]]}
    probe = """
    import json, numpy, os, sys
    def sliding_window_mask(T, window):
        raise ValueError("REPORT" + json.dumps({"numpy": numpy.__file__, "path": sys.path,
                                                "exists": os.path.exists(%r)}) + "REPORT")
    """ % (checkout,)
    r = grade_exercise("ex13", {"ex13_sliding_window.py": probe}, "/x/ex13_sliding_window.py", 5, 60, "sandbox",
                       hide=(checkout,))
    out["probe"] = json.loads(r["checks"][0]["message"].split("REPORT")[1])
    r = grade_exercise("ex13", {"ex13_sliding_window.py": probe}, "/x/ex13_sliding_window.py", 5, 60, "process",
                       hide=(checkout,))
    out["process"] = json.loads(r["checks"][0]["message"].split("REPORT")[1])
    print(json.dumps(out))
''')


def test_a_venv_inside_the_checkout_leaves_no_path_of_the_checkout_in_the_sandbox(tmp_path):
    # `python -m venv .venv` in the repository is the usual layout: NumPy then lies inside the checkout, and the
    # sandbox mounted its folder at that path, so the checkout's path (and an empty folder of that name) existed
    # inside. NumPy's folder is now mounted at /opt/numpy there.
    checkout = tmp_path / "my course é"
    venv = checkout / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    site_dir = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    for name in ("numpy", "numpy.libs"):
        if (_base_numpy().parent / name).is_dir():
            shutil.copytree(_base_numpy().parent / name, site_dir / name, symlinks=True)
    proc = subprocess.run([python, "-c", INSIDE, str(ROOT), str(checkout)], capture_output=True, text=True,
                          timeout=240, cwd="/", env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/tmp"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["solution"] == ["passed", "sandbox"]
    assert out["probe"]["numpy"] == "/opt/numpy/numpy/__init__.py"
    assert out["probe"]["exists"] is False
    assert not [p for p in out["probe"]["path"] if str(checkout) in p], out["probe"]["path"]
    # --isolation process: NumPy through a link in the learner's private folder, so its sys.path names no checkout
    # either (it runs as the grader's user and can still read the link: that is what `process` does not promise)
    assert out["process"]["numpy"].endswith("/numpy-site/numpy/__init__.py")
    assert not [p for p in out["process"]["path"] if str(checkout) in p], out["process"]["path"]
