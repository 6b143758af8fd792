"""One torch program with worker processes, run on torch and, unchanged, on glassgrad
(``python -m glassgrad.alias``): Hogwild steps on a shared model from two children (``spawn``,
``fork`` and ``forkserver`` on glassgrad, ``fork`` on torch, the oracle), tensors through
queues both ways, under both sharing strategies; the outputs must agree and the glassgrad run
may leave no shared memory behind nor anything for resource_tracker to warn about (issue 22,
lane mp)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = r'''
import json, sys
import torch
import torch.multiprocessing as mp


def worker(rank, model, q, out, barrier, done, whole, tail):
    if rank == 0:
        tail[0] = 5.0  # a view sent beside its base (one descriptor for both under spawn)
    x = torch.arange(6.0).reshape(2, 3) / (rank + 1)
    loss = model(x).pow(2).sum()
    loss.backward()
    barrier.wait()  # both gradients taken on the same weights, then the updates, in rank order
    for turn in range(2):
        if turn == rank:
            with torch.no_grad():
                for p in model.parameters():
                    p.sub_(0.01 * p.grad)
        barrier.wait()
    t = q.get()
    for turn in range(2):  # both children add into the parent's tensor, one after the other:
        if turn == rank:  # two unsynchronised add_ race (read, read, write, write), as in torch
            t.add_(rank + 1)
        barrier.wait()
    out.put((rank, loss.item(), torch.full((2,), float(rank)), type(model.weight).__name__,
             model.weight.requires_grad))
    done.wait()


def run(strategy, start_method):
    mp.set_sharing_strategy(strategy)
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    model.share_memory()
    ctx = mp.get_context(start_method)
    q, out, barrier, done = ctx.Queue(), ctx.Queue(), ctx.Barrier(2), ctx.Event()
    t = torch.zeros(3)
    q.put(t)
    q.put(t)
    whole = torch.zeros(3).share_memory_()
    procs = mp.start_processes(worker, args=(model, q, out, barrier, done, whole, whole[1:]),
                               nprocs=2, join=False, start_method=start_method)
    got = sorted([out.get(timeout=120) for _ in range(2)], key=lambda r: r[0])
    done.set()
    procs.join()
    return {
        "weight": model.weight.tolist(), "bias": model.bias.tolist(), "t": t.tolist(),
        "whole": whole.tolist(),
        "shared": [model.weight.is_shared(), t.is_shared()],
        "children": [(r, round(loss, 5), back.tolist(), back.is_shared(), cls, grad)
                     for r, loss, back, cls, grad in got],
    }


if __name__ == "__main__":
    # spawn under file_descriptor (Process arguments pickled: DupFd through the Popen), then
    # fork under file_system (arguments inherited; queues send /dev/shm names), then a fork
    # server (its children are forked from a server started before them)
    first, server = sys.argv[1:3]
    print(json.dumps([run("file_descriptor", first), run("file_system", "fork"),
                      run("file_descriptor", server)]))
'''


def _our_shm_names() -> set:
    # (the names glassgrad/multiprocessing/_named.py makes: glassgrad_<pid>_<12 hex digits>)
    return {n for n in os.listdir("/dev/shm") if re.fullmatch(r"glassgrad_\d+_[0-9a-f]{12}", n)}


def _run(tmp_path, library: str):
    script = tmp_path / "hogwild_program.py"
    script.write_text(PROGRAM)
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1")
    # NOTE: torch, the oracle, runs every part with fork: the answer does not depend on the
    # start method, and spawned torch children would add ~20 s of imports to the test
    oracle = library == "torch"
    cmd = [sys.executable, str(script), "fork" if oracle else "spawn",
           "fork" if oracle else "forkserver"]
    if library == "glassgrad":
        cmd[1:1] = ["-m", "glassgrad.alias"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="both strategies: Linux")
def test_spawned_hogwild_program_matches_torch(tmp_path):
    theirs, their_err = _run(tmp_path, "torch")
    before = _our_shm_names()
    ours, our_err = _run(tmp_path, "glassgrad")
    assert _our_shm_names() - before == set()  # every /dev/shm name of file_system unlinked
    for mine, torch_s in zip(ours, theirs):
        assert mine["shared"] == torch_s["shared"] == [True, True]
        assert mine["t"] == torch_s["t"] == [3.0, 3.0, 3.0]
        assert mine["whole"] == torch_s["whole"] == [0.0, 5.0, 0.0]
        assert mine["children"] == torch_s["children"]
        for key in ("weight", "bias"):
            np.testing.assert_allclose(mine[key], torch_s[key], rtol=1e-6, atol=1e-7)
    assert "leaked" not in our_err and "resource_tracker" not in our_err, our_err
