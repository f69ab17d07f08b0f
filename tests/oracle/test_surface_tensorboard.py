"""utils.tensorboard.SummaryWriter against PyTorch's: the event files hold the same records."""
import glob
import os

import numpy as np
import torch
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
from torch.utils.tensorboard import SummaryWriter as TorchWriter

import tinyattn
from tinyattn.utils.tensorboard import SummaryWriter


def _records(log_dir) -> list:
    """Every event of every run under log_dir, wall time zeroed (the one field that must differ)."""
    out = []
    for f in sorted(glob.glob(os.path.join(log_dir, "**", "events.out.tfevents.*"), recursive=True)):
        for e in EventFileLoader(f).Load():
            e.wall_time = 0
            out.append((os.path.relpath(os.path.dirname(f), log_dir), e.SerializeToString()))
    return out


def _write(Writer, lib, log_dir, values):
    with Writer(log_dir, purge_step=0) as w:
        for step in range(3):
            w.add_scalar("loss/train", lib.tensor(0.5 * step + 0.25), step)
            w.add_scalar("lr", 0.1 / (step + 1), step, new_style=True)
            w.add_scalar("lr64", 0.1 / (step + 1), step, new_style=True, double_precision=True)
            w.add_scalars("run", {"a": step, "b": lib.tensor(2.0 * step)}, step)
        w.add_histogram("weights", lib.tensor(values), 1)
        w.add_histogram("bins10", values, 2, bins=10)
        w.add_histogram("merged", values, 3, max_bins=7)
        w.add_text("note", "hello **world**", 4)


def test_event_files_hold_the_same_records(tmp_path):
    values = np.random.default_rng(0).standard_normal(1000)
    _write(TorchWriter, torch, tmp_path / "torch", values)
    _write(SummaryWriter, tinyattn, tmp_path / "mine", values)
    theirs, mine = _records(tmp_path / "torch"), _records(tmp_path / "mine")
    assert len(theirs) == 24  # 2 file headers, 2 purge records, 12 + 6 scalars, 3 histograms, 1 text
    assert mine == theirs


def test_default_log_dir_and_reopen_after_close(tmp_path, monkeypatch):
    (tmp_path / "torch").mkdir()
    monkeypatch.chdir(tmp_path / "torch")
    t = TorchWriter(comment="_lr0.1")
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    assert os.path.dirname(w.get_logdir()) == "runs" and w.get_logdir().endswith("_lr0.1")
    assert len(w.get_logdir()) == len(t.get_logdir())
    w.close()
    w.add_scalar("x", 1.0, 0)  # a closed writer opens a new event file, as PyTorch's
    w.close()
    assert len(glob.glob(os.path.join(w.get_logdir(), "events.out.tfevents.*"))) == 2
