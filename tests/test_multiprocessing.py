"""glassgrad.multiprocessing against torch.multiprocessing: tensors pickled through shared memory
(ForkingPickler, in this process), then the same programs on forked processes: queues, Hogwild
updates, Pool, start_processes' errors (issue 22, lane mp). Spawned processes:
test_multiprocessing_spawn.py."""

from __future__ import annotations

import os
import pickle
from multiprocessing.reduction import ForkingPickler

import pytest
import torch
import torch.multiprocessing as tmp

import glassgrad
import glassgrad.multiprocessing as gmp

LIBS = ((torch, tmp), (glassgrad, gmp))
needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def _both(fn):
    """fn(lib, mp) on torch and on glassgrad: (torch's, glassgrad's)."""
    return tuple(fn(lib, mp) for lib, mp in LIBS)


def _send(obj):
    return pickle.loads(ForkingPickler.dumps(obj))


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return type(e).__name__, str(e)
    return None


def test_names_and_sharing_strategies():
    missing = [n for n in tmp.__all__ if not hasattr(gmp, n)]
    assert missing == []
    for name in ("spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
                 "ProcessExitedException", "SpawnContext", "Pool", "SimpleQueue"):
        assert hasattr(gmp, name), name
    assert gmp.Process is tmp.Process and gmp.Queue == tmp.Queue  # multiprocessing's own
    assert gmp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert gmp.get_sharing_strategy() == tmp.get_sharing_strategy()
    ours, theirs = (_error(lambda: mp.set_sharing_strategy("bogus")) for mp in (gmp, tmp))
    assert ours[0] == theirs[0] == "AssertionError"
    assert ours[1].split(",")[0] == theirs[1].split(",")[0]
    assert glassgrad.multiprocessing is gmp


def _round_trip(lib, mp):
    """Tensors of several dtypes and layouts sent and received: what the receiver sees, and
    whether a write through it reaches the sender's tensor."""
    out = []
    base = lib.arange(24, dtype=lib.float64).reshape(4, 6) * 1
    for make in (lambda: base, lambda: (lib.arange(6) * 3).to(lib.int64),
                 lambda: lib.tensor([True, False, True]) & True,
                 lambda: (lib.ones(3, 2) * 1.5).to(lib.bfloat16),
                 lambda: lib.zeros(0, 3), lambda: lib.tensor(2.5) * 1):
        x = make()
        y = _send(x)
        out.append((str(y.dtype).split(".")[-1], tuple(y.shape), y.stride(), y.storage_offset(),
                    y.tolist(), x.is_shared(), y.is_shared() if y.numel() else None,
                    y.data_ptr() == x.data_ptr() if x.numel() else None))
    y = _send(base)
    y[1, 2] = -7.0
    out.append(base[1, 2].item())
    view = _send(base.t())  # a transposed view: its geometry travels
    view[0, 3] = 99.0
    out.append((view.stride(), base[3, 0].item(), view.is_contiguous()))
    return out


def test_tensors_travel_through_shared_memory():
    theirs, ours = _both(_round_trip)
    assert ours == theirs


def _autograd_state(lib, mp):
    p = lib.nn.Parameter(lib.ones(2, 2) * 1)
    p.grad = lib.ones(2, 2)
    q = _send(p)
    leaf = lib.ones(3, requires_grad=True)
    r = _send(leaf)
    refused = _error(lambda: ForkingPickler.dumps(leaf * 2))
    detached = _send((leaf * 2).detach())
    return (type(q).__name__, q.requires_grad, q.is_leaf, q.grad, r.requires_grad, r.is_leaf,
            refused, detached.requires_grad, detached.tolist(), p.is_shared())


def test_requires_grad_and_the_non_leaf_refusal():
    theirs, ours = _both(_autograd_state)
    assert ours == theirs
    assert ours[6][1].startswith("Cowardly refusing to serialize non-leaf tensor which "
                                 "requires_grad")


