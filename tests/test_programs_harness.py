"""programs/: the torchvision stand-in and the harness, on a small program of our own (the
pytorch/examples mirror is not in CI). The program runs unchanged on torch and through
glassgrad.alias, and the harness must find the same losses on both."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "programs"))

import run  # noqa: E402  programs/run.py
from table import Program, parse_values, values_match  # noqa: E402

pytest.importorskip("PIL")
pytest.importorskip("sklearn")

# Deterministic weights (no RNG: that is the rng lane's), the shim's MNIST through its
# transforms and a DataLoader, resnet18 in eval mode on the same batch, save_image.
_TOY = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torchvision import datasets, models, transforms, utils

    def fill(module):
        with torch.no_grad():
            for p in module.parameters():
                p.copy_(torch.linspace(-0.05, 0.05, p.numel()).view_as(p))

    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    train = datasets.MNIST("../data", train=True, download=True, transform=transform)
    loader = torch.utils.data.DataLoader(train, batch_size=32)
    model = nn.Linear(784, 10)
    fill(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step, (x, y) in enumerate(loader):
        opt.zero_grad()
        loss = F.cross_entropy(model(x.flatten(1)), y)
        loss.backward()
        opt.step()
        print("Train step {} Loss: {:.6f}".format(step, loss.item()))
        if step == 3:
            break
    net = models.resnet18(weights=None, num_classes=10)
    fill(net)
    net.eval()
    with torch.no_grad():
        out = net(x[:2].repeat(1, 3, 1, 1))
    print("resnet Loss: {:.6f}".format(F.cross_entropy(out, y[:2]).item()))
    utils.save_image(x[:4], "grid.png", normalize=True)
    print(len(train), train.data.shape[1:], train.data.dtype, train.targets.dtype)
"""


def test_toy_program_runs_alike_on_torch_and_glassgrad(tmp_path):
    repo = tmp_path / "examples"
    (repo / "toy").mkdir(parents=True)
    (repo / "toy" / "main.py").write_text(textwrap.dedent(_TOY))
    program = Program("toy", "toy", "main.py", (), r"Loss: ([-\d.]+)")
    args = argparse.Namespace(python=sys.executable, threads=1, timeout=300.0,
                              out=str(tmp_path / "out"), keep=True, workdir=str(tmp_path))
    runs = {lib: run.run_one(program, lib, str(repo), args) for lib in run.LIBRARIES}
    for lib, result in runs.items():
        assert result["ran_to_end"], (lib, result["stopped_at"])
        assert os.path.exists(os.path.join(result["folder"], "grid.png"))
    assert len(runs["torch"]["values"]) == 5
    verdict = run.compare(runs, 1e-4)
    assert verdict["match"], runs
    log = (tmp_path / "out" / "toy-glassgrad.log").read_text()
    assert "1437 torch.Size([28, 28]) torch.uint8 torch.int64" in log.replace(
        "glassgrad.Size", "torch.Size").replace("glassgrad.", "torch.")
    assert "| toy |" in run.table([{"program": "toy", "flags": "", "runs": runs, **verdict}])


def test_values_match_uses_the_printed_precision():
    program = Program("p", "p", "main.py", (), r"Loss_D: ([\d.]+) Loss_G: ([\d.]+)")
    assert parse_values(program, "Loss_D: 1.4077 Loss_G: 1.6812\nLoss_D: 2.0 Loss_G: 3.0") == [
        "1.4077", "1.6812", "2.0", "3.0"]
    assert values_match("1.4077", "1.4078", 1e-4)        # one unit of %.4f
    assert not values_match("1.4077", "1.4079", 1e-4)
    assert not values_match("0.50237381", "0.50247381", 1e-4)
    assert not values_match("433", "434", 1e-4)          # counts compare exactly


def test_extract_reads_a_bare_git_mirror(tmp_path):
    # the pytorch/examples mirror is a bare git directory: programs come out of its HEAD
    import subprocess

    work = tmp_path / "work"
    (work / "prog" / "data").mkdir(parents=True)
    (work / "prog" / "main.py").write_text("print('hi')\n")
    (work / "prog" / "data" / "train.txt").write_text("a b c\n")
    (work / "other.py").write_text("")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "x"]):
        subprocess.run([*git, *args], cwd=work, check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(tmp_path / "mirror")],
                   check=True)
    missing = run.extract(str(tmp_path / "mirror"), "prog", str(tmp_path / "out"))
    assert missing == []
    assert sorted(p.name for p in (tmp_path / "out").rglob("*") if p.is_file()) == [
        "main.py", "train.txt"]
    assert (tmp_path / "out" / "main.py").read_text() == "print('hi')\n"
    with pytest.raises(FileNotFoundError):
        run.extract(str(tmp_path / "mirror"), "absent", str(tmp_path / "out2"))
