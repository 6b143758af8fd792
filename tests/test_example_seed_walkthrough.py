"""examples/seed_walkthrough.py: the whole article run on glassgrad (``--quick``), its key figures
checked, and the same script run on torch as the oracle (weights come from NumPy, so both
libraries start equal and must print the same numbers)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sys

import numpy as np
import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
sys.path.insert(0, EXAMPLES)

import seed_walkthrough

pytestmark = pytest.mark.filterwarnings("ignore")

LEAK = "carried hidden + retain_graph (leak)"
FLAT = ("carried hidden.detach(), no retain", "article's pattern: retain once, then free",
        "article: retain_graph, fresh forward")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = {}
    for backend in ("glassgrad", "torch"):
        path = tmp_path_factory.mktemp(backend)
        out[backend] = (seed_walkthrough.main(["--quick", "--backend", backend, "--out",
                                               str(path)]), path)
    return out


def test_glassgrad_figures(runs):
    f, path = runs["glassgrad"]
    assert f["x_grad"] == 4.0
    assert f["saved_before"] == 1 and f["saved_after"] == 0 and f["freed_after"] == 1
    assert len(set(f["rnn_nodes"])) == 3  # a different graph per sentence length
    assert seed_walkthrough.KEY_PHRASE in f["second_backward_error"]
    assert "glassgrad:" in f["second_backward_error"]
    assert (f["retain_grad_first"], f["retain_grad_accumulated"]) == (12.0, 44.0)
    assert f["accumulation_max_abs_diff"] < 1e-6
    assert 0 < f["accumulation_saved_micro"] < f["accumulation_saved_full"]
    assert any("is deprecated" in m for m in f["amp_warnings"])
    assert f["amp_dtypes"]["outputs"] == "glassgrad.float16"
    assert f["amp_dtypes"]["param.grad"] == "glassgrad.float32"
    assert (f["dy_dx"], f["d2y_dx2"]) == (12.0, 12.0)
    weights = [v for k, v in f["penalty_grad_norms"].items() if k.endswith("weight")]
    assert len(weights) == 3 and all(v > 0 for v in weights)
    assert f["maml_losses"][-1] < f["maml_losses"][0] and f["maml_original_change"] == 0.0
    assert f["maml_retained_unused"] >= 1
    assert f["forgot_zero_grad_ratio"] == pytest.approx(2.0, rel=1e-5)
    assert f["memory_allocated"] > 0
    with open(path / "summary.json") as fh:
        assert json.load(fh)["x_grad"] == 4.0


def test_memory_leak_grows_and_correct_loops_stay_flat(runs):
    loops = runs["glassgrad"][0]["memory_loops"]
    leak = loops[LEAK]["bytes"]
    steps = len(leak)
    assert all(b > a for a, b in itertools.pairwise(leak))  # one more graph every iteration
    growth = leak[-1] - leak[0]
    assert growth >= (steps - 1) * 16 * 1024  # at least the [32, 128] tanh output per iteration
    assert loops[LEAK]["saved_at_end"] > growth
    for name in FLAT:
        series = loops[name]["bytes"]
        assert len(series) == steps
        assert max(series) - min(series) <= 4096, (name, series)
    assert loops[LEAK]["nodes"][-1] > loops[LEAK]["nodes"][0]
    assert all(len(set(loops[name]["nodes"])) == 1 for name in FLAT)


def test_files_written(runs):
    path = runs["glassgrad"][1]
    names = {"summary.json", "memory.png", "graph.dot", "graph_after_backward.dot", "step.html"}
    if shutil.which("dot"):
        names |= {"graph.svg", "graph.png", "graph_after_backward.svg"}
    assert names <= set(os.listdir(path))
    dot = (path / "graph.dot").read_text()
    assert "digraph" in dot and "PowBackward0" in dot and "AddBackward0" in dot
    assert "<svg" in (path / "step.html").read_text()


def test_same_numbers_as_torch(runs):
    ours, theirs = runs["glassgrad"][0], runs["torch"][0]
    for key in ("x_grad", "retain_grad_first", "retain_grad_accumulated", "dy_dx", "d2y_dx2",
                "forgot_zero_grad_ratio", "maml_original_change"):
        assert ours[key] == pytest.approx(theirs[key], rel=1e-6), key
    assert theirs["accumulation_max_abs_diff"] < 1e-6
    first = theirs["second_backward_error"].split(".")[0]
    assert first.startswith(seed_walkthrough.KEY_PHRASE)
    assert ours["second_backward_error"].startswith(first)
    assert ours["penalty"] == pytest.approx(theirs["penalty"], rel=1e-4)
    for name, norm in theirs["penalty_grad_norms"].items():
        mine = ours["penalty_grad_norms"][name]
        if norm is None or norm == 0.0:  # torch fills zeros where glassgrad finds no path
            assert mine is None or mine == 0.0, name
        else:
            assert mine == pytest.approx(norm, rel=1e-4), name
    np.testing.assert_allclose(ours["maml_losses"], theirs["maml_losses"], rtol=1e-4)
    # torch without CUDA disables torch.cuda.amp: float32 there, float16 autocast here
    np.testing.assert_allclose(ours["amp_losses"], theirs["amp_losses"], atol=2e-3)
    leak_nodes = theirs["memory_loops"][LEAK]["nodes"]
    assert leak_nodes[-1] > leak_nodes[0]
    assert theirs["memory_allocated"] == 0  # PyTorch counts CUDA memory only


def test_one_section_and_help(tmp_path, capsys):
    figures = seed_walkthrough.main(["--section", "4.2", "--out", str(tmp_path)])
    assert (figures["dy_dx"], figures["d2y_dx2"]) == (12.0, 12.0)
    assert "x_grad" not in figures
    assert "§4.2" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        seed_walkthrough.parse_args(["--help"])
    assert exit_info.value.code == 0
    with pytest.raises(SystemExit):
        seed_walkthrough.parse_args(["--section", "9"])
