"""DataLoader with worker processes against torch's on the same datasets: batch order and values,
the seeds and streams each worker sees, get_worker_info, worker_init_fn, IterableDataset
splitting, prefetching, persistent workers, errors raised in workers, a killed worker, timeouts,
shared-memory batches and clean shutdown."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import pickle
import random
import re
import signal
import time
import warnings

import numpy as np
import pytest
import torch

import glassgrad
from tests.test_random_torch_exact_data import same

pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create")


def data(m):
    return m.utils.data


def tolist(batch):
    if isinstance(batch, (list, tuple)):
        return [tolist(b) for b in batch]
    if isinstance(batch, dict):
        return {k: tolist(v) for k, v in batch.items()}
    return batch.tolist() if hasattr(batch, "tolist") else batch


class Streams:
    """Each sample reports its worker and one draw from each stream a worker seeds."""

    def __init__(self, m, n=11):
        self.m, self.n, self.offset = m, n, 0

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        info = data(self.m).get_worker_info()
        return {"i": i + self.offset, "id": info.id, "workers": info.num_workers,
                "seed": info.seed, "initial": self.m.initial_seed(),
                "torch": self.m.rand(1).item(), "random": random.random(),
                "numpy": float(np.random.rand())}


def _init(worker_id):
    info = glassgrad.utils.data.get_worker_info() or torch.utils.data.get_worker_info()
    info.dataset.offset = 100 * (worker_id + 1)  # this worker's copy only


@pytest.mark.parametrize("workers,persistent", [(1, False), (2, False), (2, True), (3, False)])
def test_order_values_and_worker_streams_match_torch(workers, persistent):
    def run(m):
        loader = data(m).DataLoader(Streams(m), batch_size=3, shuffle=True, num_workers=workers,
                                    worker_init_fn=_init, persistent_workers=persistent)
        return [tolist(b) for _ in range(2) for b in loader]

    batches = same(run, seed=4)
    first = batches[:4]
    assert [b["id"] for b in first] == [[k % workers] * len(b["i"]) for k, b in enumerate(first)]
    assert all(b["seed"] == b["initial"] for b in first)


def test_order_equals_num_workers_0_and_main_stream_untouched():
    def run(m, workers):
        m.manual_seed(1)
        ds = data(m).TensorDataset(m.randn(23, 3), m.arange(23))
        loader = data(m).DataLoader(ds, batch_size=4, shuffle=True, num_workers=workers,
                                    drop_last=False)
        out = [tolist(b) for _ in range(2) for b in loader]
        return out, m.rand(2).tolist()

    for m in (torch, glassgrad):
        assert run(m, 0) == run(m, 2)
    assert run(glassgrad, 2) == run(torch, 2)


def test_get_worker_info_main_process_and_frozen():
    for m in (torch, glassgrad):
        assert data(m).get_worker_info() is None

        class Info(data(m).Dataset):
            def __len__(self):
                return 2

            def __getitem__(self, i):
                info = data(m).get_worker_info()
                try:
                    info.id = 5
                except dataclasses.FrozenInstanceError:
                    frozen = True
                fields = [f.name for f in dataclasses.fields(info)]
                return [fields, info.worker_method, info.rng is None, frozen,
                        type(info.dataset).__name__]

        got = list(data(m).DataLoader(Info(), batch_size=None, num_workers=1))
        assert got == [[["id", "num_workers", "seed", "dataset", "rng", "worker_method"],
                        "multiprocessing", True, True, "Info"]] * 2


class Split:
    """The IterableDataset of torch's docs: each worker yields its share of [start, end)."""

    def __new__(cls, m, start, end):
        class Ranged(data(m).IterableDataset):
            def __iter__(self):
                info = data(m).get_worker_info()
                lo, hi = start, end
                if info is not None:
                    per = -(-(end - start) // info.num_workers)
                    lo = start + info.id * per
                    hi = min(lo + per, end)
                return iter(range(lo, hi))

        return Ranged()


@pytest.mark.parametrize("kwargs", [{"batch_size": 3}, {"batch_size": None},
                                    {"batch_size": 2, "drop_last": True},
                                    {"batch_size": 4, "persistent_workers": True}])
def test_iterable_dataset_split_with_get_worker_info(kwargs):
    def run(m):
        loader = data(m).DataLoader(Split(m, 3, 14), num_workers=2, **kwargs)
        return [tolist(b) for _ in range(2) for b in loader]

    same(run)


def test_iterable_replica_length_warning():
    messages = []
    for m in (torch, glassgrad):
        class Short(data(m).IterableDataset):
            def __iter__(self):
                return iter(range(3))

            def __len__(self):
                return 3

        loader = data(m).DataLoader(Short(), batch_size=None, num_workers=2)
        assert len(loader) == 3
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert sorted(tolist(list(loader))) == [0, 0, 1, 1, 2, 2]
        messages.append([str(w.message).split("samples have been fetched. ")[1]
                         for w in caught if "Length of IterableDataset" in str(w.message)])
    assert messages[0] == messages[1] and len(messages[0]) == 3


class Failing:
    def __init__(self, exc):
        self.exc = exc

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise self.exc
        return i


@pytest.mark.parametrize("exc", [ValueError("bad sample 5"), KeyError("missing"),
                                 IndexError("list index out of range")])
def test_worker_exception_reraised_with_worker_id_and_traceback(exc):
    got = []
    for m in (glassgrad, torch):
        it = iter(data(m).DataLoader(Failing(exc), batch_size=2, num_workers=2))
        assert tolist(next(it)) == [0, 1] and tolist(next(it)) == [2, 3]
        with pytest.raises(type(exc)) as info:
            next(it)
        text = str(info.value)
        assert "Original Traceback (most recent call last):" in text
        assert f"in __getitem__\n    raise self.exc\n{type(exc).__name__}: " in text
        assert tolist(next(it)) == [6, 7]  # the pass goes on after the failed batch
        assert list(it) == []
        got.append(text.splitlines()[0])
    assert got[0] == got[1] == f"Caught {type(exc).__name__} in DataLoader worker process 0."


def _init_fails(worker_id):
    if worker_id == 1:
        raise OSError("no such shard")


def test_worker_init_fn_error_and_non_leaf_tensor():
    for m in (glassgrad, torch):
        loader = data(m).DataLoader(range(4), batch_size=2, num_workers=2,
                                    worker_init_fn=_init_fails)
        it = iter(loader)
        assert tolist(next(it)) == [0, 1]
        with pytest.raises(OSError, match="Caught OSError in DataLoader worker process 1"):
            next(it)
        assert list(it) == []  # NOTE: torch takes ~10 s to shut down a pass left mid-way here

        class NonLeaf(data(m).Dataset):
            def __len__(self):
                return 2

            def __getitem__(self, i):
                return m.ones(2, requires_grad=True) * 2

        with pytest.raises(RuntimeError, match="Caught RuntimeError in DataLoader worker proc"):
            next(iter(data(m).DataLoader(NonLeaf(), batch_size=2, num_workers=1)))


class Killed:
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 2:
            time.sleep(0.5)  # after the main process has the first batch, as it waits for more
            os.kill(os.getpid(), signal.SIGKILL)
        return i


def test_killed_worker_raises_instead_of_hanging():
    for m in (glassgrad, torch):
        it = iter(data(m).DataLoader(Killed(), batch_size=2, num_workers=1))
        assert tolist(next(it)) == [0, 1]
        start = time.monotonic()
        with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                               "unexpectedly") as info:
            next(it)
        assert time.monotonic() - start < 10
        assert str(info.value.__cause__).startswith("DataLoader worker (pid ")
        assert str(info.value.__cause__).endswith(" is killed by signal: Killed. ")
        pids = _worker_pids(it) if m is glassgrad else []
        del it, info
        assert _gone(pids)  # no reference cycle keeps the failed pass alive


