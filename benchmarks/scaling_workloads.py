"""Bench row 11 (issue 20): the MLP step of row 3 across sizes, for the scaling plot.

Two series of the same step (784-h-h-10, ReLU, cross-entropy, one SGD step): the hidden width
``h`` at 64, 256, 1024, 4096 with batch 128, and the batch at 1, 32, 512, 2048 with ``h`` 256
(the batch series' point at 128 is the hidden series' ``h`` 256 row). ``scaling_plot.py`` draws
both series, for both libraries, on log-log axes.
"""

from __future__ import annotations

import functools

HIDDEN_SIZES = (64, 256, 1024, 4096)  # batch 128
BATCH_SIZES = (1, 32, 512, 2048)  # hidden 256
BASE_BATCH, BASE_HIDDEN = 128, 256


def scaling_rows(workload_cls, mlp_step) -> dict:
    """The row-11 entries of ``WORKLOADS``: key -> ``workload_cls(title, make, inner)``, each
    ``make`` row 3's ``mlp_step(lib, batch, hidden)`` at one size.

    Keys ``scale_h<hidden>`` (batch 128) and ``scale_b<batch>`` (hidden 256); ``scaling_points``
    turns a key back into its series and size."""
    rows = {}
    for hidden in HIDDEN_SIZES:
        rows[f"scale_h{hidden}"] = workload_cls(
            f"11 MLP step hidden {hidden} (batch 128)",
            functools.partial(mlp_step, hidden=hidden, batch=BASE_BATCH), 1)
    for batch in BATCH_SIZES:
        rows[f"scale_b{batch}"] = workload_cls(
            f"11 MLP step batch {batch} (hidden 256)",
            functools.partial(mlp_step, hidden=BASE_HIDDEN, batch=batch), 1)
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
