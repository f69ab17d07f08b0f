"""`tinyattn demo`: attention vs recurrence on long-range recall, on a CPU, in a few minutes.

It trains three kinds of model, d_model=32, on the same seeded batches:
  attention  2 pre-LN transformer blocks, 2 heads, sinusoidal positions
  gru        1 GRU layer
  rnn        1 tanh (Elman) RNN layer
on first-token recall at distances 5, 10, 40, 80, 160 (remember one token for d
steps; chance 1/8) and on multi-query associative recall with 2, 4, 8, 16
key/value pairs (chance 1/16). It prints a table of held-out accuracy and saves
to --out: accuracy_vs_distance.png, accuracy_vs_pairs.png,
grad_norm_vs_distance.png, and the trained attention model's maps on one
associative-recall example (attention_map.png, attention_grid.png, head_view.html).
--quick: distances 5, 10, 40, pairs 2, 4, fewer steps.

Measured on a 2-core machine: a full run used 70 s of CPU time over two workers (84 s to 11
minutes of wall-clock time, depending on the machine's load); --quick used 13 s.

Every model gets the same step budget per setting and stops early once its
held-out accuracy reaches 99%. Each run is seeded on its own from --seed, so the
same seed gives the same table, whether the runs go in one process or in two
worker processes (the default on a machine with two cores or more).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import tinyattn
from tinyattn import checks, viz
from tinyattn.data import make_task
from tinyattn.models import SequenceModel
from tinyattn.train import fit, grad_norm_by_distance

MODELS = ("attention", "gru", "rnn")


@dataclass(frozen=True)
class DemoConfig:
    """Sizes of one demo run; `QUICK` and `FULL` below are the two that the CLI uses."""

    distances: tuple[int, ...]
    pairs: tuple[int, ...]
    recall_steps: int  # step budget per first-token-recall run (every model gets the same)
    assoc_steps: int  # step budget per associative-recall run
    d_model: int = 32
    batch_size: int = 32
    recall_eval_size: int = 128  # one scored token per sequence
    assoc_eval_size: int = 128  # P scored tokens per sequence
    eval_every: int = 25
    # One learning rate per kind of model, the same in every setting: attention is happiest at 3e-3
    # (associative recall stalls at 1e-2); the recurrent models learn much faster at 1e-2.
    lr: tuple[tuple[str, float], ...] = (("attention", 3e-3), ("gru", 1e-2), ("rnn", 1e-2))


FULL = DemoConfig(distances=(5, 10, 40, 80, 160), pairs=(2, 4, 8, 16), recall_steps=200, assoc_steps=600)
QUICK = DemoConfig(distances=(5, 10, 40), pairs=(2, 4), recall_steps=150, assoc_steps=400)


@dataclass
class DemoResult:
    """Accuracies {model: {setting: acc}}, steps used per run, figure paths, and the time it took."""

    recall: dict[str, dict[int, float]] = field(default_factory=dict)
    assoc: dict[str, dict[int, float]] = field(default_factory=dict)
    steps: dict[tuple[str, str, int], int] = field(default_factory=dict)
    figures: list[str] = field(default_factory=list)
    seconds: float = 0.0  # wall-clock time of the training runs
    cpu_seconds: float = 0.0  # CPU time of the training runs, summed over the workers
    recall_chance: float = 0.0
    assoc_chance: float = 0.0
    budgets: tuple[int, int] = (0, 0)  # step budgets (recall, assoc)

    def table(self) -> str:
        """The printed table: one row per model, one column per setting."""
        lines = []
        for title, res, key, chance, budget in (
                ("first-token recall", self.recall, "d", self.recall_chance, self.budgets[0]),
                ("associative recall", self.assoc, "P", self.assoc_chance, self.budgets[1])):
            settings = sorted(next(iter(res.values())))
            lines.append(f"{title} (held-out accuracy; chance {chance:.3f}; at most {budget} steps)")
            lines.append(f"  {'model':<10}" + "".join(f"{key}={s:<6}" for s in settings).rstrip())
            for model, row in res.items():
                lines.append(f"  {model:<10}" + "".join(f"{row[s]:<8.3f}" for s in settings).rstrip())
        return "\n".join(lines)


def _task(which: str, setting: int):
    if which == "recall":
        return make_task("first_token_recall", distance=setting)
    return make_task("associative_recall", n_pairs=setting)


def _run_seed(seed: int, which: str, setting: int, kind: str) -> int:
    """A seed for one run, mixed from all four so that no two runs (or --seed values) share one."""
    mix = np.random.SeedSequence([seed, ("recall", "assoc").index(which), setting, MODELS.index(kind)])
    return int(mix.generate_state(1)[0])


def _budget(job: tuple) -> int:
    """The step budget of one run (it may stop earlier, at 99% held-out accuracy)."""
    which, cfg = job[0], job[4]
    return cfg.recall_steps if which == "recall" else cfg.assoc_steps


def _train(job: tuple, on_step: Callable[[int], None] | None = None) -> dict:
    """One training run (top-level, so a worker process can run it): build, fit, report."""
    which, setting, kind, keep_model, cfg, seed = job
    cpu = time.process_time()
    task = _task(which, setting)
    run_seed = _run_seed(seed, which, setting, kind)
    tinyattn.manual_seed(run_seed)  # the model's init
    n_layers = 2 if kind == "attention" else 1  # two attention layers: associative recall needs two hops
    model = SequenceModel(kind, task.vocab_size, d_model=cfg.d_model, n_layers=n_layers, n_heads=2,
                          max_len=task.seq_len)
    hist = fit(model, task, steps=cfg.recall_steps if which == "recall" else cfg.assoc_steps,
               batch_size=cfg.batch_size, lr=dict(cfg.lr)[kind], eval_every=cfg.eval_every,
               eval_size=cfg.recall_eval_size if which == "recall" else cfg.assoc_eval_size,
               target_accuracy=0.99, seed=run_seed, progress=False, on_step=on_step)
    return {"which": which, "setting": setting, "kind": kind, "acc": hist["eval_acc"][-1],
            "steps": hist["step"][-1], "seconds": hist["seconds"], "cpu": time.process_time() - cpu,
            "chance": task.chance,
            "config": model.config, "state": model.state_dict() if keep_model else None}


class _StepQueue:
    """A worker's on_step: every few steps, put (job index, steps done) on the shared queue."""

    def __init__(self, queue, index: int, every: int = 5):
        self.queue, self.index, self.every = queue, index, every

    def __call__(self, step: int) -> None:
        if step % self.every == 0:
            self.queue.put((self.index, step))