class DiesAfterSending:
    def __new__(cls, m):
        class Dies(data(m).Dataset):
            def __len__(self):
                return 8

            def __getitem__(self, i):
                if i == 4:  # batch [2, 3] is sent, not yet received: its memory is lost too
                    time.sleep(0.3)
                    os.kill(os.getpid(), signal.SIGKILL)
                return m.full((3,), float(i))

        return Dies()


def test_worker_dead_before_its_sent_batch_is_received():
    for m in (glassgrad, torch):
        it = iter(data(m).DataLoader(DiesAfterSending(m), batch_size=2, num_workers=1))
        assert tolist(next(it))[1] == [1.0] * 3
        # torch's SIGCHLD handler may raise already in the sleep: "(pid N) is killed by signal"
        with pytest.raises(RuntimeError, match=r"^DataLoader worker \(pid") as info:
            time.sleep(1.0)
            next(it)
        if m is glassgrad:
            assert re.match(r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly",
                            str(info.value))
        del it, info


class Slow:
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(1)
        return i


def test_timeout():
    for m in (glassgrad, torch):
        it = iter(data(m).DataLoader(Slow(), num_workers=1, timeout=0.3))
        with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0.3 seconds"):
            next(it)
        pids = _worker_pids(it) if m is glassgrad else []
        del it
        assert _gone(pids)
        with pytest.raises(AssertionError, match="_SingleProcessDataLoaderIter requires "
                                                 "timeout == 0"):
            iter(data(m).DataLoader(range(2), timeout=1))


