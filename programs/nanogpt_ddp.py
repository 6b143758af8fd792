"""nanoGPT's ``train.py``, as published, on glassgrad with DistributedDataParallel over 2 MPI ranks
against 1 rank with the same global batch (issue 17).

    python programs/nanogpt_ddp.py /path/to/nanoGPT          # a checkout or a bare git directory
    python programs/nanogpt_ddp.py REPO --iters 30 --json out.json

It copies ``train.py``, ``model.py`` and ``configurator.py`` (unchanged) into a fresh folder,
writes ``data/shakespeare_char/{train.bin,val.bin,meta.pkl}`` in the format nanoGPT's
``data/shakespeare_char/prepare.py`` writes (uint16 character ids, a 90/10 split, meta with
vocab_size/itos/stoi) from a generated text (no download), and runs

    python -m glassgrad.distributed.run --nproc-per-node N -m glassgrad.alias train.py <tiny config>

for N = 1 and N = 2 with ``gradient_accumulation_steps = 2``: train.py divides it by the world
size, so both runs step on 2 micro-batches of ``batch_size`` sequences per iteration. It prints
both loss curves (rank 0's, as train.py logs them) and their differences.

What stands in for the GPU (``nanogpt_cpu/sitecustomize.py``, on PYTHONPATH for both runs): the
DDP branch of train.py pins each rank to ``cuda:LOCAL_RANK`` unconditionally
(``torch.cuda.set_device``, ``DDP(model, device_ids=[...])``), which PyTorch's own CPU build refuses
too; the stand-in makes ``set_device`` a no-op and drops ``device_ids`` for CPU modules, nothing
else. NOTE: the 1-rank and 2-rank runs draw different batches (train.py seeds each rank with
1337 + rank), so the curves agree statistically, not bit for bit; the initial weights are the same
(DDP broadcasts rank 0's).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FILES = ("train.py", "model.py", "configurator.py")
WORDS = ("the king and queen of the realm spoke to their people at dawn while rivers ran "
         "softly under old stone bridges and merchants sold bread wine and cloth to travellers "
         "who came from far away lands seeking fortune honour love or simple rest").split()


def tiny_config(iters: int) -> list[str]:
    """Overrides through nanoGPT's configurator flags: a 2-layer char model on the CPU."""
    return [
        "--dataset=shakespeare_char", "--device=cpu", "--compile=False", "--dtype=float32",
        "--batch_size=8", "--block_size=32", "--n_layer=2", "--n_head=2", "--n_embd=32",
        "--dropout=0.0", "--bias=False", f"--max_iters={iters}", f"--lr_decay_iters={iters}",
        "--eval_interval=1000000", "--eval_iters=1", "--log_interval=1",
        "--always_save_checkpoint=False", "--gradient_accumulation_steps=2",
        "--learning_rate=0.003", "--warmup_iters=0", "--min_lr=0.0003", "--backend=gloo",
    ]


def extract(repo: str, dest: str) -> None:
    for name in FILES:
        path = os.path.join(repo, name)
        if os.path.exists(path):
            with open(path, "rb") as f:
                data = f.read()
        else:  # a bare git directory
            data = subprocess.run(["git", "-C", repo, "show", f"HEAD:{name}"], check=True,
                                  capture_output=True).stdout
        with open(os.path.join(dest, name), "wb") as f:
            f.write(data)


def write_data(folder: str, n_chars: int = 200_000) -> None:
    """What prepare.py writes, from seeded sentences over a small word list."""
    rng = np.random.default_rng(0)
    lines = []
    while sum(map(len, lines)) < n_chars:
        words = rng.choice(WORDS, size=int(rng.integers(4, 12)))
        lines.append(" ".join(words).capitalize() + ".")
    text = "\n".join(lines)
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    ids = np.array([stoi[c] for c in text], dtype=np.uint16)
    cut = int(len(ids) * 0.9)
    os.makedirs(folder, exist_ok=True)
    ids[:cut].tofile(os.path.join(folder, "train.bin"))
    ids[cut:].tofile(os.path.join(folder, "val.bin"))
    with open(os.path.join(folder, "meta.pkl"), "wb") as f:
        pickle.dump({"vocab_size": len(chars), "itos": itos, "stoi": stoi}, f)


def run(folder: str, nproc: int, iters: int, timeout: float) -> tuple[list[float], str]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([os.path.join(HERE, "nanogpt_cpu"), ROOT]))
    cmd = [sys.executable, "-m", "glassgrad.distributed.run", "--nproc-per-node", str(nproc),
           "-m", "glassgrad.alias", "train.py", *tiny_config(iters)]
    done = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True,
                          timeout=timeout)
    log = done.stdout + done.stderr
    if done.returncode != 0:
        raise RuntimeError(f"{nproc}-rank run failed ({done.returncode}):\n{log[-4000:]}")
    losses = [float(m) for m in re.findall(r"^iter \d+: loss ([0-9.]+)", done.stdout, re.M)]
    return losses, log


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", help="a nanoGPT checkout or bare git directory")
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--json", default=None, help="write both curves here")
    args = parser.parse_args(argv)
    result = {}
    with tempfile.TemporaryDirectory() as tmp:
        for nproc in (1, 2):
            folder = os.path.join(tmp, f"nanogpt-{nproc}")
            os.makedirs(folder)
            extract(args.repo, folder)
            write_data(os.path.join(folder, "data", "shakespeare_char"))
            result[nproc], _ = run(folder, nproc, args.iters, args.timeout)
    one, two = np.array(result[1]), np.array(result[2])
    print("iter  1-rank  2-ranks")
    for i, (a, b) in enumerate(zip(one, two)):
        print(f"{i:>4}  {a:.4f}  {b:.4f}")
    summary = {"one_rank": result[1], "two_ranks": result[2],
               "mean_abs_diff": float(np.abs(one - two).mean()),
               "first": [float(one[0]), float(two[0])],
               "last5_mean": [float(one[-5:].mean()), float(two[-5:].mean())]}
    print(json.dumps({k: v for k, v in summary.items() if k not in ("one_rank", "two_ranks")}))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
