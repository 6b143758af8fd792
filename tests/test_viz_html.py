"""``glassgrad.viz_html``: one training step of the article's GAN as a self-contained HTML page
(nodes, saved bytes, gradient norms per parameter), gradient norms checked against torch's on the
same weights, and the page opened in headless Chromium (screenshot and the DOM its script built)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.autograd import graph
from glassgrad.viz_html import make_html, save_html
from tests.oracle import copy_params

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)


def _models(m):
    gen = m.nn.Sequential(m.nn.Linear(4, 16), m.nn.LeakyReLU(0.2), m.nn.Linear(16, 8), m.nn.Tanh())
    disc = m.nn.Sequential(m.nn.Linear(8, 16), m.nn.LeakyReLU(0.2), m.nn.Linear(16, 1))
    return gen, disc


def _gan_step(m, gen, disc):
    """The article's step: one generator forward feeds both losses (retain_graph on the first)."""
    rng = np.random.default_rng(0)
    z, real = rng.standard_normal((6, 4)), rng.standard_normal((6, 8))
    bce = m.nn.BCEWithLogitsLoss()
    fake = gen(m.tensor(z, dtype=m.float32))
    ones, zeros = m.ones(6, 1), m.zeros(6, 1)
    d_loss = bce(disc(m.tensor(real, dtype=m.float32)), ones) + bce(disc(fake), zeros)
    d_loss.backward(retain_graph=True)
    g_loss = bce(disc(fake), ones)
    g_loss.backward()
    params = {**{f"G.{k}": v for k, v in gen.named_parameters()},
              **{f"D.{k}": v for k, v in disc.named_parameters()}}
    return g_loss, params


@pytest.fixture
def step():
    torch.manual_seed(0)
    theirs = _models(torch)
    ours = _models(glassgrad)
    for t, g in zip(theirs, ours):
        copy_params(t, g)
    _, torch_params = _gan_step(torch, *theirs)
    loss, params = _gan_step(glassgrad, *ours)
    return loss, params, torch_params


def _payload(page):
    m = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.DOTALL)
    return json.loads(m.group(1))


def test_page_is_self_contained_and_holds_the_ledger(step):
    loss, params, torch_params = step
    page = make_html(loss, params=params)
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    # nothing is fetched: no external scripts, styles, images or links
    assert not re.search(r'<(script|link|img|iframe)[^>]*(src|href)=', page)
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", page)
    data = _payload(page)
    ledger = graph.to_dict(loss, params)
    assert data["ledger"]["totals"] == ledger["totals"]
    assert [n["name"] for n in data["ledger"]["nodes"]] == [n["name"] for n in ledger["nodes"]]
    svg_nodes = re.findall(r'<g class="node" data-index="(\d+)">', page)
    assert len(svg_nodes) == len(ledger["nodes"])
    # after g_loss.backward() the generator's saved tensors are freed: shown with their size
    assert ledger["totals"]["freed_bytes"] > 0 and "freed by backward" in page
    assert 'stroke-dasharray="3,2"' in page
    # gradient norms per parameter equal torch's on the same weights
    norms = {p["name"]: p["grad_norm"] for p in data["params"]}
    assert norms.keys() == torch_params.keys()
    for name, p in torch_params.items():
        np.testing.assert_allclose(norms[name], float(p.grad.norm()), rtol=1e-4, atol=1e-7)


def test_before_backward_shows_saved_bytes_alive_and_no_grads():
    gen, disc = _models(glassgrad)
    out = disc(gen(glassgrad.randn(3, 4))).mean()
    data = _payload(make_html(out, params=dict(gen.named_parameters())))
    tot = data["ledger"]["totals"]
    assert tot["saved_bytes"] > 0 and tot["freed_bytes"] == 0
    assert all(p["grad_norm"] is None for p in data["params"])
    live = [s for n in data["ledger"]["nodes"] for s in n["saved"]]
    assert sum(s["buffer_bytes"] for s in live if s["counted"]) == tot["saved_bytes"]


def _chromium(tmp_path, url, *extra):
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,900",
           "--disable-dev-shm-usage", "--virtual-time-budget=3000", *extra, url]
    return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=90)


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium not installed")
def test_page_renders_in_headless_chromium(step, tmp_path):
    import matplotlib.image as mpimg

    loss, params, _ = step
    path = save_html(loss, str(tmp_path / "step.html"), params=params)
    shot = tmp_path / "step.png"
    _chromium(tmp_path, f"file://{path}", f"--screenshot={shot}")
    assert shot.exists(), "Chromium wrote no screenshot"
    img = mpimg.imread(str(shot))
    assert img.shape[:2] == (900, 1200)
    assert float(img[..., :3].std()) > 0.05  # not a blank page
    # the DOM after the page's script ran: tables built from the embedded ledger
    dom = _chromium(tmp_path, f"file://{path}", "--dump-dom").stdout
    assert 'data-ready="1"' in dom
    rows = re.findall(r'<tr id="row(\d+)">', dom)
    assert len(rows) == len(graph.to_dict(loss)["nodes"])
    assert "AddmmBackward0" in dom and "G.0.weight" in dom and "D.2.bias" in dom
