"""distilbert-base-uncased's shape through ``tinyattn.pretrained.load_bert``: a 32-token forward with attentions.

No real weights are needed to time the real architecture: a first child process writes a checkpoint folder
in Hugging Face's layout (config.json of distilbert-base-uncased: 6 layers, 12 heads, 768 wide, 3072 in the
FFN, 512 positions, 30522 tokens; model.safetensors with random float32 weights under DistilBertForMaskedLM's
key names, head included; a vocab.txt of 30522 tokens), and a second, fresh process loads it and measures:

* ``model(**inputs, output_attentions=True)`` on a 32-token text (batch 1) under ``no_grad``, as the
  texts' snippet calls it: median of the repeats, after warm-up; and the CPU time the process spends on
  one such forward (summed over BLAS threads), which a busy machine inflates far less than the wall time;
* peak memory: ``tracemalloc``'s peak of the allocations during one forward (the activations and
  attentions), and the measuring process's peak resident set size (weights, the file read, everything).

The target is the issue's: under 1 s for the forward on 2 cores.
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from .common import Row, checkpoint_tools_available, measure_checkpoint, median_time, memory_peaks

DISTILBERT = {"model_type": "distilbert", "vocab_size": 30522, "dim": 768, "n_layers": 6, "n_heads": 12,
              "hidden_dim": 3072, "max_position_embeddings": 512, "activation": "gelu",
              "sinusoidal_pos_embds": False, "tie_weights_": True}
QUICK = {**DISTILBERT, "vocab_size": 500, "dim": 64, "n_layers": 2, "n_heads": 4, "hidden_dim": 256,
         "max_position_embeddings": 64}
T = 32  # tokens, [CLS] and [SEP] included


def _vocab(n: int) -> list[str]:
    """[PAD] [UNK] [CLS] [SEP] [MASK], the letters, then made-up words to fill n entries."""
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    out = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + letters
    k = 0
    while len(out) < n:
        out.append(f"w{k}")
        k += 1
    return out[:n]


def _write(folder: str, cfg: dict) -> None:
    """A DistilBERT masked-LM checkpoint with random weights (N(0, 0.02), LayerNorms at 1 and 0, as its init)."""
    import safetensors.numpy

    from tinyattn.pretrained.bert import _schema, read_bert_config

    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f)
    with open(os.path.join(folder, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in _vocab(cfg["vocab_size"])))
    c = read_bert_config(folder)
    body, head = _schema(c)
    rng = np.random.default_rng(0)
    weights = {}
    for name, (_, shape) in {**body, **head}.items():
        key = name if name.startswith("vocab_") else "distilbert." + name  # as DistilBertForMaskedLM saves
        if "layer_norm" in name or "LayerNorm" in name:
            weights[key] = (np.ones if name.endswith("weight") else np.zeros)(shape, dtype=np.float32)
        else:
            weights[key] = 0.02 * rng.standard_normal(shape, dtype=np.float32)
    safetensors.numpy.save_file(weights, os.path.join(folder, "model.safetensors"))


def _measure(folder: str, repeat: int) -> dict:
    import tinyattn
    from tinyattn.pretrained import load_bert

    t0 = time.perf_counter()
    model, tok = load_bert(folder)
    load_s = time.perf_counter() - t0
    inputs = tok(" ".join("abcdefghijklmnopqrstuvwxyz"[i % 26] for i in range(T - 2)), return_tensors="pt")
    assert inputs["input_ids"].shape == (1, T), inputs["input_ids"].shape

    def forward():
        with tinyattn.no_grad():
            return model(**inputs, output_attentions=True)

    out = forward()
    att = out.attentions
    if len(att) != model.config["n_layers"] or att[0].shape != (1, model.config["n_heads"], T, T) \
            or not np.isfinite(out.logits.numpy()).all():
        raise AssertionError(f"bert_forward: {len(att)} attentions of {att[0].shape}, logits {out.logits.shape}")
    forward_s = median_time(forward, repeat=repeat, warmup=1)
    cpu = []  # CPU seconds of this process per forward: what a core spends, however busy the machine is
    for _ in range(repeat):
        c0 = time.process_time()
        forward()
        cpu.append(time.process_time() - c0)
    peak, rss = memory_peaks(forward)
    return {"tokens": T, "load_s": load_s, "forward_s": forward_s, "forward_cpu_s": float(np.median(cpu)),
            "forward_peak_bytes": peak, "peak_rss_bytes": rss,
            "parameters": model.num_parameters()}


def available() -> bool:
    """Whether the checkpoint can be written here: safetensors and tokenizers come with tinyattn[pretrained]."""
    return checkpoint_tools_available("bert_forward")


def run(quick: bool = False) -> list[Row]:
    if not available():
        return []
    cfg = QUICK if quick else DISTILBERT
    r = measure_checkpoint("benchmarks.bert_forward", cfg, quick)
    name = "distilbert-base-uncased shape" if not quick else "tiny distilbert"
    case = f"{name}, random weights, {r['parameters']:,} parameters, T={r['tokens']}, batch 1, float32, with attentions"
    target = None if quick else "<= 1"
    mib = 2 ** 20
    return [
        Row("bert_forward", case, "forward s (no_grad)", r["forward_s"], ratio=r["forward_s"], ratio_name="seconds",
            target=target),
        Row("bert_forward", case, "forward CPU s, all threads (no_grad)", r["forward_cpu_s"]),
        Row("bert_forward", case, "load_bert s", r["load_s"]),
        Row("bert_forward", case, "forward peak MiB (tracemalloc)", r["forward_peak_bytes"] / mib),
        Row("bert_forward", case, "process peak RSS MiB", r["peak_rss_bytes"] / mib),
    ]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="one step of the bert_forward benchmark in its own process")
    ap.add_argument("--write", metavar="FOLDER")
    ap.add_argument("--config", default=json.dumps(DISTILBERT))
    ap.add_argument("--measure", metavar="FOLDER")
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    if a.write:
        _write(a.write, json.loads(a.config))
        print(json.dumps({"written": a.write}))
    else:
        print(json.dumps(_measure(a.measure, a.repeat)))
