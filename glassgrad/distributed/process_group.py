"""Process groups: ``init_process_group``, ``new_group``, ranks and sizes, on MPI communicators.

# NOTE [Backends on MPI]: every process group is an MPI communicator (a ``Dup`` of
# COMM_WORLD for the default group). ``backend="mpi"`` is the native name; ``"gloo"``, ``"nccl"``
# and torch's ``"cpu:gloo,cuda:nccl"`` form are accepted so that a torch script runs unchanged,
# and are carried by MPI as well (``get_backend()`` returns the name given, as torch does). The
# ranks come from MPI (mpiexec, or the launcher ``python -m glassgrad.distributed.run``);
# ``init_method`` (``env://``, ``tcp://``, ``file://``), MASTER_ADDR and MASTER_PORT are accepted
# and not needed, and RANK / WORLD_SIZE (from the environment or the arguments) are checked
# against MPI's so that a mismatch fails at once instead of hanging.
"""

from __future__ import annotations

import collections
import datetime
import os
import sys

from ._buffers import mpi

__all__ = [
    "Backend", "GroupMember", "ProcessGroup", "destroy_process_group", "get_backend",
    "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_rank",
    "get_world_size", "group", "init_process_group", "is_initialized", "is_torchelastic_launched",
    "new_group", "default_pg_timeout",
]

default_pg_timeout = datetime.timedelta(minutes=30)
_NOT_INIT = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")


class Backend(str):
    """A backend name (``torch.distributed.Backend``): ``Backend.MPI == "mpi"``; ``Backend("GLOO")``
    is ``"gloo"``. All are carried by MPI here (NOTE [Backends on MPI])."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    backend_list = [UNDEFINED, GLOO, NCCL, UCC, MPI, XCCL]
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL}

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return str.__new__(cls, value)


class _NonGroupMember:
    def __repr__(self) -> str:
        return "GroupMember.NON_GROUP_MEMBER"


class _WorldMeta(type):
    @property
    def WORLD(cls):  # noqa: N802: torch's name
        return _state.world


class GroupMember(metaclass=_WorldMeta):
    """``torch.distributed.GroupMember``: ``WORLD`` (the default group, or None) and
    ``NON_GROUP_MEMBER``, what ``new_group`` returns on ranks outside the new group."""

    NON_GROUP_MEMBER = _NonGroupMember()


class group(metaclass=_WorldMeta):  # noqa: N801: torch's name
    """``torch.distributed.group``: ``group.WORLD`` is the default process group."""


class ProcessGroup:
    """A group of ranks that run collectives together (``torch.distributed.ProcessGroup``),
    carried by an MPI communicator. ``rank()`` and ``size()`` are within the group."""

    def __init__(self, comm, ranks: list[int], backend: str, timeout: datetime.timedelta,
                 name: str, desc: str):
        self._comm = comm
        self._ranks = list(ranks)
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        self._backend = backend
        self.timeout = timeout
        self.group_name = name
        self.group_desc = desc
        self._seq = 0
        self._pending = []  # async works not yet seen complete (NOTE [Progress])
        self._barriers = 0  # monitored_barrier calls, to tell stale tokens apart
        # the last completed works (seq, op, numel, seconds): the watchdog's message shows them
        self._history = collections.deque(maxlen=8)
        self._global_to_group = {g: i for i, g in enumerate(self._ranks)}

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def rank(self) -> int:
        """This process's rank within the group."""
        return self._rank

    def size(self) -> int:
        """The number of ranks in the group."""
        return self._size

    def name(self) -> str:
        """The backend's name in capitals, as torch's ``ProcessGroup.name()`` (``"GLOO"``)."""
        return self._backend.upper()

    def _get_backend_name(self) -> str:
        return self._backend

    def __repr__(self) -> str:
        return (f"ProcessGroup(name={self.group_name!r}, backend={self._backend!r} on MPI, "
                f"ranks={self._ranks}, rank={self._rank})")


class _State:
    world: ProcessGroup | None = None
    groups: list = []
    counter = 0


_state = _State()


def is_available() -> bool:
    """True when mpi4py can be imported (``torch.distributed.is_available``); MPI itself starts
    only at ``init_process_group``."""
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


