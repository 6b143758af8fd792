"""Per-rank entry of the launcher (NOTE [Launcher]): runs as a plain script, before glassgrad is
imported, in each process mpiexec starts. It turns MPI's rank variables into torchrun's
(RANK, LOCAL_RANK, GROUP_RANK, ROLE_RANK), applies the launcher's output options, then replaces
itself with the training program (run by ``python -m mpi4py``, which runs it as ``python`` would
and aborts the job when it exits with a non-zero code), so the program starts as under torchrun.

argv: ``_rank_entry.py SPEC_JSON PROGRAM ARGS...`` where SPEC_JSON holds nproc_per_node, mode
("python", "module", "no_python", "run_path"), log_dir, redirects and local_ranks_filter.
"""

import json
import os
import runpy
import sys


def _mpi_rank() -> tuple[int, int]:
    # NOTE: hydra (MPICH's mpiexec) sets PMI_RANK and MPI_LOCALRANKID; Open MPI's names as well
    env = os.environ
    rank = env.get("PMI_RANK") or env.get("OMPI_COMM_WORLD_RANK") or "0"
    local = env.get("MPI_LOCALRANKID") or env.get("OMPI_COMM_WORLD_LOCAL_RANK")
    return int(rank), int(local) if local is not None else None


def _redirect(fd: int, path: str) -> None:
    f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(f, fd)
    os.close(f)


def main(argv: list[str]) -> None:
    spec = json.loads(argv[1])
    program, args = argv[2], argv[3:]
    nproc = spec["nproc_per_node"]
    rank, local = _mpi_rank()
    if local is None:
        local = rank % nproc
    env = os.environ
    env["RANK"] = str(rank)
    env["LOCAL_RANK"] = str(local)
    env["GROUP_RANK"] = str(rank // nproc)
    env["ROLE_RANK"] = str(rank)
    if spec.get("log_dir"):
        folder = os.path.join(spec["log_dir"], env["TORCHELASTIC_RUN_ID"], "attempt_0", str(local))
        os.makedirs(folder, exist_ok=True)
        env["TORCHELASTIC_ERROR_FILE"] = os.path.join(folder, "error.json")
        redirects = spec.get("redirects", {})
        if str(local) in redirects:
            what = redirects[str(local)]
        else:
            what = redirects.get("*", 0)
        if what & 1:
            _redirect(1, os.path.join(folder, "stdout.log"))
        if what & 2:
            _redirect(2, os.path.join(folder, "stderr.log"))
    shown = spec.get("local_ranks_filter")
    if shown is not None and rank not in shown:
        _redirect(1, os.devnull)
        _redirect(2, os.devnull)
    mode = spec["mode"]
    if mode == "run_path":
        sys.argv = [program, *args]
        sys.path[0] = os.path.dirname(os.path.abspath(program))
        runpy.run_path(program, run_name="__main__")
        return
    if mode == "no_python":
        os.execvp(program, [program, *args])
    python = spec.get("python") or sys.executable
    # NOTE: through mpi4py's runner (it runs the program as python would): a rank whose program
    # ends with a non-zero exit code (sys.exit(1)) aborts the job, as torchrun stops the others;
    # a plain exit would wait in MPI_Finalize while the other ranks wait for it in a collective
    # until the group's timeout (30 minutes by default). MPI starts only if the program uses it.
    runner = [python, "-u", "-m", "mpi4py"] if _has_mpi4py() else [python, "-u"]
    if mode == "module":
        os.execv(python, [*runner, "-m", program, *args])
    os.execv(python, [*runner, program, *args])


def _has_mpi4py() -> bool:
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


if __name__ == "__main__":
    main(sys.argv)