def _storages(lib, mp):
    x = (lib.arange(4, dtype=lib.float32) * 1).share_memory_()
    s = _send(x.untyped_storage())
    s[0] = 0  # bytes 0..3 are x[0]'s float32: 1.0's low byte is already 0
    s[3] = 64  # 2.0 in float32
    return (s.nbytes(), x.tolist(), type(s).__name__)


def test_storages_travel_through_shared_memory():
    theirs, ours = _both(_storages)
    assert ours == theirs


def _storage_methods(lib, mp):
    x = (lib.ones(3) * 1).share_memory_()
    u = lib.UntypedStorage(8)
    before = u.is_shared()
    same = u.share_memory_() is u
    n = lib.UntypedStorage._new_shared(16)
    received = _send(n)
    received[0] = 7
    return (x.untyped_storage().is_shared(), lib.ones(2).untyped_storage().is_shared(), before,
            same, u.is_shared(), u.nbytes(), n.is_shared(), n.nbytes(), n[0])


def test_storage_sharing_methods():
    theirs, ours = _both(_storage_methods)
    assert ours == theirs


def test_storage_of_a_private_tensor_refuses_to_move():
    # torch moves the tensor's storage under it; glassgrad's storage is a window over the
    # tensor's memory, which only Tensor.share_memory_() can move: a clear refusal, not a copy
    with pytest.raises(RuntimeError, match="Call share_memory_\\(\\) on the tensor"):
        glassgrad.ones(2).untyped_storage().share_memory_()


def _file_system(lib, mp):
    mp.set_sharing_strategy("file_system")
    try:
        x = lib.zeros(5) * 1
        y = _send(x)
        z = _send(y)  # a received tensor sent on
        z[2] = 3.0
        return x.tolist(), y.tolist(), mp.get_sharing_strategy(), z.data_ptr() == x.data_ptr()
    finally:
        mp.set_sharing_strategy("file_descriptor")


def test_file_system_strategy():
    theirs, ours = _both(_file_system)
    assert ours == theirs
    import gc

    gc.collect()
    left = [n for n in os.listdir("/dev/shm") if n.startswith(f"glassgrad_{os.getpid()}_")]
    assert left == []  # every name unlinked once its segment is gone


def _killed_receiver(q, out):
    t = q.get()
    out.put(float(t.sum()))
    out.close()
    out.join_thread()
    os.kill(os.getpid(), 9)  # never exits normally: its exit functions do not run


@needs_fork
def test_a_killed_receiver_leaves_no_file_system_names():
    # torch's shm manager removes what a killed process held; glassgrad's receiver unlinks the
    # name it was sent as soon as it opened the file (it used to rename it to a name of its own,
    # which stayed in /dev/shm after a SIGKILL)
    def names():
        return {n for n in os.listdir("/dev/shm") if n.startswith(("torch_", "glassgrad_"))}

    def run(lib, mp):
        mp.set_sharing_strategy("file_system")
        try:
            before = names()
            ctx = mp.get_context("fork")
            q, out = ctx.Queue(), ctx.Queue()
            p = ctx.Process(target=_killed_receiver, args=(q, out))
            p.start()
            x = lib.full((1000,), 2.0)
            q.put(x)
            got = out.get(timeout=60)
            p.join(60)
            del x
            import gc

            gc.collect()
            # (names carry their creator's pid: the parent's own segment may live on in torch)
            return got, p.exitcode, sorted(n for n in names() - before if f"_{p.pid}_" in n)
        finally:
            mp.set_sharing_strategy("file_descriptor")

    theirs, ours = _both(run)
    assert ours == theirs == (2000.0, -9, [])


def test_share_memory_of_a_view_moves_its_base():
    def probe(lib, mp):
        base = lib.arange(6.0)
        view = base[2:].view(2, 2)
        view.share_memory_()
        view[0, 0] = 9.0
        sent = lib.arange(6.0).reshape(2, 3)  # a view whose base only it holds
        _send(sent)[0, 1] = -1.0
        return base.is_shared(), base.tolist(), view.storage_offset(), sent.is_shared(), \
            sent.tolist()

    theirs, ours = _both(probe)
    assert ours == theirs


