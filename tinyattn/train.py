"""Training on the synthetic tasks: `fit`, evaluation, checkpoints (the model wrapper is in tinyattn.models).

    task = make_task("first_token_recall", distance=40)
    model = SequenceModel("attention", task.vocab_size, max_len=task.seq_len)   # or "gru", "rnn"
    history = fit(model, task, steps=300, target_accuracy=0.99)
    plot_history(history)

The same batches train every kind of model: targets are aligned with inputs
(see tinyattn.data), so an "lm" head scores logits at every position and a
"cls" head reads one label off the last position.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from typing import Any, Callable, Iterable, Sequence

import numpy as np

import tinyattn
import tinyattn.nn as nn
import tinyattn.nn.functional as F
from tinyattn import checks, optim
from tinyattn.data import IGNORE, Batch, Task, as_rng
from tinyattn.models import HEADS, KINDS, SequenceModel  # noqa: F401  (train.SequenceModel, as the course uses it)
from tinyattn.tensor import Tensor


# ----------------------------------------------------------------------------- loss and accuracy


def _as_batch(item: Any) -> Batch:
    if isinstance(item, Batch):
        return item
    if isinstance(item, (tuple, list)) and len(item) == 2:
        inputs, targets = (np.asarray(a._data if isinstance(a, Tensor) else a) for a in item)
        if inputs.shape != targets.shape or inputs.ndim != 2:
            raise ValueError(f"a batch must be (inputs, targets) of the same shape (B, T), "
                             f"got {inputs.shape} and {targets.shape}")
        return Batch(inputs.astype(np.int64), targets.astype(np.int64))
    raise TypeError(f"expected a Batch or an (inputs, targets) pair, got {type(item).__name__}")


def _scored(logits: Tensor, batch: Batch) -> tuple[Tensor, np.ndarray]:
    """Logits and targets of the scored positions only: (N, V) and (N,)."""
    if logits.ndim == 2:  # cls head: one label per sequence, at the last position
        return logits, batch.labels
    B, T, V = logits.shape
    flat = logits.reshape(B * T, V)  # (B*T, V)
    return flat, batch.targets.reshape(B * T)  # IGNORE rows are skipped by cross_entropy


def loss_and_accuracy(model: nn.Module, batch: Batch) -> tuple[Tensor, float]:
    """Mean cross-entropy over scored positions (a Tensor to backprop) and token accuracy on them."""
    logits, targets = _scored(model(batch.inputs), batch)
    loss = F.cross_entropy(logits, targets, ignore_index=IGNORE)
    keep = targets != IGNORE
    pred = logits._data.argmax(axis=-1)
    return loss, float((pred[keep] == targets[keep]).mean())


def evaluate(model: nn.Module, batches: Iterable[Batch] | Batch) -> float:
    """Accuracy over every scored position of `batches`, in eval mode and without building a graph."""
    if isinstance(batches, Batch):
        batches = [batches]
    was_training = model.training
    model.eval()
    correct = total = 0
    try:
        with tinyattn.no_grad():
            for item in batches:
                batch = _as_batch(item)
                logits, targets = _scored(model(batch.inputs), batch)
                keep = targets != IGNORE
                correct += int((logits._data.argmax(axis=-1)[keep] == targets[keep]).sum())
                total += int(keep.sum())
    finally:
        model.train(was_training)
    if total == 0:
        raise ValueError("evaluate: no scored positions in the evaluation batches")
    return correct / total


def check_compatible(model: nn.Module, task: Task) -> None:
    """One-line errors for a model that can not train on `task` (too short, leaking, wrong head)."""
    max_len = getattr(model, "max_len", None)
    if getattr(model, "kind", "attention") == "attention" and max_len is not None and task.seq_len > max_len:
        what = f"distance={task.distance}" if hasattr(task, "distance") else f"seq_len={task.seq_len}"
        raise ValueError(f"task {task.name!r} with {what} needs sequences of {task.seq_len} tokens "
                         f"but the model's max_len is {max_len}; build the model with max_len >= {task.seq_len}")
    if task.causal_only and getattr(model, "causal", True) is False:
        raise ValueError(f"task {task.name!r} predicts the next token, so its inputs reveal later targets; "
                         "train it with a causal model (causal=True)")
    if getattr(model, "head_type", "lm") == "cls" and not task.single_label:
        raise ValueError(f"head='cls' predicts one label per sequence but task {task.name!r} scores several "
                         "positions per sequence; use head='lm'")
    n_out = getattr(model, "config", {}).get("n_out")
    if n_out is not None and n_out < task.vocab_size:
        raise ValueError(f"the model predicts {n_out} classes but task {task.name!r} has {task.vocab_size} tokens")


# ----------------------------------------------------------------------------- the loop


def _progress_bar(**kwargs):
    """A tqdm bar: Jupyter's widget when ipywidgets is installed, else the text bar (no warning either way)."""
    try:
        import ipywidgets  # noqa: F401  (tqdm.auto needs it for the widget, and warns without it)
        from tqdm.auto import tqdm
    except ImportError:
        from tqdm.std import tqdm
    return tqdm(**kwargs)


