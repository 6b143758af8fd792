"""The reducer of ``DistributedDataParallel``: one post-accumulate-grad hook per parameter copies
the new gradient, divided by the world size, into its bucket; when a bucket's last gradient
arrives the bucket is all-reduced (SUM) with ``async_op=True`` while backward goes on, always in
bucket order so every rank launches the same collectives in the same order. When every bucket is
launched the works are awaited and the averaged gradients written back.

# NOTE [Finalize in the last hook]: PyTorch finalizes in a callback the autograd engine runs at
# the end of backward; glassgrad's engine has no such queue, so the hook that makes the last
# bucket ready finalizes. Every gradient is final by then: what backward still does afterwards
# (gradients of inputs) touches no parameter.
"""

from __future__ import annotations

import time

from ...autograd.grad_mode import no_grad
from . import _ddp_buckets, _ddp_comm_hook
from ._ddp_timeline import IterationTimeline


def _dist():
    from ... import distributed

    return distributed


class _HookedWork:
    """A comm hook's Future seen as a Work (``wait``, ``is_completed``); ``result`` the tensor."""

    __slots__ = ("future", "result")

    def __init__(self, future) -> None:
        if not hasattr(future, "wait"):
            raise TypeError("DDP communication hook must return a torch.futures.Future, got "
                            f"{type(future).__name__}")
        self.future, self.result = future, None

    def wait(self):
        self.result = _ddp_comm_hook.result_tensor(self.future)
        return True

    def is_completed(self) -> bool:
        return self.future.done()


