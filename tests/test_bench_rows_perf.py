"""Bench rows 9-12 (issue 20; benchmarks/*_workloads.py): each workload, at a small size, runs the
same code on glassgrad and torch from the same NumPy weights and gives the same losses over
three steps (what ``make bench`` checks before it times them); the row registry and the scaling
plot's series and PNG."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch

import glassgrad

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import scaling_plot  # noqa: E402
from benchmarks.per_sample_workloads import per_sample_grads  # noqa: E402
from benchmarks.resnet_workloads import resnet_step  # noqa: E402
from benchmarks.run import TARGETS  # noqa: E402
from benchmarks.scaling_workloads import scaling_points  # noqa: E402
from benchmarks.transformer_workloads import transformer_lm_step  # noqa: E402
from benchmarks.workloads import WORKLOADS  # noqa: E402


def _losses(make, n=3):
    out = {}
    for lib in (glassgrad, torch):
        step = make(lib)
        out[lib.__name__] = [step() for _ in range(n)]
    return out


@pytest.mark.parametrize("make, rtol, trains", [
    (lambda lib: transformer_lm_step(lib, n_layers=2, d_model=32, n_heads=4, steps=8, batch=3,
                                     vocab=11), 1e-5, True),
    (lambda lib: resnet_step(lib, batch=4), 1e-5, True),
    (lambda lib: per_sample_grads(lib, batch=5), 1e-5, False),  # (no update: the same each time)
    (lambda lib: WORKLOADS["scale_h64"].make(lib), 1e-6, True),
    (lambda lib: WORKLOADS["scale_b1"].make(lib), 1e-6, True),
], ids=["transformer", "resnet", "per_sample", "scale_h64", "scale_b1"])
def test_rows_agree_with_torch(make, rtol, trains):
    losses = _losses(make)
    np.testing.assert_allclose(losses["glassgrad"], losses["torch"], rtol=rtol)
    assert (len(set(losses["torch"])) == 3) == trains


def test_per_sample_grads_are_each_samples_gradient():
    """vmap(grad) against the gradient of each sample's loss computed alone, in torch."""
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10))
    from benchmarks.workloads import _array, init_from_numpy

    init_from_numpy(torch, model, 0)
    rng = np.random.default_rng(1)
    x = _array(torch, rng, (3, 784), 0.0, 1.0)
    y = torch.from_numpy(rng.integers(0, 10, size=3).astype(np.int64))
    total = 0.0
    for i in range(1):  # (the check's samples 0, 51, ...: sample 0 of 3)
        model.zero_grad()
        torch.nn.functional.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        total += sum(float((p.grad.double() ** 2).sum()) for p in model.parameters())
    np.testing.assert_allclose(per_sample_grads(glassgrad, batch=3)(), total, rtol=1e-5)


def test_registry_rows_and_targets():
    keys = list(WORKLOADS)
    ours = ["transformer", "resnet"] + [k for k in keys if k.startswith("scale_")] + ["per_sample"]
    assert keys[keys.index("transformer"):keys.index("per_sample") + 1] == ours
    assert [WORKLOADS[k].title.split()[0] for k in ours] == ["9", "10"] + ["11"] * 8 + ["12"]
    assert {k: TARGETS[k] for k in ("transformer", "resnet", "per_sample", "scale_h4096")} == {
        "transformer": 1.0, "resnet": 1.2, "per_sample": 0.2, "scale_h4096": 1.0}
    assert scaling_points("scale_h256") == [("hidden", 256), ("batch", 128)]
    assert scaling_points("scale_b2048") == [("batch", 2048)]
    assert scaling_points("mlp") == []


def test_scaling_plot_written(tmp_path):
    pytest.importorskip("matplotlib")
    results = [{"key": k, "median_s": {"glassgrad": t, "torch": 1.1 * t}}
               for k, t in (("scale_h64", 1e-3), ("scale_h256", 3e-3), ("scale_b1", 2e-4),
                            ("cnn", 1.0))]
    series = scaling_plot.series_of(results)
    assert series == {"hidden": [(64, results[0]["median_s"]), (256, results[1]["median_s"])],
                      "batch": [(1, results[2]["median_s"]), (128, results[1]["median_s"])]}
    header = {"blas": {"name": "openblas", "threads": 1}, "machine": {"cpu": "cpu"},
              "torch": {"version": torch.__version__, "threads": 1}, "load_average_start": ()}
    path = str(tmp_path / "scaling.png")
    assert scaling_plot.write_plot(results, header, path) == path
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert scaling_plot.write_plot(results[:1], header, str(tmp_path / "none.png")) is None
    assert not os.path.exists(tmp_path / "none.png")