def fit(model: nn.Module, task: Task | Iterable[Any], *, steps: int = 500, batch_size: int = 32,
        lr: float = 3e-3, weight_decay: float = 0.0, clip_norm: float | None = 1.0,
        optimizer: Any = None, eval_every: int = 50, eval_size: int = 256,
        eval_data: Sequence[Any] | None = None, target_accuracy: float | None = None,
        seed: int | None = 0, progress: bool = True, checkpoint: str | os.PathLike | None = None,
        desc: str | None = None, on_step: Callable[[int], None] | None = None) -> dict[str, list]:
    """Train `model` on a Task (fresh batches each step) or on an iterable of batches; return the history.

    Every `eval_every` steps (and at the end) accuracy is measured on `eval_data`,
    by default `eval_size` held-out sequences drawn from the task with a
    different seed. Training stops early once that accuracy reaches
    `target_accuracy`. Gradients are clipped to `clip_norm` (None: no clipping).
    `on_step(step)` is called after every optimizer step (the demo's overall progress line).
    `seed` fixes the batches (model init is fixed by tinyattn.manual_seed before
    building the model). History: step, loss, acc, grad_norm per step;
    eval_step, eval_acc per evaluation; plus seconds and stopped_early.
    """
    steps = checks.positive_int("steps", steps)
    eval_every = checks.positive_int("eval_every", eval_every)
    if target_accuracy is not None and not 0.0 < target_accuracy <= 1.0:
        raise ValueError(f"target_accuracy must be in (0, 1], got {target_accuracy}")
    if not lr > 0:
        raise ValueError(f"lr must be > 0, got {lr}")
    if clip_norm is not None and not clip_norm > 0:
        raise ValueError(f"clip_norm must be > 0 or None, got {clip_norm}")

    if isinstance(task, Task):
        check_compatible(model, task)
        rng = as_rng(seed)
        eval_rng = as_rng(None if seed is None else seed + 1_000_003)  # held out: a different stream
        train_iter: Iterable[Any] = (task.batch(batch_size, rng) for _ in range(steps))
        if eval_data is None:
            n = checks.positive_int("eval_size", eval_size)
            eval_data = [task.batch(min(256, n - i), eval_rng) for i in range(0, n, 256)]  # chunks of <= 256
    else:
        train_iter = task
    eval_batches = [_as_batch(b) for b in eval_data] if eval_data is not None else None
    if target_accuracy is not None and eval_batches is None:
        raise ValueError("target_accuracy needs evaluation data: pass a Task or eval_data=")

    params = [p for p in model.parameters() if p.requires_grad]
    opt = optimizer or optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    history: dict[str, Any] = {"step": [], "loss": [], "acc": [], "grad_norm": [], "eval_step": [], "eval_acc": [],
                               "seconds": 0.0, "stopped_early": False}
    bar = _progress_bar(total=steps, desc=desc, disable=not progress, leave=False, dynamic_ncols=True)
    start = time.perf_counter()
    model.train()
    try:
        for step, item in enumerate(itertools.islice(train_iter, steps), start=1):
            loss, acc = loss_and_accuracy(model, _as_batch(item))
            opt.zero_grad()
            loss.backward()
            norm = optim.clip_grad_norm(params, clip_norm if clip_norm is not None else float("inf"))
            opt.step()
            history["step"].append(step)
            history["loss"].append(float(loss.item()))
            history["acc"].append(acc)
            history["grad_norm"].append(float(norm))
            bar.update(1)
            if on_step is not None:
                on_step(step)
            if eval_batches is not None and (step % eval_every == 0 or step == steps):
                ev = evaluate(model, eval_batches)
                history["eval_step"].append(step)
                history["eval_acc"].append(ev)
                bar.set_postfix(loss=f"{history['loss'][-1]:.3f}", eval_acc=f"{ev:.3f}")
                if target_accuracy is not None and ev >= target_accuracy:
                    history["stopped_early"] = step < steps
                    break
    finally:
        bar.close()
    if eval_batches is not None and history["step"] and history["eval_step"][-1:] != [history["step"][-1]]:
        history["eval_step"].append(history["step"][-1])  # the iterable ran out between evaluations
        history["eval_acc"].append(evaluate(model, eval_batches))
    history["seconds"] = time.perf_counter() - start
    if checkpoint is not None:
        save_checkpoint(model, checkpoint, history=history)
    return history


