"""Checkpoints written by earlier glassgrads keep loading: the fixture
``tests/data/checkpoint_format1.safetensors`` was written by glassgrad's format version "1" save
(commit 2704c77, before loading was bounded) from ``format1_object``; it must load to what
torch.save / torch.load give for the same object."""

from __future__ import annotations

import collections
from pathlib import Path

import numpy as np
import torch

import glassgrad

from .test_serialization import assert_same, to_torch

FIXTURE = Path(__file__).parent / "data" / "checkpoint_format1.safetensors"


def format1_object(lib):
    """What the fixture holds: every dtype, views, tied tensors, optimizer-like state."""
    w = lib.arange(24, dtype=lib.float32).reshape(4, 6) / 7
    return {
        "model": collections.OrderedDict([
            ("emb.weight", w), ("out.weight", w.detach()), ("rows", w[1:3]), ("t", w.t()),
            ("strided", w[::2, 1::2]), ("bias", lib.arange(4, dtype=lib.float64) - 1.5),
            ("half", (lib.arange(5, dtype=lib.float32) / 3).to(lib.bfloat16)),
            ("f16", (lib.arange(3, dtype=lib.float32) / 3).to(lib.float16)),
            ("count", lib.tensor(7)), ("mask", lib.arange(6) % 2 == 0),
            ("small", lib.arange(-4, 4, dtype=lib.int8)), ("u8", lib.arange(3, dtype=lib.uint8)),
            ("i16", lib.arange(3, dtype=lib.int16)), ("i32", lib.arange(3, dtype=lib.int32)),
            ("empty", lib.zeros(0, 3)), ("leaf", lib.ones(2).requires_grad_()),
        ]),
        "optimizer": {"state": {0: {"step": lib.tensor(3.0), "exp_avg": lib.ones(2, 2) / 3}},
                      "param_groups": [{"params": [0], "lr": 1e-3, "betas": (0.9, 0.999),
                                        "foreach": None, "amsgrad": False}]},
        "epoch": 12, "big": 2**70, "specials": [float("inf"), float("-inf"), -0.0],
        "keys": {1: "a", (1, 2): [3], None: 0, 2.5: "f", False: "no"},
        "blob": b"\x00\xffbytes", "empty": {}, "nested": [[1, (2, [3.5, "x"])]],
    }


def test_format1_checkpoint_still_loads(tmp_path):
    ours = glassgrad.load(FIXTURE)
    torch.save(to_torch(format1_object(glassgrad)), tmp_path / "t.pt")
    assert_same(ours, torch.load(tmp_path / "t.pt"))
    sd = ours["model"]
    for name in ("out.weight", "rows", "t", "strided"):
        assert np.shares_memory(sd[name].numpy(), sd["emb.weight"].numpy()), name
    with glassgrad.no_grad():
        sd["emb.weight"][2, 5] = 42.0
    assert sd["out.weight"][2, 5].item() == sd["rows"][1, 5].item() == sd["t"][5, 2].item() == 42
    assert sd["strided"][1, 2].item() == 42
