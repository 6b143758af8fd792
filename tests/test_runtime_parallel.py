"""nn.DataParallel / torch.nn.parallel on a machine without GPUs, compared with torch: the module
runs as it is, state_dict keys get the 'module.' prefix, and the multi-device pieces raise
torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import copy_params
from tests.runtime_probe import same_outcome


def _pair():
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    ours = glassgrad.nn.Sequential(glassgrad.nn.Linear(4, 3), glassgrad.nn.Tanh(),
                                   glassgrad.nn.Linear(3, 2))
    copy_params(theirs, ours)
    return theirs, ours


def test_data_parallel_runs_the_module_and_trains_alike():
    theirs, ours = _pair()
    dp_t, dp_o = torch.nn.DataParallel(theirs), glassgrad.nn.DataParallel(ours)
    assert dp_o.module is ours and dp_o.device_ids == dp_t.device_ids == []
    assert list(dp_o.state_dict()) == list(dp_t.state_dict())
    assert [n for n, _ in dp_o.named_parameters()] == [n for n, _ in dp_t.named_parameters()]
    assert repr(dp_o) == repr(dp_t)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    opt_t = torch.optim.SGD(dp_t.parameters(), lr=0.1)
    opt_o = glassgrad.optim.SGD(dp_o.parameters(), lr=0.1)
    for _ in range(3):
        loss_t = dp_t(torch.tensor(x)).pow(2).mean()
        loss_o = dp_o(glassgrad.tensor(x)).pow(2).mean()
        opt_t.zero_grad(), opt_o.zero_grad()
        loss_t.backward(), loss_o.backward()
        opt_t.step(), opt_o.step()
        np.testing.assert_allclose(loss_o.item(), loss_t.item(), rtol=1e-6)
    np.testing.assert_allclose(ours[0].weight.detach().numpy(), theirs[0].weight.detach().numpy(),
                               rtol=1e-6, atol=1e-7)


def test_data_parallel_state_dict_round_trip_and_mode():
    def probe(t):
        net = t.nn.DataParallel(t.nn.Linear(2, 3), device_ids=[0, 1], output_device=0, dim=1)
        other = t.nn.DataParallel(t.nn.Linear(2, 3))
        other.load_state_dict(net.state_dict())
        net.eval()
        return (t.equal(other.module.weight, net.module.weight), net.module.training,
                net.device_ids, hasattr(net, "output_device"))

    same_outcome(probe)


def test_data_parallel_passes_kwargs():
    class Scale(torch.nn.Module):
        def forward(self, x, scale=1.0):
            return x * scale

    class ScaleG(glassgrad.nn.Module):
        def forward(self, x, scale=1.0):
            return x * scale

    out_t = torch.nn.DataParallel(Scale())(torch.ones(2), scale=3.0)
    out_o = glassgrad.nn.DataParallel(ScaleG())(glassgrad.ones(2), scale=3.0)
    assert out_o.tolist() == out_t.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("expr", [
    "t.nn.parallel.data_parallel(m, t.ones(1, 2))",
    "t.nn.parallel.data_parallel(m, (t.ones(1, 2),), device_ids=[0])",
    "t.nn.parallel.replicate(m, [0])",
    "t.nn.parallel.gather([t.ones(2)], 0)",
    "t.nn.parallel.parallel_apply([m], [t.ones(1, 2)])",
    "t.nn.DataParallel is t.nn.parallel.DataParallel",
])
def test_multi_device_pieces_raise_as_torch_cpu(expr):
    same_outcome(lambda t: eval(expr, {"t": t, "m": t.nn.Linear(2, 2)}))
