"""``DistributedDataParallel`` (``torch.nn.parallel.DistributedDataParallel``) on
``glassgrad.distributed``.

Construction broadcasts rank 0's parameters and buffers; backward all-reduces gradients in
buckets while it runs (``_ddp_reducer``); each forward first broadcasts rank 0's buffers
(``broadcast_buffers``). Only the public ``torch.distributed`` names are used (``broadcast``,
``all_reduce`` with ``async_op``, ``all_gather``), so the layering is PyTorch's.
"""

from __future__ import annotations

import contextlib

from ..._user_warning import warn_user
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ..module import Module
from . import _ddp_buckets, _ddp_diagnose, _ddp_sink
from ._ddp_reducer import Reducer


def _dist():
    from ... import distributed

    return distributed


class DistributedDataParallel(Module):
    """Data parallelism across processes (``torch.nn.parallel.DistributedDataParallel``).

    ``DistributedDataParallel(module, device_ids=None, output_device=None, dim=0,
    broadcast_buffers=None, init_sync=True, process_group=None, bucket_cap_mb=None,
    find_unused_parameters=False, check_reduction=False, gradient_as_bucket_view=False,
    static_graph=False, ..., forward_sync_buffers=None)``. Each rank runs ``module`` on its own
    batch; after ``backward()`` every parameter's ``.grad`` is the average over ranks, so the
    optimizers step alike. Gradients are reduced in buckets of ``bucket_cap_mb`` MiB (the first
    bucket after the first iteration 1 MiB), each launched as soon as its last gradient is
    accumulated (MPI advances it at each later hook; GLASSGRAD_DISTRIBUTED_PROGRESS=thread also
    between them, NOTE [Progress thread] in ``glassgrad.distributed``).
    ``no_sync()`` accumulates locally. ``find_unused_parameters=True`` searches each forward's
    graph and puts a sink after its outputs, so parameters the loss did not reach sit the
    iteration out (their ``.grad`` untouched where no rank used them). ``static_graph=True``
    searches once and keeps the answer. ``state_dict()`` keys are ``module.<name>``. Not
    supported (NotImplementedError): ``mixed_precision``, ``device_mesh``, delayed all-reduce,
    ``bucket_cap_mb_list``; ``join()`` and the built-in comm hooks are absent
    (``register_comm_hook`` with a hook of your own works).

    Raises PyTorch's errors: ValueError "Default process group has not been initialized" (from
    ``glassgrad.distributed``), RuntimeError "DistributedDataParallel is not needed when a module
    doesn't have any parameter that requires a gradient.", ValueError for ``device_ids`` on the
    CPU, and on the forward after a backward that left parameters without gradient the
    "Expected to have finished reduction in the prior iteration" error, naming them and where
    each one's path to the loss was cut.

    Example (``python -m glassgrad.distributed.run --nproc-per-node 2 train.py``)::

        dist.init_process_group("mpi")
        ddp = nn.parallel.DistributedDataParallel(nn.Linear(4, 2))
        ddp(x).sum().backward()  # .grad averaged over the ranks
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=None,
                 init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                 bucket_cap_mb_list=None, batched_grad_copy=False,
                 forward_sync_buffers=None) -> None:
        super().__init__()
        for arg, value in (("delay_all_reduce_named_params", delay_all_reduce_named_params),
                           ("param_to_hook_all_reduce", param_to_hook_all_reduce),
                           ("mixed_precision", mixed_precision), ("device_mesh", device_mesh),
                           ("bucket_cap_mb_list", bucket_cap_mb_list)):
            if value is not None:
                raise NotImplementedError(
                    f"glassgrad: DistributedDataParallel({arg}=...) is not supported; "
                    "leave it None")
        dist = _dist()
        self.process_group = dist.group.WORLD if process_group is None and hasattr(
            dist, "group") else process_group
        world_size = dist.get_world_size(process_group)  # raises PyTorch's "not initialized"
        self.parameters_to_ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        named = [(n, p) for n, p in module.named_parameters() if n not in self.parameters_to_ignore]
        if not any(p.requires_grad for _, p in named):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have "
                               "any parameter that requires a gradient.")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        if device_ids or output_device:
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters "
                f"{ {p.device for _, p in named} }.")
        if broadcast_buffers is not None:
            warn_user(
                "`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead. "
                "IMPORTANT: unlike `broadcast_buffers=False`, `forward_sync_buffers=False` still "
                "syncs buffers at init. If you rely on buffers NOT being synced at init (e.g. "
                "rank-local buffers), keep using `broadcast_buffers=False` until "
                "`init_sync_buffers` is available." if forward_sync_buffers is None else
                "Both `broadcast_buffers` and `forward_sync_buffers` were specified. "
                "`broadcast_buffers` is deprecated and its value is ignored when "
                "`forward_sync_buffers` is provided.", FutureWarning, stacklevel=2)
        if check_reduction:
            warn_user("The `check_reduction` argument in `DistributedDataParallel` module is "
                          "deprecated. Please avoid using it.", FutureWarning, stacklevel=2)
        if forward_sync_buffers is not None:
            self.forward_sync_buffers, init_sync_buffers = forward_sync_buffers, True
        else:
            self.forward_sync_buffers = broadcast_buffers if broadcast_buffers is not None else True
            init_sync_buffers = self.forward_sync_buffers
        self.module = module
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.device = named[0][1].device
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.skip_all_reduce_unused_params = skip_all_reduce_unused_params
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap_mb = _ddp_buckets.DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap_mb * _ddp_buckets._MB)
        first_cap = (_ddp_buckets.DEFAULT_FIRST_BUCKET_BYTES if bucket_cap_mb is None
                     else self.bucket_bytes_cap)
        self.world_size = world_size
        seen, params, names = set(), [], []
        for n, p in named:  # NOTE: a parameter shared by two modules is reduced once (PyTorch)
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                params.append(p)
                names.append(n)
        if init_sync:
            self._verify_param_shapes(params, names)
            self._broadcast_states(init_sync_buffers)
        if static_graph or not find_unused_parameters:
            limits = [2**63 - 1]  # one bucket until the first iteration shows the real order
        else:
            limits = [first_cap, self.bucket_bytes_cap] if first_cap < self.bucket_bytes_cap \
                else [self.bucket_bytes_cap]
        indices, _ = _ddp_buckets.compute_bucket_assignment_by_size(params, limits)
        # NOTE: reversed: gradients arrive roughly in reverse definition order
        self.reducer = Reducer(params, names, list(reversed(indices)), self.process_group,
                               find_unused_parameters, gradient_as_bucket_view, static_graph,
                               first_cap, self.bucket_bytes_cap)

    # --- construction-time collectives ---------------------------------------------------------
    def _verify_param_shapes(self, params, names) -> None:
        """Every rank must hold the same parameters (``_verify_param_shape_across_processes``):
        first their count, then each one's shape, against rank 0's; every rank raises alike."""
        from ... import _factories

        rank = _dist().get_rank(self.process_group)
        other, count = _first_other_count(len(params), self.process_group)
        if other is not None:
            raise RuntimeError(
                f"DDP expects same model across all ranks, but Rank {rank} has {len(params)} "
                f"params, while rank {other} has inconsistent {count} params.")
        digests = _ddp_diagnose.checksums([("", _factories.tensor([p.dim(), *p.shape]))
                                           for p in params])
        at, differ, _ = _compare_with_rank0(digests, self.process_group)
        if at is not None:
            raise RuntimeError(
                f"[{rank}]: params[{at}] in this process with sizes {list(params[at].shape)} "
                "appears not to match sizes of the same param in process 0.\nglassgrad: "
                f"parameter {names[at]!r}; ranks {differ} differ from rank 0 there.")

    def _broadcast_states(self, with_buffers: bool) -> None:
        """Rank 0's parameters (and buffers) on every rank (``_sync_module_states``)."""
        dist = _dist()
        tensors = [p for n, p in self.module.named_parameters()
                   if n not in self.parameters_to_ignore]
        if with_buffers:
            tensors += self._buffers_to_sync()
        with no_grad():
            for t in tensors:
                dist.broadcast(t, 0, group=self.process_group)

    def _buffers_to_sync(self) -> list:
        return [b for n, b in self.module.named_buffers()
                if n not in self.parameters_to_ignore and b is not None]

    # --- forward ---------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        reducer = self.reducer
        if is_grad_enabled():
            if reducer.require_finalize:
                raise _ddp_diagnose.unfinished_reduction_error(reducer, _dist().get_rank())
            reducer.last_outputs = ()
            reducer.rebuild_buckets()
        if self.will_sync_module_buffers():
            with no_grad():
                for b in self._buffers_to_sync():
                    _dist().broadcast(b, 0, group=self.process_group)
        output = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            roots = _ddp_diagnose.output_nodes(output)
            reducer.last_outputs = roots
            unused = []
            if (self.find_unused_parameters and not self.static_graph) or (
                    self.static_graph and reducer.static_unused is None):
                reached = _ddp_diagnose.reachable_variables(roots)
                unused = [i for i, p in enumerate(reducer.params) if id(p) not in reached]
            elif self.static_graph:
                unused = reducer.static_unused
            reducer.prepare_for_backward(unused)
            if self.find_unused_parameters and not self.static_graph:
                output = _ddp_sink.sink(output, reducer)
        else:
            self.require_forward_param_sync = False
        return output

    def register_comm_hook(self, state, hook) -> None:
        """Reduce each bucket with ``hook(state, bucket)`` instead of the built-in all-reduce
        (``DDP.register_comm_hook``): ``bucket`` a :class:`GradBucket`, the result a Future of
        the reduced flat buffer; gradients are not pre-divided (the hook averages). Raises
        TypeError/ValueError for a bad hook and RuntimeError "register_comm_hook or
        register_builtin_comm_hook can only be called once." as PyTorch."""
        from . import _ddp_comm_hook

        _ddp_comm_hook.check_comm_hook(hook)
        if self.reducer.comm_hook is not None:
            raise RuntimeError(
                "register_comm_hook or register_builtin_comm_hook can only be called once.")
        self.reducer.comm_hook, self.reducer.comm_state = hook, state

    def will_sync_module_buffers(self) -> bool:
        """True when this forward broadcasts rank 0's buffers first (PyTorch's rule)."""
        return (self.require_forward_param_sync and self.forward_sync_buffers
                and len(self._buffers_to_sync()) > 0)

    @contextlib.contextmanager
    def no_sync(self):
        """Accumulate gradients locally: a forward/backward inside it reduces nothing; the first
        synchronised backward after it averages the accumulated sums (``DDP.no_sync``). The
        forward must run inside the context, as in PyTorch."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def train(self, mode: bool = True):
        super().train(mode)
        return self

    # --- glass box ---------------------------------------------------------------------------
    def bucket_timeline(self) -> dict | None:
        """This rank's last iteration of bucket reductions as data (glassgrad; see
        ``_ddp_timeline``): per bucket its parameters, bytes, when its last gradient arrived,
        launch, completion and blocked time, and ``hidden_fraction``. None before a backward."""
        timelines = self.reducer.timelines
        return timelines[-1].as_dict() if timelines else None

    def format_bucket_timeline(self) -> str:
        """The last iteration's bucket timeline as a text table (glassgrad)."""
        timelines = self.reducer.timelines
        return str(timelines[-1]) if timelines else "no synchronised backward yet"

    def save_bucket_timeline_html(self, path: str) -> list:
        """Write every rank's last bucket timeline as one HTML page (inline SVG: per rank, per
        bucket its flight and the part finalize blocked on) to ``path`` on rank 0; returns the
        timelines (glassgrad). A collective: every rank must call it."""
        from . import _ddp_timeline_html

        timelines = _ddp_timeline_html.gather_timelines(self)
        if _dist().get_rank(self.process_group) == 0:
            with open(path, "w") as f:
                f.write(_ddp_timeline_html.timeline_html(timelines))
        return timelines

    def bucket_indices(self) -> list:
        """The parameter indices of each bucket, in launch order (glassgrad)."""
        return self.reducer.bucket_indices()

    def check_parameters_in_sync(self) -> None:
        """Raise RuntimeError naming the first parameter (then buffer) whose bytes differ across
        ranks (a CRC-32 per tensor, all-gathered: one small collective; glassgrad, no PyTorch
        counterpart). Every rank must call it."""
        check_parameters_in_sync(self.module, self.process_group)


