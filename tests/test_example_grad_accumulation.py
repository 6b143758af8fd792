"""examples/grad_accumulation.py: a tiny smoke run (both --amp modes), and the article's
accumulation loop (section 3.1, and 3.2 with autocast + GradScaler) on torch and glassgrad from
identical weights, compared step by step."""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
sys.path.insert(0, EXAMPLES)

import grad_accumulation
from _common import digits_arrays
from classify_digits import build_classifier

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # fp16 overflow is expected


@pytest.mark.parametrize("amp", ["fp16", "bf16"])
def test_smoke_tiny_run_writes_a_summary(tmp_path, amp):
    argv = ["--epochs", "1", "--batch-size", "16", "--micro-batch", "4", "--check-sizes",
            "16,8,4", "--train-samples", "64", "--amp", amp, "--quiet", "--out", str(tmp_path)]
    with pytest.warns(UserWarning, match="BatchNorm in train mode"):
        summary = grad_accumulation.main(argv)
    rows = summary["equivalence"]
    assert [r["micro_batch"] for r in rows] == [16, 8, 4]
    assert all(r["max_abs_diff"] < 1e-6 for r in rows)
    saved = [r["saved_bytes"] for r in rows]
    assert saved[0] > saved[1] > saved[2] > 0
    assert summary["batchnorm"]["train_relative_diff"] > 1e-3
    assert summary["batchnorm"]["eval_max_abs_diff"] < 1e-6
    assert summary["scaler"]["enabled"] is (amp == "fp16")
    assert 0.0 <= summary["amp_accuracy"] <= 1.0
    assert os.path.exists(tmp_path / "memory.png")
    with open(tmp_path / "summary.json") as f:
        assert json.load(f)["accumulation_steps"] == 4


def test_help_runs():
    with pytest.raises(SystemExit) as exit_info:
        grad_accumulation.parse_args(["--help"])
    assert exit_info.value.code == 0


def _article_loop(lib, model, amp=None, steps=3, accumulation_steps=4, micro=8):
    """Section 3.1 (and 3.2 when ``amp``): returns the losses and the scale after each step."""
    x_np, y_np = digits_arrays("train", "unit")
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)  # Adam would amplify
    # the rounding noise of near-zero gradients (dead ReLUs) into full-size steps
    criterion = lib.nn.CrossEntropyLoss()
    scaler = lib.amp.GradScaler("cpu", growth_interval=2, enabled=amp == "fp16")
    dtype = getattr(lib, grad_accumulation.AMP_DTYPES[amp]) if amp else None
    losses, scales = [], []
    model.zero_grad()
    for i in range(steps * accumulation_steps):
        inputs = lib.from_numpy(x_np[i * micro:(i + 1) * micro].copy())
        targets = lib.from_numpy(y_np[i * micro:(i + 1) * micro].copy())
        with lib.autocast("cpu", dtype=dtype, enabled=amp is not None):
            outputs = model(inputs)
            loss = criterion(outputs, targets) / accumulation_steps
        scaler.scale(loss).backward()
        if (i + 1) % accumulation_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            model.zero_grad()
            scales.append(scaler.get_scale())
        losses.append(loss.item())
    return np.array(losses), scales


def _pair():
    glassgrad.manual_seed(0)
    ours = build_classifier(glassgrad).eval()  # eval(): no Dropout masks to reproduce
    theirs = build_classifier(torch).eval()
    theirs.load_state_dict({k: torch.from_numpy(v.detach().numpy().copy())
                            for k, v in ours.state_dict().items()})
    return ours, theirs


@pytest.mark.parametrize("amp", [None, "bf16", "fp16"])
def test_article_accumulation_loop_matches_torch(amp):
    ours, theirs = _pair()
    losses_ours, scales_ours = _article_loop(glassgrad, ours, amp)
    losses_theirs, scales_theirs = _article_loop(torch, theirs, amp)
    tol = 1e-5 if amp is None else 3e-2
    np.testing.assert_allclose(losses_ours, losses_theirs, rtol=tol, atol=tol)
    assert scales_ours == scales_theirs
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        assert p.dtype == glassgrad.float32
        assert_close(p, q, atol=tol, rtol=tol, what=name)
