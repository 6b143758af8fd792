"""torch.distributed collectives on MPI: a 2-rank mpiexec job checks each against NumPy on both
ranks (tests/dist_jobs/collectives.py); its refusals are compared with torch's (gloo, 1 rank)."""

import importlib.util
import json
import re
import subprocess
import sys

import pytest

import glassgrad
import glassgrad.distributed as gdist
from tests.dist_jobs.runner import ROOT, env, run_job

WORLD = 2


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    out = tmp_path_factory.mktemp("collectives")
    proc, _ = run_job("collectives.py", out, n=WORLD)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return [json.loads((out / f"rank{r}.json").read_text()) for r in range(WORLD)]


def _names():
    ops = ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]
    names = []
    for dtype in ["float16", "bfloat16", "float32", "float64", "complex64"]:
        names += [f"all_reduce_{op}_{dtype}" for op in (ops if dtype != "complex64" else ops[:2])]
    for dtype in ["int32", "int64", "int8", "uint8", "bool"]:
        names += [f"all_reduce_{op}_{dtype}" for op in
                  ["SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]]
    names += ["all_reduce_async_work", "all_reduce_in_place_views"]
    for dtype in ["float16", "bfloat16", "float32", "float64", "int64", "bool"]:
        names += [f"broadcast_{dtype}_src{s}" for s in range(WORLD)]
    names += [f"reduce_{op}_dst1" for op in ["SUM", "MAX", "AVG"]]
    for dtype in ["float16", "bfloat16", "float32", "float64", "int32", "bool"]:
        names += [f"all_gather_{dtype}", f"all_gather_into_tensor_{dtype}"]
    for dtype in ["float16", "bfloat16", "float32", "float64", "int64"]:
        for op in (["SUM", "AVG", "MAX"] if dtype != "int64" else ["SUM", "MIN"]):
            names += [f"reduce_scatter_{op}_{dtype}", f"reduce_scatter_tensor_{op}_{dtype}"]
    names += ["gather_dst1", "scatter_src1", "all_to_all", "all_to_all_single", "send_recv",
              "barrier", "new_group", "new_subgroups", "nn_functional_gradients", "objects",
              "distributed_sampler_splits_an_epoch",
              "object_refused", "object_list_short_on_one_rank", "destroyed"]
    return names


@pytest.mark.parametrize("name", _names())
def test_collective_matches_numpy_on_every_rank(job, name):
    for rank, report in enumerate(job):
        assert report["world"] == WORLD
        assert report["results"].get(name) == "ok", f"rank {rank}: {report['results'].get(name)}"


def test_every_check_of_the_job_is_listed(job):
    assert set(job[0]["results"]) == set(_names())


def _torch_refusals(tmp_path):
    """The same refused calls on torch (gloo, a world of 1): {name: (type, message)}."""
    torch = pytest.importorskip("torch")
    import torch.distributed as tdist

    store = tmp_path / "store"
    tdist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
    calls = {
        "complex_max": lambda: tdist.all_reduce(torch.ones(2, dtype=torch.complex64),
                                                op=tdist.ReduceOp.MAX),
        "complex_product": lambda: tdist.all_reduce(torch.ones(2, dtype=torch.complex64),
                                                    op=tdist.ReduceOp.PRODUCT),
        "float_band": lambda: tdist.all_reduce(torch.ones(2), op=tdist.ReduceOp.BAND),
        "int_avg": lambda: tdist.all_reduce(torch.ones(2, dtype=torch.int64),
                                            op=tdist.ReduceOp.AVG),
        "bool_avg": lambda: tdist.all_reduce(torch.ones(2, dtype=torch.bool),
                                             op=tdist.ReduceOp.AVG),
        "not_a_tensor": lambda: tdist.all_reduce([torch.ones(2)]),
        "send_to_self": lambda: tdist.send(torch.ones(2), dst=0),
        "gather_no_list": lambda: tdist.gather(torch.ones(2), None, dst=0),
        "scatter_no_list": lambda: tdist.scatter(torch.ones(2), None, src=0),
        "src_and_group_src": lambda: tdist.broadcast(torch.ones(2), src=0, group_src=0),
        "init_twice": lambda: tdist.init_process_group("gloo"),
        "all_gather_size": lambda: tdist.all_gather([torch.ones(3)], torch.ones(4)),
        "reduce_scatter_list": lambda: tdist.reduce_scatter(torch.ones(2), [torch.ones(2)] * 2),
        "bad_root": lambda: tdist.broadcast(torch.ones(2), src=1),
        "big_group": lambda: tdist.new_group([0, 1]),
        "all_gather_dtypes": lambda: tdist.all_gather([torch.ones(2, dtype=torch.float64)],
                                                      torch.ones(2)),
        "gather_dtypes": lambda: tdist.gather(torch.ones(2), [torch.ones(2, dtype=torch.int64)],
                                              dst=0),
        "scatter_dtypes": lambda: tdist.scatter(torch.ones(2, dtype=torch.int32),
                                                [torch.ones(2)], src=0),
        "reduce_scatter_dtypes": lambda: tdist.reduce_scatter(
            torch.ones(2), [torch.ones(2, dtype=torch.float16)]),
        "all_to_all_dtypes": lambda: tdist.all_to_all([torch.ones(2)],
                                                      [torch.ones(2, dtype=torch.float64)]),
        "all_to_all_single_dtypes": lambda: tdist.all_to_all_single(
            torch.ones(2, dtype=torch.bfloat16), torch.ones(2)),
        "object_list_short": lambda: tdist.all_gather_object([], 0),
    }
    out = {}
    try:
        for name, call in calls.items():
            try:
                call()
                out[name] = None
            except Exception as e:  # noqa: BLE001
                out[name] = (type(e).__name__, str(e))
    finally:
        tdist.destroy_process_group()
    return out


def _key(message: str) -> str:
    # the world sizes and ranks differ (torch ran 1 rank, the job 2); the backend is named
    message = message.replace("ProcessGroupGloo", "ProcessGroupMPI").replace("glassgrad.", "torch.")
    # glassgrad's IndexError of a short object list says which list after torch's words
    message = message.split(": all_gather_object:")[0]
    return re.sub(r"\d+", "N", message)


def test_refusals_are_torchs(job, tmp_path):
    theirs = _torch_refusals(tmp_path)
    for rank, report in enumerate(job):
        for name, want in theirs.items():
            got = report["errors"][name]
            assert want is not None and got is not None, (name, want, got)
            assert got[0] == want[0], (name, rank, got, want)
            assert _key(got[1]) == _key(want[1]), (name, rank, got, want)


def test_not_initialized_errors_are_torchs():
    torch = pytest.importorskip("torch")
    import torch.distributed as tdist

    for call in ("get_rank", "get_world_size", "barrier"):
        with pytest.raises(ValueError) as theirs:
            getattr(tdist, call)()
        with pytest.raises(ValueError) as ours:
            getattr(gdist, call)()
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError) as theirs:
        tdist.all_reduce(torch.ones(2))
    with pytest.raises(ValueError) as ours:
        gdist.all_reduce(glassgrad.ones(2))
    assert str(ours.value) == str(theirs.value)
    assert gdist.is_initialized() is tdist.is_initialized() is False
    assert gdist.is_available() is (importlib.util.find_spec("mpi4py") is not None)


def test_names_and_reduce_ops_are_torchs():
    import torch.distributed as tdist

    for op in ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"]:
        ours, theirs = getattr(gdist.ReduceOp, op), getattr(tdist.ReduceOp, op)
        assert (repr(ours), str(ours), int(ours)) == (repr(theirs), str(theirs), int(theirs))
    assert gdist.Backend("GLOO") == tdist.Backend("GLOO") == "gloo"
    assert gdist.Backend.MPI == tdist.Backend.MPI
    assert gdist.default_pg_timeout == tdist.default_pg_timeout
    assert gdist.group.WORLD is None and gdist.GroupMember.WORLD is None
    import inspect

    for name in ["init_process_group", "all_reduce", "broadcast", "reduce", "all_gather",
                 "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor", "gather",
                 "scatter", "send", "recv", "isend", "irecv", "barrier", "new_group",
                 "all_gather_object", "broadcast_object_list", "gather_object",
                 "scatter_object_list", "send_object_list", "recv_object_list", "all_to_all",
                 "all_to_all_single", "get_rank", "get_world_size", "destroy_process_group",
                 "batch_isend_irecv", "get_global_rank", "get_group_rank",
                 "get_process_group_ranks"]:
        ours = list(inspect.signature(getattr(gdist, name)).parameters)
        theirs = list(inspect.signature(getattr(tdist, name)).parameters)
        theirs = [p for p in theirs if not p.startswith("_")]
        assert ours == theirs, (name, ours, theirs)


def test_launch_helpers_are_torchs(monkeypatch):
    import torch.distributed as tdist

    monkeypatch.delenv("LOCAL_RANK", raising=False)
    with pytest.raises(RuntimeError) as theirs:
        tdist.get_node_local_rank()
    with pytest.raises(RuntimeError) as ours:
        gdist.get_node_local_rank()
    assert str(ours.value) == str(theirs.value)
    assert gdist.get_node_local_rank(2) == tdist.get_node_local_rank(2) == 2
    monkeypatch.setenv("LOCAL_RANK", "3")
    assert gdist.get_node_local_rank() == tdist.get_node_local_rank() == 3
    assert gdist.get_default_backend_for_device("cpu") == tdist.get_default_backend_for_device(
        "cpu") == "gloo"
    for name in ("nccl", "ucc"):
        assert gdist.is_backend_available(name) == tdist.is_backend_available(name), name
    assert gdist.is_backend_available("gloo") is gdist.is_available()
    # MPI carries every group here (in torch "mpi" is a build option)
    assert gdist.is_backend_available("mpi") is gdist.is_available()


def test_torch_names_resolve_to_glassgrad_under_the_alias():
    # in a fresh interpreter: the alias refuses to install once the real torch is imported
    code = ("import glassgrad, glassgrad.alias; glassgrad.alias.install(); "
            "import torch.distributed as d; from torch.distributed import ReduceOp; "
            "from torch.utils.data.distributed import DistributedSampler as S; "
            "print(d is glassgrad.distributed, ReduceOp is glassgrad.distributed.ReduceOp, "
            "S is glassgrad.utils.data.DistributedSampler)")
    out = subprocess.run([sys.executable, "-c", code], env=env(), capture_output=True,
                         text=True, timeout=120, cwd=ROOT)
    assert out.stdout.split() == ["True", "True", "True"], out.stderr[-2000:]


def test_differentiable_collectives_have_torchs_signatures():
    import inspect

    import torch.distributed.nn.functional as tfunctional

    import glassgrad.distributed.nn.functional as gfunctional

    for name in gfunctional.__all__:
        ours = list(inspect.signature(getattr(gfunctional, name)).parameters)
        theirs = list(inspect.signature(getattr(tfunctional, name)).parameters)
        assert ours == theirs, (name, ours, theirs)


def test_half_average_rounds_the_sum_as_torch(job):
    # torch's backends add half tensors in their own type, then divide: a sum past float16's range
    # averages to inf (the job's inputs: rank r holds 60000 + 16 r, 1.5 + r, -0.3, x)
    torch = pytest.importorskip("torch")
    for dtype in ("float16", "bfloat16"):
        inputs = [torch.tensor([60000.0 + 16 * r, 1.5 + r, -0.3,
                                3e38 if dtype == "bfloat16" else 7.0], dtype=getattr(torch, dtype))
                  for r in range(WORLD)]
        total = inputs[0]
        for t in inputs[1:]:
            total = total + t
        want = (total / WORLD).tolist()
        for rank, report in enumerate(job):
            assert report["values"][f"avg_{dtype}"] == want, (dtype, rank, want)
