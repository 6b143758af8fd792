"""Bench row 11 (issue 20): the MLP step of row 3 across sizes, for the scaling plot.

Two series of the same step (784-h-h-10, ReLU, cross-entropy, one SGD step): the hidden width
``h`` at 64, 256, 1024, 4096 with batch 128, and the batch at 1, 32, 512, 2048 with ``h`` 256
(the batch series' point at 128 is the hidden series' ``h`` 256 row). ``scaling_plot.py`` draws
both series, for both libraries, on log-log axes.
"""

from __future__ import annotations

import functools

import numpy as np

from benchmarks.workloads import _array, init_from_numpy

HIDDEN_SIZES = (64, 256, 1024, 4096)  # batch 128
BATCH_SIZES = (1, 32, 512, 2048)  # hidden 256
BASE_BATCH, BASE_HIDDEN = 128, 256


def mlp_step_sized(lib, hidden: int = BASE_HIDDEN, batch: int = BASE_BATCH):
    """MLP 784-``hidden``-``hidden``-10 with ReLU on ``batch`` inputs, cross-entropy, one SGD
    step (row 3's step at another size)."""
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                          nn.Linear(hidden, 10))
    init_from_numpy(lib, model, 0)
    rng = np.random.default_rng(1)
    x = _array(lib, rng, (batch, 784), 0.0, 1.0)
    y = lib.from_numpy(rng.integers(0, 10, size=batch).astype(np.int64))
    opt = lib.optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def scaling_rows(workload_cls) -> dict:
    """The row-11 entries of ``WORKLOADS``: key -> ``workload_cls(title, make, inner)``.

    Keys ``scale_h<hidden>`` (batch 128) and ``scale_b<batch>`` (hidden 256); ``scaling_point``
    turns a key back into its series and size."""
    rows = {}
    for hidden in HIDDEN_SIZES:
        rows[f"scale_h{hidden}"] = workload_cls(
            f"11 MLP step hidden {hidden} (batch 128)",
            functools.partial(mlp_step_sized, hidden=hidden, batch=BASE_BATCH), 1)
    for batch in BATCH_SIZES:
        rows[f"scale_b{batch}"] = workload_cls(
            f"11 MLP step batch {batch} (hidden 256)",
            functools.partial(mlp_step_sized, hidden=BASE_HIDDEN, batch=batch), 1)
    return rows


def scaling_points(key: str) -> list:
    """``[(series, size), ...]`` a row-11 key stands for (``"hidden"``/``"batch"``); the
    ``h`` 256 row is also the batch series' point at 128. ``[]`` for any other key."""
    if key.startswith("scale_h"):
        hidden = int(key[len("scale_h"):])
        return [("hidden", hidden)] + ([("batch", BASE_BATCH)] if hidden == BASE_HIDDEN else [])
    if key.startswith("scale_b"):
        return [("batch", int(key[len("scale_b"):]))]
    return []