def is_initialized() -> bool:
    """True between ``init_process_group`` and ``destroy_process_group``."""
    return _state.world is not None


def is_torchelastic_launched() -> bool:
    """True when started by a torchrun-style launcher (TORCHELASTIC_RUN_ID set), as torch."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def _check_backend(backend) -> str:
    if backend is None:
        return Backend.GLOO
    name = str(backend).lower()
    parts = [p.split(":")[-1] for p in name.split(",")]
    for p in parts:
        if p not in Backend.backend_list or p == Backend.UNDEFINED:
            raise AssertionError(f"Unknown backend type {backend}")
    return name


def _env_int(name: str):
    value = os.environ.get(name)
    if value in (None, ""):
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: "
                         f"environment variable {name} is {value!r}, not an integer") from None


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: datetime.timedelta | None = None, world_size: int = -1,
                       rank: int = -1, store=None, group_name: str = "", pg_options=None,
                       device_id=None) -> None:
    """Join the default process group of all ranks (``torch.distributed.init_process_group``).

    The ranks are MPI's: start them with ``mpiexec -n N python script.py`` or ``python -m
    glassgrad.distributed.run --nproc-per-node N script.py``; a plain ``python script.py`` is a
    group of one. ``backend`` may be ``"mpi"`` or torch's ``"gloo"``/``"nccl"`` (all carried by
    MPI: NOTE [Backends on MPI]). ``timeout`` (a ``timedelta``, default 30 minutes) bounds every
    wait: a rank blocked longer aborts the job (NOTE [Watchdog]). Raises ValueError when called
    twice, when ``rank``/``world_size`` or RANK/WORLD_SIZE disagree with MPI's, AssertionError
    for an unknown backend (torch's types and wording).

    Example::

        >>> dist.init_process_group("gloo")
        >>> dist.get_rank(), dist.get_world_size()
    """
    if _state.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = _check_backend(backend)
    if timeout is not None and not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout)}")
    MPI = mpi()
    world = MPI.COMM_WORLD
    size, me = world.Get_size(), world.Get_rank()
    want = {"world_size": world_size if world_size != -1 else _env_int("WORLD_SIZE"),
            "rank": rank if rank != -1 else _env_int("RANK")}
    got = {"world_size": size, "rank": me}
    for key, value in want.items():
        if value is not None and value != got[key]:
            raise ValueError(
                f"glassgrad.distributed.init_process_group: {key}={value} (from the arguments "
                f"or the {key.upper()} environment variable) but MPI gives this process "
                f"{key}={got[key]}. The ranks come from MPI: start them with `mpiexec -n N "
                "python script.py` or `python -m glassgrad.distributed.run --nproc-per-node N "
                "script.py` (a plain `python script.py` is a world of 1)."
            )
    comm = world.Dup()
    _state.world = ProcessGroup(comm, list(range(size)), name, timeout or default_pg_timeout,
                                group_name or "0", "default_pg")
    _state.groups = [_state.world]
    _state.counter = 1  # NOTE: groups made so far on every rank, members or not (as torch's)
    _install_excepthook()
    from . import _progress_thread

    if _progress_thread.wanted():
        _progress_thread.start(lambda: _state.groups)


def _install_excepthook() -> None:
    # NOTE: an uncaught exception on one rank would otherwise leave it in MPI_Finalize at exit
    # while the others wait in a collective for it: abort the job instead (as mpi4py.run does)
    if getattr(sys.excepthook, "_glassgrad_dist", False):
        return
    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        if _state.world is not None and mpi().COMM_WORLD.Get_size() > 1:
            rank = mpi().COMM_WORLD.Get_rank()
            sys.stderr.write(
                f"glassgrad.distributed: rank {rank} raised {kind.__name__} (above); aborting the "
                "MPI job so that the other ranks do not wait for it.\n")
            sys.stderr.flush()
            mpi().COMM_WORLD.Abort(1)

    hook._glassgrad_dist = True
    sys.excepthook = hook


def _default() -> ProcessGroup:
    if _state.world is None:
        raise ValueError(_NOT_INIT)
    return _state.world


def _resolve(group) -> ProcessGroup:
    """The group a collective runs on: ``group`` or the default one (torch's errors)."""
    if group is None or group is _state.world:
        return _default()
    if group is GroupMember.NON_GROUP_MEMBER:
        return group
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"glassgrad.distributed: group must be a ProcessGroup or None, got "
                        f"{type(group).__name__}")
    _default()
    if group not in _state.groups:
        raise ValueError("glassgrad.distributed: the process group was destroyed "
                         "(destroy_process_group)")
    return group


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Free ``group``, or every group when None, after which ``is_initialized()`` is False
    (``torch.distributed.destroy_process_group``). MPI itself stays up, so
    ``init_process_group`` may be called again."""
    if group is None or group is _state.world:
        if _state.world is None:
            raise AssertionError("Process group cannot be None")
        for pg in _state.groups:
            pg._comm.Free()
        _state.groups, _state.world, _state.counter = [], None, 0
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    if group not in _state.groups:
        raise ValueError("Invalid process group specified")
    group._comm.Free()
    _state.groups.remove(group)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization: bool = False, group_desc=None, device_id=None,
              sort_ranks: bool = True):
    """A process group of the given global ``ranks`` (all when None); every rank of the default
    group must call it, as in torch (``torch.distributed.new_group``). Ranks outside get
    ``GroupMember.NON_GROUP_MEMBER``. Raises ValueError for ranks outside the world."""
    world = _default()
    if ranks is None:
        ranks = list(range(world.size()))
    ranks = sorted(ranks) if sort_ranks else list(ranks)
    if len(ranks) > world.size():
        raise ValueError("the new group's world size should be less or equal to the world size "
                         "set by init_process_group")
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError(f"Invalid rank {r}: the ranks of a new group must be in "
                             f"[0, {world.size()})")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"glassgrad.distributed.new_group: ranks {ranks} has duplicates")
    MPI = mpi()
    incl = world._comm.Get_group().Incl(ranks)
    comm = world._comm.Create(incl)  # NOTE: collective over the whole default group
    incl.Free()
    name = str(_state.counter)
    _state.counter += 1
    if comm == MPI.COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, ranks, _check_backend(backend) if backend else world._backend,
                      timeout or world.timeout, name, group_desc or "undefined")
    _state.groups.append(pg)
    return pg


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (the default group when None); -1 outside it."""
    pg = _resolve(group)
    return -1 if pg is GroupMember.NON_GROUP_MEMBER else pg.rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of ranks in ``group`` (the default group when None); -1 outside it."""
    pg = _resolve(group)
    return -1 if pg is GroupMember.NON_GROUP_MEMBER else pg.size()


def get_backend(group: ProcessGroup | None = None) -> str:
    """The backend name the group was made with (``torch.distributed.get_backend``)."""
    pg = _resolve(group)
    if pg is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return Backend(pg._backend)


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """The global ranks of ``group``'s members, in group-rank order."""
    return list(_resolve(group)._ranks)


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    """The global rank of ``group``'s member number ``group_rank``."""
    pg = _resolve(group)
    if not 0 <= group_rank < len(pg._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg._ranks[group_rank]


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    """``global_rank``'s rank within ``group``."""
    pg = _resolve(group)
    if global_rank not in pg._global_to_group:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._global_to_group[global_rank]


def group_root(pg: ProcessGroup, rank, group_rank, what: str, role: str = "src") -> int:
    """The group rank of a collective's ``src``/``dst`` given as a global or a group rank."""
    if rank is not None and group_rank is not None:
        raise ValueError("Can't specify both group_rank and global_rank")
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"glassgrad.distributed.{what}: group_{role}={group_rank} is not "
                             f"a rank of the group (size {pg.size()})")
        return group_rank
    rank = 0 if rank is None else rank
    if rank not in pg._global_to_group:
        if pg is _state.world:
            raise RuntimeError(f"ProcessGroupMPI::{what}: invalid root rank: {rank}")
        raise ValueError(f"Global rank {rank} is not part of group {pg}")
    return pg._global_to_group[rank]
