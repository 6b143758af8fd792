"""One rank of tests/test_ddp.py's mpiexec job: DDP training against single-process training on the
concatenated batch, computed on every rank; writes ``rank<r>.npz`` / ``rank<r>.json`` into the
folder given as argv[1] for the pytest side to compare (it asserts, not this script)."""

import contextlib
import copy
import json
import os
import sys
import warnings

import numpy as np

import glassgrad as torch
import glassgrad.distributed as dist
from glassgrad import nn
from glassgrad.nn.parallel import DistributedDataParallel as DDP

OUT = sys.argv[1]
STEPS = 20
torch.set_default_dtype(torch.float64)
dist.init_process_group("mpi")
RANK, WORLD = dist.get_rank(), dist.get_world_size()
arrays, facts = {}, {}


def mlp():
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(),
                         nn.Linear(16, 3))


def cnn(norm):
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), norm(4), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(4 * 4 * 4, 5))


def batches(shape, n_out, seed):
    """The same global batches on every rank (``local`` gives rank r its contiguous part)."""
    g = np.random.default_rng(seed)
    return [(torch.tensor(g.standard_normal((2 * 4,) + shape)),
             torch.tensor(g.standard_normal((2 * 4, n_out)))) for _ in range(STEPS)]


def local(t):
    n = t.shape[0] // WORLD
    return t[RANK * n:(RANK + 1) * n]


def train(model, data, split, **ddp_kwargs):
    """20 SGD(momentum) steps; ``split``: DDP on this rank's half, else the whole batch here."""
    net = DDP(model, **ddp_kwargs) if split else model
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    for x, y in data:
        if split:
            x, y = local(x), local(y)
        opt.zero_grad()
        nn.functional.mse_loss(net(x), y).backward()
        opt.step()
    return net


def params(model):
    return {n: p.detach().numpy().copy() for n, p in model.state_dict().items()}


def record(tag, model):
    for n, v in params(model).items():
        arrays[f"{tag}/{n}"] = v


# --- MLP: DDP (default, bucket views, tiny buckets) vs one process on the whole batch ----------
torch.manual_seed(0 if RANK == 0 else 1)  # rank 1 starts elsewhere: construction must broadcast
start = mlp()
data = batches((6,), 3, 5)
start0 = copy.deepcopy(start)
for p in start0.parameters():  # the reference needs rank 0's initial values on every rank
    dist.broadcast(p.detach(), 0)
record("mlp_ref", train(copy.deepcopy(start0), data, split=False))
record("mlp_ddp", train(copy.deepcopy(start), data, split=True).module)
small = train(copy.deepcopy(start), data, split=True, bucket_cap_mb=0.0005,
              gradient_as_bucket_view=True)
record("mlp_ddp_views", small.module)
facts["initial_buckets_find_unused"] = DDP(mlp(), find_unused_parameters=True,
                                           bucket_cap_mb=0.0005).bucket_indices()
facts["initial_buckets_default"] = DDP(mlp(), bucket_cap_mb=0.0005).bucket_indices()
facts["small_buckets"] = small.bucket_indices()
facts["small_ready_order"] = small.reducer.rebuilt_order
facts["small_sizes"] = [p.numel() * p.element_size() for p in small.reducer.params]
facts["small_timeline"] = small.bucket_timeline()
facts["state_dict_keys"] = list(small.state_dict())
facts["grad_is_bucket_view"] = all(
    np.shares_memory(p.grad.numpy(), b.flat.numpy())
    for b in small.reducer.buckets for p in (small.reducer.params[i] for i in b.indices))
facts["timeline_text"] = small.format_bucket_timeline()
facts["all_timelines"] = small.save_bucket_timeline_html(os.path.join(OUT, "timeline.html"))

# --- CNN with SyncBatchNorm vs BatchNorm2d in one process ---------------------------------------
torch.manual_seed(2)
ref_cnn = cnn(nn.BatchNorm2d)
cnn_data = batches((2, 8, 8), 5, 6)
sync_cnn = nn.SyncBatchNorm.convert_sync_batchnorm(copy.deepcopy(ref_cnn))
record("cnn_ref", train(ref_cnn, cnn_data, split=False))
record("cnn_ddp", train(sync_cnn, cnn_data, split=True).module)

