"""pytorch/examples ``gcn`` and ``gat``, unchanged, on torch and on glassgrad (``python -m
glassgrad.alias``), on a generated graph of Cora's shapes and file format, compared loss by loss.

The programs come from a pytorch/examples checkout or bare mirror named by the environment
variable ``PYTORCH_EXAMPLES`` (skipped without one). Each run gets a fresh folder holding the
script and the generated ``cora/cora.content`` / ``cora/cora.cites``, where the programs read them:
``gat`` finds the folder ("Dataset already downloaded..."); ``gcn`` always calls
``requests.get(cora_url)``, so a ``requests.py`` beside the script (the script's folder is first
on ``sys.path``) answers with the same files as ``cora.tgz``. A driver wraps ``nn.NLLLoss.forward``
to record every loss the program computes at full precision (the programs print 4 decimals), then
runs the script as ``__main__`` with its own flags.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.environ.get("PYTORCH_EXAMPLES", "")
pytestmark = pytest.mark.skipif(
    not EXAMPLES or not os.path.exists(EXAMPLES),
    reason="set PYTORCH_EXAMPLES to a pytorch/examples checkout or bare mirror")

# Cora: 2,708 papers, 1,433 binary word features, 7 classes, 5,429 citations
NODES, FEATURES, EDGES = 2708, 1433, 5429
CLASSES = ("Case_Based", "Genetic_Algorithms", "Neural_Networks", "Probabilistic_Methods",
           "Reinforcement_Learning", "Rule_Learning", "Theory")

DRIVER = r"""
import json, runpy, sys
if sys.argv[1] == "glassgrad":
    import glassgrad.alias
    glassgrad.alias.install()
import torch
losses = []
forward = torch.nn.NLLLoss.forward
def recording(self, *args, **kwargs):
    result = forward(self, *args, **kwargs)
    losses.append(result.item())
    return result
torch.nn.NLLLoss.forward = recording
out, script = sys.argv[2], sys.argv[3]
sys.argv = [script, *sys.argv[4:]]
sys.path.insert(0, ".")
runpy.run_path(script, run_name="__main__")
with open(out, "w") as f:
    json.dump(losses, f)
"""

REQUESTS = r"""
import io
class Response:
    def __init__(self, body):
        self.raw = io.BytesIO(body)
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self.raw.close()
def get(url, stream=False, **kwargs):
    assert url == "https://linqs-data.soe.ucsc.edu/public/lbc/cora.tgz", url
    with open("cora.tgz", "rb") as f:
        return Response(f.read())
"""


def cora_files(seed: int = 0) -> tuple[str, str]:
    """``cora.content`` (``<paper id> <1,433 0/1 features> <class name>`` per line) and
    ``cora.cites`` (``<cited id> <citing id>``), Cora's shapes, from a seeded generator. Each
    paper has at least one word (the programs divide by the word count) and papers of one class
    share words more often, so training moves the loss."""
    rng = np.random.default_rng(seed)
    ids = rng.choice(1_200_000, NODES, replace=False) + 31
    labels = rng.integers(0, len(CLASSES), NODES)
    topic = rng.random((len(CLASSES), FEATURES)) < 0.02
    words = (rng.random((NODES, FEATURES)) < 0.008) | (
        topic[labels] & (rng.random((NODES, FEATURES)) < 0.4))
    words[np.arange(NODES), rng.integers(0, FEATURES, NODES)] = True
    pairs = set()
    while len(pairs) < EDGES:
        a, b = rng.integers(0, NODES, 2)
        if a != b:
            pairs.add((int(a), int(b)))
    content = "".join(
        f"{ids[i]}\t" + "\t".join("1" if w else "0" for w in words[i]) + f"\t{CLASSES[labels[i]]}\n"
        for i in range(NODES))
    cites = "".join(f"{ids[a]}\t{ids[b]}\n" for a, b in sorted(pairs))
    return content, cites


@pytest.fixture(scope="module")
def cora():
    return cora_files()


def _script(program: str) -> str:
    path = os.path.join(EXAMPLES, program, "main.py")
    if os.path.isfile(path):
        with open(path, encoding="utf8") as f:
            return f.read()
    return subprocess.run(["git", "-C", EXAMPLES, "show", f"HEAD:{program}/main.py"],
                          capture_output=True, text=True, check=True).stdout


def _run(program: str, library: str, flags: list[str], folder, cora) -> list[float]:
    folder.mkdir()
    (folder / "main.py").write_text(_script(program))
    (folder / "driver.py").write_text(DRIVER)
    (folder / "requests.py").write_text(REQUESTS)  # both import it; only gcn calls get()
    if program == "gcn":
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            for name, text in zip(("cora/cora.content", "cora/cora.cites"), cora):
                data = text.encode()
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        (folder / "cora.tgz").write_bytes(buffer.getvalue())
    else:
        (folder / "cora").mkdir()
        for name, text in zip(("cora.content", "cora.cites"), cora):
            (folder / "cora" / name).write_text(text)
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    done = subprocess.run([sys.executable, "driver.py", library, "losses.json", "main.py", *flags],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{program} on {library} stopped:\n{done.stderr[-3000:]}"
    assert "Test set results" in done.stdout, done.stdout
    return json.loads((folder / "losses.json").read_text())


@pytest.mark.parametrize("program,flags", [
    ("gcn", ["--epochs", "5", "--val-every", "1"]),
    ("gat", ["--epochs", "3", "--val-every", "1", "--num-heads", "2", "--hidden-dim", "16"]),
])
def test_program_losses_match_torch(program, flags, cora, tmp_path):
    theirs = _run(program, "torch", flags, tmp_path / "torch", cora)
    ours = _run(program, "glassgrad", flags, tmp_path / "glassgrad", cora)
    epochs = int(flags[1])
    assert len(theirs) == 3 * epochs + 1  # per epoch: the step's loss, train and val; then test
    assert len(ours) == len(theirs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)
    assert theirs[-1] < theirs[0]  # the run trained: a failing comparison would not be vacuous
