"""``glassgrad inspect`` on training scripts written against torch: the report's content, checked
against the same scripts run on torch itself (module paths, op names, parameter and optimizer
bytes) and against facts of the scripts (the line that carries a graph across steps)."""
import collections
import os
import re
import runpy
import subprocess
import sys

import pytest

from glassgrad.inspect import run
from tests.test_inspect_cli import _data

DATA = os.path.join(os.path.dirname(__file__), "data")
MLP = os.path.join(DATA, "inspect_train.py")
NET = os.path.join(DATA, "inspect_modules.py")
RNN = os.path.join(DATA, "inspect_rnn.py")


def _torch_run(script, args):
    """Run ``script`` on real torch; return its globals and the first backward's graph names."""
    import torch
    seen = {}
    orig = torch.Tensor.backward

    def backward(self, *a, **k):
        if "names" not in seen:
            names, stack, done = [], [self.grad_fn], set()
            while stack:
                n = stack.pop()
                if n is None or id(n) in done:
                    continue
                done.add(id(n))
                names.append(n.name().replace("torch::autograd::", ""))
                stack.extend(e[0] for e in n.next_functions)
            seen["names"] = collections.Counter(names)
        return orig(self, *a, **k)

    old_argv = sys.argv
    torch.Tensor.backward, sys.argv = backward, [script, *args]
    try:
        g = runpy.run_path(script, run_name="__main__")
    finally:
        torch.Tensor.backward, sys.argv = orig, old_argv
    return g, seen["names"]


def _named(model):
    root = type(model).__name__
    return {root if not name else f"{root}.{name}": type(m).__name__
            for name, m in model.named_modules()}


@pytest.fixture(scope="module")
def net_report(tmp_path_factory):
    # a fresh process, as `glassgrad inspect` runs for a user: the memory rows count every live
    # parameter, and modules other tests left alive in this process are not the script's
    out = str(tmp_path_factory.mktemp("inspect") / "net.html")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-m", "glassgrad.inspect", "--steps", "3", "--out", out,
                    NET, "4"], check=True, capture_output=True, timeout=300, env=env, cwd=root)
    return out, _data(out)


def test_modules_and_ops_match_torch(tmp_path, capfd):
    out = run(MLP, ["3"], steps=2, out=str(tmp_path / "mlp.html"))
    assert "trained 3" in capfd.readouterr().out
    g, torch_names = _torch_run(MLP, ["1"])
    d = _data(out)
    step = d["steps"][0]
    ours = collections.Counter(n["name"] for n in step["nodes"])
    if ours["TBackward0"] != torch_names["TBackward0"]:
        # torch's Linear transposes its weight in the graph (TBackward0); glassgrad's addmm may
        # read the weight as it is, one node fewer per Linear: the others are torch's, by name
        ours.pop("TBackward0", None)
        torch_names.pop("TBackward0")
    assert ours == torch_names
    assert {p: m["type"] for p, m in step["modules"].items()} == _named(g["model"])
    # every op of the model is placed in the module that ran it; the loss is outside
    where = {n["name"]: n["module"] for n in step["nodes"] if n["kind"] != "leaf"}
    assert where["ReluBackward0"] == "Sequential.1" and where["MseLossBackward0"] is None
    leaves = {n["param"]: n["module"] for n in step["nodes"] if n["kind"] == "leaf"}
    assert leaves == {"Sequential.0.weight": "Sequential.0", "Sequential.0.bias": "Sequential.0",
                      "Sequential.2.weight": "Sequential.2", "Sequential.2.bias": "Sequential.2"}


def test_nested_modules_match_torch(net_report):
    _, d = net_report
    g, _ = _torch_run(NET, ["1"])
    step = d["steps"][0]
    assert {p: m["type"] for p, m in step["modules"].items()} == _named(g["model"])
    mods = {n["module"] for n in step["nodes"] if n["kind"] != "leaf"}
    assert {"Net.embed", "Net.blocks.0.fc", "Net.blocks.1.norm", "Net.head"} <= mods
    relu = [n for n in step["nodes"] if n["name"] == "ReluBackward0"]
    assert [n["module"] for n in relu] == ["Net.blocks.0", "Net.blocks.1"]  # F.relu in Block
    assert all(n["code"] == "return self.norm(x + F.relu(self.fc(x)))" for n in relu)