class Counted:
    def __init__(self, counter):
        self.counter = counter

    def __len__(self):
        return 40

    def __getitem__(self, i):
        with self.counter.get_lock():
            self.counter.value += 1
        return i


@pytest.mark.parametrize("prefetch", [1, 3])
def test_prefetch_factor_bounds_batches_in_flight(prefetch):
    seen = []
    for m in (torch, glassgrad):
        counter = multiprocessing.Value("i", 0)
        it = iter(data(m).DataLoader(Counted(counter), batch_size=2, num_workers=2,
                                     prefetch_factor=prefetch))
        next(it)
        time.sleep(0.5)
        seen.append(counter.value)  # samples fetched while the main process waits
        assert len(list(it)) == 19
    assert seen[0] == seen[1] == 2 * (2 * prefetch + 1)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # torch's __del__
def test_prefetch_factor_zero_refused():
    for m in (torch, glassgrad):
        with pytest.raises(AssertionError, match="prefetch_factor must be greater than 0"):
            iter(data(m).DataLoader(range(4), num_workers=1, prefetch_factor=0))


def test_in_order_false_and_pin_memory_accepted():
    for m in (torch, glassgrad):
        with pytest.warns(UserWarning, match="'pin_memory' argument is set as true but no "
                                             "accelerator is found"):
            got = [tolist(b) for b in data(m).DataLoader(range(9), batch_size=2, num_workers=2,
                                                         in_order=False, pin_memory=True)]
        assert sorted(got) == [[0, 1], [2, 3], [4, 5], [6, 7], [8]]


class Leaf:
    def __new__(cls, m):
        class LeafData(data(m).Dataset):
            def __len__(self):
                return 2

            def __getitem__(self, i):
                return {"w": m.ones(2, requires_grad=True), "name": f"s{i}"}

        return LeafData()


def test_batches_come_through_shared_memory():
    ds = glassgrad.utils.data.TensorDataset(
        glassgrad.randn(8, 3), glassgrad.arange(8), glassgrad.arange(8) % 2 == 0,
        glassgrad.randn(8, 2).to(glassgrad.float16))
    loader = glassgrad.utils.data.DataLoader(ds, batch_size=4, num_workers=2)
    for batch, want in zip(loader, glassgrad.utils.data.DataLoader(ds, batch_size=4)):
        for t, w in zip(batch, want):
            assert t.dtype == w.dtype and np.array_equal(t.numpy(), w.numpy())
            assert t.is_shared() and not w.is_shared()  # as torch's batches from workers
            t.zero_()  # writable, as torch's batches are
    for m in (torch, glassgrad):
        got = list(data(m).DataLoader(Leaf(m), batch_size=None, num_workers=1))
        assert [(b["w"].requires_grad, b["w"].is_leaf, b["name"]) for b in got] == [
            (True, True, "s0"), (True, True, "s1")]


def _worker_pids(it):
    return [w.pid for w in it._pool.workers]


def _gone(pids):
    """No process left, not even a zombie, and no shared-memory file behind."""
    for pid in pids:
        if os.path.exists(f"/proc/{pid}"):
            with open(f"/proc/{pid}/stat") as f:
                assert f.read().split()[2] != "Z", f"worker {pid} is a zombie"
            return False
    assert not [p for p in os.listdir("/dev/shm")
                if any(p.startswith(f"glassgrad_{pid}_") for pid in pids)]
    return True


@pytest.fixture(params=["file_descriptor", "file_system"])
def strategy(request):
    before = glassgrad.multiprocessing.get_sharing_strategy()
    glassgrad.multiprocessing.set_sharing_strategy(request.param)
    yield request.param
    glassgrad.multiprocessing.set_sharing_strategy(before)


