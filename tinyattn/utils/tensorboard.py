"""``from tinyattn.utils.tensorboard import SummaryWriter``: training curves for TensorBoard.

As PyTorch's ``torch.utils.tensorboard``, this writes event files through the ``tensorboard``
package (its EventFileWriter and protocol buffers), so ``tensorboard --logdir runs`` shows them.
Without that package, importing this module raises PyTorch's ``ModuleNotFoundError`` ("No module
named 'tensorboard'") with the line that installs it.

Written as PyTorch writes them (the event files hold the same bytes once the wall time is zeroed):
scalars (``add_scalar``, ``add_scalars``), histograms (``add_histogram``, with PyTorch's bins), text
(``add_text``), images (``add_image``, ``add_images``: PNG through Pillow, a batch tiled 8 to a row),
matplotlib figures (``add_figure``) and hyperparameters (``add_hparams``: a run of its own under
log_dir). Images need Pillow and figures matplotlib, imported when first used, as in PyTorch.
``add_graph`` writes the graph of one forward pass with PyTorch's scope names (PyTorch draws a
TorchScript trace, which tinyattn has not, so the node names differ: tensorboard_graph.py). Audio, video and embeddings raise NotImplementedError naming what to use instead.
"""
from __future__ import annotations

import io
import os
import socket
import time
from datetime import datetime

import numpy as np

try:
    import tensorboard
except ImportError as e:  # PyTorch's own error, with the install line
    raise ModuleNotFoundError("No module named 'tensorboard' (SummaryWriter writes its event files with the "
                              "tensorboard package, as PyTorch's does: pip install tensorboard)",
                              name="tensorboard") from e
if tuple(int(p) for p in getattr(tensorboard, "__version__", "0").split(".")[:2] if p.isdigit()) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

from tensorboard.compat.proto.event_pb2 import Event, SessionLog, TaggedRunMetadata  # noqa: E402
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata  # noqa: E402
from tensorboard.compat.proto.tensor_pb2 import TensorProto  # noqa: E402
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto  # noqa: E402
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData  # noqa: E402
from tensorboard.summary.writer.event_file_writer import EventFileWriter  # noqa: E402

from ..tensor import Tensor  # noqa: E402

__all__ = ["FileWriter", "SummaryWriter"]


def _array(x) -> np.ndarray:
    return x.detach().numpy() if isinstance(x, Tensor) else np.asarray(x)


def _scalar(value, who: str) -> float:
    arr = _array(value).squeeze()
    if arr.ndim != 0:
        raise ValueError(f"{who}: expected one number, got a value of shape {_array(value).shape}")
    return float(arr)


def _default_bins() -> np.ndarray:
    """TensorBoard's default histogram edges: +-1e-12 growing by 10% per bin (by repeated multiplication,
    so the edges are the very floats PyTorch uses) up to 1e20, and 0 between them."""
    edges, v = [], 1e-12
    while v < 1e20:
        edges.append(v)
        v *= 1.1
    return np.array([-e for e in reversed(edges)] + [0.0] + edges)


_DEFAULT_BINS = _default_bins()


def _histogram(values: np.ndarray, bins, max_bins: int | None) -> HistogramProto:
    """Counts over ``bins`` (np.histogram's meaning; 'tensorflow' is TensorBoard's default bins), cut
    to the bins from the first to the last non-empty one, plus one empty bin before: TensorBoard
    stores only right edges, so that bin's edge is where the histogram starts."""
    values = values.reshape(-1).astype(float)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, edges = np.histogram(values, bins=_DEFAULT_BINS if isinstance(bins, str) and bins == "tensorflow"
                                 else bins)
    if max_bins is not None and len(counts) > max_bins:  # merge neighbours, `step` at a time
        step = len(counts) // max_bins
        counts = np.pad(counts, (0, -len(counts) % step)).reshape(-1, step).sum(1)
        edges = np.append(edges[:-1:step], edges[-1])
    used = np.flatnonzero(counts)
    first, last = int(used[0]), int(used[-1]) + 1
    counts = np.concatenate([[0], counts[:last]]) if first == 0 else counts[first - 1:last]
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=edges[first:last + 1].tolist(),
                          bucket=counts.tolist())