def test_share_memory_and_module_share_memory():
    def probe(lib, mp):
        m = lib.nn.Linear(3, 2)
        before = [p.is_shared() for p in m.parameters()]
        same = m.share_memory() is m
        t = lib.ones(3) * 1
        return before, same, [p.is_shared() for p in m.parameters()], \
            t.share_memory_() is t, t.is_shared(), [p.requires_grad for p in m.parameters()]

    theirs, ours = _both(probe)
    assert ours == theirs


def _hogwild_child(x, rank, steps):
    for _ in range(steps):
        x[rank] += 1.0


@needs_fork
def test_hogwild_updates_are_seen_across_forked_processes():
    def run(lib, mp):
        ctx = mp.get_context("fork")
        shared, private = lib.zeros(2).share_memory_(), lib.zeros(2)
        out = []
        for x in (shared, private):
            ps = [ctx.Process(target=_hogwild_child, args=(x, r, 50)) for r in range(2)]
            for p in ps:
                p.start()
            for p in ps:
                p.join()
            out.append((x.tolist(), [p.exitcode for p in ps]))
        return out

    theirs, ours = _both(run)
    assert ours == theirs == [([50.0, 50.0], [0, 0]), ([0.0, 0.0], [0, 0])]


def _queue_child(q, r, done):
    t = q.get()
    t.mul_(10)
    again = q.get()  # the same storage received twice is one storage here
    r.put((again.data_ptr() == t.data_ptr(), again.untyped_storage() == t.untyped_storage()))
    r.put(t[1:])  # sent back to the process it came from
    w = q.get()  # a leaf parameter: requires_grad kept
    r.put((w.requires_grad, w.is_leaf, type(w).__name__))
    r.put(w.detach() * 0 + 5)  # a new tensor made here, sent back
    done.wait()  # the sender must outlive the receiver's unpickling (as in torch)


@needs_fork
def test_queues_between_forked_processes():
    def run(lib, mp):
        ctx = mp.get_context("fork")
        q, r, done = ctx.Queue(), ctx.Queue(), ctx.Event()
        p = ctx.Process(target=_queue_child, args=(q, r, done))
        p.start()
        x = lib.arange(3.0) * 1
        q.put(x)
        q.put(x)
        q.put(lib.nn.Parameter(lib.ones(2) * 1))
        same, home = r.get(timeout=60), r.get(timeout=60)
        flags, back = r.get(timeout=60), r.get(timeout=60)
        done.set()
        p.join(60)
        return (x.tolist(), same, home.data_ptr() - x.data_ptr(), home.tolist(), flags,
                back.tolist(), back.is_shared(), p.exitcode)

    theirs, ours = _both(run)
    assert ours == theirs


def _double(x):
    return x * 2


@needs_fork
def test_pool_map_with_tensors():
    def run(lib, mp):
        with mp.get_context("fork").Pool(2) as pool:
            out = pool.map(_double, [lib.full((2,), float(i)) for i in range(4)])
        return [t.tolist() for t in out]

    theirs, ours = _both(run)
    assert ours == theirs


def _fails(i, how):
    if i == 1:
        if how == "raise":
            raise ValueError("bad rank")
        os._exit(3)


@needs_fork
@pytest.mark.parametrize("how", ["raise", "exit"])
def test_start_processes_reports_the_failed_child(how):
    def run(lib, mp):
        with pytest.raises((mp.ProcessRaisedException, mp.ProcessExitedException)) as info:
            mp.start_processes(_fails, args=(how,), nprocs=2, start_method="fork")
        e = info.value
        first = e.msg.strip().splitlines()[0]
        return (type(e).__name__, e.error_index, first, getattr(e, "exit_code", None),
                "ValueError: bad rank" in e.msg)

    theirs, ours = _both(run)
    assert ours == theirs


def test_spawn_warns_for_another_start_method(monkeypatch):
    import sys

    started = []
    monkeypatch.setattr(sys.modules["glassgrad.multiprocessing.spawn"], "start_processes",
                        lambda *a, **k: started.append(k))
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        gmp.spawn(_fails, args=("raise",), nprocs=1, start_method="fork")
    assert started == [{"start_method": "spawn"}]