def _train_in_worker(job: tuple, queue, index: int) -> dict:
    return _train(job, on_step=_StepQueue(queue, index))


class _Progress:
    """One line for the whole demo: steps done of all runs' budgets, runs finished, time so far.

    A run that stops early (99% held-out accuracy) counts its whole budget as done. Finished runs'
    lines are written above the bar, so the terminal stays one clean bar plus finished lines.
    """

    def __init__(self, jobs: list[tuple], show: bool, log: Callable[[str], None]):
        from tqdm.std import tqdm

        self.budgets = [_budget(j) for j in jobs]
        self.done = [0] * len(jobs)
        self.runs, self.log = 0, log
        self.bar = tqdm(total=sum(self.budgets), disable=not show, file=sys.stderr, unit="step", dynamic_ncols=True,
                        bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} steps [{elapsed}<{remaining}{postfix}]",
                        desc="training")
        self.bar.set_postfix_str(f"runs 0/{len(jobs)}")

    def step(self, index: int, steps: int) -> None:
        new = min(steps, self.budgets[index]) - self.done[index]
        if new > 0:
            self.done[index] += new
            self.bar.update(new)

    def finished(self, index: int, line: str) -> None:
        self.step(index, self.budgets[index])
        self.runs += 1
        self.bar.set_postfix_str(f"runs {self.runs}/{len(self.budgets)}")
        if self.bar.disable:
            self.log(line)
            return
        with self.bar.external_write_mode(file=sys.stderr):   # clear the bar, log, draw it again
            self.log(line)

    def close(self) -> None:
        self.bar.close()


