"""A rank that exits, raises or dies makes the job fail fast with a clear message instead of
hanging; mismatched collectives are named (TORCH_DISTRIBUTED_DEBUG=DETAIL); the launcher sets
torchrun's environment (compared with torchrun itself) and passes the exit code on."""

import json
import os
import re
import subprocess
import sys
import time

import pytest

from tests.dist_jobs.runner import HERE, ROOT, env, mpiexec, run_jobs


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    """The four failures.py jobs, run at once (each writes into its own folder)."""
    spec = {}
    for mode in ("exit_early", "raise", "die", "survivable"):
        out = tmp_path_factory.mktemp(mode)
        extra = {}
        if mode == "survivable":
            extra = {"TORCH_DISTRIBUTED_DEBUG": "DETAIL",
                     "GLASSGRAD_DISTRIBUTED_PROGRESS": "thread"}
        spec[mode] = ("failures.py", (mode, out), extra)
    done = run_jobs(spec)
    return {mode: (*done[mode], spec[mode][1][1]) for mode in spec}


def test_a_rank_that_leaves_early_is_caught_by_the_watchdog(jobs):
    proc, seconds, _ = jobs["exit_early"]
    assert proc.returncode != 0
    err = proc.stderr
    assert "[Rank 0] Watchdog caught collective operation timeout: WorkMPI(SeqNum=2, " \
           "OpType=ALLREDUCE, NumelIn=4, NumelOut=4, Timeout(ms)=3000) ran for" in err, err
    assert re.search(r'failures.py", line \d+, in <module>: dist.all_reduce\(torch.ones\(4\)\)  '
                     "# rank 0 waits here", err), err
    assert "init_process_group(timeout=" in err, err
    assert "The last operations rank 0 completed on this group: SeqNum=1 BARRIER" in err, err
    assert "rank 0 done" not in proc.stdout
    assert seconds < 100, seconds  # 3 s timeout, 8 interpreters starting at once on 2 cores


def test_a_rank_that_raises_aborts_the_job(jobs):
    proc, seconds, _ = jobs["raise"]
    assert proc.returncode != 0
    assert "ValueError: rank 1 fails on purpose" in proc.stderr
    assert "rank 1 raised ValueError (above); aborting the MPI job" in proc.stderr
    assert "rank 0 done" not in proc.stdout
    assert seconds < 100, seconds


def test_a_rank_that_dies_ends_the_job(jobs):
    proc, seconds, _ = jobs["die"]
    assert proc.returncode != 0
    assert "rank 0 done" not in proc.stdout
    assert seconds < 100, seconds


