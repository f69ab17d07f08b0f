"""Training throughput of the demo's models, in tokens per second.

The models and sizes are those of ``tinyattn demo`` (tinyattn.demo.FULL): a 2-block attention model,
a GRU and a tanh RNN with d_model 32, batch 32, on first-token recall, trained with AdamW and gradient
clipping as ``tinyattn.train.fit`` does. A step is forward, loss, backward, clip and update; a token
is one position of one sequence in the batch. The recurrent models step through time one position
at a time, so their cost per token grows with nothing but their fixed per-op overhead, while
attention does the whole sequence in a few large matmuls.
"""
from __future__ import annotations

import numpy as np

import tinyattn
from tinyattn import optim
from tinyattn.data import make_task
from tinyattn.demo import FULL
from tinyattn.models import SequenceModel
from tinyattn.train import loss_and_accuracy

from .common import Row, median_time

DISTANCES = (40, 160)
QUICK_DISTANCES = (10,)


def _model(kind: str, vocab_size: int, max_len: int) -> SequenceModel:
    """The demo's models (see tinyattn.demo): 2 attention blocks with 2 heads, or 1 recurrent layer."""
    tinyattn.manual_seed(0)
    if kind == "attention":
        return SequenceModel("attention", vocab_size, d_model=FULL.d_model, n_layers=2, n_heads=2, max_len=max_len)
    return SequenceModel(kind, vocab_size, d_model=FULL.d_model, n_layers=1, max_len=max_len)


def run(quick: bool = False) -> list[Row]:
    rows = []
    repeat, warmup = (2, 1) if quick else (10, 2)
    for d in (QUICK_DISTANCES if quick else DISTANCES):
        task = make_task("first_token_recall", distance=d)
        batch = task.batch(FULL.batch_size, np.random.default_rng(0))
        tokens = batch.inputs.size  # B * T positions per step
        for kind in ("attention", "gru", "rnn"):
            model = _model(kind, task.vocab_size, task.seq_len)
            params = [p for p in model.parameters() if p.requires_grad]
            opt = optim.AdamW(params, lr=3e-3)  # the rate changes no timing

            def step():  # the body of tinyattn.train.fit's loop
                loss, _ = loss_and_accuracy(model, batch)
                opt.zero_grad()
                loss.backward()
                optim.clip_grad_norm(params, 1.0)
                opt.step()

            s = median_time(step, repeat=repeat, warmup=warmup)
            rows.append(Row("demo_throughput", f"{kind}, first-token recall d={d} (T={task.seq_len}), "
                                               f"batch {FULL.batch_size}, d_model {FULL.d_model}",
                            "train tokens/s", tokens / s, extra={"step_ms": s * 1e3, "tokens_per_step": tokens}))
    return rows