def _run_all(jobs: list[tuple], workers: int, log: Callable[[str], None], show: bool) -> list[dict]:
    """Run the jobs in this process (workers=0) or in `workers` worker processes; log each as it finishes."""
    def line(r: dict) -> str:
        key = "d" if r["which"] == "recall" else "P"
        return (f"  {r['which']:<7} {key}={r['setting']:<4} {r['kind']:<10} acc {r['acc']:.3f}  "
                f"({r['steps']} steps, {r['seconds']:.1f}s)")

    progress = _Progress(jobs, show, log)
    try:
        if workers == 0:
            results = []
            for i, job in enumerate(jobs):
                results.append(_train(job, on_step=lambda step, i=i: progress.step(i, step)))
                progress.finished(i, line(results[-1]))
            return results
        return _run_in_workers(jobs, workers, progress, line)
    finally:
        progress.close()


def _run_in_workers(jobs: list[tuple], workers: int, progress: _Progress, line) -> list[dict]:
    import multiprocessing
    import queue as queue_module
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    # Each worker is one process with a single-threaded BLAS. These matrices are small: more BLAS
    # threads buy nothing, and on a busy machine their spin-waiting made a run 5x slower (measured).
    # The BLAS of this process can no longer be changed (numpy is loaded), which is why even
    # workers=1 trains in a fresh process.
    saved = {k: os.environ.get(k) for k in _THREAD_VARS}
    os.environ.update({k: "1" for k in _THREAD_VARS})  # inherited by the spawned workers
    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter per worker (fork would copy BLAS threads)
    try:
        with ctx.Manager() as manager, ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            steps = manager.Queue()  # (job index, steps done) from the workers: the progress line
            futures = {pool.submit(_train_in_worker, job, steps, i): i for i, job in enumerate(jobs)}
            results: list[dict | None] = [None] * len(jobs)
            pending = set(futures)
            while pending:
                done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                while True:
                    try:
                        progress.step(*steps.get_nowait())
                    except queue_module.Empty:
                        break
                for fut in done:
                    i = futures[fut]
                    results[i] = fut.result()
                    progress.finished(i, line(results[i]))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return results  # type: ignore[return-value]


_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _where(workers: int) -> str:
    return "in this process" if workers == 0 else f"in {workers} worker process{'es' if workers > 1 else ''}"


def _cost(job: tuple) -> float:
    """Rough cost of a job (sequence length x steps, recurrent models are slower), to start long jobs first."""
    which, setting, kind, _, cfg, _ = job
    T = setting + 1 if which == "recall" else 3 * setting
    steps = cfg.recall_steps if which == "recall" else cfg.assoc_steps
    return T * steps * {"attention": 0.5, "gru": 1.0, "rnn": 0.6}[kind]


def _say(line: str) -> None:
    print(line, flush=True)  # at once, also into a pipe or a log file


