"""torch.utils.tensorboard.SummaryWriter on glassgrad: every add_* call is read back from the
event files (TFRecord framing, tensorboardX's Event protos) and compared with the values given,
laid out and converted as torch's writer does (torch's own writer needs the tensorboard package;
where it is importable the same calls are compared file by file)."""

from __future__ import annotations

import io
import os
import struct

import numpy as np
import pytest

import glassgrad

tensorboardX = pytest.importorskip("tensorboardX")
from tensorboardX.proto import event_pb2  # noqa: E402

from glassgrad.utils.tensorboard import SummaryWriter  # noqa: E402


def read_events(directory: str) -> list:
    """Every Event in the event files directly in ``directory``."""
    events = []
    for name in sorted(os.listdir(directory)):
        if not name.startswith("events.out.tfevents"):
            continue
        with open(os.path.join(directory, name), "rb") as f:
            data = f.read()
        pos = 0
        while pos < len(data):
            (length,) = struct.unpack("<Q", data[pos:pos + 8])
            events.append(event_pb2.Event.FromString(data[pos + 12:pos + 12 + length]))
            pos += 12 + length + 4
    return events


def summaries(directory: str) -> list:
    """(step, tag, Summary.Value) of every summary value written in ``directory``."""
    return [(e.step, v.tag, v) for e in read_events(directory) if e.HasField("summary")
            for v in e.summary.value]


def test_scalars(tmp_path):
    with SummaryWriter(str(tmp_path)) as writer:
        for step in range(3):
            writer.add_scalar("loss/train", glassgrad.tensor(0.5 / (step + 1)), step)
        writer.add_scalar("lr", 0.01, 7)
        writer.add_scalar("acc", np.float32(0.25), global_step=8)
    got = [(step, tag, v.simple_value) for step, tag, v in summaries(str(tmp_path))]
    assert got == [(0, "loss/train", 0.5), (1, "loss/train", np.float32(0.25)),
                   (2, "loss/train", np.float32(0.5 / 3)), (7, "lr", np.float32(0.01)),
                   (8, "acc", 0.25)]


def test_add_scalars_uses_torchs_run_directories(tmp_path):
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_scalars("loss/all", {"train": glassgrad.tensor(1.5), "val": 2.5}, 4)
    for run, value in (("loss_all_train", 1.5), ("loss_all_val", 2.5)):
        assert [(s, t, v.simple_value) for s, t, v in summaries(str(tmp_path / run))] == [
            (4, "loss/all", value)]


def test_histogram(tmp_path):
    values = np.random.default_rng(0).standard_normal(500).astype(np.float32)
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_histogram("weights", glassgrad.tensor(values), 1, bins="auto")
    ((step, tag, value),) = summaries(str(tmp_path))
    histo = value.histo
    assert (step, tag, histo.num) == (1, "weights", 500)
    assert histo.min == pytest.approx(values.min()) and histo.max == pytest.approx(values.max())
    assert histo.sum == pytest.approx(float(values.astype(np.float64).sum()), rel=1e-6)
    counts, _ = np.histogram(values.astype(float), bins="auto")
    assert sum(histo.bucket) == counts.sum() == 500


def _decoded(value) -> np.ndarray:
    Image = pytest.importorskip("PIL.Image")

    return np.asarray(Image.open(io.BytesIO(value.image.encoded_image_string)))


def test_images_convert_as_torch_does(tmp_path):
    rng = np.random.default_rng(1)
    chw = rng.uniform(-0.2, 1.2, (3, 4, 5)).astype(np.float32)  # outside [0, 1]: torch clips
    hwc = rng.integers(0, 256, (4, 5, 3)).astype(np.uint8)
    batch = rng.uniform(0, 1, (2, 3, 4, 5)).astype(np.float32)
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_image("chw", glassgrad.tensor(chw), 0)
        writer.add_image("hwc", glassgrad.tensor(hwc), 1, dataformats="HWC")
        writer.add_images("batch", glassgrad.tensor(batch), 2)
    got = {tag: (step, value) for step, tag, value in summaries(str(tmp_path))}
    expected_chw = (chw * 255.0).clip(0, 255).astype(np.uint8).transpose(1, 2, 0)
    np.testing.assert_array_equal(_decoded(got["chw"][1]), expected_chw)
    np.testing.assert_array_equal(_decoded(got["hwc"][1]), hwc)
    grid = _decoded(got["batch"][1])
    assert (got["batch"][1].image.height, got["batch"][1].image.width) == grid.shape[:2]
    first = (batch[0] * 255).astype(np.uint8).transpose(1, 2, 0)
    np.testing.assert_array_equal(grid[:4, :5], first)
    assert [got[t][0] for t in ("chw", "hwc", "batch")] == [0, 1, 2]