def test_clean_shutdown(strategy):
    ds = glassgrad.utils.data.TensorDataset(glassgrad.arange(40))
    it = iter(glassgrad.utils.data.DataLoader(ds, batch_size=2, num_workers=2,
                                             prefetch_factor=4))
    next(it)
    time.sleep(0.3)  # let the workers fill the queue with batches that will never be read
    pids = _worker_pids(it)
    del it  # deleted early
    assert _gone(pids)
    it = iter(glassgrad.utils.data.DataLoader(ds, batch_size=8, num_workers=2))
    pids = _worker_pids(it)
    assert len(list(it)) == 5 and _gone(pids)  # the end of a pass shuts the workers down
    assert not [c for c in multiprocessing.active_children() if c.pid in pids]

    loader = glassgrad.utils.data.DataLoader(ds, batch_size=8, num_workers=2,
                                             persistent_workers=True)
    first = iter(loader)
    next(first)
    pids = _worker_pids(first)
    assert [tolist(b) for b in loader][0] == [list(range(8))]  # reset mid-pass, same workers
    assert _worker_pids(iter(loader)) == pids and not _gone(pids)
    del loader, first  # no reference cycle: the workers go at once
    assert _gone(pids)


_ORPHANS = """
import os, signal, sys
sys.path.insert(0, {root!r})
import glassgrad
from glassgrad.utils.data import DataLoader, TensorDataset
if __name__ == "__main__":
    ds = TensorDataset(glassgrad.arange(100.0))
    it = iter(DataLoader(ds, batch_size=4, num_workers=2))
    next(it)
    print(" ".join(str(w.pid) for w in it._pool.workers), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)  # no finalizer runs: the workers must notice
"""


def test_workers_exit_when_the_main_process_is_killed(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "orphans.py"
    script.write_text(_ORPHANS.format(root=os.path.dirname(os.path.dirname(__file__))))
    main = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    pids = [int(p) for p in main.stdout.readline().split()]
    main.wait(timeout=60)
    assert len(pids) == 2
    def exited(pid):  # an orphan's zombie is init's to reap (a container's may not)
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except FileNotFoundError:
            return True

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(map(exited, pids)):
        time.sleep(0.1)
    assert all(map(exited, pids))
    # a forkserver's worker is not the main process's child: it watches the main's pid instead
    from glassgrad.utils.data._worker import _MainWatch

    assert _MainWatch(os.getpid()).alive() and not _MainWatch(os.getpid()).direct
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert not _MainWatch(gone.pid).alive()


def test_multiprocessing_context_spawn_and_argument_errors():
    # NOTE: glassgrad's own dataset: a spawned worker imports what the dataset's pickle names,
    # and this module would import torch there too
    ds = glassgrad.utils.data.TensorDataset(glassgrad.randn(7, 2), glassgrad.arange(7))
    runs = [[tolist(b) for b in glassgrad.utils.data.DataLoader(
        ds, batch_size=3, num_workers=1, multiprocessing_context=context, shuffle=True,
        generator=glassgrad.Generator().manual_seed(5))]
        for context in ("spawn", multiprocessing.get_context("fork"), None)]
    assert runs[0] == runs[1]
    assert runs[1] == [tolist(b) for b in glassgrad.utils.data.DataLoader(
        ds, batch_size=3, shuffle=True, generator=glassgrad.Generator().manual_seed(5))]
    for m in (glassgrad, torch):  # a lambda cannot reach a spawned worker
        loader = data(m).DataLoader(range(4), num_workers=1, multiprocessing_context="spawn",
                                    worker_init_fn=lambda wid: None)
        with pytest.warns(UserWarning, match="Got pickle error when attempting to start a "
                                             "worker Process"):
            with pytest.raises((AttributeError, pickle.PicklingError, TypeError)):
                iter(loader)
    errors = []
    for m in (torch, glassgrad):
        for kwargs in ({"num_workers": 1, "multiprocessing_context": "threads"},
                       {"num_workers": 1, "multiprocessing_context": 3},
                       {"num_workers": 0, "multiprocessing_context": "spawn"}):
            with pytest.raises((ValueError, TypeError)) as info:
                data(m).DataLoader(range(3), **kwargs)
            errors.append((type(info.value), str(info.value)))
    assert errors[:3] == errors[3:]
    assert isinstance(glassgrad.utils.data.DataLoader(
        range(2), num_workers=1, multiprocessing_context="spawn").multiprocessing_context,
        multiprocessing.context.SpawnContext)


def test_random_sampler_draws_lazily_as_torch():
    import tracemalloc

    def run(m):
        sampler = data(m).RandomSampler(range(1000), replacement=True, num_samples=int(1e10))
        it = iter(sampler)
        head = [next(it) for _ in range(100)]
        loader = data(m).DataLoader(data(m).TensorDataset(m.arange(1000)), sampler=sampler,
                                    batch_size=64)
        batches = iter(loader)
        return [len(sampler), len(loader), head, [next(batches)[0].tolist() for _ in range(3)]]

    tracemalloc.start()
    try:
        same(run, seed=2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20  # materialised, the indices would take 74.5 GiB