def check_parameters_in_sync(module, process_group=None) -> None:
    """Raise RuntimeError naming the first parameter or buffer of ``module`` whose bytes differ
    across the ranks of ``process_group`` (glassgrad; a CRC-32 per tensor, all-gathered)."""
    named = list(module.named_parameters()) + list(module.named_buffers())
    other, count = _first_other_count(len(named), process_group)
    if other is not None:
        raise RuntimeError(
            f"parameters differ across ranks: this rank has {len(named)} parameters and buffers, "
            f"rank {other} has {count}")
    at, differ, rank0 = _compare_with_rank0(_ddp_diagnose.checksums(named), process_group)
    if at is None:
        return
    name, t = named[at]
    raise RuntimeError(
        f"parameters differ across ranks: the first divergent one is {name!r} "
        f"({list(t.shape)}, {t.dtype}): ranks {differ} differ from rank 0 (CRC-32 of its bytes "
        f"on rank 0: {rank0[at]}); this is rank {_dist().get_rank(process_group)}, where its "
        f"sum is {float(t.detach().double().sum())}.\n"
        "glassgrad: a rank stepped differently (an update outside DDP, a rank-dependent branch, "
        "non-deterministic data); re-broadcast with dist.broadcast(p, 0) or find the step where "
        "they parted.")


