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


def _pictures(Writer, lib, log_dir, close_figures=True):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(1)
    chw = rng.random((3, 6, 5))
    with Writer(log_dir) as w:
        w.add_image("chw", lib.tensor(chw), 0)
        w.add_image("chw32", lib.tensor(chw.astype(np.float32)), 1)
        w.add_image("hwc_u8", (chw * 255).astype(np.uint8).transpose(1, 2, 0), 2, dataformats="HWC")
        w.add_image("hw", lib.tensor(chw[0] * 3 - 1), 3, dataformats="HW")  # out of [0, 1]: clipped
        w.add_image("grey", chw[:1], 4)
        w.add_image("rgba", rng.random((4, 3, 2)), 5, dataformats="HWC")
        w.add_images("batch", lib.tensor(rng.random((11, 3, 4, 3))), 6)
        w.add_images("nhwc", rng.random((2, 4, 3, 1)), 7, dataformats="NHWC")
        for step in range(2):
            fig = plt.figure(figsize=(2, 1.5), dpi=40)
            plt.plot([0, 1, 2], [step, 2, 1])
            w.add_figure("curve", fig, step, close=close_figures)
        figs = [plt.figure(figsize=(1, 1), dpi=30) for _ in range(3)]
        for i, f in enumerate(figs):
            f.gca().bar([0, 1], [i, 1])
        w.add_figure("figs", figs, 9)
        w.add_hparams({"lr": 0.1, "layers": 2, "act": "gelu", "bn": True, "t": lib.tensor([0.5]), "skip": None},
                      {"hparam/acc": 0.9, "hparam/loss": lib.tensor(0.25)}, run_name="run1", global_step=3)
        w.add_hparams({"lr": 0.01, "opt": "adam"}, {"hparam/acc": 0.5},
                      hparam_domain_discrete={"lr": [0.01, 0.1], "opt": ["adam", "sgd"]}, run_name="run2")
    return plt.get_fignums()


def test_images_figures_and_hparams_are_the_same_records(tmp_path):
    open_t = _pictures(TorchWriter, torch, tmp_path / "torch")
    open_a = _pictures(SummaryWriter, tinyattn, tmp_path / "mine")
    theirs, mine = _records(tmp_path / "torch"), _records(tmp_path / "mine")
    assert len(theirs) == 23  # 3 file headers, 8 images, 3 figures, 2 x 3 hparams records, 3 metric scalars
    assert [d for d, _ in mine] == [d for d, _ in theirs]
    assert mine == theirs
    assert open_t == open_a == []  # every figure closed


def test_image_and_hparams_errors_are_pytorchs(tmp_path):
    calls = [lambda w, t: w.add_image("x", np.zeros((3, 4, 4)), dataformats="CCW"),
             lambda w, t: w.add_image("x", np.zeros((3, 4)), dataformats="CHW"),
             lambda w, t: w.add_images("x", np.zeros((2, 4, 4, 4))),
             lambda w, t: w.add_image("x", [[0.0]]),
             lambda w, t: w.add_hparams([("lr", 1)], {}),
             lambda w, t: w.add_hparams({"lr": np.float32(1)}, {}),
             lambda w, t: w.add_hparams({"lr": 1.0}, {}, hparam_domain_discrete={"lr": [1, 2]}),
             lambda w, t: w.add_hparams({"lr": 1.0}, {}, hparam_domain_discrete=[1])]

    def outcome(Writer, lib, where, call):
        with Writer(where) as w:
            try:
                call(w, lib)
            except Exception as e:  # noqa: BLE001  (the error is what is compared)
                return type(e).__name__, " ".join(str(e).split())
        return None

    for i, call in enumerate(calls):
        assert outcome(SummaryWriter, tinyattn, tmp_path / f"m{i}", call) == \
            outcome(TorchWriter, torch, tmp_path / f"t{i}", call)


