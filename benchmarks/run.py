"""``make bench``: every workload on glassgrad and on torch in one process, side by side.

Both libraries build each workload from identical NumPy weights and inputs; the losses of the first
iterations are compared (a mismatch is reported in the table and fails the run), then the two are
warmed up and timed alternately, sample by sample, so load on the machine hits both alike; a
sample runs enough iterations to last ``--min-sample-ms`` (NOTE [Sample length]; 0 gives the
workload's own minimum). The table shows the median time per iteration, the ratio of the
medians glassgrad/torch (below 1: glassgrad is faster; the issue's targets are on it), the ratio
of the means (which counts glassgrad's garbage-collection pauses: a median leaves them out) and
peak memory (``benchmarks/memory.py``: the whole process's peak RSS, which the target is on,
and the step's share of it).

    python benchmarks/run.py                       # everything (a few minutes on 2 cores)
    python benchmarks/run.py --only chain,mlp      # workload keys: see --list
    python benchmarks/run.py --threads 1 --json out.json

torch runs with ``torch.set_num_threads`` equal to the BLAS threads NumPy uses (``--threads`` sets
both, through threadpoolctl for NumPy's BLAS). The header names OpenBLAS's kernels: ``make bench``
picks its Zen ones on an AMD CPU with AVX-512 (NOTE [OpenBLAS kernels] in the Makefile);
``OPENBLAS_CORETYPE=SkylakeX make bench`` keeps OpenBLAS's own choice there.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np

from benchmarks import memory
from benchmarks.workloads import WORKLOADS

TARGETS = {"chain": 0.5, "x3": 1.0, "mlp": 1.0, "cnn": 2.0, "lstm": 1.5, "wgan_gp": 1.0,
           "maml": 1.0, "gan": 1.0}
MEMORY_TARGETS = {"mlp": 0.5}
# issue 20, lane perf
from benchmarks.workloads import PERF_TARGETS  # noqa: E402

TARGETS.update(PERF_TARGETS)
WARMUP = memory.WARMUP  # iterations; their losses are the ones compared
# NOTE [Sample length]: a library's first iteration after the other library's sample refills the
# caches, branch predictors and allocator pools the other evicted (measured on the op chain:
# +13-20% for glassgrad's first iteration after torch's, +3-7% for torch's after glassgrad's; on
# x**3 and the MLP both pay 30-60%; a 32 MB NumPy sum in between costs glassgrad +5-13%). A user's training loop does not alternate,
# so each sample runs enough iterations to last this long and the refill is a small part of it.
MIN_SAMPLE_MS = 20.0


def blas_info() -> dict:
    """NumPy's BLAS (name, version, threads) as threadpoolctl reports it."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return {"name": "unknown", "threads": os.cpu_count() or 1}
    for info in threadpool_info():
        if info.get("user_api") == "blas":
            return {"name": f"{info.get('internal_api')} {info.get('version')}",
                    "threads": int(info["num_threads"]),
                    "architecture": info.get("architecture")}
    return {"name": "none found", "threads": 1}


def machine_info() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__}


def load_average() -> tuple:
    try:
        return tuple(round(v, 2) for v in os.getloadavg())
    except OSError:
        return ()


def iterations_per_sample(fns: dict, least: int, min_sample_ms: float) -> int:
    """At least ``least``, and enough that the faster library's sample lasts ``min_sample_ms``
    (NOTE [Sample length]): each library's iteration timed as the median of five back to back
    (the first after the other library's runs is the slow one this rule is about)."""
    fastest = float("inf")
    for fn in fns.values():
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        fastest = min(fastest, statistics.median(times))
    return max(least, math.ceil(min_sample_ms / 1e3 / max(fastest, 1e-9)))


def time_samples(fns: dict, repeats: int, inner: int) -> dict:
    """``repeats`` samples per library, alternating libraries sample by sample."""
    samples = {k: [] for k in fns}
    for _ in range(repeats):
        for lib, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(inner):
                fn()
            samples[lib].append((time.perf_counter() - t0) / inner)
    return samples


def losses_match(a: list, b: list, rtol: float) -> bool:
    return bool(np.allclose(a, b, rtol=rtol, atol=rtol * 1e-1))