def test_text_and_hparams(tmp_path):
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_text("notes", "lr **0.1**", 3)
        writer.add_hparams({"lr": 0.1, "optim": "sgd", "layers": glassgrad.tensor(2)},
                           {"hparam/accuracy": glassgrad.tensor(0.75)}, run_name="trial")
        with pytest.raises(TypeError, match="hparam_dict and metric_dict should be dictionary"):
            writer.add_hparams([("lr", 0.1)], {})
    ((step, tag, value),) = summaries(str(tmp_path))
    assert (step, tag) == (3, "notes/text_summary")
    assert value.tensor.string_val == [b"lr **0.1**"]
    trial = summaries(str(tmp_path / "trial"))
    tags = [tag for _, tag, _ in trial]
    assert "_hparams_/experiment" in tags and "_hparams_/session_start_info" in tags
    assert [v.simple_value for _, tag, v in trial if tag == "hparam/accuracy"] == [0.75]
    from tensorboardX.proto.plugin_hparams_pb2 import HParamsPluginData

    start = next(v for _, tag, v in trial if tag == "_hparams_/session_start_info")
    info = HParamsPluginData.FromString(start.metadata.plugin_data.content).session_start_info
    assert info.hparams["lr"].number_value == pytest.approx(0.1)
    assert info.hparams["optim"].string_value == "sgd"
    assert info.hparams["layers"].number_value == 2


def test_graph_is_the_autograd_graph(tmp_path):
    model = glassgrad.nn.Sequential(glassgrad.nn.Linear(2, 3), glassgrad.nn.ReLU())
    with SummaryWriter(str(tmp_path)) as writer:
        writer.add_graph(model, glassgrad.ones(4, 2))
    (event,) = [e for e in read_events(str(tmp_path)) if e.graph_def]
    from tensorboardX.proto.graph_pb2 import GraphDef

    nodes = {n.name: n for n in GraphDef.FromString(event.graph_def).node}
    assert {"input/input.0", "output/output.0", "0.weight", "0.bias"} <= set(nodes)
    relu = nodes[nodes["output/output.0"].input[0]]
    assert relu.op == "ReluBackward0"
    linear = nodes[relu.input[0]]
    assert sorted(linear.input) == ["0.bias", "0.weight", "input/input.0"]
    assert model[0].weight.grad is None  # drawing runs no backward


def test_flush_close_and_default_log_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    writer = SummaryWriter(comment="_demo")
    writer.add_scalar("x", 1.0, 0)
    writer.flush()
    (run,) = os.listdir(tmp_path / "runs")
    assert run.endswith("_demo") and writer.get_logdir() == os.path.join("runs", run)
    assert [t for _, t, _ in summaries(str(tmp_path / "runs" / run))] == ["x"]
    writer.close()
    writer.close()  # a second close is ignored, as in torch


def test_missing_tensorboardx_names_the_extra(monkeypatch):
    import builtins
    import importlib
    import sys

    real_import = builtins.__import__

    def blocked(name, *args, **kwargs):
        if name == "tensorboardX" or name.startswith("tensorboardX."):
            raise ImportError("No module named 'tensorboardX'")
        return real_import(name, *args, **kwargs)

    for name in [n for n in sys.modules if n.startswith("glassgrad.utils.tensorboard")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(builtins, "__import__", blocked)
    with pytest.raises(ImportError, match=r"pip install glassgrad\[tensorboard\]"):
        importlib.import_module("glassgrad.utils.tensorboard")


def test_same_files_as_torchs_writer_where_importable(tmp_path):
    """torch's writer needs the tensorboard package; where it is there, the same calls must
    leave the same runs, tags, steps and values."""
    torch_tb = pytest.importorskip("torch.utils.tensorboard")
    import torch

    for lib, writer_cls, root in ((torch, torch_tb.SummaryWriter, tmp_path / "torch"),
                                  (glassgrad, SummaryWriter, tmp_path / "glassgrad")):
        with writer_cls(str(root)) as writer:
            writer.add_scalar("loss", lib.tensor(0.25), 1)
            writer.add_scalars("m", {"a": 1.0, "b": lib.tensor(2.0)}, 2)
            writer.add_text("t", "hi", 3)
    for run in ("", "m_a", "m_b"):
        ours = [(s, t, v.simple_value) for s, t, v in summaries(str(tmp_path / "glassgrad" / run))]
        theirs = [(s, t, v.simple_value) for s, t, v in summaries(str(tmp_path / "torch" / run))]
        assert ours == theirs
