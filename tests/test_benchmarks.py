"""The benchmarks suite: its quick mode runs every benchmark and each one produces its figures.

These tests check that the numbers exist, are finite and are what they claim to be (the NumPy
baselines compute the same thing as tinyattn; the FLOP count is the closed form), not that anything
is fast: speed depends on the machine and is reported by ``python -m benchmarks``, not asserted.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # `benchmarks` is a folder of the repository, not part of the installed package

from benchmarks import BENCHMARKS  # noqa: E402
from benchmarks.common import Row, compare  # noqa: E402


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """One `python -m benchmarks --quick` in a fresh process, as a user runs it. The timeout only guards against
    a hang: with torch and transformers installed the quick run starts two processes per tutorial style and took
    65 s alone on the 2-core AMD machine, and past 120 s beside another pytest worker on a loaded one."""
    out = tmp_path_factory.mktemp("bench")
    js, md = out / "bench.json", out / "bench.md"
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--json", str(js), "--markdown", str(md)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, json.loads(js.read_text()), md.read_text()


def _expected_benchmarks() -> set:
    """Every benchmark, plus the optional ones whose comparison library is importable here (torch_cpu: torch)."""
    import importlib

    from benchmarks import OPTIONAL_BENCHMARKS
    return set(BENCHMARKS) | {n for n in OPTIONAL_BENCHMARKS if importlib.import_module(f"benchmarks.{n}").available()}


def test_quick_mode_runs_every_benchmark_and_each_produces_numbers(quick_run):
    _, data, _ = quick_run
    rows = data["rows"]
    produced = {r["bench"] for r in rows}
    expected = _expected_benchmarks()
    assert produced == expected, f"missing figures from {expected - produced}"
    for r in rows:
        assert isinstance(r["value"], float) and math.isfinite(r["value"]) and r["value"] > 0, r
        if r["baseline"] is not None:
            assert math.isfinite(r["baseline"]) and r["baseline"] > 0, r
            assert r["ratio"] is not None and math.isfinite(r["ratio"]) and r["ratio"] > 0, r
        assert r["target"] is None, f"quick mode runs other shapes, so it must not claim a target: {r}"
    assert set(data["seconds_per_benchmark"]) == expected
    assert data["machine"]["cores"] >= 1 and data["machine"]["numpy"] == np.__version__


def test_quick_mode_covers_the_cases_of_the_issue(quick_run):
    _, data, _ = quick_run
    by = {}
    for r in data["rows"]:
        by.setdefault(r["bench"], []).append(r)
    assert {r["case"].split()[-1] for r in by["mha"]} == {"float32", "float64"}
    assert {r["metric"] for r in by["flash_memory"]} == {"peak MiB (fwd+bwd)", "fwd+bwd ms"}
    assert {r["case"].split(",")[0] for r in by["demo_throughput"]} == {"attention", "gru", "rnn"}
    assert any(r["case"].startswith("Attention") and r["ratio_name"] == "share of np.matmul"
               for r in by["matmul_roofline"])
    assert any("backward" in r["case"] for r in by["engine_overhead"])


def test_table_and_markdown_show_every_row(quick_run):
    stdout, data, md = quick_run
    n = len(data["rows"])
    assert f"{n} figures in" in stdout
    assert md.startswith("# Performance") and "Measured with `python -m benchmarks --quick" in md
    assert "## Targets" not in md  # quick mode claims none
    table_part = md.split("## All figures", 1)[1].split("## What each benchmark measures", 1)[0]
    assert table_part.count("\n| ") == n + 1  # header + one line per row


def test_only_runs_one_and_unknown_names_are_refused(tmp_path):
    js = tmp_path / "one.json"
    ok = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--only", "mlp_step", "--json", str(js)],
                        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert {r["bench"] for r in json.loads(js.read_text())["rows"]} == {"mlp_step"}
    bad = subprocess.run([sys.executable, "-m", "benchmarks", "--only", "nope"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "unknown benchmark(s) nope" in bad.stderr


def test_threads_option_reaches_the_blas_settings(tmp_path):
    js = tmp_path / "t.json"
    ok = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--threads", "1", "--only", "engine_overhead",
                         "--json", str(js)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    machine = json.loads(js.read_text())["machine"]
    assert machine["blas"]["OPENBLAS_NUM_THREADS"] == "1"
    assert set(machine["load_average_1min"]) == {"start", "end"}
    bad = subprocess.run([sys.executable, "-m", "benchmarks", "--threads", "0"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "--threads must be >= 1, got 0" in bad.stderr


def test_numpy_mha_baseline_is_checked_against_tinyattn():
    """The hand-written layer computes what tinyattn computes, and a wrong one is caught."""
    from benchmarks.mha import _make_layers, check_agreement
    layer, np_layer, x, dy = _make_layers(2, 5, 8, 2, np.float64)
    assert check_agreement(layer, np_layer, x, dy) < 1e-10
    np_layer.w["W_v.weight"] = np_layer.w["W_v.weight"] * 1.001  # a slightly different layer
    with pytest.raises(AssertionError, match="disagree"):
        check_agreement(layer, np_layer, x, dy)


def test_numpy_mlp_baseline_is_checked_against_tinyattn():
    from benchmarks.mlp_step import _setup, check_agreement
    model, opt, ref, x, y = _setup(8, 4)
    assert check_agreement(model, opt, ref, x, y) < 1e-5
    model, opt, ref, x, y = _setup(8, 4)
    ref.b2 += 1e-2  # a different starting point must not pass as the same step
    with pytest.raises(AssertionError, match="disagree"):
        check_agreement(model, opt, ref, x, y)


def test_flop_count_is_the_closed_form():
    from benchmarks.matmul_roofline import flops, mha_matmuls, sdpa_matmuls
    B, T, d, h = 3, 7, 12, 4
    N = B * T
    assert flops(mha_matmuls(B, T, d, h)) == 12 * 2 * N * d * d + 6 * 2 * B * T * T * d
    assert flops(sdpa_matmuls(B, T, d, h)) == 6 * 2 * B * T * T * d


def test_row_target_and_compare():
    assert Row("b", "c", "m", 1.0, 1.0, ratio=1.2, target="<= 1.25").met is True
    assert Row("b", "c", "m", 1.0, 1.0, ratio=1.3, target="<= 1.25").met is False
    assert Row("b", "c", "m", 1.0, 1.0, ratio=0.4, target=">= 0.5").met is False
    assert Row("b", "c", "m", 1.0).met is None
    assert Row("b", "c", "m", 1.0, 1.0, ratio=np.float64(0.6), target=">= 0.5").met is True  # a bool, not np.bool_
    calls = []
    t = compare({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, repeat=3, warmup=1)
    assert set(t) == {"a", "b"} and all(s >= 0 for s in t.values())
    assert calls == ["a", "b", "a", "b", "b", "a", "a", "b"]  # warm-up, then interleaved: ab, ba, ab
    calls.clear()
    compare({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, repeat=2, warmup=0,
            before_round=lambda: calls.append("move"))
    assert calls == ["move", "a", "b", "move", "b", "a"]  # arrays re-placed before every round, not per call


def test_mlp_step_child_process_reports_one_measurement():
    """Full mode runs mlp_step in several fresh processes (placement differs per process); each child
    prints one JSON line with both step times and the agreement of the two updates."""
    out = subprocess.run([sys.executable, "-m", "benchmarks.mlp_step", "--child", "--quick"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["ms_t"] > 0 and r["ms_np"] > 0 and r["err"] < 1e-5 and (r["width"], r["batch"]) == (64, 16)


def test_torch_comparison_is_optional_and_skips_cleanly_without_torch(monkeypatch, capsys):
    from benchmarks import OPTIONAL_BENCHMARKS, torch_cpu
    assert "torch_cpu" in OPTIONAL_BENCHMARKS and "torch_cpu" not in BENCHMARKS
    monkeypatch.setattr(torch_cpu.importlib.util, "find_spec", lambda name: None)  # as if torch were not installed
    assert not torch_cpu.available()
    assert torch_cpu.run(quick=True) == []
    assert "torch is not importable" in capsys.readouterr().out


def test_gpt2_forward_skips_cleanly_without_the_pretrained_extra(monkeypatch, capsys):
    """A plain `pip install -e .` has no safetensors: the full run must go on, not crash at gpt2_forward."""
    import importlib.util

    from benchmarks import bert_forward, gpt2_forward
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    for bench, name in ((gpt2_forward, "gpt2_forward"), (bert_forward, "bert_forward")):
        assert not bench.available()
        assert bench.run(quick=True) == []
        assert f"{name} is skipped" in capsys.readouterr().out


def test_gpt_model_code_trains_on_tinyattn():
    """The benchmark's GPT, written against PyTorch's API, runs on tinyattn and learns a fixed batch."""
    import tinyattn
    from benchmarks.gpt_model import GPTConfig, build
    cfg = GPTConfig(vocab_size=7, block_size=8, n_layer=2, n_head=2, n_embd=16)
    tinyattn.manual_seed(0)
    model = build(tinyattn)(cfg)
    assert model.wte.weight.shape == (7, 16) and model.h[0].c_attn.weight.shape == (48, 16)
    idx = tinyattn.randint(0, 7, (4, 8))
    opt = tinyattn.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(15):
        loss = model(idx, idx)  # copy task: predict the token itself
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert abs(losses[0] - np.log(7)) < 0.5 and losses[-1] < 0.5 * losses[0]


@pytest.mark.parametrize("style", ["gelu_masked", "sdpa", "heads", "bmm_encdec", "book", "annotated", "nn_transformer",
                                   "vit", "gru_attn", "small_nlp"])
def test_every_tutorial_style_runs_on_tinyattn_and_every_parameter_gets_a_gradient(style):
    """The tutorial code, written against PyTorch's API, runs unchanged on tinyattn (quick size)."""
    import tinyattn
    from benchmarks.targets import decide
    from benchmarks.tutorial_styles import ABOUT, _load_common_weights, build
    assert style in ABOUT and decide("tutorial_style", style, None)[0] in ("<= 1.25", "<= 1.30")
    tinyattn.manual_seed(0)
    model, make_batch = build(tinyattn, style, quick=True)
    shapes = _load_common_weights(tinyattn, model)
    assert len(shapes) == len(list(model.parameters())) > 0
    loss = model(*make_batch(np.random.default_rng(0)))
    assert loss.shape == () and np.isfinite(loss.item()) and loss.item() > 0
    loss.backward()
    missing = [n for n, p in model.named_parameters() if p.grad is None or not np.isfinite(p.grad.numpy()).all()]
    assert not missing, f"{style}: no finite gradient for {missing}"


