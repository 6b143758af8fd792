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
result = {"losses": losses,
          "params": {n: p.detach().numpy().tolist() for n, p in ddp.state_dict().items()}}


class Heads(nn.Module):
    """BatchNorm (buffers broadcast each forward), a head only rank 1 uses, one nobody uses."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 6), nn.BatchNorm1d(6), nn.Tanh())
        self.a, self.b, self.never = nn.Linear(6, 2), nn.Linear(6, 2), nn.Linear(6, 2)

    def forward(self, x):
        h = self.body(x)
        return self.a(h) + (self.b(h) if rank == 1 else 0.0)


for tag, kwargs in (("find_unused", {"find_unused_parameters": True,
                                     "gradient_as_bucket_view": True}),
                    ("static", {"static_graph": True}), ("no_buffers", {
                        "find_unused_parameters": True, "broadcast_buffers": False})):
    model = Heads()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.5))
    if tag == "static":
        model.a.requires_grad_(True)
        model.b.requires_grad_(False)  # static_graph: the same graph on every rank and step
    net = nn.parallel.DistributedDataParallel(model, **kwargs)
    opt = torch.optim.SGD([p for p in net.parameters() if p.requires_grad], lr=0.05,
                          momentum=0.9)
    steps = []
    for step in range(4):
        x = torch.tensor(rng.standard_normal((6, 5))) * (rank + 1)
        opt.zero_grad()
        loss = net(x).pow(2).mean()
        loss.backward()
        steps.append(loss.item())
        result[f"{tag}/grad_none/{step}"] = [n for n, p in net.named_parameters() if p.grad is None]
        opt.step()
    result[f"{tag}/losses"] = steps
    result[f"{tag}/state"] = {n: t.detach().numpy().tolist() for n, t in net.state_dict().items()}


def average_hook(state, bucket):
    """torch's allreduce_hook, written out: all-reduce the buffer, then divide."""
    state.append([bucket.index(), bucket.is_last(), len(bucket.gradients()),
                  len(bucket.parameters()), bucket.buffer().numel()])
    work = dist.all_reduce(bucket.buffer(), async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0].div_(dist.get_world_size()))


calls = []
model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 2))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.5))
net = nn.parallel.DistributedDataParallel(model)
net.register_comm_hook(calls, average_hook)
try:
    net.register_comm_hook(calls, average_hook)
except RuntimeError as e:
    result["hook_twice"] = str(e)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
hook_losses = []
for step in range(3):
    opt.zero_grad()
    loss = net(torch.tensor(rng.standard_normal((4, 5))) * (rank + 1)).pow(2).mean()
    loss.backward()
    hook_losses.append(loss.item())
    opt.step()
result["hook/losses"], result["hook/calls"] = hook_losses, calls
result["hook/state"] = {n: t.detach().numpy().tolist() for n, t in net.state_dict().items()}
with open(f"{out}/{lib}{rank}.json", "w") as f:
    json.dump(result, f)
dist.destroy_process_group()
