import json
import os
import re
import subprocess
import sys

from glassgrad.inspect import run

SCRIPT = os.path.join(os.path.dirname(__file__), "data", "inspect_train.py")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _data(path):
    """The JSON data a report page holds."""
    text = open(path, encoding="utf-8").read()
    found = re.search(r'id="data">(.*?)</script>', text, re.S).group(1)
    return json.loads(found.replace("<\\/", "</"))


def test_inspect_records_steps(tmp_path, capfd):
    out = run(SCRIPT, ["5"], steps=3, out=str(tmp_path / "r.html"))
    assert "trained 5" in capfd.readouterr().out  # the script kept running past the steps
    d = _data(out)
    assert [s["step"] for s in d["steps"]] == [1, 2, 3]
    names = {n["name"] for n in d["steps"][0]["nodes"]}
    assert "AddmmBackward0" in names and "MseLossBackward0" in names
    m = d["steps"][0]["memory"]
    assert m["series"]["parameters"][0] > 0 and m["series"]["gradients"][-1] > 0
    assert d["steps"][1]["diff"]["added_ops"] == [] and d["steps"][1]["diff"]["previous"] == 1


def test_inspect_stop_after(tmp_path, capfd):
    run(SCRIPT, ["5"], steps=2, out=str(tmp_path / "r.html"), stop_after=True)
    assert "trained" not in capfd.readouterr().out
    assert len(_data(str(tmp_path / "r.html"))["steps"]) == 2


def test_inspect_with_real_torch_loaded(tmp_path):
    import torch
    d_out = run(SCRIPT, ["1"], steps=1, out=str(tmp_path / "r.html"))
    assert sys.modules["torch"] is torch  # the oracle is put back
    assert len(_data(d_out)["steps"]) == 1  # and the script ran on glassgrad, not torch


def test_console_command(tmp_path):
    out = tmp_path / "r.html"
    p = subprocess.run([sys.executable, "-m", "glassgrad.inspect", "--steps", "1", "--out",
                        str(out), "--plots", SCRIPT, "2"], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "trained 2" in p.stdout and len(_data(str(out))["steps"]) == 1
    png = tmp_path / "r.step1.memory.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    usage = "from glassgrad._cli import main; raise SystemExit(main([]))"
    p = subprocess.run([sys.executable, "-c", usage], capture_output=True, text=True, cwd=ROOT,
                       timeout=300)
    assert p.returncode == 2 and "usage: glassgrad inspect" in p.stdout


def test_autograd_backward_is_a_step(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import torch\nw = torch.ones(3, requires_grad=True)\n"
                      "for _ in range(2):\n    torch.autograd.backward((w * w).sum())\n"
                      "print(w.grad.tolist())\n")
    d = _data(run(str(script), [], steps=2, out=str(tmp_path / "r.html")))
    assert [sorted(n["name"] for n in s["nodes"]) for s in d["steps"]] == \
        [["AccumulateGrad", "MulBackward0", "SumBackward0"]] * 2
    assert d["steps"][0]["nodes"][-1]["code"] == "torch.autograd.backward((w * w).sum())"


def test_two_models_of_one_class(tmp_path):
    script = tmp_path / "two.py"
    script.write_text("import torch\nenc, dec = torch.nn.Linear(3, 4), torch.nn.Linear(4, 2)\n"
                      "dec(enc(torch.randn(5, 3))).sum().backward()\n")
    d = _data(run(str(script), [], steps=1, out=str(tmp_path / "r.html")))
    step = d["steps"][0]
    assert sorted(step["modules"]) == ["Linear", "Linear#2"]
    leaves = {n["param"]: n["module"] for n in step["nodes"] if n["kind"] == "leaf"}
    assert leaves == {"Linear.weight": "Linear", "Linear.bias": "Linear",
                      "Linear#2.weight": "Linear#2", "Linear#2.bias": "Linear#2"}