class Reducer:
    """Bucketed gradient all-reduce for ``params`` (the DDP module's parameters that require
    grad, in ``named_parameters`` order; ``names`` their qualified names)."""

    def __init__(self, params, names, bucket_indices, process_group, find_unused_parameters,
                 gradient_as_bucket_view, static_graph, first_bucket_bytes_cap,
                 bucket_bytes_cap) -> None:
        self.params = params
        self.names = names
        self.group = process_group
        self.find_unused = find_unused_parameters
        self.grad_as_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.limits = [first_bucket_bytes_cap, bucket_bytes_cap]
        self.world_size = _dist().get_world_size(process_group)
        self.rank = _dist().get_rank(process_group)
        self.buckets, self.where = _ddp_buckets.build_buckets(bucket_indices, params)
        self.expect_hooks = False
        self.require_finalize = False
        self.ready: set = set()
        self.ready_order: list = []
        self.unused: list = []  # marked ready without a gradient (found by the graph search)
        self.marked_unused = False
        self.next_bucket = 0
        self.has_rebuilt = False
        self.rebuilt_order: list | None = None
        self.iteration = 0
        self.static_unused: list | None = None  # static_graph: the first iteration's unused set
        self.static_used = None  # ... and whether any rank used each parameter
        self.last_outputs = ()  # the previous forward's output nodes, for the unused-param error
        self.timeline: IterationTimeline | None = None
        self.comm_hook = None  # register_comm_hook: hook(state, GradBucket) -> Future
        self.comm_state = None
        self.timelines: list = []  # the recent iterations (a few, for the glass box)
        self.handles = [p.register_post_accumulate_grad_hook(self._hook_for(i))
                        for i, p in enumerate(params)]

    def _hook_for(self, index: int):
        def hook(param):
            self.autograd_hook(index)

        return hook

    # --- iteration bookkeeping ---------------------------------------------------------------
    def prepare_for_backward(self, unused) -> None:
        """Arm the hooks for the coming backward; ``unused``: parameter indices the graph search
        found unreachable from the outputs (marked ready at the first hook)."""
        self.expect_hooks = True
        self.ready = set()
        self.ready_order = []
        self.unused = list(unused)
        self.marked_unused = False
        self.next_bucket = 0
        for b in self.buckets:
            b.pending = len(b.indices)
            b.work = None
        self.timeline = IterationTimeline(self.rank, self.iteration, self.buckets, self.names)

    def add_unused(self, indices) -> None:
        """More parameters to mark ready without a gradient (the sink found outputs the loss left
        out); only before the first hook of the backward has marked the unused ones."""
        if self.expect_hooks and not self.marked_unused:
            self.unused = sorted(set(self.unused) | set(indices))

    def should_rebuild_buckets(self) -> bool:
        return (self.static_graph or not self.find_unused) and not self.has_rebuilt

    def autograd_hook(self, index: int) -> None:
        if not self.expect_hooks:
            return  # no_sync, or a backward DDP's forward did not arm: gradients stay local
        if not self.marked_unused:
            self.marked_unused = True
            self.timeline.backward_started(time.perf_counter())
            for i in self.unused:
                self.mark_ready(i, has_grad=False)
        self.mark_ready(index, has_grad=True)

    def mark_ready(self, index: int, has_grad: bool) -> None:
        if index in self.ready:
            raise RuntimeError(
                "Expected to mark a variable ready only once. This error is caused by one of the "
                "following reasons: 1) Use of a module parameter outside the `forward` function. "
                "2) Reused parameters in multiple reentrant backward passes. 3) Incorrect unused "
                "parameter detection (a second backward through the same forward output).\n"
                f"Parameter at index {index} with name {self.names[index]} has been marked as "
                "ready twice. This means that multiple autograd engine hooks have fired for this "
                "particular parameter during this iteration.\nglassgrad: call backward once per "
                "DDP forward, or run the extra backward inside ddp.no_sync()."
            )
        self.ready.add(index)
        self.ready_order.append(index)
        self.require_finalize = True
        bucket, pos = self.where[index]
        view = bucket.views[pos]
        param = self.params[index]
        grad = param.grad if has_grad else None
        scale = 1.0 / self.world_size if self.comm_hook is None else 1.0  # a hook averages itself
        with no_grad():
            if grad is None:
                view.zero_()
            elif bucket.holds(grad):
                if scale != 1.0:
                    view.mul_(scale)
            else:
                view.copy_(grad)
                if scale != 1.0:
                    view.mul_(scale)
                if self.grad_as_view:
                    param.grad = view
        now = time.perf_counter()
        self._poll()
        bucket.pending -= 1
        if bucket.pending == 0:
            self.timeline.bucket_ready(bucket.index, now, self.names[index])
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            launched = self.buckets[self.next_bucket]
            if self.comm_hook is None:
                launched.work = _dist().all_reduce(launched.flat, group=self.group, async_op=True)
            else:
                bucket_view = _ddp_comm_hook.GradBucket(
                    launched, self.params, launched.index == len(self.buckets) - 1)
                launched.work = _HookedWork(self.comm_hook(self.comm_state, bucket_view))
            self.timeline.bucket_launched(launched.index, time.perf_counter())
            self.next_bucket += 1
        if self.next_bucket == len(self.buckets):
            self.finalize()  # NOTE [Finalize in the last hook]

    def _poll(self) -> None:
        """Let launched reductions progress (MPI moves a nonblocking collective forward only inside
        MPI calls: each hook tests the works in flight; for progress between hooks, set
        GLASSGRAD_DISTRIBUTED_PROGRESS=thread, NOTE [Progress thread] in glassgrad.distributed) and
        note those that finished: the timeline's completion times."""
        for b in self.buckets[:self.next_bucket]:  # (a snapshot: the hooks may launch more)
            if b.work is not None and not self.timeline.is_done(b.index):
                if b.work.is_completed():
                    self.timeline.bucket_done(b.index, time.perf_counter())

    def finalize(self) -> None:
        """Await every bucket, then write the averaged gradients back into ``.grad``."""
        used_anywhere = self.static_used  # static_graph: the first iteration's answer holds
        if self.find_unused or (self.static_graph and self.static_unused is None):
            used_anywhere = self._globally_used()
        for b in self.buckets:
            start = time.perf_counter()
            b.work.wait()
            if isinstance(b.work, _HookedWork):
                reduced = b.work.result
                if reduced is not b.flat:
                    with no_grad():
                        b.flat.copy_(reduced.reshape(b.flat.shape))
            self.timeline.bucket_waited(b.index, start, time.perf_counter())
        with no_grad():
            for b in self.buckets:
                for i, view in zip(b.indices, b.views):
                    p = self.params[i]
                    if used_anywhere is not None and not used_anywhere[i]:
                        continue  # no rank used it: its .grad stays as it was (PyTorch)
                    if self.grad_as_view and p.grad is None:
                        p.grad = view
                    elif p.grad is None:
                        p.grad = view.clone()
                    elif not b.holds(p.grad):
                        p.grad.copy_(view)
        self.timeline.finished(time.perf_counter())
        self.timelines = (self.timelines + [self.timeline])[-8:]
        if self.static_graph and self.static_unused is None:
            self.static_unused, self.static_used = list(self.unused), used_anywhere
        if self.should_rebuild_buckets() and self.rebuilt_order is None:
            self.rebuilt_order = list(self.ready_order)
        self.expect_hooks = False
        self.require_finalize = False
        self.last_outputs = ()  # only an unfinished reduction needs the graph (its error)
        self.iteration += 1

    def _globally_used(self):
        """Per parameter: did any rank produce a gradient for it (all-reduce of the used map)."""
        from ... import _factories

        local = [0] * len(self.params)
        unused = set(self.unused)
        for i in self.ready:
            if i not in unused:
                local[i] = 1
        used = _factories.tensor(local)
        _dist().all_reduce(used, group=self.group)
        return [v > 0 for v in used.tolist()]

    def unfinished(self) -> list:
        """Indices of the parameters that got no gradient in an unfinished reduction."""
        return [i for i in range(len(self.params)) if i not in self.ready]

    # --- bucket rebuild (after the first iteration, in gradient-ready order) -----------------
    def rebuild_buckets(self) -> bool:
        """Re-bucket by the order gradients arrived in the first iteration, rank 0's order on
        every rank (PyTorch's ``Reducer._rebuild_buckets``). Returns True when it rebuilt."""
        if not self.should_rebuild_buckets() or not self.rebuilt_order:
            return False
        from ... import _factories

        order = self.rebuilt_order  # every parameter: a reduction finishes only when all are ready
        indices, _ = _ddp_buckets.compute_bucket_assignment_by_size(
            [self.params[i] for i in order], self.limits, tensor_indices=order)
        # rank 0's assignment wins: the parameter order and each one's bucket number (2n ints,
        # the same count on every rank whatever its own bucketing)
        shared = _factories.tensor([i for b in indices for i in b]
                                   + [k for k, b in enumerate(indices) for _ in b])
        _dist().broadcast(shared, 0, group=self.group)
        values = shared.tolist()
        n = len(self.params)
        indices = []
        for i, k in zip(values[:n], values[n:]):
            if k == len(indices):
                indices.append([])
            indices[k].append(i)
        self.buckets, self.where = _ddp_buckets.build_buckets(indices, self.params)
        _ddp_buckets.copy_grads_into(self.buckets, self.params)
        if self.grad_as_view:
            with no_grad():
                for b in self.buckets:
                    for i, view in zip(b.indices, b.views):
                        if self.params[i].grad is not None:
                            self.params[i].grad = view
        self.has_rebuilt = True
        return True

    def bucket_indices(self) -> list:
        return [list(b.indices) for b in self.buckets]

    def remove_hooks(self) -> None:
        for h in self.handles:
            h.remove()
