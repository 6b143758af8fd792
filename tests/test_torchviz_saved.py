"""torchviz's ``make_dot`` on glassgrad (``torch`` aliased) draws the graph torch's draws: the same
DOT source, node ids aside, with and without ``show_saved``/``show_attrs``, before and after
backward. torchviz reads a node's saved tensors as ``_saved_<name>`` attributes (``dir(fn)``) and
draws ``fn.saved_tensors`` wherever ``hasattr`` finds it; torch's built-in nodes have no
``saved_tensors`` (only a custom Function's node does), so glassgrad's have none either.
The runs are subprocesses, so the alias never leaks into other tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import glassgrad

pytest.importorskip("torchviz")
pytest.importorskip("graphviz")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = r"""
import json, re, sys, warnings
warnings.simplefilter("ignore")  # torchviz warns on versions below 1.9 (glassgrad's own)
if sys.argv[1] == "glassgrad":
    import glassgrad.alias
    glassgrad.alias.install()
import torch
from torchviz import make_dot

class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad

torch.manual_seed(0)
w = torch.randn(4, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
h = torch.tanh(w * b)
sq = Square.apply(h)
y = (sq.exp() * h).pow(3)
params = {"w": w, "b": b}
out = {}
def draw(key, **kw):
    try:
        out[key] = re.sub(r"\b\d{6,}\b", "ID", make_dot(y, params=params, **kw).source)
    except Exception as e:
        out[key] = f"{type(e).__name__}: {str(e)[:80]}"
for saved in (False, True):
    for attrs in (False, True):
        draw(f"saved={saved} attrs={attrs}", show_saved=saved, show_attrs=attrs)
out["builtin has saved_tensors"] = hasattr(h.grad_fn, "saved_tensors")
out["custom saved_tensors"] = [list(t.shape) for t in sq.grad_fn.saved_tensors]
y.backward(torch.ones_like(y))
draw("after backward")
print(json.dumps(out))
"""


def _draw(library: str) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-c", SCRIPT, library], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_make_dot_draws_torchs_graph():
    theirs, ours = _draw("torch"), _draw("glassgrad")
    assert theirs["builtin has saved_tensors"] is False
    assert theirs["custom saved_tensors"] == [[4, 3]]
    assert "SquareBackward" in theirs["saved=False attrs=False"]
    assert "exponent:" in theirs["saved=False attrs=True"]  # the drawings are not trivial
    assert theirs["saved=True attrs=False"].count("fillcolor=orange") == 8
    for key in theirs:
        assert ours[key] == theirs[key], key


def test_builtin_nodes_keep_their_saved_attributes():
    x = glassgrad.tensor([0.5, 1.5], requires_grad=True)
    node = (x * x.exp()).grad_fn
    assert not hasattr(node, "saved_tensors")
    assert {"_saved_self", "_saved_other"} <= set(dir(node))
    assert node._saved_other.tolist() == x.exp().tolist()