def _n_threads(n: int) -> str:
    """``"1 thread"``, ``"2 threads"``."""
    return f"{n} thread" + ("" if n == 1 else "s")


def _set_threads(lib_name: str, lib, threads: int | None) -> None:
    """``threads`` BLAS threads (None: NumPy's BLAS default, and torch as many)."""
    if lib_name == "torch":
        lib.set_num_threads(threads if threads is not None else blas_info()["threads"])
    elif threads is not None:
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads, user_api="blas")


# --- the table -----------------------------------------------------------------------------------
def _fmt_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.2f} ms"


def _ddp_row() -> dict:
    """The DDP row (benchmarks/ddp.py), or why there is none."""
    import importlib.util

    from benchmarks import ddp

    if importlib.util.find_spec("mpi4py") is None or ddp.mpiexec() is None:
        print("DDP: skipped (needs mpi4py and mpiexec: pip install 'glassgrad[distributed]')")
        return {"key": "ddp", "skipped": True}
    row = ddp.row()
    print(ddp.format_row(row), flush=True)
    return {"key": "ddp", **{k: v for k, v in row.items()}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=9, help="timed samples per library")
    parser.add_argument("--min-sample-ms", type=float, default=MIN_SAMPLE_MS,
                        help="iterations per sample: enough to last this long (0: the "
                        "workload's own minimum, one for the chain)")
    parser.add_argument("--only", default="",
                        help="comma-separated workload keys (" + ",".join(WORKLOADS) + ")")
    parser.add_argument("--list", action="store_true", help="print the workload keys and exit")
    parser.add_argument("--threads", type=int, default=None,
                        help="BLAS threads for NumPy and torch (default: NumPy's BLAS default)")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory runs")
    parser.add_argument("--json", default=None, metavar="PATH", help="also write results here")
    parser.add_argument("--plot", default=os.path.join(ROOT, "docs", "bench_scaling.png"),
                        metavar="PATH", help="the scaling plot of row 11 (written when two or "
                        "more of its rows ran; '' skips it)")
    parser.add_argument("--memory-child", nargs=2, metavar=("KEY", "LIB"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        memory.memory_child(*args.memory_child, args.threads, _set_threads, WORKLOADS)
        return 0
    if args.list:
        for key, w in WORKLOADS.items():
            print(f"{key:8s} {w.title}")
        return 0
    keys = [k.strip() for k in args.only.split(",") if k.strip()] or list(WORKLOADS) + ["ddp"]
    with_ddp = "ddp" in keys  # issue 17: 2 MPI ranks against 1 (benchmarks/ddp.py)
    keys = [k for k in keys if k != "ddp"]
    unknown = [k for k in keys if k not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload(s) {unknown}; choose from {list(WORKLOADS)}")

    import torch

    # NOTE [GC in one process]: torch's ~145k Python objects (modules, functions, op registry)
    # would sit in the heap that every full collection of glassgrad's graphs walks: ~90 ms a
    # collection, a third of the op chain's mean time (mean ratio 0.62 against a median 0.45).
    # A glassgrad process has no such heap, so they are frozen out of collection (gc.freeze)
    # before glassgrad is imported; glassgrad's 15k objects and everything made afterwards are
    # collected as usual. (The interpreter's and NumPy's ~19k are frozen too, which a glassgrad
    # process would walk: there the chain's mean is ~7% above its median, here ~3%.)
    gc.freeze()
    import glassgrad

    libs = {"glassgrad": glassgrad, "torch": torch}
    if args.threads is not None:
        _set_threads("glassgrad", glassgrad, args.threads)
    blas = blas_info()
    torch.set_num_threads(blas["threads"])
    header = {
        "machine": machine_info(),
        "blas": blas,
        "torch": {"version": torch.__version__, "threads": torch.get_num_threads(),
                  "mkl": torch.backends.mkl.is_available(),
                  "mkldnn": torch.backends.mkldnn.is_available()},
        "env": {k: os.environ[k] for k in ("OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE",
                                           "OMP_NUM_THREADS", "MKL_NUM_THREADS")
                if k in os.environ},
        "load_average_start": load_average(),
        "repeats": args.repeats,
        "min_sample_ms": args.min_sample_ms,
    }
    m = header["machine"]
    print(f"{m['cpu']}, {m['cores']} cores; Python {m['python']}; NumPy {m['numpy']} with "
          f"{blas['name']} ({blas.get('architecture') or '?'} kernels, "
          f"{_n_threads(blas['threads'])}); torch {torch.__version__} "
          f"({_n_threads(torch.get_num_threads())}); load average {header['load_average_start']}")
    load = header["load_average_start"]
    if load and load[0] > max(1, (m["cores"] or 1) - 1):
        print(f"WARNING: load average {load[0]} on {m['cores']} cores: other jobs are running; "
              "timings (two BLAS threads especially) are unreliable now", file=sys.stderr)
    cols = (f"{'workload':44s} {'glassgrad':>10s} {'torch':>10s} {'ratio':>6s} {'mean':>5s}"
            f" {'target':>6s} {'iters':>5s} {'memory gg':>16s} {'memory torch':>16s}"
            f" {'ratio':>5s}  losses")
    print(cols)
    print("-" * len(cols))
    results, failed = [], False
    for key in keys:
        w = WORKLOADS[key]
        fns = {name: w.make(lib) for name, lib in libs.items()}
        losses = {name: [fn() for _ in range(WARMUP)] for name, fn in fns.items()}
        match = losses_match(losses["glassgrad"], losses["torch"], w.rtol)
        failed |= not match
        inner = iterations_per_sample(fns, w.inner, args.min_sample_ms)
        samples = time_samples(fns, args.repeats, inner)
        med = {name: statistics.median(s) for name, s in samples.items()}
        mean = {name: statistics.fmean(s) for name, s in samples.items()}
        ratio = med["glassgrad"] / med["torch"]
        mem = {}
        if not args.no_memory:
            del fns
            gc.collect()
            mem = {name: memory.measure_memory(__file__, key, name, args.threads)
                   for name in libs}
        peak = {name: (m or {}).get("peak_kib") for name, m in mem.items()}
        mem_ratio = (peak["glassgrad"] / peak["torch"]
                     if mem and None not in peak.values() and peak["torch"] else None)
        title = w.title + (f" {med['glassgrad'] / w.ops * 1e6:.1f}/"
                           f"{med['torch'] / w.ops * 1e6:.1f} us/op" if w.ops else "")
        print(f"{title:44s} {_fmt_time(med['glassgrad']):>10s} {_fmt_time(med['torch']):>10s} "
              f"{ratio:6.2f} {mean['glassgrad'] / mean['torch']:5.2f} "
              f"{TARGETS.get(key, float('nan')):6.2f} {inner:5d} "
              f"{memory.fmt(mem.get('glassgrad')):>16s} {memory.fmt(mem.get('torch')):>16s} "
              f"{'-' if mem_ratio is None else f'{mem_ratio:.2f}':>5s}  "
              f"{'match' if match else 'MISMATCH'}", flush=True)
        results.append({
            "key": key, "title": w.title, "inner": inner,
            "median_s": med, "mean_s": mean, "samples_s": samples, "ratio": ratio,
            "mean_ratio": mean["glassgrad"] / mean["torch"], "target": TARGETS.get(key),
            "shortest_median_sample_s": min(med.values()) * inner,
            "per_op_us": {n: v / w.ops * 1e6 for n, v in med.items()} if w.ops else None,
            "memory": mem, "memory_ratio": mem_ratio, "memory_target": MEMORY_TARGETS.get(key),
            "losses": losses, "losses_match": match,
        })
    if with_ddp:
        results.append(_ddp_row())
    header["load_average_end"] = load_average()
    print(f"load average at the end {header['load_average_end']}. ratio: of the medians (the "
          "target's); mean: of the means, garbage-collection pauses included; iters: iterations "
          f"per timed sample (~{args.min_sample_ms:g} ms for the faster library); memory: step / "
          "process peak RSS over the first 3 iterations, fresh process per library (step: above "
          "the RSS once built, after both warmed up a tiny model; ratio and target: the process "
          "peak); benchmarks/memory.py says how")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header, "results": results}, f, indent=2)
    if args.plot:
        from benchmarks.scaling_plot import write_plot

        if write_plot(results, header, args.plot):
            print(f"scaling plot written to {args.plot}")
    if failed:
        print("FAILED: glassgrad and torch computed different losses (see 'losses')",
              file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
