"""Helpers around groups, backends and launch environments: new_subgroups, get_node_local_rank,
is_backend_available and the is_*_available flags, get_default_backend_for_device, get_pg_count."""

from __future__ import annotations

import os

from .process_group import Backend, _default, _state, is_available, new_group

__all__ = ["get_default_backend_for_device", "get_node_local_rank", "get_pg_count",
           "is_backend_available", "is_gloo_available", "is_mpi_available", "is_nccl_available",
           "is_ucc_available", "is_xccl_available", "new_subgroups"]


def new_subgroups(group_size: int | None = None, group=None, timeout=None, backend=None,
                  pg_options=None, group_desc=None):
    """Split the default group into consecutive subgroups of ``group_size`` ranks
    (``torch.distributed.new_subgroups``): returns ``(this rank's subgroup, all subgroups)``.
    ``group_size`` defaults to LOCAL_WORLD_SIZE (one subgroup per machine) and must divide the
    world size; every rank must call it. Raises ValueError as torch does."""
    world = _default()
    if group is not None:
        raise NotImplementedError("new_subgroups: splitting a group other than the default one is "
                                  "not supported; pass group=None")
    if group_size is None:
        group_size = int(os.environ.get("LOCAL_WORLD_SIZE", world.size()))
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    if group_size > world.size():
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size "
                         f"({world.size()})")
    if world.size() % group_size:
        raise ValueError(f"The world size ({world.size()}) must be divisible by 'group_size' "
                         f"({group_size})")
    mine, every = None, []
    for start in range(0, world.size(), group_size):
        ranks = list(range(start, start + group_size))
        pg = new_group(ranks, timeout=timeout, backend=backend, group_desc=group_desc)
        every.append(pg)
        if world.rank() in ranks:
            mine = pg
    return mine, every


def get_node_local_rank(fallback_rank: int | None = None) -> int:
    """This process's rank on its machine, from LOCAL_RANK (set by the launcher), else
    ``fallback_rank`` (``torch.distributed.get_node_local_rank``); RuntimeError otherwise."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError(
        "LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
        "`get_node_local_rank` to work, assuming you are not running in a multi-device context "
        "and want the code to run locally instead.")


def is_backend_available(backend: str) -> bool:
    """True for the backend names MPI carries here ("mpi", "gloo": NOTE [Backends on MPI]) when
    mpi4py is installed; False for "nccl", "ucc", "xccl" (no such devices in glassgrad)."""
    return str(backend).lower() in (Backend.MPI, Backend.GLOO) and is_available()


def get_default_backend_for_device(device) -> str:
    """The backend torch picks for ``device``: "gloo" for the CPU
    (``torch.distributed.get_default_backend_for_device``); ValueError for other devices."""
    kind = str(getattr(device, "type", device)).split(":")[0]
    if kind not in Backend.default_device_backend_map:
        raise ValueError(f"Default backend not registered for device : {device}")
    if kind != "cpu":
        raise ValueError(f"glassgrad.distributed: there is no {kind} device in glassgrad; the "
                         "CPU backend is 'gloo' (carried by MPI)")
    return Backend.default_device_backend_map[kind]


def get_pg_count() -> int:
    """How many process groups were made since ``init_process_group``, the default one and those
    this rank is not a member of included, as torch counts them (``get_pg_count``)."""
    return _state.counter


def is_mpi_available() -> bool:
    """True when mpi4py is installed: the MPI backend carries every backend name here."""
    return is_available()


def is_gloo_available() -> bool:
    """True when mpi4py is installed ("gloo" groups run on MPI: NOTE [Backends on MPI])."""
    return is_available()


def is_nccl_available() -> bool:
    """False: there is no NCCL (and no CUDA) in glassgrad's CPU build; "nccl" maps to MPI."""
    return False


def is_ucc_available() -> bool:
    """False, as in torch's CPU builds."""
    return False


def is_xccl_available() -> bool:
    """False, as in torch's CPU builds."""
    return False
