"""``make bench``: every workload on glassgrad and on torch in one process, side by side.

Both libraries build each workload from identical NumPy weights and inputs; the losses of the first
iterations are compared (a mismatch is reported in the table and fails the run), then the two are
warmed up and timed alternately, sample by sample, so load on the machine hits both alike; a
sample runs enough iterations to last ``--min-sample-ms`` (NOTE [Sample length]; 0 gives the
workload's own minimum). The table shows the median time per iteration, the ratio glassgrad/torch (below 1: glassgrad is faster) and the issue's target.
Peak memory is measured in a fresh subprocess per library and workload, as the resident set
(Linux ``VmRSS``/``VmHWM``): "step" is the peak over the first three iterations above the resident
set once the model and data are built (activations, saved tensors, gradients, optimizer state and
whatever the library allocates lazily); "process" is the whole process's peak, library included.
(After a warm-up the allocator keeps freed pages, so a later iteration's peak is not visible in
the RSS at all: the first iterations are the honest measure.)

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
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import numpy as np

from benchmarks.workloads import WORKLOADS

TARGETS = {"chain": 0.5, "x3": 1.0, "mlp": 1.0, "cnn": 2.0, "lstm": 1.5, "wgan_gp": 1.0,
           "maml": 1.0, "gan": 1.0}
MEMORY_TARGETS = {"mlp": 0.5}
WARMUP = 3  # iterations; their losses are the ones compared
# NOTE [Sample length]: a library's first iteration after the other library's sample refills the
# caches, branch predictors and allocator pools the other evicted (measured on the op chain:
# +13-20% for glassgrad's first iteration after torch's, +3% for torch's after glassgrad's; a
# 32 MB NumPy sum in between costs glassgrad +5-13%). A user's training loop does not alternate,
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
    (NOTE [Sample length]); timed on one warm iteration of each."""
    fastest = float("inf")
    for fn in fns.values():
        t0 = time.perf_counter()
        fn()
        fastest = min(fastest, time.perf_counter() - t0)
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


# --- peak memory, one fresh process per library and workload ------------------------------------
def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def _n_threads(n: int) -> str:
    """``"1 thread"``, ``"2 threads"``."""
    return f"{n} thread" + ("" if n == 1 else "s")


def memory_child(key: str, lib_name: str, threads: int | None) -> None:
    """Run in the subprocess: print the workload's peak RSS as JSON on the last line."""
    lib = __import__(lib_name)
    if threads is not None:
        _set_threads(lib_name, lib, threads)
    elif lib_name == "torch":
        lib.set_num_threads(blas_info()["threads"])
    step = WORKLOADS[key].make(lib)
    gc.collect()
    base = _status_kib("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset VmHWM (the peak) to the current RSS
    for _ in range(WARMUP):
        step()
    peak = _status_kib("VmHWM")
    print(json.dumps({"peak_kib": peak, "base_kib": base, "delta_kib": peak - base}))


def measure_memory(key: str, lib_name: str, threads: int | None) -> dict | None:
    cmd = [sys.executable, os.path.abspath(__file__), "--memory-child", key, lib_name]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=600)
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError, OSError) as exc:
        print(f"  (memory of {key} on {lib_name} not measured: {exc})", file=sys.stderr)
        return None


def _set_threads(lib_name: str, lib, threads: int) -> None:
    if lib_name == "torch":
        lib.set_num_threads(threads)
    else:
        from threadpoolctl import threadpool_limits

        threadpool_limits(threads, user_api="blas")


# --- the table -----------------------------------------------------------------------------------
def _fmt_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.2f} ms"


def _fmt_mem(m) -> str:
    if not m:
        return "-"
    return f"{m['delta_kib'] / 1024:.1f} ({m['peak_kib'] / 1024:.0f}) MiB"


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
    parser.add_argument("--memory-child", nargs=2, metavar=("KEY", "LIB"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child:
        memory_child(*args.memory_child, args.threads)
        return 0
    if args.list:
        for key, w in WORKLOADS.items():
            print(f"{key:8s} {w.title}")
        return 0
    keys = [k.strip() for k in args.only.split(",") if k.strip()] or list(WORKLOADS)
    unknown = [k for k in keys if k not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload(s) {unknown}; choose from {list(WORKLOADS)}")

    import torch

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
    cols = (f"{'workload':44s} {'glassgrad':>10s} {'torch':>10s} {'ratio':>6s} {'target':>6s}"
            f" {'iters':>5s}"
            f" {'step mem gg':>18s} {'step mem torch':>18s} {'ratio':>6s}  losses")
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
        ratio = med["glassgrad"] / med["torch"]
        mem = {}
        if not args.no_memory:
            del fns
            gc.collect()
            mem = {name: measure_memory(key, name, args.threads) for name in libs}
        delta = {name: (m or {}).get("delta_kib") for name, m in mem.items()}
        mem_ratio = (delta["glassgrad"] / delta["torch"]
                     if mem and None not in delta.values() and delta["torch"] else None)
        title = w.title + (f" {med['glassgrad'] / w.ops * 1e6:.1f}/"
                           f"{med['torch'] / w.ops * 1e6:.1f} us/op" if w.ops else "")
        print(f"{title:44s} {_fmt_time(med['glassgrad']):>10s} {_fmt_time(med['torch']):>10s} "
              f"{ratio:6.2f} {TARGETS.get(key, float('nan')):6.2f} {inner:5d} "
              f"{_fmt_mem(mem.get('glassgrad')):>18s} {_fmt_mem(mem.get('torch')):>18s} "
              f"{'-' if mem_ratio is None else f'{mem_ratio:.2f}':>6s}  "
              f"{'match' if match else 'MISMATCH'}", flush=True)
        results.append({
            "key": key, "title": w.title, "inner": inner,
            "median_s": med, "samples_s": samples, "ratio": ratio, "target": TARGETS.get(key),
            "per_op_us": {n: v / w.ops * 1e6 for n, v in med.items()} if w.ops else None,
            "memory": mem, "memory_ratio": mem_ratio, "memory_target": MEMORY_TARGETS.get(key),
            "losses": losses, "losses_match": match,
        })
    header["load_average_end"] = load_average()
    print(f"load average at the end {header['load_average_end']}; iters: iterations per timed "
          f"sample (each sample lasts at least {args.min_sample_ms:g} ms for both libraries); "
          "memory: peak RSS of the first 3 iterations above the RSS once the workload is built "
          "(process peak in parentheses), fresh process per library")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header, "results": results}, f, indent=2)
    if failed:
        print("FAILED: glassgrad and torch computed different losses (see 'losses')",
              file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
