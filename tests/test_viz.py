"""``glassgrad.viz.make_dot`` (torchviz's signature and colours) on real graphs: the article's line,
an MLP before and after backward (freed saved tensors as ghosts), a WGAN-GP double backward, module
clusters; DOT text without the Graphviz binary, SVG/PNG through it when it is installed."""

from __future__ import annotations

import io
import re
import shutil

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.viz import make_dot

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz binary not installed")


def _torch_names(t):
    names, stack, seen = [], [t.grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        names.append(fn.name().split("::")[-1])
        stack.extend(f for f, _ in fn.next_functions)
    return sorted(names)


def _labels(dot):
    """node id -> (label, attributes text) from the DOT source."""
    out = {}
    pattern = r'^\s*(\w+) \[label=(?:"((?:[^"\\]|\\.)*)"|([^\s\]]+))([^\]]*)\]'
    for m in re.finditer(pattern, dot.source, re.MULTILINE):
        out[m.group(1)] = (m.group(2) if m.group(2) is not None else m.group(3), m.group(4))
    return out


def _article(m):
    x = m.ones(2, 2, requires_grad=True)
    y = x + 2
    z = y * y * 3
    return x, z


def test_article_make_dot_line_matches_torch_graph():
    _, z_t = _article(torch)
    x, z = _article(glassgrad)
    dot = make_dot(z, params={"x": x})
    labels = _labels(dot)
    ops = sorted(lab for lab, _ in labels.values() if lab.endswith("Backward0") or
                 lab == "AccumulateGrad")
    assert ops == _torch_names(z_t)
    leaf = [attrs for lab, attrs in labels.values() if lab.startswith("x\n (2, 2)")]
    assert len(leaf) == 1 and "lightblue" in leaf[0]
    out = [attrs for lab, attrs in labels.values() if lab == "\n (2, 2)"]
    assert len(out) == 1 and "darkolivegreen1" in out[0]
    assert dot.source.count("->") == 6  # x->acc, acc->add, add->mul (twice), mul->mul, mul->z


def _mlp_loss():
    net = glassgrad.nn.Sequential(glassgrad.nn.Linear(3, 4), glassgrad.nn.Tanh(),
                                  glassgrad.nn.Linear(4, 1))
    x = glassgrad.randn(5, 3)
    hidden = net[1](net[0](x))
    return net, x, hidden, net[2](hidden).mean()


def test_saved_tensors_before_and_after_backward():
    net, x, hidden, loss = _mlp_loss()
    params = dict(net.named_parameters())
    before = _labels(make_dot(loss, params=params, show_saved=True))
    saved = {lab for lab, attrs in before.values() if "orange" in attrs}
    # x (the first Linear's AddmmBackward0: not 0.weight, as x needs no gradient), tanh's output
    # (shared by Tanh and the second Linear), 2.weight
    assert saved == {f"x\n (5, 3)\n {x._array.nbytes} B",
                     f"result\n (5, 4)\n {hidden._array.nbytes} B",
                     f"weight\n (1, 4)\n {params['2.weight']._array.nbytes} B\n = 2.weight"}
    loss.backward()
    dot = make_dot(loss, params=params, show_saved=True, show_attrs=True)
    after = _labels(dot)
    ghosts = {lab for lab, attrs in after.values() if "dashed" in attrs}
    assert ghosts == {f"x\n (5, 3)\n freed ({x._array.nbytes} B)",
                      f"result\n (5, 4)\n freed ({hidden._array.nbytes} B)",
                      f"weight\n (1, 4)\n freed ({params['2.weight']._array.nbytes} B)"}
    assert not any("orange" in attrs for _, attrs in after.values())
    assert any("x     : [freed tensor]" in lab for lab, _ in after.values())
    assert any("dims   : (0, 1)" in lab for lab, _ in after.values())


def test_module_clusters_from_named_parameters():
    net, _, _, loss = _mlp_loss()
    dot = make_dot(loss, params=dict(net.named_parameters()))
    clusters = re.findall(r"subgraph (cluster_\d+) \{(.*?)\n\t\}", dot.source, re.DOTALL)
    by_label = {re.search(r'label=(\S+)', body).group(1): body for _, body in clusters}
    assert set(by_label) == {"0", "2"}  # Tanh (module 1) has no parameters
    for mod, body in by_label.items():
        assert f"{mod}.weight" in body and f"{mod}.bias" in body
        assert "AddmmBackward0" in body  # nn.Linear is one op, as PyTorch's addmm
    assert "TanhBackward0" not in "".join(by_label.values())
    assert "MeanBackward0" not in "".join(by_label.values())


def test_double_backward_graph_wgan_gp():
    critic = glassgrad.nn.Sequential(glassgrad.nn.Linear(4, 6), glassgrad.nn.LeakyReLU(0.2),
                                     glassgrad.nn.Linear(6, 1))
    interp = glassgrad.randn(3, 4, requires_grad=True)
    out = critic(interp)
    (grads,) = glassgrad.autograd.grad(out, interp, glassgrad.ones_like(out), create_graph=True)
    penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
    params = {"interp": interp, **dict(critic.named_parameters())}
    labels = _labels(make_dot(penalty, params=params, show_saved=True))
    names = [lab for lab, _ in labels.values()]
    # the penalty's graph is the backward's own ops (grad @ weight), which reach the weights
    assert names.count("MmBackward0") == 2 and "LinalgVectorNormBackward0" in names
    assert "0.weight\n (6, 4)" in names and "2.weight\n (1, 6)" in names
    assert f"x\n (3, 4)\n {grads._array.nbytes} B" in names  # the norm saved the gradient
    penalty.backward()
    labels = _labels(make_dot(penalty, params=params, show_saved=True))
    assert not any("orange" in attrs for _, attrs in labels.values())
    assert any("dashed" in attrs for _, attrs in labels.values())


def test_view_output_base_and_custom_function_saved():
    class Cube(glassgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 3 * x * x * grad

    x = glassgrad.randn(2, 3, requires_grad=True)
    base = Cube.apply(x) * 2
    view = base[0]
    dot = make_dot(view)
    labels = _labels(dot)
    assert any("darkolivegreen3" in attrs and lab == "\n (2, 3)" for lab, attrs in labels.values())
    assert "style=dotted" in dot.source
    # a custom Function's saved tensors are drawn even without show_saved, as torchviz does
    assert any(lab.startswith("saved[0]\n (2, 3)\n 24 B") and "orange" in attrs
               for lab, attrs in labels.values())
    with pytest.raises(TypeError, match="not a Tensor"):
        make_dot(view, params={"x": np.ones(2)})


@needs_dot
def test_render_svg_and_png_through_graphviz():
    import matplotlib.image as mpimg

    net, _, _, loss = _mlp_loss()
    dot = make_dot(loss, params=dict(net.named_parameters()), show_saved=True)
    svg = dot.pipe(format="svg").decode()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "AddmmBackward0" in svg and "0.weight" in svg and "cluster" in svg
    png = dot.pipe(format="png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    img = mpimg.imread(io.BytesIO(png), format="png")
    assert img.shape[0] > 200 and img.shape[1] > 200
    assert float(img[..., :3].std()) > 0.05  # not blank