# ----------------------------------------------------------------------------- checkpoints


_META = "__tinyattn_meta__"


def save_checkpoint(model: nn.Module, path: str | os.PathLike, **meta: Any) -> str:
    """Write the model's state_dict, its config (if a SequenceModel) and JSON-able `meta` to one .npz file."""
    path = os.fspath(path)
    if not path.endswith(".npz"):
        path += ".npz"  # np.savez would add it anyway; return the name it really has
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    info = {"config": getattr(model, "config", None), "meta": meta}
    np.savez(path, **model.state_dict(), **{_META: np.array(json.dumps(info, default=float))})
    return path


def load_checkpoint(path: str | os.PathLike, model: nn.Module | None = None) -> tuple[nn.Module, dict]:
    """Read a checkpoint into `model`, or into a SequenceModel rebuilt from its saved config; returns (model, meta)."""
    path = os.fspath(path)
    if not os.path.exists(path) and os.path.exists(path + ".npz"):
        path += ".npz"
    if not os.path.exists(path):
        raise FileNotFoundError(f"no checkpoint at {path}")
    with np.load(path) as f:
        state = {k: f[k] for k in f.files if k != _META}
        info = json.loads(str(f[_META])) if _META in f.files else {"config": None, "meta": {}}
    if model is None:
        if not info["config"]:
            raise ValueError(f"{path} has no saved model config; pass the model to load into")
        model = SequenceModel(**info["config"])
    model.load_state_dict(state)
    return model, info["meta"]


# ----------------------------------------------------------------------------- gradient vs distance


def grad_norm_by_distance(model: SequenceModel, batch: Batch) -> dict[int, float]:
    """{d: mean over the batch of ||dL/dx||} for the embedding x of the token d steps before the last position.

    L is the loss at the scored positions. For a recurrent model this shows the
    gradient vanishing as d grows; attention reaches every token in one step.
    """
    x = model.embed(batch.inputs).detach()  # (B, T, C): a leaf, so we can ask for its gradient
    x.requires_grad_(True)
    was_training = model.training
    model.eval()
    try:
        logits, targets = _scored(model.logits_from_embeddings(x), batch)
        F.cross_entropy(logits, targets, ignore_index=IGNORE).backward()
    finally:
        model.train(was_training)
    norms = np.linalg.norm(x.grad._data, axis=-1).mean(axis=0)  # (T,) per position
    T = len(norms)
    model.zero_grad()
    return {T - 1 - t: float(norms[t]) for t in range(T)}