# --- SyncBatchNorm alone: (N, C) and (N, C, L), momentum None, affine off, eval --------------
for shape, kwargs in (((6, 3), {}), ((4, 3, 5), {"momentum": None}), ((4, 3, 5), {"affine": False})):
    torch.manual_seed(7)
    full = torch.randn(*shape, requires_grad=True)
    weights = torch.randn(*shape)
    ref_bn = nn.BatchNorm1d(3, **kwargs)
    sync_bn = nn.SyncBatchNorm(3, **kwargs)
    tag = f"syncbn_{len(shape)}d_{'_'.join(kwargs) or 'default'}"
    for step in range(2):
        mine = local(full.detach()).requires_grad_()
        (sync_bn(mine) * local(weights)).sum().backward()
        # NOTE: as PyTorch's, the input gradient is that of the SUM of the ranks' losses (the
        # statistics couple them); DDP's averaging of parameter gradients then makes it the mean
        (ref_bn(full) * weights).sum().backward()
        arrays[f"{tag}/grad_input_{step}"] = mine.grad.numpy().copy()
        arrays[f"{tag}_ref/grad_input_{step}"] = local(full.grad).numpy().copy()
        full.grad = None
    for name, value in sync_bn.state_dict().items():
        arrays[f"{tag}/{name}"] = value.numpy().copy()
        arrays[f"{tag}_ref/{name}"] = ref_bn.state_dict()[name].numpy().copy()
    if sync_bn.weight is not None:  # each rank's own share (local), summed over the ranks
        grad_w = sync_bn.weight.grad.clone()
        dist.all_reduce(grad_w)
        arrays[f"{tag}/grad_weight"] = grad_w.numpy()
        arrays[f"{tag}_ref/grad_weight"] = ref_bn.weight.grad.numpy().copy()
    sync_bn.eval()
    ref_bn.eval()
    arrays[f"{tag}/eval"] = sync_bn(local(full.detach())).detach().numpy().copy()
    arrays[f"{tag}_ref/eval"] = local(ref_bn(full.detach())).detach().numpy().copy()
facts["syncbn_tags"] = [k.split("/")[0] for k in arrays if k.startswith("syncbn_") and
                        "_ref/" not in k and k.endswith("/eval")]

# --- no_sync: two micro-batches accumulated equal one synchronised step on both ---------------
torch.manual_seed(3)
acc_start = mlp()


def accumulate(model, micro):
    net = DDP(model)
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    for x, y in data[:5]:
        x, y = local(x), local(y)
        opt.zero_grad()
        parts = list(zip(x.chunk(micro), y.chunk(micro)))
        for k, (xm, ym) in enumerate(parts):
            ctx = net.no_sync() if k < len(parts) - 1 else contextlib.nullcontext()
            with ctx:
                (nn.functional.mse_loss(net(xm), ym, reduction="sum") / x.numel()).backward()
        opt.step()
    return net.module


record("acc_2", accumulate(copy.deepcopy(acc_start), 2))
record("acc_1", accumulate(copy.deepcopy(acc_start), 1))


# --- unused parameters: PyTorch's error (off) and the reduction without them (on) --------------
class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(3, 4), nn.Linear(4, 2), nn.Linear(4, 2)

    def forward(self, x):
        return self.b(self.a(x))


torch.manual_seed(4)
x = torch.randn(2, 3)
net = DDP(Branchy())
net(x).sum().backward()
try:
    net(x)
    facts["unused_error"] = None
except RuntimeError as e:
    facts["unused_error"] = str(e)
for flag in ("find_unused_parameters", "static_graph"):
    torch.manual_seed(4)
    branchy = Branchy()
    net = DDP(copy.deepcopy(branchy), **{flag: True})
    ref = copy.deepcopy(branchy)
    for _ in range(3):
        net.zero_grad()
        ref.zero_grad()
        xs = torch.randn(4, 3)
        net(local(xs) * (RANK + 1)).sum().backward()
        sum(ref(h * (r + 1)).sum() for r, h in enumerate(xs.chunk(WORLD))).div(WORLD).backward()
    facts[f"{flag}_c_grad_none"] = net.module.c.weight.grad is None
    arrays[f"{flag}/a_grad"] = net.module.a.weight.grad.numpy().copy()
    arrays[f"{flag}/a_grad_ref"] = ref.a.weight.grad.numpy().copy()


# --- where the path to the loss was cut; a parameter only one rank uses -----------------------
class TwoHeads(Branchy):
    def forward(self, x):
        h = self.a(x)
        return self.b(h), self.c(h)


class Detached(Branchy):
    def forward(self, x):
        h = self.a(x)
        return self.b(h) + self.c(h).detach()


