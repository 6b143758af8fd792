"""The launcher (torchrun): ``python -m glassgrad.distributed.run --nproc-per-node N script.py``.

# NOTE [Launcher]: torchrun's command line with only the program name changed. It starts the
# ranks with one ``mpiexec`` (the mpich wheel's, found beside this Python first) and sets, in
# every rank, the environment torchrun sets: RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
# GROUP_RANK, GROUP_WORLD_SIZE, ROLE_*, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID (so
# ``is_torchelastic_launched()`` is True), TORCHELASTIC_RESTART_COUNT/MAX_RESTARTS, and
# OMP_NUM_THREADS=1 when unset and more than one rank runs per node (with torchrun's notice).
# The per-rank part is ``_rank_entry.py``, which then execs ``python -u script.py args`` (or
# ``-m module``, ``--no-python``, ``--run-path``) as torchrun does.
# A rank that exits with a non-zero code, or a SIGTERM to the launcher, ends every rank, as
# torchrun stops its workers (a plain ``mpiexec python script.py`` job lacks the first: use
# ``mpiexec -n N python -m mpi4py script.py`` there).
# Several machines: unlike torchrun (started once per node) the launcher is started ONCE, on
# one machine, with ``--nnodes M --hostfile FILE`` (an MPI host file, one host per line,
# optionally ``host:slots``); mpiexec starts ``--nproc-per-node`` ranks on each of the first M
# hosts over ssh. --node-rank, --rdzv-* and --master-* are then informational (MPI does the
# rendezvous). Elastic restarts (--max-restarts > 0) are not supported and are refused.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid

__all__ = ["main", "get_args_parser", "parse_args"]


def _flag(p, name: str, **kw) -> None:
    # torchrun accepts both spellings of every multi-word flag
    names = [name] if "-" not in name[2:] else [name, "--" + name[2:].replace("-", "_")]
    p.add_argument(*names, **kw)


def get_args_parser() -> argparse.ArgumentParser:
    """torchrun's argument parser (the flags of ``torch.distributed.run``), plus --hostfile,
    --mpiexec and --mpi-arg for MPI (NOTE [Launcher])."""
    p = argparse.ArgumentParser(
        prog="python -m glassgrad.distributed.run",
        description="glassgrad's torchrun: starts the ranks of a training program with mpiexec")
    _flag(p, "--nnodes", default="1", help="number of machines (with --hostfile), or MIN:MAX")
    _flag(p, "--nproc-per-node", default="1", help="ranks per machine: an int, auto or cpu")
    _flag(p, "--rdzv-backend", default="static")
    _flag(p, "--rdzv-endpoint", default="")
    _flag(p, "--rdzv-id", default="none")
    _flag(p, "--rdzv-conf", default="")
    p.add_argument("--standalone", action="store_true")
    _flag(p, "--max-restarts", type=int, default=0)
    _flag(p, "--monitor-interval", type=float, default=0.1)
    _flag(p, "--start-method", default="spawn", choices=["spawn", "fork", "forkserver"])
    _flag(p, "--event-log-handler", default="null")
    p.add_argument("--role", default="default")
    p.add_argument("-m", "--module", action="store_true")
    _flag(p, "--no-python", action="store_true")
    _flag(p, "--run-path", action="store_true")
    _flag(p, "--log-dir", default=None)
    p.add_argument("-r", "--redirects", default="0")
    p.add_argument("-t", "--tee", default="0")
    _flag(p, "--local-ranks-filter", default="")
    _flag(p, "--node-rank", type=int, default=0)
    _flag(p, "--master-addr", default="localhost")
    _flag(p, "--master-port", type=int, default=None)
    _flag(p, "--local-addr", default=None)
    _flag(p, "--hostfile", default=None,
          help="MPI host file for several machines (glassgrad): one host per line")
    p.add_argument("--mpiexec", default=None, help="the mpiexec to use (default: beside python)")
    _flag(p, "--mpi-arg", action="append", default=[], help="an extra mpiexec argument")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args=None) -> argparse.Namespace:
    return get_args_parser().parse_args(args)


def find_mpiexec(given: str | None = None) -> str:
    """The mpiexec to start the ranks with: ``given``, the one beside this Python (the mpich
    wheel puts it in the environment's bin folder), else the first on PATH."""
    if given:
        return given
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.access(here, os.X_OK):
        return here
    found = shutil.which("mpiexec")
    if found is None:
        raise SystemExit("glassgrad.distributed.run: no mpiexec found beside "
                         f"{sys.executable} nor on PATH; pip install mpich mpi4py "
                         "(or 'glassgrad[distributed]')")
    return found


def _nproc(value: str) -> int:
    if value in ("auto", "cpu"):
        return os.cpu_count() or 1
    if value in ("gpu", "xpu"):
        raise SystemExit(f"glassgrad.distributed.run: --nproc-per-node {value}: no {value}s "
                         "here; give a number")
    return int(value)


def _redirect_spec(value: str) -> dict:
    if ":" not in value and "," not in value:
        return {"*": int(value)}
    return {k: int(v) for k, v in (part.split(":") for part in value.split(","))}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def build_command(args: argparse.Namespace) -> tuple[list[str], dict]:
    """``(argv, env)`` of the mpiexec that runs the job (NOTE [Launcher])."""
    nnodes = int(str(args.nnodes).split(":")[-1])
    nproc = _nproc(str(args.nproc_per_node))
    if args.max_restarts > 0:
        raise SystemExit("glassgrad.distributed.run: --max-restarts > 0 (elastic restarts) is "
                         "not supported on MPI")
    if nnodes > 1 and not args.hostfile:
        raise SystemExit(
            f"glassgrad.distributed.run: --nnodes {nnodes} needs --hostfile FILE (an MPI host "
            "file); start the launcher once, on one machine, not once per node")
    if str(args.tee) != "0":
        raise SystemExit("glassgrad.distributed.run: --tee is not supported (each rank's output "
                         "goes either to the console or, with --redirects, to --log-dir)")
    log_dir = args.log_dir
    if str(args.redirects) != "0" and not log_dir:
        log_dir = tempfile.mkdtemp(prefix="torchelastic_")  # as torchrun does
        sys.stderr.write(f"glassgrad.distributed.run: log directory set to: {log_dir}\n")
    world = nnodes * nproc
    port = args.master_port if args.master_port is not None else _free_port()
    env = dict(os.environ)
    common = {
        "WORLD_SIZE": str(world), "LOCAL_WORLD_SIZE": str(nproc),
        "GROUP_WORLD_SIZE": str(nnodes), "ROLE_NAME": args.role,
        "ROLE_WORLD_SIZE": str(world), "MASTER_ADDR": args.master_addr,
        "MASTER_PORT": str(port),
        "TORCHELASTIC_RUN_ID": args.rdzv_id if args.rdzv_id != "none" else uuid.uuid4().hex,
        "TORCHELASTIC_RESTART_COUNT": "0", "TORCHELASTIC_MAX_RESTARTS": "0",
        "TORCHELASTIC_USE_AGENT_STORE": "False",
    }
    if "OMP_NUM_THREADS" not in env and nproc > 1:
        sys.stderr.write(
            "*****************************************\nSetting OMP_NUM_THREADS environment "
            "variable for each process to be 1 in default, to avoid your system being "
            "overloaded, please further tune the variable for optimal performance in your "
            "application as needed. \n*****************************************\n")
        common["OMP_NUM_THREADS"] = "1"
    env.update(common)
    shown = None
    if args.local_ranks_filter:
        shown = [int(r) for r in args.local_ranks_filter.split(",")]
    mode = ("run_path" if args.run_path else "module" if args.module
            else "no_python" if args.no_python else "python")
    spec = {"nproc_per_node": nproc, "mode": mode, "log_dir": log_dir,
            "redirects": _redirect_spec(args.redirects), "local_ranks_filter": shown,
            "python": sys.executable}
    entry = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_rank_entry.py")
    cmd = [find_mpiexec(args.mpiexec), "-n", str(world)]
    if args.hostfile:
        cmd += ["-f", args.hostfile, "-ppn", str(nproc)]
    for key, value in common.items():
        cmd += ["-genv", key, value]
    cmd += list(args.mpi_arg)
    cmd += [sys.executable, entry, json.dumps(spec), args.training_script,
            *args.training_script_args]
    return cmd, env


def run(args: argparse.Namespace) -> int:
    cmd, env = build_command(args)
    proc = subprocess.Popen(cmd, env=env)
    # NOTE: as torchrun, a SIGTERM/SIGHUP to the launcher stops the ranks (mpiexec forwards it):
    # Python's default would end the launcher alone and leave mpiexec and the ranks running
    import signal

    def forward(signum, frame):
        proc.send_signal(signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    code = proc.wait()
    if code != 0:
        sys.stderr.write(f"glassgrad.distributed.run: {args.training_script} FAILED: mpiexec "
                         f"exited with code {code} (the rank's traceback is above)\n")
    return code


def main(args=None) -> None:
    """``torchrun``'s entry point: parse the command line, run the job, exit with its code."""
    sys.exit(run(parse_args(args)))


if __name__ == "__main__":
    main()