def _graph_events(Writer, lib, log_dir):
    from tensorboard.compat.proto.config_pb2 import RunMetadata
    from tensorboard.compat.proto.graph_pb2 import GraphDef

    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.act = lib.nn.Linear(3, 4), lib.nn.ReLU()

        def forward(self, x):
            return self.act(self.fc(x))

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.block, self.head, self.norm = Block(), lib.nn.Linear(4, 2), lib.nn.LayerNorm(4)

        def forward(self, x):
            return self.head(self.norm(self.block(x))).sum(-1)

    net = Net()
    with Writer(log_dir) as w:
        w.add_graph(net, lib.ones(5, 3))
    assert net.training  # put back in training mode after the eval-mode pass
    (f,) = glob.glob(os.path.join(log_dir, "events.out.tfevents.*"))
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event

    events = [Event.FromString(r) for r in RawEventFileLoader(f).Load()][1:]  # raw: as written, after the header
    g, meta = GraphDef(), RunMetadata()
    g.ParseFromString(events[0].graph_def)
    meta.ParseFromString(events[1].tagged_run_metadata.run_metadata)
    shape = lambda n: [d.size for d in n.attr["_output_shapes"].list.shape[0].dim]  # noqa: E731
    io = {n.name.split("/")[0]: (n.op, shape(n)) for n in g.node if n.op == "IO Node"}
    # the scopes that hold ops (PyTorch: aten:: ops; tinyattn: autograd ops), and the parameters' scopes
    ops = {n.name.rpartition("/")[0] for n in g.node if n.op.startswith("aten::") or
           (n.op not in ("IO Node", "prim::GetAttr", "prim::Constant", "prim::ListConstruct") and lib is tinyattn)}
    weights = {n.name.rpartition("/")[0] for n in g.node if n.op == "prim::GetAttr" and
               n.attr["attr"].s.decode().endswith(("weight }", "bias }"))}
    return len(events), events[1].tagged_run_metadata.tag, meta.SerializeToString(), g.versions.producer, io, ops, \
        weights


def test_add_graph_draws_the_same_modules_inputs_and_outputs(tmp_path):
    theirs = _graph_events(TorchWriter, torch, str(tmp_path / "torch"))
    mine = _graph_events(SummaryWriter, tinyattn, str(tmp_path / "mine"))
    assert theirs[4] == {"input": ("IO Node", [5, 3]), "output": ("IO Node", [5])}
    assert theirs[5] == {"Net", "Net/Block[block]/Linear[fc]", "Net/Block[block]/ReLU[act]", "Net/LayerNorm[norm]",
                         "Net/Linear[head]"}
    assert mine == theirs


def test_images_decode_to_the_pixels_and_hparams_parse_without_pytorch(tmp_path):
    """Independent of torch's writer: the PNGs hold the scaled, clipped, tiled pixels; the hparams records
    name the settings and metrics."""
    import io as _io

    from PIL import Image
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    rng = np.random.default_rng(2)
    batch = rng.random((10, 3, 2, 3)) * 1.2 - 0.1  # some values outside [0, 1]: clipped
    with SummaryWriter(tmp_path) as w:
        w.add_images("b", tinyattn.tensor(batch), 0)
        w.add_image("g", (batch[0, 0] * 255).clip(0, 255).astype(np.uint8), 1, dataformats="HW")
        w.add_hparams({"lr": 0.5, "act": "relu"}, {"acc": 0.75}, run_name="r")
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event

    parsed = [Event.FromString(r) for f in sorted(glob.glob(os.path.join(tmp_path, "**", "events.out.tfevents.*"),
                                                            recursive=True)) for r in RawEventFileLoader(f).Load()]
    images = {v.tag: v.image for e in parsed if e.HasField("summary") for v in e.summary.value if v.HasField("image")}
    pix = (batch.astype(np.float32) * 255).clip(0, 255).astype(np.uint8)  # (10, 3, 2, 3)
    grid = np.zeros((3, 2 * 2, 8 * 3), np.uint8)  # 8 to a row: 2 rows of (2, 3) pictures
    for i in range(10):
        r, c = divmod(i, 8)
        grid[:, r * 2:(r + 1) * 2, c * 3:(c + 1) * 3] = pix[i]
    got = np.asarray(Image.open(_io.BytesIO(images["b"].encoded_image_string)))
    assert (images["b"].height, images["b"].width, images["b"].colorspace) == (4, 24, 3)
    np.testing.assert_array_equal(got, grid.transpose(1, 2, 0))
    grey = np.asarray(Image.open(_io.BytesIO(images["g"].encoded_image_string)))
    np.testing.assert_array_equal(grey, np.stack([(batch[0, 0] * 255).clip(0, 255).astype(np.uint8)] * 3, axis=2))
    plugin = [HParamsPluginData.FromString(v.metadata.plugin_data.content) for e in parsed if e.HasField("summary")
              for v in e.summary.value if v.metadata.plugin_data.plugin_name == "hparams"]
    assert [h.name for h in plugin[0].experiment.hparam_infos] == ["lr", "act"]
    assert [m.name.tag for m in plugin[0].experiment.metric_infos] == ["acc"]
    start = plugin[1].session_start_info.hparams
    assert start["lr"].number_value == 0.5 and start["act"].string_value == "relu"
    assert plugin[2].session_end_info.status == 1  # STATUS_SUCCESS
