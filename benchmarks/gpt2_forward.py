"""A full-size GPT-2 (124M) through ``tinyattn.pretrained.load_gpt2``: a 20-token forward's time, and memory.

No real weights are needed to time the real architecture: a first child process writes a checkpoint
folder in Hugging Face's layout (config.json of gpt2: 12 layers, 12 heads, 768 wide, 1024 positions,
50257 tokens; model.safetensors with random float32 weights; a byte-only vocab.json + merges.txt), and
a second, fresh process loads it and measures:

* the 20-token forward (batch 1), under ``no_grad`` (how the CLI and the head tools run it) and with the
  graph being recorded (a bare ``model(idx)``): median of the repeats, after warm-up; and the CPU time
  the process spends on one no_grad forward (summed over BLAS threads), which a busy machine inflates
  far less than the wall time;
* greedy generation of 20 tokens after a 20-token prompt, with the KV cache;
* peak memory: ``tracemalloc``'s peak of the allocations during one no_grad forward (the activations),
  and the measuring process's peak resident set size (weights, the file read, and everything else).

The target is the issue's: under 1 s for the 20-token forward on 2 cores.
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from .common import Row, checkpoint_tools_available, measure_checkpoint, median_time, memory_peaks

GPT2 = {"model_type": "gpt2", "vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12,
        "n_inner": None, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new", "tie_word_embeddings": True}
QUICK = {**GPT2, "vocab_size": 300, "n_positions": 64, "n_embd": 64, "n_layer": 2, "n_head": 4}
TEXT = "attention is all you"  # 20 bytes: 20 tokens with a byte-only vocabulary


def _write(folder: str, cfg: dict) -> None:
    """A GPT-2 checkpoint folder with random weights (N(0, 0.02), LayerNorms at 1 and 0, as GPT-2's init)."""
    import safetensors.numpy
    import tokenizers

    from tinyattn.pretrained.gpt2 import _expected_shapes

    rng = np.random.default_rng(0)
    weights = {}
    for name, shape in _expected_shapes(cfg).items():
        if ".ln_" in name or name.startswith("ln_f"):
            weights[name] = (np.ones if name.endswith("weight") else np.zeros)(shape, dtype=np.float32)
        else:
            weights[name] = (0.02 * rng.standard_normal(shape, dtype=np.float32))
    os.makedirs(folder, exist_ok=True)
    safetensors.numpy.save_file(weights, os.path.join(folder, "model.safetensors"))
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f)
    alphabet = sorted(tokenizers.pre_tokenizers.ByteLevel.alphabet())  # the 256 byte stand-ins
    vocab = {sym: i for i, sym in enumerate(alphabet)}
    vocab["<|endoftext|>"] = len(vocab)
    with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(folder, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")


def _measure(folder: str, repeat: int) -> dict:
    import tinyattn
    from tinyattn.pretrained import load_gpt2

    t0 = time.perf_counter()
    model, tok = load_gpt2(folder)
    load_s = time.perf_counter() - t0
    ids = np.array([tok.encode(TEXT)])  # (1, 20)

    def forward_no_grad():
        with tinyattn.no_grad():
            return model(ids)

    def forward_recorded():
        return model(ids)

    logits = forward_no_grad().numpy()
    if logits.shape != (1, ids.shape[1], model.vocab_size) or not np.isfinite(logits).all():
        raise AssertionError(f"gpt2_forward: logits of shape {logits.shape}, finite: {np.isfinite(logits).all()}")
    no_grad_s = median_time(forward_no_grad, repeat=repeat, warmup=1)
    recorded_s = median_time(forward_recorded, repeat=max(3, repeat // 2), warmup=1)
    gen_s = median_time(lambda: model.generate(ids, 20, temperature=0), repeat=3, warmup=0)
    cpu = []  # CPU seconds of this process per forward: what a core spends, however busy the machine is
    for _ in range(repeat):
        c0 = time.process_time()
        forward_no_grad()
        cpu.append(time.process_time() - c0)

    forward_peak, rss = memory_peaks(forward_no_grad)
    return {"tokens": int(ids.shape[1]), "load_s": load_s, "forward_no_grad_s": no_grad_s,
            "forward_cpu_s": float(np.median(cpu)), "forward_recorded_s": recorded_s, "generate_20_s": gen_s,
            "forward_peak_bytes": forward_peak, "peak_rss_bytes": rss, "parameters": model.num_parameters()}


def available() -> bool:
    """Whether the checkpoint can be written here: safetensors and tokenizers come with tinyattn[pretrained]."""
    return checkpoint_tools_available("gpt2_forward")


def run(quick: bool = False) -> list[Row]:
    if not available():
        return []
    cfg = QUICK if quick else GPT2
    r = measure_checkpoint("benchmarks.gpt2_forward", cfg, quick)
    name = "gpt2 (124M)" if not quick else "tiny gpt2"
    case = f"{name}, random weights, {r['parameters']:,} parameters, T={r['tokens']}, batch 1, float32"
    target = None if quick else "<= 1"
    mib = 2 ** 20
    return [
        Row("gpt2_forward", case, "forward s (no_grad)", r["forward_no_grad_s"], ratio=r["forward_no_grad_s"],
            ratio_name="seconds", target=target),
        Row("gpt2_forward", case, "forward CPU s, all threads (no_grad)", r["forward_cpu_s"]),
        Row("gpt2_forward", case, "forward s (graph recorded)", r["forward_recorded_s"]),
        Row("gpt2_forward", case, "greedy generate 20 tokens, KV cache, s", r["generate_20_s"]),
        Row("gpt2_forward", case, "load_gpt2 s", r["load_s"]),
        Row("gpt2_forward", case, "forward peak MiB (tracemalloc)", r["forward_peak_bytes"] / mib),
        Row("gpt2_forward", case, "process peak RSS MiB", r["peak_rss_bytes"] / mib),
    ]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="one step of the gpt2_forward benchmark in its own process")
    ap.add_argument("--write", metavar="FOLDER")
    ap.add_argument("--config", default=json.dumps(GPT2))
    ap.add_argument("--measure", metavar="FOLDER")
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    if a.write:
        _write(a.write, json.loads(a.config))
        print(json.dumps({"written": a.write}))
    else:
        print(json.dumps(_measure(a.measure, a.repeat)))
