"""``glassgrad.nn.parallel`` (``torch.nn.parallel``): ``DataParallel`` runs its module as it is
on the CPU, as torch does without GPUs; ``DistributedDataParallel`` runs one process per rank on
``glassgrad.distributed`` (MPI)."""

from .data_parallel import (  # noqa: F401
    DataParallel, data_parallel, gather, parallel_apply, replicate,
)

# issue 17, lane ddp
from .distributed import DistributedDataParallel  # noqa: F401, E402
