"""Run by tests/test_distributed_failures.py under torchrun (torch) and under the launcher
(``-m glassgrad.alias``): rank 1 ends with sys.exit(3) while rank 0 waits for it in an all_reduce
with the default 30-minute timeout; both launchers must end the job at once, not hang."""

import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
dist.barrier()
if dist.get_rank() == 1:
    sys.exit(3)
dist.all_reduce(torch.ones(4))
print("rank 0 completed an all_reduce rank 1 never joined", flush=True)
