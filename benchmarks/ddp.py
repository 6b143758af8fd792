"""The DDP row of ``make bench``: an MLP training step on 2 MPI ranks against 1, the same global
batch, and the share of the all-reduce time that backward hid.

    python benchmarks/ddp.py                 # both runs, one line each and the row
    python benchmarks/ddp.py --json out.json

Each run is ``mpiexec -n N python benchmarks/ddp.py --worker``: DDP(MLP) with SGD, ``GLOBAL``
samples split over the ranks, one BLAS thread per rank. Times are rank 0's medians per step.
Hidden fraction: 1 - (time finalize blocked on the buckets) / (the same buckets all-reduced
synchronously, alone), from the reducer's timeline (``DDP.bucket_timeline``); 1.0 means
communication cost nothing beyond backward, 0.0 that none of it overlapped. The blocked time also
holds the wait for the slower rank (one busy core delays its rank), so the fraction is a lower
bound. On this 2-core
machine two ranks share the cores with everything else, so the ratio of step times, not the
absolute speed-up, is the result.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GLOBAL = 256
SIZES = (784, 1024, 1024, 1024, 10)
WARMUP, STEPS = 3, 15
CAP_MB = 2  # several buckets for this 11.6 MB model (25 MB, the default, would make two)


def worker(out: str) -> None:
    sys.path.insert(0, ROOT)
    import glassgrad as torch
    import glassgrad.distributed as dist
    from glassgrad import nn

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    layers = []
    for a, b in zip(SIZES[:-1], SIZES[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    net = nn.parallel.DistributedDataParallel(nn.Sequential(*layers[:-1]), bucket_cap_mb=CAP_MB)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(GLOBAL // world, SIZES[0])
    y = torch.randint(0, SIZES[-1], (GLOBAL // world,))
    times, blocked = [], []
    for step in range(WARMUP + STEPS):
        dist.barrier()
        start = time.perf_counter()
        opt.zero_grad()
        nn.functional.cross_entropy(net(x), y).backward()
        opt.step()
        elapsed = time.perf_counter() - start
        if step >= WARMUP:
            times.append(elapsed)
            blocked.append(net.bucket_timeline()["blocked_s"])
    alone = []
    for _ in range(STEPS):  # the same buckets, all-reduced synchronously with nothing else on
        dist.barrier()
        start = time.perf_counter()
        for b in net.reducer.buckets:
            dist.all_reduce(b.flat.clone())
        alone.append(time.perf_counter() - start)
    result = {"world": world, "step_s": statistics.median(times),
              "blocked_s": statistics.median(blocked),
              "allreduce_alone_s": statistics.median(alone),
              "buckets": [b.nbytes for b in net.reducer.buckets],
              "timeline": net.format_bucket_timeline()}
    if rank == 0:
        with open(out, "w") as f:
            json.dump(result, f)
    dist.destroy_process_group()


def mpiexec() -> str:
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return beside if os.path.exists(beside) else shutil.which("mpiexec")


def run(nproc: int, progress_thread: bool = False, timeout: float = 600) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONPATH=ROOT)
        env.pop("GLASSGRAD_DISTRIBUTED_PROGRESS", None)
        if progress_thread:
            env["GLASSGRAD_DISTRIBUTED_PROGRESS"] = "thread"
        subprocess.run([mpiexec(), "-n", str(nproc), sys.executable, os.path.abspath(__file__),
                        "--worker", out], env=env, check=True, timeout=timeout)
        with open(out) as f:
            return json.load(f)


def _hidden(r: dict):
    if not r["allreduce_alone_s"]:
        return None
    return min(1.0, max(0.0, 1.0 - r["blocked_s"] / r["allreduce_alone_s"]))


def row() -> dict:
    """The runs and the row: step times of 2 ranks against 1, and the hidden fraction on 2 ranks
    as MPI progresses by itself (the hooks test the works) and with glassgrad.distributed's
    progress thread (GLASSGRAD_DISTRIBUTED_PROGRESS=thread)."""
    one, two, two_thread = run(1), run(2), run(2, progress_thread=True)
    return {"one_rank": one, "two_ranks": two, "two_ranks_progress_thread": two_thread,
            "ratio_2_over_1": two["step_s"] / one["step_s"],
            "ratio_2_over_1_progress_thread": two_thread["step_s"] / one["step_s"],
            "hidden_fraction": _hidden(two), "hidden_fraction_progress_thread": _hidden(two_thread)}


def format_row(r: dict) -> str:
    one, two, thr = r["one_rank"], r["two_ranks"], r["two_ranks_progress_thread"]
    params = sum(a * b + b for a, b in zip(SIZES[:-1], SIZES[1:]))
    return (f"DDP MLP {params / 1e6:.1f}M params, global batch {GLOBAL}, "
            f"{len(two['buckets'])} buckets of <= {CAP_MB} MB: 1 rank "
            f"{one['step_s'] * 1e3:.1f} ms/step; 2 ranks {two['step_s'] * 1e3:.1f} ms/step "
            f"(ratio {r['ratio_2_over_1']:.2f}), all-reduce alone "
            f"{two['allreduce_alone_s'] * 1e3:.1f} ms, blocked after backward "
            f"{two['blocked_s'] * 1e3:.1f} ms: hidden {r['hidden_fraction']:.0%}; with the "
            f"progress thread {thr['step_s'] * 1e3:.1f} ms/step (ratio "
            f"{r['ratio_2_over_1_progress_thread']:.2f}), hidden "
            f"{r['hidden_fraction_progress_thread']:.0%}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", metavar="OUT", help=argparse.SUPPRESS)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.worker)
        return 0
    r = row()
    print(format_row(r))
    print(r["two_ranks"]["timeline"])
    print(r["two_ranks_progress_thread"]["timeline"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
