"""glassgrad.distributed: PyTorch's ``torch.distributed`` on MPI (mpi4py), re-exports only.

Start the ranks with ``python -m glassgrad.distributed.run --nproc-per-node N script.py``
(torchrun's flags) or ``mpiexec -n N python script.py``, then ``init_process_group("gloo")``
(or ``"mpi"``; NOTE [Backends on MPI]). Collectives work on the tensors' NumPy memory in place
(NOTE [MPI buffers]); a rank blocked past the group's timeout aborts the job (NOTE [Watchdog]).
Install with ``pip install 'glassgrad[distributed]'`` (mpi4py and the mpich wheel, whose
``mpiexec`` lands in the environment's bin folder). Importing this package does not start MPI.
"""

from .collectives import all_reduce, barrier, broadcast, reduce
from .gathers import (
    all_gather,
    all_gather_into_tensor,
    all_to_all,
    all_to_all_single,
    gather,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
)
from .monitored import monitored_barrier
from .objects import (
    all_gather_object,
    broadcast_object_list,
    gather_object,
    recv_object_list,
    scatter_object_list,
    send_object_list,
)
from .p2p import P2POp, batch_isend_irecv, irecv, isend, recv, send
from .errors import DistBackendError, DistError, DistNetworkError, DistStoreError
from .process_group import (
    Backend,
    GroupMember,
    ProcessGroup,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_initialized,
    is_torchelastic_launched,
    new_group,
)
from .reduce_op import ReduceOp, reduce_op
from .store import FileStore, HashStore, PrefixStore, Store, TCPStore
from .subgroups import (
    get_default_backend_for_device,
    is_gloo_available,
    is_mpi_available,
    is_nccl_available,
    is_ucc_available,
    is_xccl_available,
    get_node_local_rank,
    get_pg_count,
    is_backend_available,
    new_subgroups,
)
from .work import Work



def __getattr__(name):
    # GradBucket lives beside DDP's reducer; imported on first use so that importing
    # glassgrad.distributed does not pull in nn.parallel (and nn) at glassgrad's import time
    if name == "GradBucket":
        from ..nn.parallel._ddp_comm_hook import GradBucket
        return GradBucket
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