class FileWriter:
    """One event file in ``log_dir`` (PyTorch's FileWriter): events are queued and flushed by tensorboard."""

    def __init__(self, log_dir, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None) -> None:
        self.add_event(Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile, walltime=None) -> None:
        """A (GraphDef, RunMetadata) pair: the graph, then its step stats tagged 'step1', as PyTorch's."""
        graph, stepstats = graph_profile
        self.add_event(Event(graph_def=graph.SerializeToString()), None, walltime)
        run = TaggedRunMetadata(tag="step1", run_metadata=stepstats.SerializeToString())
        self.add_event(Event(tagged_run_metadata=run), None, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()


class SummaryWriter:
    """SummaryWriter(log_dir=None, comment='', purge_step=None, max_queue=10, flush_secs=120, filename_suffix='').

    ``log_dir`` defaults to runs/<month><day>_<hour>-<minute>-<second>_<hostname><comment>, as PyTorch's."""

    def __init__(self, log_dir=None, comment: str = "", purge_step=None, max_queue: int = 10,
                 flush_secs: int = 120, filename_suffix: str = "") -> None:
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir, self.purge_step = str(log_dir), purge_step
        self.max_queue, self.flush_secs, self.filename_suffix = max_queue, flush_secs, filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()

    def _get_file_writer(self) -> FileWriter:
        """The writer of log_dir's event file (made again after close(), as PyTorch's)."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:  # TensorBoard hides what an earlier run wrote from this step on
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        return self.log_dir

    def add_scalar(self, tag: str, scalar_value, global_step=None, walltime=None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """One point of the curve ``tag``: ``writer.add_scalar('loss/train', loss.item(), step)``."""
        value = _scalar(scalar_value, "add_scalar")
        if new_style:
            tensor = TensorProto(double_val=[value], dtype="DT_DOUBLE") if double_precision else \
                TensorProto(float_val=[value], dtype="DT_FLOAT")
            meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
            summary = Summary(value=[Summary.Value(tag=tag, tensor=tensor, metadata=meta)])
        else:
            summary = Summary(value=[Summary.Value(tag=tag, simple_value=value)])
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step=None, walltime=None) -> None:
        """Several curves in one chart: each goes to its own run, log_dir/<main_tag>_<tag>, as in PyTorch."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            run = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            if run not in self.all_writers:
                self.all_writers[run] = FileWriter(run, self.max_queue, self.flush_secs, self.filename_suffix)
            summary = Summary(value=[Summary.Value(tag=main_tag, simple_value=_scalar(value, "add_scalars"))])
            self.all_writers[run].add_summary(summary, global_step, walltime)

    def add_histogram(self, tag: str, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None) -> None:
        """The distribution of ``values`` (e.g. a layer's weights) at this step."""
        hist = _histogram(_array(values), bins, max_bins)
        self._get_file_writer().add_summary(Summary(value=[Summary.Value(tag=tag, histo=hist)]), global_step,
                                            walltime)

    def add_text(self, tag: str, text_string: str, global_step=None, walltime=None) -> None:
        """Text (Markdown) shown under TensorBoard's Text tab, as ``<tag>/text_summary``."""
        meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
            plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
        tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf_8")],
                             tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
        summary = Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=tensor)])
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_graph(self, model, input_to_model=None, verbose: bool = False, use_strict_trace: bool = True) -> None:
        """The graph of one forward pass of ``model`` on ``input_to_model`` (ops grouped by module), for the
        Graphs tab. PyTorch draws a TorchScript trace; tinyattn draws the autograd graph the forward records
        (tinyattn/utils/tensorboard_graph.py), with PyTorch's scope names: the nodes' names differ."""
        from .tensorboard_graph import graph
        self._get_file_writer().add_graph(graph(model, input_to_model, verbose))

    def _unsupported(self, name: str, instead: str):
        raise NotImplementedError(f"SummaryWriter.{name} is not available in tinyattn; {instead}")

    def add_image(self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "CHW") -> None:
        """One picture: (3, H, W) by default, or as ``dataformats`` says ('HWC', 'HW', ...); floats are
        read in [0, 1], uint8 in [0, 255]."""
        self._get_file_writer().add_summary(_image(tag, img_tensor, dataformats), global_step, walltime)

    def add_images(self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "NCHW") -> None:
        """A batch (N, 3, H, W) shown as one picture, 8 images to a row."""
        self._get_file_writer().add_summary(_image(tag, img_tensor, dataformats), global_step, walltime)

    def add_figure(self, tag: str, figure, global_step=None, close: bool = True, walltime=None) -> None:
        """A matplotlib figure (or a list of them, tiled) drawn into an image; closed unless close=False."""
        many = isinstance(figure, list)
        pixels = np.stack([_render(f, close) for f in figure]) if many else _render(figure, close)
        self.add_image(tag, pixels, global_step, walltime, dataformats="NCHW" if many else "CHW")

    def add_embedding(self, *args, **kwargs):
        self._unsupported("add_embedding", "write the vectors with numpy.savetxt for TensorBoard's projector")

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None) -> None:
        """The settings of this run and its final metrics, for TensorBoard's HParams tab: written to
        log_dir/<run_name> (default: the time now), with each metric also written as a scalar there."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        summaries = _hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as run:
            for summary in summaries:
                run.file_writer.add_summary(summary, global_step)
            for tag, value in metric_dict.items():
                run.add_scalar(tag, value, global_step)

    def flush(self) -> None:
        """Write everything queued to disk now."""
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self) -> None:
        """Flush and close every event file; a later add_* opens a new one."""
        for writer in (self.all_writers or {}).values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --- images, figures and hyperparameters ----------------------------------------------------------
def _grid(batch: np.ndarray) -> np.ndarray:
    """(N, C, H, W) with C 1 or 3 -> (3, rows H, cols W): the images left to right, 8 to a row, black after."""
    if batch.shape[1] == 1:
        batch = np.concatenate([batch] * 3, axis=1)  # grey -> RGB
    if batch.ndim != 4 or batch.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = batch.shape
    cols = min(n, 8)
    rows = -(-n // cols)
    canvas = np.zeros((3, rows * h, cols * w), dtype=batch.dtype)
    for i in range(n):
        r, c = divmod(i, cols)
        canvas[:, r * h:(r + 1) * h, c * w:(c + 1) * w] = batch[i]
    return canvas


def _to_hwc(arr: np.ndarray, dataformats: str) -> np.ndarray:
    """Any of NCHW-like, CHW-like, HW-like layouts -> (H, W, C), as PyTorch's writer reads them."""
    if len(set(dataformats)) != len(dataformats):
        raise AssertionError(f"You can not use the same dimension shorthand twice. input_format: {dataformats}")
    if arr.ndim != len(dataformats):
        raise AssertionError(f"size of input tensor and input format are different. tensor shape: {arr.shape}, "
                             f"input_format: {dataformats}")
    fmt = dataformats.upper()
    if len(fmt) == 4:
        return _grid(arr.transpose([fmt.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = arr.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, axis=2) if hwc.shape[2] == 1 else hwc
    return np.stack([arr.transpose([fmt.find(c) for c in "HW"])] * 3, axis=2)


def _image(tag: str, img, dataformats: str) -> Summary:
    """A PNG of the image(s): floats scaled by 255, uint8 as they are, clipped to [0, 255]."""
    if isinstance(img, (Tensor, np.ndarray)) or np.isscalar(img):
        arr = _array(img) if not np.isscalar(img) else np.array([img])
    else:
        raise NotImplementedError(f"Got {type(img)}, but numpy array or torch tensor are expected.")
    hwc = _to_hwc(arr, dataformats)
    scale = 1 if hwc.dtype == np.uint8 else 255
    pixels = (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    from PIL import Image  # Pillow, imported when first needed, as PyTorch's writer does

    h, w, c = pixels.shape
    picture = Image.fromarray(pixels).resize((w, h), Image.Resampling.LANCZOS)  # PyTorch's rescale=1 resize
    buf = io.BytesIO()
    picture.save(buf, format="PNG")
    png = Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=buf.getvalue())
    return Summary(value=[Summary.Value(tag=tag, image=png)])


def _render(figure, close: bool) -> np.ndarray:
    """A matplotlib figure drawn by the Agg renderer -> (3, H, W) uint8."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    w, h = figure.canvas.get_width_height()
    rgba = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(h, w, 4)  # (H, W, 4)
    if close:
        plt.close(figure)
    return np.moveaxis(rgba[:, :, :3], 2, 0)  # (3, H, W)


def _hparams(hparam_dict: dict, metric_dict: dict, domains) -> list:
    """The HParams plugin's three records: the experiment (which settings and metrics exist), this session's
    settings, and its end (success)."""
    from google.protobuf import struct_pb2
    from tensorboard.plugins.hparams import metadata
    from tensorboard.plugins.hparams.api_pb2 import DataType, Experiment, HParamInfo, MetricInfo, MetricName, Status
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData, SessionEndInfo, SessionStartInfo

    domains = domains or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in domains.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as hparam_dict[{k}].")
    infos, start = [], SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        tensor = isinstance(v, Tensor)
        if tensor:
            v = float(_array(v)[0])  # PyTorch reads a tensor's first element, and lists no domain for it
        elif not isinstance(v, (int, float, str)):  # (a bool is an int: stored as a number, as PyTorch does)
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        field, kind = ("string_value", "DATA_TYPE_STRING") if isinstance(v, str) else ("number_value",
                                                                                      "DATA_TYPE_FLOAT64")
        setattr(start.hparams[k], field, v)
        domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d}) for d in domains[k]]) \
            if k in domains and not tensor else None
        infos.append(HParamInfo(name=k, type=DataType.Value(kind), domain_discrete=domain))

    def record(tag: str, **content) -> Summary:
        data = HParamsPluginData(version=metadata.PLUGIN_DATA_VERSION, **content).SerializeToString()
        meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=metadata.PLUGIN_NAME, content=data))
        return Summary(value=[Summary.Value(tag=tag, metadata=meta)])
    experiment = Experiment(hparam_infos=infos, metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict])
    return [record(metadata.EXPERIMENT_TAG, experiment=experiment),
            record(metadata.SESSION_START_INFO_TAG, session_start_info=start),
            record(metadata.SESSION_END_INFO_TAG, session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS")))]