def test_tutorial_weights_depend_only_on_place_and_shape():
    """Both libraries load the same weights: two builds from different seeds end up equal."""
    import tinyattn
    from benchmarks import tutorial_models as tm
    from benchmarks.tutorial_styles import _load_common_weights
    states = []
    for seed in (0, 1):
        tinyattn.manual_seed(seed)
        model, _ = tm.build_gelu_masked(tinyattn, tm.QUICK_SIZE)
        _load_common_weights(tinyattn, model)
        states.append([p.numpy().copy() for p in model.parameters()])
    for a, b in zip(*states):
        np.testing.assert_array_equal(a, b)


def test_tutorial_styles_child_reports_its_check_and_times_steps_on_request():
    """The child process the parent drives: one JSON line with loss, gradient norms, shapes and BLAS kernel,
    then one JSON line of step times per `run N` request."""
    proc = subprocess.run([sys.executable, "-m", "benchmarks.tutorial_styles", "--child", "tinyattn", "heads",
                           "--quick"], input="run 3\nquit\n", cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    ready, timed = (json.loads(line) for line in proc.stdout.strip().splitlines())
    assert math.isfinite(ready["loss"]) and len(ready["norms"]) == len(ready["shapes"]) > 0
    assert all(n > 0 for n in ready["norms"]) and isinstance(ready["blas"], str) and ready["blas"]
    assert len(timed["t"]) == 3 and all(t > 0 for t in timed["t"])


def test_tutorial_styles_is_optional_and_skips_cleanly_without_torch(monkeypatch, capsys):
    from benchmarks import OPTIONAL_BENCHMARKS, tutorial_styles
    assert "tutorial_styles" in OPTIONAL_BENCHMARKS and "tutorial_styles" not in BENCHMARKS
    monkeypatch.setattr(tutorial_styles.importlib.util, "find_spec", lambda name: None)
    assert not tutorial_styles.available()
    assert tutorial_styles.run(quick=True) == []
    assert "torch is not importable" in capsys.readouterr().out


def test_child_drives_a_library_process_line_by_line():
    """common.Child, as tutorial_styles and hf_gpt2 use it: the ready line, then timed calls on request."""
    from benchmarks.common import Child
    child = Child("benchmarks.tutorial_styles", ["--child", "tinyattn", "heads", "--quick"], "tinyattn")
    try:
        ready = child.read()
        assert math.isfinite(ready["loss"])
        times = child.run(2)
        assert len(times) == 2 and all(t > 0 for t in times)
    finally:
        child.close()
    assert child.proc.returncode == 0


def test_hf_gpt2_tinyattn_child_reports_logits_and_tokens_then_times_calls(tmp_path):
    """The tinyattn side of the Hugging Face comparison, on a tiny checkpoint: what the parent checks
    (last logits, each position's argmax, the generated tokens), then `run N forward|generate` timings."""
    from benchmarks.common import write_checkpoint
    from benchmarks.gpt2_forward import QUICK
    from benchmarks.hf_gpt2 import QUICK_T
    folder = str(tmp_path / "gpt2-tiny")
    write_checkpoint("benchmarks.gpt2_forward", folder, QUICK)
    proc = subprocess.run([sys.executable, "-m", "benchmarks.hf_gpt2", "--child", "tinyattn", folder, "--quick"],
                          input="run 2 forward\nrun 1 generate\nquit\n", cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    ready, fwd, gen = (json.loads(line) for line in proc.stdout.strip().splitlines())
    T, _, new = QUICK_T
    assert len(ready["last"]) == QUICK["vocab_size"] and len(ready["argmax"]) == T
    assert len(ready["generated"]) == new and all(0 <= t < QUICK["vocab_size"] for t in ready["generated"])
    assert len(fwd["t"]) == 2 and len(gen["t"]) == 1 and all(t > 0 for t in fwd["t"] + gen["t"])


def test_hf_gpt2_is_optional_and_skips_cleanly_without_transformers(monkeypatch, capsys):
    from benchmarks import OPTIONAL_BENCHMARKS, hf_gpt2
    assert "hf_gpt2" in OPTIONAL_BENCHMARKS and "hf_gpt2" not in BENCHMARKS
    monkeypatch.setattr(hf_gpt2.importlib.util, "find_spec", lambda name: None)
    assert not hf_gpt2.available()
    assert hf_gpt2.run(quick=True) == []
    assert "transformers or torch is not importable" in capsys.readouterr().out


def test_markdown_rewrite_keeps_the_hand_written_notes(tmp_path):
    """`--markdown FILE` regenerates the tables but keeps what follows the notes marker in FILE."""
    from benchmarks.__main__ import NOTES_MARKER
    md = tmp_path / "RESULTS.md"
    md.write_text("# Performance\n\nold table\n\n" + NOTES_MARKER + "\n\n## History\n\nmeasured by hand\n")
    out = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--only", "engine_overhead", "--markdown",
                          str(md)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    text = md.read_text()
    assert "old table" not in text and "## All figures" in text  # regenerated...
    assert text.count(NOTES_MARKER) == 1 and text.rstrip().endswith("## History\n\nmeasured by hand")  # ...notes kept
    fresh = tmp_path / "new.md"
    subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--only", "engine_overhead", "--markdown",
                    str(fresh)], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    assert NOTES_MARKER not in fresh.read_text()  # a new file has no notes to keep


# ---- the floor beside a ratio against torch (benchmarks/floor.py): torch-free checks of its logic --------
CPUINFO_XEON = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz
flags\t\t: fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 avx512f avx512dq avx512bw avx512vl avx512_bf16 \
avx_vnni amx_bf16 amx_tile amx_int8 popcnt

processor\t: 1
model name\t: Something Else
flags\t\t: fpu sse
"""


def test_cpu_flags_reads_the_model_and_vector_extensions_of_the_first_processor():
    from benchmarks.floor import cpu_flags
    xeon = cpu_flags(CPUINFO_XEON)
    assert xeon["model"] == "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz"
    assert xeon["vector_extensions"] == sorted(["fma", "sse4_1", "sse4_2", "avx", "f16c", "avx2", "avx512f", "avx512dq",
                                                "avx512bw", "avx512vl", "avx512_bf16", "avx_vnni", "amx_bf16",
                                                "amx_tile", "amx_int8"])
    assert xeon["avx512"] is True and xeon["amx"] is True
    epyc = cpu_flags("model name\t: AMD EPYC\nflags\t: fpu sse2 fma avx avx2 vaes\n")
    assert epyc == {"model": "AMD EPYC", "vector_extensions": ["avx", "avx2", "fma"], "avx512": False, "amx": False}
    arm = cpu_flags("processor\t: 0\nFeatures\t: fp asimd sve\n")
    assert arm["model"] is None and arm["vector_extensions"] == ["asimd", "sve"] and arm["avx512"] is False


def test_torch_config_reads_blas_mkl_onednn_and_cpu_kernels():
    from benchmarks.floor import torch_config
    show = ("PyTorch built with:\n  - Intel(R) oneAPI Math Kernel Library Version 2024.2-Product Build 20240605\n"
            "  - Intel(R) MKL-DNN v3.12.0 (Git Hash 80afa7)\n  - CPU capability usage: AVX512\n"
            "  - Build settings: BLAS_INFO=mkl, BUILD_TYPE=Release, LAPACK_INFO=mkl, USE_MKL=ON, USE_MKLDNN=ON, \n")
    assert torch_config(show) == {"blas": "mkl", "lapack": "mkl", "mkl": "2024.2-Product", "onednn": "3.12.0",
                                  "use_mkldnn": "ON", "cpu_capability": "AVX512"}
    assert torch_config(show, "AVX2")["cpu_capability"] == "AVX2"  # what the running process chose wins
    assert torch_config("  - Build settings: BLAS_INFO=open, USE_MKLDNN=OFF, \n")["mkl"] is None


def test_gemm_shapes_from_profiler_events_count_flops_and_keep_the_main_ones():
    from benchmarks.floor import gemm_shapes_from_events, main_shapes
    events = [("aten::addmm", [[96], [64, 32], [32, 96]]), ("aten::addmm", [[96], [64, 32], [32, 96]]),
              ("aten::mm", [[32, 64], [64, 96]]), ("aten::bmm", [[8, 16, 4], [8, 4, 16]]),
              ("aten::baddbmm", [[8, 16, 16], [8, 16, 4], [8, 4, 16], [], []]), ("aten::linear", [[64, 32], [96, 32]]),
              ("aten::exp", [[64, 96]])]
    rows = gemm_shapes_from_events(events)
    by = {tuple(r["shape"]): r for r in rows}
    assert set(by) == {(1, 64, 32, 96), (1, 32, 64, 96), (8, 16, 4, 16)}  # (batch, M, K, N); linear/exp ignored
    assert by[(1, 64, 32, 96)]["count"] == 2 and by[(8, 16, 4, 16)]["count"] == 2  # bmm and baddbmm: one shape
    assert by[(1, 64, 32, 96)]["gflop"] == pytest.approx(2 * 2 * 64 * 32 * 96 / 1e9)
    assert [r["gflop"] for r in rows] == sorted((r["gflop"] for r in rows), reverse=True)
    assert main_shapes(rows, share=0.5) == rows[:1]  # the largest alone is over half the FLOPs
    assert main_shapes(rows, share=1.0) == rows and main_shapes(rows, most=2) == rows[:2]
    assert main_shapes([]) == []


def test_floor_repetitions_are_the_same_on_both_sides_and_about_a_millisecond():
    from benchmarks.floor import reps
    assert reps("mm:1,512,512,512") == reps("mm:1,512,512,512") >= 1
    assert reps("mm:1,4096,4096,4096") == 1 and reps("mm:1,2,2,2") == 1000  # clamped at both ends
    assert reps("exp:8,128,512") < reps("exp:1,16,16")


def test_floor_children_take_turns_and_report_each_side_per_op():
    """The parent/child protocol of floor.Floor, with NumPy on both sides (torch-free): the ready line
    carries the library's configuration, then each op is timed on request, and the floor combines them."""
    from benchmarks.floor import ELEMENTWISE_OPS, Floor, summary
    floor = Floor(libs=("numpy", "numpy"))
    try:
        assert floor.config["numpy"]["blas"]["kernel"] == floor.config["numpy_2"]["blas"]["kernel"]
        gemms = [{"shape": [1, 16, 8, 4], "count": 3, "gflop": 3e-6}, {"shape": [2, 4, 4, 4], "count": 1, "gflop": 2e-7}]
        fl = floor.measure(gemms, rounds=2, elementwise_shape=(2, 3, 4))
    finally:
        floor.close()
    assert [r["shape"] for r in fl["gemm_shapes"]] == [[1, 16, 8, 4], [2, 4, 4, 4]] and fl["gemm_flop_share"] == 1.0
    for r in fl["gemm_shapes"] + list(fl["elementwise"].values()):
        assert r["numpy_ms"] > 0 and r["torch_ms"] > 0 and r["ratio"] == pytest.approx(r["numpy_ms"] / r["torch_ms"])
    num = sum(r["count"] * r["numpy_ms"] for r in fl["gemm_shapes"])
    assert fl["gemm"] == pytest.approx(num / sum(r["count"] * r["torch_ms"] for r in fl["gemm_shapes"]))
    assert set(fl["elementwise"]) == set(ELEMENTWISE_OPS) and fl["elementwise_shape"] == [2, 3, 4]
    assert summary(fl).startswith("GEMM ") and "mul-add" in summary(fl) and summary(None) == ""


def test_floor_child_computes_what_it_is_asked():
    """Each op the child times is the op its name says (NumPy side), at the shape it names."""
    from benchmarks.floor import _Ops
    import numpy as np
    ops = _Ops("numpy")
    assert ops["mm:2,3,4,5"]().shape == (2, 3, 5) and "mm:2,3,4,5" in ops  # built once, then kept
    assert ops["mm:1,3,4,5"]().shape == (3, 5)  # no batch: a plain 2-D product
    e, s, f = ops["exp:2,3,4"](), ops["sum:2,3,4"](), ops["muladd:2,3,4"]()
    assert e.shape == (2, 3, 4) and e.dtype == np.float32 and (e > 0).all()
    assert s.shape == (2, 3) and f.shape == (2, 3, 4) and f.dtype == np.float32
    with pytest.raises(KeyError):
        ops["conv:1,2,3"]


def test_machine_records_cpu_vector_extensions_and_the_table_has_a_floor_column(quick_run):
    _, data, md = quick_run
    m = data["machine"]
    assert isinstance(m["vector_extensions"], list) and m["avx512"] in (True, False, None)
    assert "vector extensions:" in md and "| floor (numpy / torch) |" in md


# ---- which target a ratio is held to (benchmarks/targets.py): issue 43's rules, per CPU family ------------
def test_cpu_family_comes_from_the_model_name():
    from benchmarks.targets import family
    assert family("Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz") == "intel"
    assert family("AMD EPYC") == "amd" and family("AMD EPYC 7B13 64-Core Processor") == "amd"
    assert family(None) == "other" and family("Neoverse-N1") == "other"


def test_targets_follow_the_issue_per_family_and_keep_what_held_on_amd():
    from benchmarks.targets import decide
    assert decide("gpt2", "forward", {"gemm": 0.80}, fam="amd")[0] == "<= 0.85"
    assert decide("gpt2", "forward", {"gemm": 0.80}, fam="intel")[0] == "<= 1.10"
    assert decide("nanogpt", None, {"gemm": 0.97}, fam="amd")[0] == "<= 1.30"
    assert decide("attention_numpy", fam="intel")[0] == "<= 1.00"
    # a style that held the earlier 1.25x on AMD keeps it there, and only there
    target, why = decide("tutorial_style", "book", {"gemm": 0.72}, fam="amd")
    assert target == "<= 1.25" and "kept on AMD" in why
    assert decide("tutorial_style", "book", {"gemm": 0.72}, fam="intel")[0] == "<= 1.30"
    assert decide("tutorial_style", "sdpa", {"gemm": 0.97}, fam="amd")[0] == "<= 1.30"  # missed there: the issue's
    assert decide("attention_torch", (4, 512, 256, 8), {"gemm": 0.92}, fam="amd")[0] == "<= 1.00"
    assert decide("attention_torch", (8, 128, 256, 8), {"gemm": 1.00}, fam="amd")[0] == "<= 1.25"


def test_a_floor_above_the_target_makes_the_target_the_floor_plus_five_percent():
    from benchmarks.common import Row
    from benchmarks.targets import decide
    target, why = decide("gpt2", "forward", {"gemm": 0.88}, fam="amd")
    assert target == "<= 0.924" and "GEMM floor 0.88" in why
    assert decide("tutorial_style", "vit", {"gemm": 1.26}, fam="intel")[0] == "<= 1.30"  # floor under the target
    target, _ = decide("attention_torch", (4, 512, 256, 8), {"gemm": 1.26}, fam="intel")  # the issue's example
    assert target == "<= 1.323"
    assert Row("b", "c", "m", 1.0, 1.0, ratio=1.32, target=target).met is True
    assert Row("b", "c", "m", 1.0, 1.0, ratio=1.33, target=target).met is False
    assert decide("nanogpt", None, None, fam="intel")[0] == "<= 1.30"  # no floor measured: the issue's target