def test_mismatch_and_monitored_barrier_are_named_on_every_rank(jobs):
    proc, _, tmp_path = jobs["survivable"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    for rank in (0, 1):
        shapes, ops, after, progressed, passed, late = json.loads(
            (tmp_path / f"rank{rank}.json").read_text())
        assert progressed == [True, True]   # the progress thread ran; the sums are right
        other = 1 - rank
        assert shapes.startswith("Detected mismatch between collectives on ranks. Rank "
                                 f"{rank} is running collective: CollectiveFingerPrint("
                                 "SequenceNumber=2, OpType=ALLREDUCE, TensorShape="
                                 f"[{4 + rank}], TensorDtypes=Float"), shapes
        assert f"but Rank {other} is running collective" in shapes and f"[{4 + other}]" in shapes
        assert "OpType=BROADCAST" in ops and "OpType=ALLREDUCE" in ops, ops
        assert after == [2.0, 2.0, 2.0]   # the group still works after a detected mismatch
        assert passed == "passed"
        if rank == 0:  # torch's wording (gloo's monitored barrier), wait_all_ranks=True
            assert late == "[Rank 0]: Ranks 1 failed to pass monitoredBarrier in 1000 ms"
        else:
            assert late.startswith("Rank 1 successfully reached monitoredBarrier, but received "
                                   "errors while waiting for send/recv from rank 0. Please check "
                                   "rank 0 logs for faulty rank")


def _launch(cmd, tmp_path, code, **extra):
    proc = subprocess.run(cmd + [os.path.join(HERE, "launched.py"), str(tmp_path), str(code)],
                          env=env(**extra), capture_output=True, text=True, timeout=120, cwd=ROOT)
    return proc, [json.loads((tmp_path / f"env{r}.json").read_text()) for r in (0, 1)]


def test_the_launcher_sets_torchruns_environment(tmp_path):
    mpiexec()
    torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
    if not os.access(torchrun, os.X_OK):
        pytest.skip("torchrun is not installed beside this Python")
    (tmp_path / "t").mkdir()
    (tmp_path / "g").mkdir()
    # -r 1:1 with --log-dir: local rank 1's stdout goes to LOG_DIR/<run>/attempt_0/1/stdout.log
    logs = ["--log-dir", str(tmp_path / "logs"), "-r", "1:1"]
    theirs_proc, theirs = _launch([torchrun, "--nproc-per-node", "2", *logs[:1],
                                   str(tmp_path / "logs" / "t"), *logs[2:]], tmp_path / "t", 0)
    assert theirs_proc.returncode == 0, theirs_proc.stderr[-2000:]
    ours_proc, ours = _launch([sys.executable, "-m", "glassgrad.distributed.run",
                               "--nproc_per_node", "2", *logs[:1], str(tmp_path / "logs" / "g"),
                               *logs[2:]], tmp_path / "g", 7)
    for who, proc in (("t", theirs_proc), ("g", ours_proc)):
        logged = list((tmp_path / "logs" / who).glob("*/attempt_0/1/stdout.log"))
        assert len(logged) == 1 and "rank 1 writes" in logged[0].read_text(), (who, logged)
        assert "rank 1 writes" not in proc.stdout and "rank 0 writes" in proc.stdout, who
    assert ours_proc.returncode == 7, ours_proc.stderr[-2000:]
    assert "FAILED: mpiexec exited with code 7" in ours_proc.stderr
    for rank in (0, 1):
        mine, want = dict(ours[rank]), dict(theirs[rank])
        # per-run values: a fresh id and a free port in both launchers
        for key in ("TORCHELASTIC_RUN_ID", "MASTER_PORT"):
            assert mine.pop(key) and want.pop(key)
        mine["argv"][-1] = want["argv"][-1]   # the exit code given
        mine["argv"][0] = want["argv"][0]     # the output folder given
        assert mine == want, (rank, mine, want)
    assert ours[0]["TORCHELASTIC_RUN_ID"] == ours[1]["TORCHELASTIC_RUN_ID"]



def test_a_rank_that_exits_with_an_error_code_ends_the_launched_job():
    # torchrun stops the other ranks when one exits non-zero; the launcher's ranks used to wait
    # in MPI_Finalize / the all_reduce until the default 30-minute timeout
    mpiexec()
    torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
    if not os.access(torchrun, os.X_OK):
        pytest.skip("torchrun is not installed beside this Python")
    script = os.path.join(HERE, "exit_code.py")
    runs = {}
    for who, cmd in (("torch", [torchrun, "--nproc-per-node", "2", script]),
                     ("glassgrad", [sys.executable, "-m", "glassgrad.distributed.run",
                                    "--nproc-per-node", "2", "-m", "glassgrad.alias", script])):
        start = time.monotonic()
        proc = _bounded(cmd, 110)
        runs[who] = (proc.returncode != 0, "completed an all_reduce" in proc.stdout,
                     time.monotonic() - start < 90)
    assert runs["glassgrad"] == runs["torch"] == (True, False, True), runs


def _bounded(cmd, seconds):
    # in a session of its own: on a timeout the launcher, mpiexec and the ranks all go
    proc = subprocess.Popen(cmd, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def test_a_sigterm_to_the_launcher_stops_its_ranks(tmp_path):
    # as torchrun: the launcher used to die alone and leave mpiexec and the ranks running
    mpiexec()
    script = tmp_path / "sleeper.py"
    script.write_text("import os, sys, time\n"
                      f"open(os.path.join({str(tmp_path)!r}, 'pid' + os.environ['RANK']), 'w')"
                      ".write(str(os.getpid()))\ntime.sleep(100)\n")
    proc = subprocess.Popen([sys.executable, "-m", "glassgrad.distributed.run",
                             "--nproc-per-node", "2", str(script)], env=env(), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not all((tmp_path / f"pid{r}").exists() for r in (0, 1)):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.2)
        pids = [int((tmp_path / f"pid{r}").read_text()) for r in (0, 1)]
        proc.terminate()   # SIGTERM to the launcher only
        assert proc.wait(timeout=30) != 0
        deadline = time.monotonic() + 20
        while any(os.path.exists(f"/proc/{pid}") for pid in pids):
            assert time.monotonic() < deadline, "a rank outlived its launcher"
            time.sleep(0.2)
    finally:
        try:
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass


def test_the_launcher_lays_out_several_machines(tmp_path):
    # two host names of this machine stand for two machines; hydra's fork launcher replaces ssh
    mpiexec()
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost\n127.0.0.1\n")
    proc, seen = _launch([sys.executable, "-m", "glassgrad.distributed.run", "--nnodes", "2",
                          "--nproc-per-node", "1", "--hostfile", str(hosts),
                          "--mpi-arg=-launcher", "--mpi-arg=fork"], tmp_path, 0,
                         GLASSGRAD_LAUNCH_CHECK_MPI="1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    for rank in (0, 1):
        # init_process_group("nccl") under the launcher: MPI's ranks, torchelastic-launched
        assert seen[rank]["mpi"] == [rank, 2, True]
        got = {k: seen[rank][k] for k in ("RANK", "LOCAL_RANK", "GROUP_RANK", "WORLD_SIZE",
                                          "LOCAL_WORLD_SIZE", "GROUP_WORLD_SIZE")}
        assert got == {"RANK": str(rank), "LOCAL_RANK": "0", "GROUP_RANK": str(rank),
                       "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "1", "GROUP_WORLD_SIZE": "2"}


def test_the_launcher_refuses_what_mpi_cannot_do():
    from glassgrad.distributed.run import build_command, parse_args

    for flags, phrase in ((["--nnodes", "2"], "needs --hostfile"),
                          (["--max-restarts", "1"], "not supported on MPI"),
                          (["--tee", "3"], "--tee is not supported")):
        with pytest.raises(SystemExit, match=phrase):
            build_command(parse_args([*flags, "script.py"]))
    cmd, env_ = build_command(parse_args(["--nproc_per_node=3", "--master-port", "1234",
                                          "--mpiexec", "/opt/mpi/bin/mpiexec", "-m", "pkg.mod",
                                          "--lr", "1"]))
    assert cmd[:3] == ["/opt/mpi/bin/mpiexec", "-n", "3"]
    assert cmd[-3:] == ["pkg.mod", "--lr", "1"]
    assert env_["MASTER_PORT"] == "1234" and env_["WORLD_SIZE"] == "3"
