"""2-rank jobs of tests/test_distributed_failures.py: ``failures.py MODE OUT_DIR``.

exit_early: rank 1 leaves without the all_reduce rank 0 waits in (watchdog, timeout 3 s);
raise: rank 1 raises before it; die: rank 1 dies hard (os._exit);
survivable: the ranks call all_reduce with different shapes, then broadcast vs all_reduce, under
TORCH_DISTRIBUTED_DEBUG=DETAIL; async all-reduces beside the progress thread; then
monitored_barrier passes, and rank 1 arrives late to another.
"""

import datetime
import json
import os
import sys

import glassgrad as torch
import glassgrad.distributed as dist

mode, out = sys.argv[1], sys.argv[2]
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=3))
rank = dist.get_rank()
dist.barrier()
if mode == "exit_early":
    if rank == 1:
        sys.exit(0)
    dist.all_reduce(torch.ones(4))  # rank 0 waits here for rank 1
elif mode == "raise":
    if rank == 1:
        raise ValueError("rank 1 fails on purpose")
    dist.all_reduce(torch.ones(4))
elif mode == "die":
    if rank == 1:
        os._exit(3)
    dist.all_reduce(torch.ones(4))
elif mode == "survivable":
    seen = []
    for call in (lambda: dist.all_reduce(torch.ones(4 + rank)),
                 lambda: dist.broadcast(torch.ones(4), 0) if rank == 0 else
                 dist.all_reduce(torch.ones(4))):
        try:
            call()
            seen.append(None)
        except RuntimeError as e:
            seen.append(str(e))
    t = torch.ones(3)
    dist.all_reduce(t)  # the group still works after a detected mismatch
    seen.append(t.tolist())
    os.environ.pop("TORCH_DISTRIBUTED_DEBUG")
    # the opt-in progress thread (GLASSGRAD_DISTRIBUTED_PROGRESS=thread, set by the test) runs
    # beside async reductions and numpy work, and the sums are right
    import threading

    import numpy as np

    bufs = [torch.full((200_000,), float(rank + j)) for j in range(4)]
    works = []
    for b in bufs:
        works.append(dist.all_reduce(b, async_op=True))
        np.linalg.qr(np.ones((200, 200)))
    for w in works:
        w.wait()
    names = {t.name for t in threading.enumerate()}
    seen.append(["glassgrad-distributed-progress" in names,
                 all(float(b[0]) == 2 * j + 1 and float(b[-1]) == 2 * j + 1
                     for j, b in enumerate(bufs))])
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=20))  # everyone arrives
    seen.append("passed")
    if rank == 1:
        import time

        time.sleep(4)   # late for rank 0's 1 s limit
    try:
        dist.monitored_barrier(timeout=datetime.timedelta(seconds=1), wait_all_ranks=True)
        seen.append(None)
    except RuntimeError as e:
        seen.append(str(e))
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(seen, f)
print(f"rank {rank} done", flush=True)
