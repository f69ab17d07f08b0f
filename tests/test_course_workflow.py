"""Opening the course as the README says: a kernel that starts in notebooks/, the notebooks' setup
cell, then exercises/README.md's lines as a learner types them in a cell.

The course is copied to a temporary folder (notebooks/ and exercises/ side by side, as in the
repository and in a student release), so `%%writefile` can save an answer without touching the
checkout. The kernel imports this checkout's tinyattn (PYTHONPATH), as an editable install would.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

jupyter_client = pytest.importorskip("jupyter_client")  # part of the dev extra (through nbval/ipykernel)

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def _setup_cell(path: Path) -> str:
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "code" and "tinyattn.course.setup()" in src:
            return src
    raise AssertionError(f"{path.name}: no code cell calls tinyattn.course.setup()")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_notebook_setup_cell_moves_to_the_course_folder(path):
    src = _setup_cell(path)
    assert "import tinyattn.course" in src


class Kernel:
    """A running IPython kernel: run(code) -> (stdout text, error or None, reply payloads)."""

    def __init__(self, cwd: Path):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
                   OPENBLAS_NUM_THREADS="1")
        # the console script `tinyattn` next to this Python, as `pip install -e .` puts it on PATH
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        self.km = jupyter_client.KernelManager(kernel_name="python3")
        self.km.start_kernel(cwd=str(cwd), env=env)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def run(self, code: str, timeout: float = 180):
        out, err = [], []

        def hook(msg):
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                out.append(content["text"])
            elif kind in ("execute_result", "display_data"):
                out.append(content["data"].get("text/plain", ""))
            elif kind == "error":
                err.append(f"{content['ename']}: {content['evalue']}")

        reply = self.kc.execute_interactive(code, output_hook=hook, timeout=timeout)
        return "".join(out), (err[0] if err else None), reply["content"].get("payload", [])

    def close(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


@pytest.fixture
def course(tmp_path, shipped_stubs):
    """A course folder: notebooks/ (empty: the kernel only starts there) and exercises/ (the stubs)."""
    (tmp_path / "notebooks").mkdir()
    shutil.copytree(shipped_stubs, tmp_path / "exercises", ignore=shutil.ignore_patterns("__pycache__"))
    kernel = Kernel(tmp_path / "notebooks")
    yield tmp_path, kernel
    kernel.close()


def test_exercise_workflow_from_a_notebook_kernel(course):
    root, k = course
    out, err, _ = k.run("import os; print(os.getcwd())")
    assert err is None and Path(out.strip()) == (root / "notebooks").resolve()   # where Jupyter starts it

    # the notebooks' own setup cell (notebook 01's, as committed)
    out, err, _ = k.run(_setup_cell(NOTEBOOKS[0]) + "\nprint(os.getcwd(), course_root)")
    assert err is None, err
    assert out.split() == [str(root.resolve())] * 2

    # `%load exercises/ex04_attention.py`: the file's text comes back to be put into the cell
    _, err, payload = k.run("%load exercises/ex04_attention.py")
    assert err is None, err
    loaded = [p["text"] for p in payload if p.get("source") == "set_next_input"]
    stub = (root / "exercises" / "ex04_attention.py").read_text(encoding="utf-8")
    assert loaded and stub.strip() in loaded[0]

    # save work from a cell with %%writefile, as exercises/README.md says (here: the stub, one line added)
    _, err, _ = k.run("%%writefile exercises/ex04_attention.py\n" + stub + "# my notes\n")
    assert err is None, err
    assert (root / "exercises" / "ex04_attention.py").read_text(encoding="utf-8") == stub + "# my notes\n"

    # import it and try it by hand, README's lines: the stub says what to implement
    out, err, _ = k.run("import importlib, sys\nsys.path.insert(0, 'exercises')\n"
                        "import ex04_attention as ex04\nimportlib.reload(ex04)\nprint(ex04.__file__)\n"
                        "import numpy as np\nQ = K = V = np.random.randn(2, 5, 8)\nout, w = ex04.attention(Q, K, V)")
    assert err is not None and err.startswith("NotImplementedError: ex04"), err
    assert out.split() == [str((root / "exercises" / "ex04_attention.py").resolve())]

    # check() from a cell, and the grader as a shell command: not attempted yet, never an exception
    out, err, _ = k.run("from tinyattn.grading import check\nr = check('ex04')\n"
                        "print(r.results[0].id, r.results[0].status)")
    assert err is None, err
    assert out.strip().splitlines()[-1] == "ex04 not_attempted"
    out, err, _ = k.run("!tinyattn grade --only ex04")
    assert err is None, err
    assert "ex04" in out and "not attempted" in out and "0/10" in out


@pytest.mark.instructor          # reads solutions/: left out of the student release (tinyattn release --student)
def test_a_solved_exercise_passes_from_a_notebook_kernel(course):
    root, k = course
    _, err, _ = k.run("import tinyattn.course; tinyattn.course.setup()")
    assert err is None, err
    solution = (ROOT / "solutions" / "ex04_attention.py").read_text(encoding="utf-8")
    _, err, _ = k.run("%%writefile exercises/ex04_attention.py\n" + solution)
    assert err is None, err
    assert (root / "exercises" / "ex04_attention.py").read_text(encoding="utf-8").strip() == solution.strip()
    out, err, _ = k.run("import importlib, sys\nsys.path.insert(0, 'exercises')\n"
                        "import ex04_attention as ex04\nimportlib.reload(ex04)\n"
                        "import numpy as np\nQ = K = V = np.random.randn(2, 5, 8)\n"
                        "out, w = ex04.attention(Q, K, V)\n"
                        "print(ex04.__file__); print(bool(np.allclose(w.sum(-1), 1)))")
    assert err is None, err
    assert out.split() == [str((root / "exercises" / "ex04_attention.py").resolve()), "True"]
    out, err, _ = k.run("from tinyattn.grading import check\nr = check('ex04')\n"
                        "print(r.results[0].id, r.results[0].status)")
    assert err is None, err
    assert out.strip().splitlines()[-1] == "ex04 passed"
    out, err, _ = k.run("!tinyattn grade --only ex04 --seed 3")
    assert err is None, err
    assert "ex04" in out and "passed" in out and "10/10" in out
