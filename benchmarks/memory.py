"""Peak memory of one workload on one library, measured in a fresh process (``make bench``).

Two figures, both from Linux's ``VmRSS``/``VmHWM``:

- **process**: the whole process's peak resident set while the workload runs its first three
  iterations: the library, the interpreter and the workload together (issue 7's "peak memory
  (RSS)", the figure its target is judged on);
- **step**: that peak above the resident set once the workload is built. NOTE [Fair step memory]:
  both libraries first run a tiny model of the same kinds of ops (so one-time lazy set-up, such
  as torch's oneDNN and autograd engine buffers, is not counted as the step's), then
  ``malloc_trim(0)`` hands freed heap back to the system (so freed blocks left over from
  building the model do not hide the step's allocations). Without these two, torch's step read
  ~17 MiB against glassgrad's ~1 MiB for the MLP, nearly all of it torch's one-time set-up.

(After a warm-up the allocator keeps freed pages, so a later iteration's peak is not visible in
the RSS at all: the first iterations are the honest measure.)
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import subprocess
import sys

import numpy as np

WARMUP = 3  # iterations measured (run.py compares their losses)


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def _malloc_trim() -> None:
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to hand back this way
        pass


def _prewarm(lib) -> None:
    """One step of a tiny model with the workloads' kinds of ops: linear, relu, leaky_relu,
    tanh, cross-entropy, BCE, conv, max pooling, an LSTM, SGD and Adam, first and second
    order."""
    nn, f = lib.nn, lib.nn.functional
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.standard_normal((4, 1, 6, 6)).astype(np.float32))
    conv, lin = nn.Conv2d(1, 2, 3, padding=1), nn.Linear(18, 3)
    lstm = nn.LSTM(3, 4, batch_first=True)
    params = list(conv.parameters()) + list(lin.parameters()) + list(lstm.parameters())
    sgd, adam = lib.optim.SGD(params, lr=0.1), lib.optim.Adam(params)
    x.requires_grad_(True)
    h = lin(f.max_pool2d(f.relu(conv(x)), 2).reshape(4, 18))
    out, _ = lstm(f.leaky_relu(h).tanh().reshape(1, 4, 3))
    y = lib.from_numpy(np.array([0, 1, 2, 0]))
    loss = f.cross_entropy(h, y) + f.binary_cross_entropy_with_logits(
        out.sum(-1), lib.ones((1, 4))) + f.mse_loss(h, h.detach() * 0.5)
    (g,) = lib.autograd.grad(loss, x, create_graph=True)
    (loss + g.pow(2).sum()).backward()
    sgd.step()
    adam.step()


def memory_child(key: str, lib_name: str, threads: int | None, set_threads, workloads) -> None:
    """Run in the subprocess: print the workload's memory figures as JSON on the last line."""
    lib = __import__(lib_name)
    set_threads(lib_name, lib, threads)
    _prewarm(lib)
    step = workloads[key].make(lib)
    gc.collect()
    _malloc_trim()
    base = _status_kib("VmRSS")
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset VmHWM (the peak) to the current RSS
    for _ in range(WARMUP):
        step()
    peak = _status_kib("VmHWM")
    print(json.dumps({"peak_kib": peak, "base_kib": base, "delta_kib": peak - base}))


def measure_memory(script: str, key: str, lib_name: str, threads: int | None) -> dict | None:
    """The figures of ``key`` on ``lib_name`` from a fresh ``script --memory-child`` process."""
    cmd = [sys.executable, os.path.abspath(script), "--memory-child", key, lib_name]
    if threads is not None:
        cmd += ["--threads", str(threads)]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=600)
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError, OSError) as exc:
        print(f"  (memory of {key} on {lib_name} not measured: {exc})", file=sys.stderr)
        return None


def fmt(m) -> str:
    """``"step / process MiB"``."""
    if not m:
        return "-"
    return f"{m['delta_kib'] / 1024:.1f} / {m['peak_kib'] / 1024:.0f} MiB"
