"""One training script for torch and for glassgrad (tests/test_ddp.py runs it under
``python -m glassgrad.distributed.run --nproc-per-node 2``, once with real torch on gloo and once
with ``-m glassgrad.alias``): DDP, DistributedSampler with set_epoch, no_sync accumulation, clip
norm and Adam in float64 from the same NumPy weights; rank r writes its losses and parameters."""

import json
import sys

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

out, lib = sys.argv[1], sys.argv[2]
torch.set_default_dtype(torch.float64)
dist.init_process_group("gloo")
rank = dist.get_rank()
rng = np.random.default_rng(0)
model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.5))
data = TensorDataset(torch.tensor(rng.standard_normal((48, 5))),
                     torch.tensor(rng.standard_normal((48, 2))))
sampler = DistributedSampler(data, shuffle=True, seed=3)
loader = DataLoader(data, batch_size=4, sampler=sampler)
ddp = nn.parallel.DistributedDataParallel(model)
opt = torch.optim.Adam(ddp.parameters(), lr=0.01)
losses = []
for epoch in range(2):
    sampler.set_epoch(epoch)
    for step, (x, y) in enumerate(loader):
        accumulate = step % 2 == 0
        ctx = ddp.no_sync() if accumulate else torch.enable_grad()
        with ctx:
            loss = nn.functional.mse_loss(ddp(x), y)
            loss.backward()
        losses.append(loss.item())
        if not accumulate:
            nn.utils.clip_grad_norm_(ddp.parameters(), 0.5)
            opt.step()
            opt.zero_grad()
with open(f"{out}/{lib}{rank}.json", "w") as f:
    json.dump({"losses": losses,
               "params": {n: p.detach().numpy().tolist() for n, p in ddp.state_dict().items()}}, f)
dist.destroy_process_group()
