"""``SummaryWriter`` on tensorboardX, taking glassgrad tensors where torch's takes torch tensors.

torch's ``torch.utils.tensorboard.SummaryWriter`` and tensorboardX's share their methods and event
format; tensorboardX only recognises torch, NumPy and a few other array types, so each ``add_*``
call converts glassgrad tensors (also inside lists, tuples and dicts) to NumPy first. torch's
parameter names are kept where they differ (``log_dir``, ``run_name``, ``new_style``).
"""

from __future__ import annotations

import functools

import numpy as np
import tensorboardX

from ... import dtypes
from ...tensor import Tensor


def to_numpy(value):
    """``value`` with every glassgrad Tensor replaced by a NumPy array (bfloat16 as float32)."""
    if isinstance(value, Tensor):
        arr = value.detach()._array
        return arr.astype(np.float32) if value.dtype is dtypes.bfloat16 else np.array(arr)
    if isinstance(value, dict):
        return {k: to_numpy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_numpy(v) for v in value)
    return value


def _image(value):
    """torch's conversion to uint8: float images scaled by 255 and clipped to [0, 255]
    (tensorboardX would wrap values outside [0, 1] around instead)."""
    arr = np.asarray(to_numpy(value))
    if arr.dtype == np.uint8:
        return arr
    return (arr.astype(np.float32) * 255.0).clip(0, 255).astype(np.uint8)


def _converting(method):
    @functools.wraps(method)
    def call(self, *args, **kwargs):
        return method(self, *to_numpy(args), **to_numpy(kwargs))

    return call


_CONVERTED = (
    "add_histogram", "add_histogram_raw",
    "add_video", "add_audio", "add_text", "add_embedding",
    "add_pr_curve", "add_pr_curve_raw", "add_mesh",
)


class SummaryWriter(tensorboardX.SummaryWriter):
    """Write TensorBoard event files under ``log_dir`` (default ``runs/<date>_<host><comment>``)
    (``torch.utils.tensorboard.SummaryWriter``).

    ``add_scalar(s)``, ``add_histogram``, ``add_image(s)``, ``add_text``, ``add_hparams``,
    ``add_graph`` (glassgrad's autograd graph of one forward), ``add_embedding``, ``add_pr_curve``
    and the rest take glassgrad tensors, NumPy arrays or numbers; ``flush``/``close`` and ``with``
    work as in torch. Example::

        >>> with SummaryWriter("runs/demo") as writer:  # doctest: +SKIP
        ...     writer.add_scalar("loss", glassgrad.tensor(0.5), global_step=1)
    """

    def __init__(self, log_dir=None, comment: str = "", purge_step=None, max_queue: int = 10,
                 flush_secs: int = 120, filename_suffix: str = "", **kwargs):
        super().__init__(logdir=log_dir, comment=comment, purge_step=purge_step,
                         max_queue=max_queue, flush_secs=flush_secs,
                         filename_suffix=filename_suffix, **kwargs)

    def get_logdir(self) -> str:
        """The directory the event files are written to."""
        return self.logdir

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None,
                   new_style: bool = False, double_precision: bool = False):
        """Log one number (a Python number, NumPy scalar or one-element tensor) under ``tag``.

        NOTE: ``new_style``/``double_precision`` select torch's tensor-proto encoding; tensorboardX
        writes the classic ``simple_value``, which TensorBoard shows the same way."""
        if isinstance(scalar_value, Tensor):
            scalar_value = scalar_value.item()
        super().add_scalar(tag, scalar_value, global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Log several numbers under ``main_tag``, each in its own run directory
        ``<log_dir>/<main_tag>_<tag>`` as torch lays them out (tensorboardX nests them instead)."""
        from tensorboardX.summary import scalar
        from tensorboardX.writer import FileWriter

        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            path = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            if path not in self.all_writers:
                self.all_writers[path] = FileWriter(
                    path, self._max_queue, self._flush_secs, self._filename_suffix
                )
            value = value.item() if isinstance(value, Tensor) else value
            self.all_writers[path].add_summary(scalar(main_tag, value), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Log one image (float in [0, 1] or uint8; ``dataformats`` CHW, HWC, HW...)."""
        super().add_image(tag, _image(img_tensor), global_step, walltime, dataformats)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """Log a batch of images as one grid (``dataformats`` NCHW, NHWC...)."""
        super().add_images(tag, _image(img_tensor), global_step, walltime, dataformats)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None, walltime=None,
                             rescale=1, dataformats="CHW", labels=None):
        """Log an image with boxes ``box_tensor`` (N x 4: x1, y1, x2, y2) drawn on it."""
        super().add_image_with_boxes(tag, _image(img_tensor), to_numpy(box_tensor), global_step,
                                     walltime, rescale, dataformats, labels)

    def flush(self) -> None:
        """Write every pending event to disk before returning, as torch's ``flush`` does.

        NOTE: tensorboardX's flush leaves events queued for its writer thread; stopping that
        thread drains the queue (what its ``close`` does), and a new one takes over the same file.
        """
        for file_writer in (self.all_writers or {}).values():
            events = getattr(file_writer, "event_writer", None)
            worker = getattr(events, "_worker", None)
            if worker is None or events._closed:
                continue
            worker.stop()
            events._ev_writer.flush()
            events._worker = type(worker)(events._event_queue, events._ev_writer,
                                          events._flush_secs)
            events._worker.start()
        super().flush()

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None,
                    global_step=None):
        """Log one hyperparameter run and its metrics, in the sub-directory ``run_name`` (default:
        the time), as torch does. TypeError unless both are dicts. NOTE: ``hparam_domain_discrete``
        is accepted but not written (tensorboardX's hparams summary has no domains)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        def plain(values: dict) -> dict:
            return {k: v.item() if isinstance(v, Tensor) else v for k, v in values.items()}

        super().add_hparams(plain(hparam_dict), plain(metric_dict), name=run_name,
                            global_step=global_step)

    def add_graph(self, model, input_to_model=None, verbose: bool = False,
                  use_strict_trace: bool = True):
        """Draw the graph of one forward of ``model`` in TensorBoard's Graphs tab. torch traces
        the model with TorchScript; glassgrad runs it once and writes its autograd graph (one node
        per backward Node, with the parameters by name and the inputs and outputs)."""
        from ._graph import graph_def

        if input_to_model is None:
            inputs = ()
        elif isinstance(input_to_model, (list, tuple)):
            inputs = tuple(input_to_model)
        else:
            inputs = (input_to_model,)
        graph = graph_def(model, inputs)
        if verbose:
            print(graph)
        from tensorboardX.proto import event_pb2

        self._get_file_writer().add_event(event_pb2.Event(graph_def=graph.SerializeToString()))


for _name in _CONVERTED:
    setattr(SummaryWriter, _name, _converting(getattr(tensorboardX.SummaryWriter, _name)))
