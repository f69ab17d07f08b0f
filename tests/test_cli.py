"""The command line: --help, the demo (quick run, same seed -> same table), dispatch, one-line errors."""

import os
import subprocess
import sys
import types

import matplotlib

matplotlib.use("Agg")

from tinyattn import cli
from tinyattn.demo import DemoConfig, run_demo


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_help_lists_every_command_and_bench_only_inside_a_checkout(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("demo", "grade", "release", "gpt2", "bench"):
        assert f"    {command} " in out, command
    monkeypatch.chdir(tmp_path)                        # no benchmarks/ here or above: nothing to run
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "    demo " in out and "bench" not in out


def test_python_dash_m_tinyattn_works():
    r = subprocess.run([sys.executable, "-m", "tinyattn", "--help"], capture_output=True, text=True, timeout=60,
                       cwd=ROOT)
    assert r.returncode == 0 and "demo" in r.stdout and "bench" in r.stdout


def test_bench_help_names_the_tinyattn_command():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-m", "tinyattn", "bench", "--help"], capture_output=True, text=True,
                       timeout=120, cwd=ROOT, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: tinyattn bench") and "python -m benchmarks" not in r.stdout, r.stdout[:200]


def test_demo_quick_finishes_prints_its_table_and_saves_figures(tmp_path, capsys):
    out = tmp_path / "figs"
    assert cli.main(["demo", "--quick", "--out", str(out), "--seed", "0"]) == 0
    text = capsys.readouterr().out
    assert "first-token recall (held-out accuracy; chance 0.125; at most 150 steps)" in text
    assert "associative recall (held-out accuracy; chance 0.062; at most 400 steps)" in text
    table = text[text.index("first-token recall (held-out"):]
    for row in ("attention", "gru", "rnn"):
        assert table.count(f"  {row} ") == 2  # one row per model in each of the two tables
    for name in ("accuracy_vs_distance.png", "accuracy_vs_pairs.png", "grad_norm_vs_distance.png",
                 "attention_map.png", "attention_grid.png", "head_view.html"):
        assert (out / name).stat().st_size > 0, name


TINY = DemoConfig(distances=(3, 6), pairs=(2,), recall_steps=20, assoc_steps=20, d_model=8,
                  recall_eval_size=32, assoc_eval_size=32)


def test_same_seed_same_table_in_process_or_in_workers():
    quiet = lambda line: None  # noqa: E731
    a = run_demo(out=None, seed=5, config=TINY, workers=0, log=quiet)
    b = run_demo(out=None, seed=5, config=TINY, workers=0, log=quiet)
    c = run_demo(out=None, seed=5, config=TINY, workers=2, log=quiet)
    d = run_demo(out=None, seed=6, config=TINY, workers=0, log=quiet)
    assert a.table() == b.table() == c.table()
    assert a.steps == c.steps
    assert (a.recall, a.assoc, a.steps) != (d.recall, d.assoc, d.steps)  # the seed matters
    assert set(a.recall) == {"attention", "gru", "rnn"} and set(a.recall["gru"]) == {3, 6}


def test_demo_progress_is_one_line_over_all_runs_also_with_workers(capsys):
    lines = []
    res = run_demo(out=None, seed=1, config=TINY, workers=2, progress=True, log=lines.append)
    err = capsys.readouterr().err
    runs = len(TINY.distances) * 3 + len(TINY.pairs) * 3
    budget = runs * 20                                  # every run's budget: 20 steps
    # one bar, redrawn in place with carriage returns, never a new line per update
    final = err.replace("\r", "\n").strip().splitlines()[-1]
    assert f"{budget}/{budget} steps" in final and f"runs {runs}/{runs}" in final, final
    assert err.count("\n") <= runs + 1, err            # finished runs are written above the bar, nothing else
    assert lines[0].startswith("tinyattn demo") and lines[1] == f"{runs} training runs, longest first; " \
        "a line for each as it finishes:"
    assert sum("acc " in line for line in lines) == runs and "acc " not in err
    assert set(res.recall) == {"attention", "gru", "rnn"}


def _one_line_error(capsys, argv, expected):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tinyattn"), err  # one line, no traceback
    assert expected in err, err
    return err


def test_bad_arguments_are_one_line_errors(capsys, tmp_path):
    _one_line_error(capsys, ["demo", "--seed", "-1"], "argument --seed: expected an integer >= 0, got -1")
    _one_line_error(capsys, ["demo", "--seed", "abc"], "expected an integer, got 'abc'")
    _one_line_error(capsys, ["demo", "--workers", "-1"], "argument --workers: expected an integer >= 0, got -1")
    _one_line_error(capsys, ["demo", "--quik"], "unrecognized arguments: --quik")
    _one_line_error(capsys, ["dmeo"], "invalid choice: 'dmeo'")
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    _one_line_error(capsys, ["demo", "--quick", "--out", str(blocker)], "can not write to --out")


def test_grade_and_release_pass_their_arguments_through(monkeypatch):
    calls = []
    fake = types.ModuleType("tinyattn.grading.cli")
    fake.grade_main = lambda argv: calls.append(("grade", argv)) or 3
    fake.release_main = lambda argv: calls.append(("release", argv)) or 0
    monkeypatch.setitem(sys.modules, "tinyattn.grading.cli", fake)
    import tinyattn.grading

    monkeypatch.setattr(tinyattn.grading, "cli", fake, raising=False)
    assert cli.main(["grade", "my_exercises/", "--json", "--help"]) == 3  # exit status passed back
    assert cli.main(["release"]) == 0
    assert calls == [("grade", ["my_exercises/", "--json", "--help"]), ("release", [])]


def test_bench_runs_python_dash_m_benchmarks_here(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _one_line_error(capsys, ["bench"], "no benchmarks/__main__.py in")
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "__init__.py").write_text("")
    (tmp_path / "benchmarks" / "__main__.py").write_text(
        "import sys, pathlib\npathlib.Path('argv.txt').write_text(' '.join(sys.argv[1:]))\nsys.exit(4)\n")
    assert cli.main(["bench", "--quick", "mha"]) == 4
    assert (tmp_path / "argv.txt").read_text() == "--quick mha"


def test_bench_finds_the_checkout_above_and_says_what_it_needs_outside_one(tmp_path, monkeypatch, capsys):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    monkeypatch.chdir(outside)
    err = _one_line_error(capsys, ["bench"], "or any folder above it")
    assert "source checkout" in err and "does not include" in err
    repo = tmp_path / "repo"
    (repo / "benchmarks").mkdir(parents=True)
    (repo / "notebooks").mkdir()
    (repo / "benchmarks" / "__init__.py").write_text("")
    (repo / "benchmarks" / "__main__.py").write_text(
        "import os, sys, pathlib\npathlib.Path('ran_in.txt').write_text(os.getcwd())\nsys.exit(0)\n")
    monkeypatch.chdir(repo / "notebooks")              # e.g. from a notebook's folder
    assert cli.main(["bench"]) == 0
    assert (repo / "ran_in.txt").read_text() == str(repo)   # run from the checkout's root


def test_console_script_entry_point_is_cli_main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as f:
        assert 'tinyattn = "tinyattn.cli:main"' in f.read()  # (tomllib is 3.11+, the package supports 3.10)