def test_memory_rows_match_torch(net_report):
    _, d = net_report
    g, _ = _torch_run(NET, ["1"])
    param_bytes = sum(p.numel() * p.element_size() for p in g["model"].parameters())
    state_bytes = sum(v.numel() * v.element_size() for st in g["opt"].state.values()
                      for v in st.values() if hasattr(v, "numel"))
    m = d["steps"][0]["memory"]
    assert set(m["series"]["parameters"]) == {param_bytes}  # the same buffers all step long
    assert m["series"]["gradients"][-1] == param_bytes  # one .grad per parameter after backward
    assert m["series"]["optimizer_state"][0] == 0  # Adam's state is made by the first step
    assert m["series"]["optimizer_state"][-1] == state_bytes
    assert d["steps"][1]["memory"]["series"]["optimizer_state"][0] == state_bytes
    peak = m["peak"]
    assert sum(peak["by_kind"].values()) == peak["bytes"] == max(
        sum(v[i] for v in m["series"].values()) for i in range(len(m["t"])))
    assert peak["source"].startswith(NET) and peak["op"] and peak["code"]
    phases = [p["phase"] for p in m["phase_peaks"]]
    assert phases == ["forward", "backward", "optimizer"]
    assert all(p["source"].startswith(NET) for p in m["phase_peaks"])
    assert m["phase_peaks"][1]["code"] == "loss.backward()"
    assert peak["by_kind"]["saved_for_backward"] > 0
    # what the peak holds, by the module call that made it: the model's blocks made most of it
    by_module = dict((m, b) for m, b in peak["by_module"])
    assert sum(by_module.values()) == peak["bytes"]
    assert {"Net.embed", "Net.blocks.0", "Net.blocks.0.norm", "Net.blocks.1.norm"} <= set(by_module)
    # made outside any module call: the parameters (at construction) and the data
    data_bytes = sum(t.numel() * t.element_size() for t in (g["x"], g["y"]))
    assert by_module[None] == param_bytes + data_bytes
    assert peak["module"] and peak["module"].startswith("Net.blocks")
    made = {e["module"] for e in m["events"] if e["action"] == "alloc" and e["phase"] == "forward"}
    assert {"Net.embed", "Net.head", "Net.blocks.0.fc", "Net.blocks.1.norm"} <= made


def test_diff_names_total_loss(net_report):
    _, d = net_report
    assert d["steps"][0]["diff"]["previous"] is None
    for s in d["steps"][1:]:
        carried = s["diff"]["carried"]
        assert [c["variable"] for c in carried] == ["total_loss"]
        assert carried[0]["code"].startswith("total_loss += loss")
        assert carried[0]["op"] == "AddBackward0"
        assert carried[0]["reaches"] == "MseLossBackward0"
        # the loss graphs themselves are disjoint: the same ops at the same lines
        assert s["diff"]["link"] is None and s["diff"]["added_ops"] == []


def test_diff_names_hidden_state_and_warnings(tmp_path, capfd):
    out = run(RNN, [], steps=3, out=str(tmp_path / "rnn.html"))
    assert capfd.readouterr().out.count("grad of a non-leaf: None") == 3
    d = _data(out)
    for s in d["steps"][1:]:
        assert s["diff"]["link"]["name"] == "TanhBackward0"
        assert s["diff"]["link"]["code"] == "h = cell(x, h)"
        assert "carried across steps without .detach()" in s["diff"]["text"]
        assert [c["variable"] for c in s["diff"]["carried"]][:1] == ["h"]
        assert s["diff"]["carried"][0]["code"] == "h = cell(x, h)"
    # the graph grows by one cell per step
    n1, n2, n3 = (len(s["nodes"]) for s in d["steps"])
    assert n3 - n2 == n2 - n1 > 0
    w = d["warnings"]
    assert len(w) >= 1 and w[0]["source"] == f"{RNN}:15"
    assert w[0]["code"] == 'print("grad of a non-leaf:", out.grad)'
    assert "not a leaf Tensor" in w[0]["message"] and w[0]["category"] == "UserWarning"
    # glassgrad's own diagnostic fires under inspect as in a plain run, with its line
    grow = [x for x in w if "keeps growing across iterations" in x["message"]]
    assert len(grow) == 1 and grow[0]["source"] == f"{RNN}:14"
    assert grow[0]["code"] == "loss.backward(retain_graph=True)" and grow[0]["step"] == 3


def test_page_holds_sections(net_report):
    path, d = net_report
    text = open(path, encoding="utf-8").read()
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")  # no network
    assert "https://" not in text
    for cls in ("memory-kinds", "memory-peaks", "memory-top", "ledger", "diff-carried",
                "diagnostics"):
        assert cls in text
    rows = [n for n in d["steps"][0]["nodes"] if n["saved"]]
    assert rows and all(s["nbytes"] for n in rows for s in n["saved"])


def test_error_in_script_still_writes_report(tmp_path):
    import torch
    with pytest.raises(RuntimeError) as expected:
        torch.ones(2) @ torch.ones(3)
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()\n"
                   "torch.ones(2) @ torch.ones(3)\n")
    with pytest.raises(RuntimeError, match=re.escape(str(expected.value).splitlines()[0])):
        run(str(bad), [], steps=1, out=str(tmp_path / "bad.html"))
    d = _data(str(tmp_path / "bad.html"))
    assert len(d["steps"]) == 1
    err = d["warnings"][-1]  # the error that ended the script, as a diagnostic with its line
    assert err["category"] == "RuntimeError" and err["source"] == f"{bad}:4"
    assert err["code"] == "torch.ones(2) @ torch.ones(3)"
    assert err["message"].startswith(str(expected.value).splitlines()[0])