for tag, make, loss_of, lines in (("two_heads", TwoHeads, lambda out: out[0].sum(), False),
                                  ("two_heads_lines", TwoHeads, lambda out: out[0].sum(), True),
                                  ("detached", Detached, lambda out: out.sum(), False)):
    net = DDP(make())
    with torch.autograd.set_detect_anomaly(lines):
        loss_of(net(x)).backward()
    try:
        net(x)
        facts[f"cut_{tag}"] = None
    except RuntimeError as e:
        facts[f"cut_{tag}"] = str(e)


class RankBranch(Branchy):
    def forward(self, x):
        h = self.a(x)
        return self.c(h) if RANK == 1 else self.b(h)


# find_unused_parameters: a head the loss leaves out finishes without it (PyTorch's DDPSink)
torch.manual_seed(4)
net = DDP(TwoHeads(), find_unused_parameters=True)
for _ in range(2):
    net.zero_grad()
    net(local(x.repeat(2, 1)))[0].sum().backward()
facts["two_heads_unused_c_grad_none"] = net.module.c.weight.grad is None
arrays["two_heads_unused/a_grad"] = net.module.a.weight.grad.numpy().copy()
ref = TwoHeads()
ref.load_state_dict(net.module.state_dict())
ref.b(ref.a(x)).sum().backward()
arrays["two_heads_unused_ref/a_grad"] = ref.a.weight.grad.numpy().copy()

torch.manual_seed(4)
branchy = RankBranch()
net = DDP(copy.deepcopy(branchy), find_unused_parameters=True)
xs = torch.randn(4, 3)
net(local(xs)).sum().backward()
# one process: rank r's half goes through its branch, the mean over ranks of the two losses
ref = copy.deepcopy(branchy)
halves = xs.chunk(WORLD)
(ref.b(ref.a(halves[0])).sum() + ref.c(ref.a(halves[1])).sum()).div(WORLD).backward()
for name in ("a.weight", "b.weight", "c.weight"):
    arrays[f"rank_branch/{name}"] = net.module.get_parameter(name).grad.numpy().copy()
    arrays[f"rank_branch_ref/{name}"] = ref.get_parameter(name).grad.numpy().copy()

# --- buffers: rank 0's at construction and before each forward; broadcast_buffers=False keeps them


class Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.register_buffer("seen", torch.zeros(2))

    def forward(self, x):
        self.seen += x.detach().sum(0)
        return self.lin(x)


facts["buffers"] = {}
for kwargs in ({}, {"broadcast_buffers": False}):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        net = DDP(Counter(), **kwargs)
    facts["buffers"][str(kwargs)] = {"warned": [str(w.message) for w in caught
                                                if w.category is FutureWarning]}
    with torch.no_grad():
        net.module.seen.fill_(10.0 * (RANK + 1))  # ranks part after construction
    for _ in range(2):
        net(torch.full((1, 2), float(RANK + 1))).sum().backward()
    facts["buffers"][str(kwargs)]["seen"] = net.module.seen.tolist()

# --- construction errors --------------------------------------------------------------------------
facts["errors"] = {}
frozen = nn.Linear(2, 2).requires_grad_(False)
for tag, call in (("no_params", lambda: DDP(frozen)),
                  ("device_ids", lambda: DDP(nn.Linear(2, 2), device_ids=[0])),
                  ("two_devices", lambda: DDP(nn.Linear(2, 2), device_ids=[0, 1])),
                  ("shapes", lambda: DDP(nn.Linear(2, 2 + RANK))),
                  ("count", lambda: DDP(nn.Linear(2, 2, bias=RANK == 0)))):
    try:
        call()
        facts["errors"][tag] = None
    except (RuntimeError, ValueError) as e:
        facts["errors"][tag] = [type(e).__name__, str(e)]

# --- the parameter checksum: silent when equal, names the first divergent parameter -------------
net = DDP(mlp())
net.check_parameters_in_sync()
with torch.no_grad():
    if RANK == 1:
        net.module[2].bias[0] += 1e-12
try:
    net.check_parameters_in_sync()
    facts["divergent"] = None
except RuntimeError as e:
    facts["divergent"] = str(e)

np.savez(os.path.join(OUT, f"rank{RANK}.npz"), **arrays)
with open(os.path.join(OUT, f"rank{RANK}.json"), "w") as f:
    json.dump(facts, f)
dist.destroy_process_group()
