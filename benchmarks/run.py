"""``make bench``: every workload on glassgrad and on torch in one process, side by side.

Each workload is a function ``fn(lib)`` returning a callable that runs one iteration. Libraries are
alternated, warmed up, and timed repeatedly; the table shows medians and the ratio glassgrad/torch
(below 1 means glassgrad is faster). torch uses as many threads as NumPy's BLAS.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import glassgrad  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.workloads import WORKLOADS  # noqa: E402


def blas_threads() -> int:
    try:
        from threadpoolctl import threadpool_info

        infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        if infos:
            return int(infos[0]["num_threads"])
    except ImportError:
        pass
    return int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1))


def time_call(fn, repeats: int, inner: int) -> list:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t0) / inner)
    return times


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--only", default="", help="comma-separated workload names")
    args = parser.parse_args(argv)
    import torch

    threads = blas_threads()
    torch.set_num_threads(threads)
    print(f"numpy {np.__version__}, torch {torch.__version__}, threads {threads}")
    print(f"{'workload':34s} {'glassgrad':>12s} {'torch':>12s} {'ratio':>7s}")
    names = [n for n in args.only.split(",") if n]
    for name, (make, inner) in WORKLOADS.items():
        if names and name not in names:
            continue
        runs = {"glassgrad": make(glassgrad), "torch": make(torch)}
        for fn in runs.values():
            fn()  # warm-up
        samples = {k: [] for k in runs}
        for _ in range(args.repeats):
            for lib, fn in runs.items():  # alternate so drift hits both alike
                samples[lib].extend(time_call(fn, 1, inner))
        g = statistics.median(samples["glassgrad"])
        t = statistics.median(samples["torch"])
        print(f"{name:34s} {_fmt(g):>12s} {_fmt(t):>12s} {g / t:7.2f}")


def _fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.2f} ms"


if __name__ == "__main__":
    main()
