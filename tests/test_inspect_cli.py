import json
import os
import re

from glassgrad.inspect import run

SCRIPT = os.path.join(os.path.dirname(__file__), "data", "inspect_train.py")


def _data(path):
    text = open(path, encoding="utf-8").read()
    return json.loads(re.search(r'id="data">(.*?)</script>', text, re.S).group(1).replace("<\\/", "</"))


def test_inspect_records_steps(tmp_path, capfd):
    out = run(SCRIPT, ["5"], steps=3, out=str(tmp_path / "r.html"))
    assert "trained 5" in capfd.readouterr().out  # the script kept running past the steps
    d = _data(out)
    assert [s["step"] for s in d["steps"]] == [1, 2, 3]
    names = {n["name"] for n in d["steps"][0]["nodes"]}
    assert "AddmmBackward0" in names and "MseLossBackward0" in names
    tl = d["steps"][0]["timeline"]
    assert [w for w, _ in tl] == ["before backward", "after backward", "after optimizer.step"]
    assert tl[1][1]["gradients"] > 0 and tl[0][1]["parameters"] > 0
    assert d["steps"][1]["diff"]["added"] == [] and d["steps"][0]["diff"]["added"]


def test_inspect_stop_after(tmp_path, capfd):
    run(SCRIPT, ["5"], steps=2, out=str(tmp_path / "r.html"), stop_after=True)
    assert "trained" not in capfd.readouterr().out
    assert len(_data(str(tmp_path / "r.html"))["steps"]) == 2


def test_inspect_with_real_torch_loaded(tmp_path):
    import torch
    d_out = run(SCRIPT, ["1"], steps=1, out=str(tmp_path / "r.html"))
    import sys
    assert sys.modules["torch"] is torch  # the oracle is put back
    assert len(_data(d_out)["steps"]) == 1  # and the script ran on glassgrad, not torch
