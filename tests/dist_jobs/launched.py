"""Run by tests/test_distributed_failures.py under the launcher and under torchrun: writes the
torchrun variables it sees to OUT_DIR/env{RANK}.json, and exits with code EXIT on rank 1."""

import json
import os
import sys

KEYS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
        "ROLE_RANK", "ROLE_NAME", "ROLE_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
        "OMP_NUM_THREADS",
        "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS")
out, code = sys.argv[1], int(sys.argv[2])
seen = {k: os.environ.get(k) for k in KEYS}
seen["argv"] = sys.argv[1:]
seen["main"] = __name__
if os.environ.get("GLASSGRAD_LAUNCH_CHECK_MPI"):
    import glassgrad.distributed as dist

    dist.init_process_group("nccl")   # nanoGPT's default backend name: carried by MPI
    seen["mpi"] = [dist.get_rank(), dist.get_world_size(), dist.is_torchelastic_launched()]
    dist.destroy_process_group()
print(f"rank {os.environ['RANK']} writes its environment", flush=True)
with open(os.path.join(out, f"env{os.environ['RANK']}.json"), "w") as f:
    json.dump(seen, f)
sys.exit(code if os.environ["RANK"] == "1" else 0)