def _first_other_count(n: int, group):
    """``(a rank whose count differs from n, its count)`` or ``(None, None)``: one all-reduce of
    a table with each rank's count in its own slot, so every rank sees all of them."""
    from ... import _factories

    dist = _dist()
    counts = _factories.zeros(dist.get_world_size(group), dtype=_factories.tensor(0).dtype)
    counts[dist.get_rank(group)] = n
    dist.all_reduce(counts, group=group)
    for other, count in enumerate(counts.tolist()):
        if count != n:
            return other, count
    return None, None


def _compare_with_rank0(values, group):
    """Compare a list of ints with rank 0's on every rank: ``(first differing position or None,
    the ranks that differ there, rank 0's list)``; three small collectives, the same answer on
    every rank (all of them raise or none does)."""
    from ... import _factories

    dist = _dist()
    mine = _factories.tensor(list(values) or [0])
    rank0 = mine.clone()
    dist.broadcast(rank0, 0, group=group)
    diff = (mine != rank0).long()
    dist.all_reduce(diff, op=dist.ReduceOp.MAX, group=group)
    hits = diff.nonzero().flatten().tolist()
    if not hits:
        return None, [], rank0.tolist()
    who = _factories.zeros(dist.get_world_size(group), dtype=mine.dtype)
    who[dist.get_rank(group)] = int(mine[hits[0]] != rank0[hits[0]])
    dist.all_reduce(who, group=group)
    return hits[0], who.nonzero().flatten().tolist(), rank0.tolist()
