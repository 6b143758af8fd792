"""Run a tests/dist_jobs script on N ranks with the mpich wheel's mpiexec, bounded in time."""

import os
import shutil
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def mpiexec() -> str:
    """The mpiexec beside this Python (the mpich wheel's), else PATH's; skip without mpi4py."""
    pytest.importorskip("mpi4py", reason="mpi4py is not installed: pip install "
                        "'glassgrad[distributed]' (mpi4py and mpich) to run the MPI jobs")
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = here if os.access(here, os.X_OK) else shutil.which("mpiexec")
    if found is None:
        pytest.skip("mpi4py is installed but no mpiexec was found: pip install mpich")
    return found


def env(**extra) -> dict:
    e = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
             OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "TORCH_DISTRIBUTED_DEBUG"):
        e.pop(key, None)
    e.update(extra)
    return e


def run_jobs(jobs: dict, timeout: float = 150) -> dict:
    """Run several jobs at once: ``{name: (script, args, extra_env)}`` ->
    ``{name: (CompletedProcess, seconds)}``; their waits (timeouts, sleeps) overlap."""
    exe = mpiexec()
    started = {}
    for name, (script, args, extra) in jobs.items():
        cmd = [exe, "-n", "2", sys.executable, os.path.join(HERE, script), *map(str, args)]
        started[name] = (subprocess.Popen(cmd, env=env(**extra), stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True, cwd=ROOT),
                         time.monotonic(), cmd)
    done = {}
    for name, (proc, start, cmd) in started.items():
        try:
            out, err = proc.communicate(timeout=max(1.0, start + timeout - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        done[name] = (subprocess.CompletedProcess(cmd, proc.returncode, out, err),
                      time.monotonic() - start)
    return done


def run_job(script: str, *args, n: int = 2, timeout: float = 120, **extra):
    """``(CompletedProcess, seconds)`` of ``mpiexec -n n python dist_jobs/script args``."""
    cmd = [mpiexec(), "-n", str(n), sys.executable, os.path.join(HERE, script), *map(str, args)]
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env(**extra), capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)
    return proc, time.monotonic() - start