def run_demo(quick: bool = False, out: str | os.PathLike | None = "demo_out", seed: int = 0,
             progress: bool | None = None, config: DemoConfig | None = None, workers: int | None = None,
             log: Callable[[str], None] = _say) -> DemoResult:
    """Train every model on every setting, print the table, save figures to `out` (None: no figures).

    workers: worker processes to train in (default: 2, or 1 on a one-core machine); 0 trains in
    this process. The table does not depend on it: every run is seeded on its own from `seed`.
    progress: one line on stderr with the steps of all runs (None: when stderr is a terminal).
    """
    cfg = config or (QUICK if quick else FULL)
    seed = checks.nonneg_int("seed", seed)
    workers = min(2, os.cpu_count() or 1) if workers is None else checks.nonneg_int("workers", workers)
    if out is not None:
        os.makedirs(out, exist_ok=True)  # fail now, not after a minute of training
    start = time.perf_counter()
    log(f"tinyattn demo ({'quick' if quick else 'full'}, seed {seed}, {_where(workers)}): "
        "attention vs GRU vs tanh RNN")
    if progress is None:
        progress = sys.stderr.isatty()

    assoc_view = min(cfg.pairs, key=lambda P: abs(P - 4))  # the attention map is shown at P nearest 4
    jobs = [("recall", d, kind, d == max(cfg.distances), cfg, seed)
            for d in cfg.distances for kind in MODELS]
    jobs += [("assoc", P, kind, kind == "attention" and P == assoc_view, cfg, seed)
             for P in cfg.pairs for kind in MODELS]
    log(f"{len(jobs)} training runs, longest first; a line for each as it finishes:")
    order = sorted(range(len(jobs)), key=lambda i: -_cost(jobs[i]))  # longest first: the workers finish together
    results = _run_all([jobs[i] for i in order], workers, log, progress)

    res = DemoResult(budgets=(cfg.recall_steps, cfg.assoc_steps))
    kept = {}
    for r in results:
        table = res.recall if r["which"] == "recall" else res.assoc
        table.setdefault(r["kind"], {})[r["setting"]] = r["acc"]
        res.steps[(r["which"], r["kind"], r["setting"])] = r["steps"]
        res.cpu_seconds += r["cpu"]
        if r["which"] == "recall":
            res.recall_chance = r["chance"]
        else:
            res.assoc_chance = r["chance"]
        if r["state"] is not None:
            model = SequenceModel(**r["config"])
            model.load_state_dict(r["state"])
            kept[(r["which"], r["kind"])] = (model, _task(r["which"], r["setting"]))
    res.recall = {k: res.recall[k] for k in MODELS}  # rows in a fixed order, whatever finished first
    res.assoc = {k: res.assoc[k] for k in MODELS}
    res.seconds = time.perf_counter() - start
    log("")
    log(res.table())
    if out is not None:
        res.figures = _figures(res, kept, out, seed)
        log(f"figures in {out}/: {', '.join(os.path.basename(f) for f in res.figures)}")
    log(f"total {time.perf_counter() - start:.1f}s (training: {res.seconds:.1f}s wall, "
        f"{res.cpu_seconds:.1f}s CPU {_where(workers)})")
    return res


def _figures(res: DemoResult, kept: dict, out, seed: int) -> list[str]:
    """Save the accuracy curves, gradient norms and the attention maps; return the paths."""
    paths = []

    def save(name: str) -> str:
        p = os.path.join(out, name)
        paths.append(p)
        return p

    viz.plot_accuracy_vs_distance(res.recall, chance=res.recall_chance, title="first-token recall",
                                  path=save("accuracy_vs_distance.png"))
    viz.plot_accuracy_vs_distance(res.assoc, chance=res.assoc_chance, xlabel="key/value pairs",
                                  title="associative recall", path=save("accuracy_vs_pairs.png"))
    # How much gradient reaches each earlier token, for the models trained at the longest distance.
    norms = {}
    for kind in MODELS:
        model, task = kept[("recall", kind)]
        norms[kind] = grad_norm_by_distance(model, task.batch(32, rng=seed))
    viz.plot_grad_norm_vs_distance(norms, path=save("grad_norm_vs_distance.png"),
                                   title=f"gradient reaching earlier tokens (first-token recall, d={task.distance})")
    # The attention model's maps on one associative-recall example: in the last layer each query
    # should look at the value right after the earlier copy of its key.
    model, task = kept[("assoc", "attention")]
    batch = task.batch(1, rng=seed)
    tokens = task.decode(batch.inputs[0]).split()
    maps = model.attention_weights(batch.inputs)  # per layer (1, H, T, T)
    last = maps[-1][0].mean(axis=0)  # (T, T): the last layer, averaged over heads
    viz.plot_attention(last, tokens, tokens, path=save("attention_map.png"),
                       title=f"associative recall, P={task.n_pairs}: last layer (mean over heads)")
    viz.plot_attention_grid(maps, tokens, path=save("attention_grid.png"))
    viz.head_view(maps, tokens).save(save("head_view.html"))
    return paths
