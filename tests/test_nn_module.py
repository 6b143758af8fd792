"""The Module API against torch: registration, iteration order, state_dict and its errors, repr,
train/eval, dtype moves, deepcopy, attribute errors. Hooks are in test_nn_hooks.py."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close, copy_params


def build(m):
    """The same nested architecture on either library."""

    class Block(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = m.nn.Linear(3, 3)
            self.register_buffer("steps", m.zeros(1))
            self.register_buffer("scratch", m.ones(2), persistent=False)
            self.scale = m.nn.Parameter(m.ones(3))

        def forward(self, x):
            return self.fc(x) * self.scale

    class Net(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.ReLU())
            self.blocks = m.nn.ModuleList([Block(), Block()])
            self.heads = m.nn.ModuleDict({"b": m.nn.Linear(3, 1), "a": m.nn.Linear(3, 2)})
            self.extra = m.nn.ParameterList([m.nn.Parameter(m.zeros(2)), m.ones(3)])
            self.table = m.nn.ParameterDict({"y": m.nn.Parameter(m.ones(1)), "x": m.zeros(2)})
            self.bn = m.nn.BatchNorm1d(3)
            self.act = None

        def forward(self, x):
            h = self.stem(x)
            for b in self.blocks:
                h = b(h)
            return self.heads["a"](self.bn(h)).sum(-1) + self.heads["b"](h).sum(-1)

    return Net()


def _norm(s: str) -> str:
    return s.replace("torch.", "glassgrad.")


def test_names_and_order_match_torch():
    ours, theirs = build(glassgrad), build(torch)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert len(list(ours.parameters(recurse=False))) == 0
    assert len(list(ours.modules())) == len(list(theirs.modules()))
    assert ours.state_dict()._metadata.keys() == theirs.state_dict()._metadata.keys()


def test_repr_matches_torch():
    ours, theirs = build(glassgrad), build(torch)
    assert _norm(repr(ours)) == _norm(repr(theirs))


def test_forward_and_grads_after_copy():
    ours, theirs = build(glassgrad).double(), build(torch).double()
    copy_params(theirs, ours)
    x = np.random.default_rng(0).standard_normal((4, 2))
    yt, yg = theirs(torch.tensor(x)), ours(glassgrad.tensor(x))
    assert_close(yg, yt)
    yt.sum().backward()
    yg.sum().backward()
    for (n, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_close(a.grad, b.grad, what=n)


def test_shared_parameters_are_listed_once():
    for m in (glassgrad, torch):
        lin = m.nn.Linear(2, 2)
        seq = m.nn.Sequential(lin, lin)
        assert len(list(seq.parameters())) == 2
        assert list(seq.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]
        assert len(list(seq.named_parameters(remove_duplicate=False))) == 4


def _error(lib, model, sd, **kw):
    with pytest.raises(RuntimeError) as info:
        model.load_state_dict(sd, **kw)
    return str(info.value)


def test_load_state_dict_errors_match_torch():
    ours, theirs = glassgrad.nn.Linear(2, 3), torch.nn.Linear(2, 3)
    # missing + unexpected
    a = _error(glassgrad, ours, {"weight": glassgrad.zeros(3, 2), "extra": glassgrad.zeros(1)})
    b = _error(torch, theirs, {"weight": torch.zeros(3, 2), "extra": torch.zeros(1)})
    assert a.startswith("Error(s) in loading state_dict for Linear:\n\tMissing key(s) in "
                        "state_dict: ")
    assert a == b
    # size mismatch
    a = _error(glassgrad, ours, {"weight": glassgrad.zeros(3, 3), "bias": glassgrad.zeros(3)})
    b = _error(torch, theirs, {"weight": torch.zeros(3, 3), "bias": torch.zeros(3)})
    assert _norm(a) == _norm(b)
    # size mismatch is reported even when strict=False
    a = _error(glassgrad, ours, {"weight": glassgrad.zeros(1)}, strict=False)
    b = _error(torch, theirs, {"weight": torch.zeros(1)}, strict=False)
    assert _norm(a) == _norm(b)


def test_load_state_dict_non_strict_returns_incompatible_keys():
    ours, theirs = build(glassgrad), build(torch)
    sd_t = theirs.state_dict()
    del sd_t["bn.running_var"]
    sd_t["blocks.0.nope"] = torch.zeros(1)
    sd_g = {k: glassgrad.tensor(v.numpy()) for k, v in sd_t.items()}
    ra = ours.load_state_dict(sd_g, strict=False)
    rb = theirs.load_state_dict(sd_t, strict=False)
    assert ra.missing_keys == rb.missing_keys and ra.unexpected_keys == rb.unexpected_keys
    assert repr(ra) == repr(rb)
    assert repr(ours.load_state_dict(ours.state_dict())) == "<All keys matched successfully>"


def test_load_state_dict_copies_values_in_place():
    ours = glassgrad.nn.Linear(2, 2)
    w = ours.weight
    ours.load_state_dict({"weight": glassgrad.ones(2, 2), "bias": glassgrad.zeros(2)})
    assert ours.weight is w
    np.testing.assert_array_equal(w.detach().numpy(), np.ones((2, 2), dtype=np.float32))
    assert w.is_leaf and w.requires_grad


def test_load_state_dict_assign_replaces_tensors():
    for m in (glassgrad, torch):
        lin = m.nn.Linear(2, 2)
        w = m.ones(2, 2, dtype=m.float64)
        lin.load_state_dict({"weight": w, "bias": m.zeros(2)}, assign=True)
        assert isinstance(lin.weight, m.nn.Parameter) and lin.weight.requires_grad
        assert lin.weight.dtype == m.float64  # the loaded tensor's dtype, not a copy into float32


def test_state_dict_detached_unless_keep_vars():
    lin = glassgrad.nn.Linear(2, 2)
    sd = lin.state_dict()
    assert not sd["weight"].requires_grad
    assert lin.state_dict(keep_vars=True)["weight"] is lin.weight
    sd["weight"].numpy()[...] = 5  # shares storage, as PyTorch's
    assert (lin.weight.detach().numpy() == 5).all()


def test_batchnorm_old_checkpoint_without_num_batches_tracked():
    bn = glassgrad.nn.BatchNorm1d(2)
    sd = {k: v for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
    assert repr(bn.load_state_dict(sd)) == "<All keys matched successfully>"


def test_train_eval_propagate():
    for m in (glassgrad, torch):
        net = build(m)
        net.eval()
        assert not any(mod.training for mod in net.modules())
        net.train()
        assert all(mod.training for mod in net.modules())
        with pytest.raises(ValueError, match="training mode is expected to be boolean"):
            net.train("yes")


def test_zero_grad_and_requires_grad():
    net = glassgrad.nn.Linear(2, 2)
    net(glassgrad.ones(1, 2)).sum().backward()
    net.zero_grad(set_to_none=False)
    assert net.weight.grad is not None and not net.weight.grad.numpy().any()
    net.zero_grad()
    assert net.weight.grad is None
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_apply_and_dtype_moves():
    net = build(glassgrad)
    seen = []
    net.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen[-1] == "Net" and seen.count("Linear") == 5
    w = net.stem[0].weight
    assert net.double() is net
    assert net.stem[0].weight is w and w.dtype == glassgrad.float64
    assert net.bn.num_batches_tracked.dtype == glassgrad.int64
    assert net.bn.running_mean.dtype == glassgrad.float64
    net.to(glassgrad.float32)
    assert w.dtype == glassgrad.float32
    net.half()
    assert w.dtype == glassgrad.float16
    net.float().to("cpu").cpu().cuda()
    assert w.dtype == glassgrad.float32 and w.is_leaf
    net.to("cuda", glassgrad.float64)
    assert w.dtype == glassgrad.float64


def test_deepcopy_gives_independent_leaves():
    net = build(glassgrad)
    net(glassgrad.ones(2, 2)).sum().backward()
    clone = copy.deepcopy(net)
    for (n, a), (_, b) in zip(net.named_parameters(), clone.named_parameters()):
        assert type(b) is glassgrad.nn.Parameter, n
        assert b is not a and b.is_leaf and b.requires_grad
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        assert not np.shares_memory(a.detach().numpy(), b.detach().numpy())
    # PyTorch's Parameter.__deepcopy__ does not copy .grad
    t_net = build(torch)
    t_net(torch.ones(2, 2)).sum().backward()
    assert (copy.deepcopy(t_net).stem[0].weight.grad is None) == (clone.stem[0].weight.grad is None)
    with glassgrad.no_grad():
        clone.stem[0].weight.add_(1.0)
    assert not np.allclose(clone.stem[0].weight.detach().numpy(), net.stem[0].weight.detach().numpy())
    assert clone.blocks[0].scratch is not net.blocks[0].scratch


def _maml_inner(m, model, x, y):
    before = {k: v.clone() for k, v in model.state_dict().items()}
    fast = copy.deepcopy(model)
    for _ in range(3):
        loss = m.nn.functional.mse_loss(fast(m.tensor(x)), m.tensor(y))
        fast.zero_grad()
        loss.backward()
        with m.no_grad():
            for p in fast.parameters():
                p -= 0.1 * p.grad
    for k, v in model.state_dict().items():
        assert_close(v, before[k])  # the original is untouched
    return [p.detach() for p in fast.parameters()]


def test_maml_inner_loop_on_a_copy():
    """The article's MAML: clone, step the clone under no_grad, the original is untouched."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((8, 2)), rng.standard_normal((8, 1))
    t_model = torch.nn.Sequential(torch.nn.Linear(2, 4), torch.nn.Tanh(),
                                  torch.nn.Linear(4, 1)).double()
    g_model = glassgrad.nn.Sequential(glassgrad.nn.Linear(2, 4), glassgrad.nn.Tanh(),
                                      glassgrad.nn.Linear(4, 1)).double()
    copy_params(t_model, g_model)
    for a, b in zip(_maml_inner(glassgrad, g_model, x, y), _maml_inner(torch, t_model, x, y)):
        assert_close(a, b)


def test_attribute_registration_errors_match_torch():
    def errors(m):
        out = []
        lin = m.nn.Linear(2, 2)
        for fn in (
            lambda: setattr(lin, "weight", m.zeros(2, 2)),
            lambda: lin.register_buffer("weight", m.zeros(1)),
            lambda: lin.register_buffer("a.b", m.zeros(1)),
            lambda: lin.register_buffer("buf", [1]),
            lambda: lin.register_parameter("p", m.zeros(1)),
            lambda: lin.add_module("m", 3),
            lambda: lin.register_parameter("q", m.nn.Parameter(m.zeros(1)) * 2),
            lambda: lin.nope,
            lambda: lin.get_submodule("a.b"),
            lambda: m.nn.Sequential(lin).get_parameter("0.nope"),
            lambda: m.nn.Sequential(lin).get_parameter("0.in_features"),
        ):
            with pytest.raises((TypeError, KeyError, AttributeError, ValueError)) as info:
                fn()
            out.append((info.type.__name__, str(info.value)))
        return out

    assert errors(glassgrad) == errors(torch)


def test_setattr_none_and_delattr_and_dir():
    for m in (glassgrad, torch):
        lin = m.nn.Linear(2, 2)
        lin.bias = None
        assert "bias" in lin._parameters and lin.bias is None
        assert [n for n, _ in lin.named_parameters()] == ["weight"]
        lin.register_buffer("buf", m.zeros(1))
        lin.buf = m.ones(1)
        assert lin._buffers["buf"] is lin.buf
        del lin.buf
        assert "buf" not in lin._buffers
        assert "weight" in dir(lin) and "forward" in dir(lin)
        lin.sub = m.nn.ReLU()
        assert lin.get_submodule("sub") is lin.sub
        lin.sub = m.nn.Tanh()
        assert isinstance(lin.sub, m.nn.Tanh)
        lin.weight = m.nn.Parameter(m.ones(2, 2))
        assert lin.get_parameter("weight") is lin.weight


def test_forward_missing():
    with pytest.raises(NotImplementedError, match=r'Module \[Module\] is missing the required '
                                                  r'"forward" function'):
        glassgrad.nn.Module()(1)


def test_parameter_behaviour():
    data = glassgrad.tensor([1.0, 2.0])
    p = glassgrad.nn.Parameter(data)
    assert isinstance(p, glassgrad.Tensor) and p.is_leaf and p.requires_grad
    assert repr(p) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))
    q = glassgrad.nn.Parameter(data, requires_grad=False)
    assert repr(q) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=False))
    data.numpy()[0] = 7  # shares storage with its data, as PyTorch
    assert p.detach().numpy()[0] == 7
    assert type(copy.deepcopy(p)) is glassgrad.nn.Parameter
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is glassgrad.nn.Parameter and r.requires_grad
    np.testing.assert_array_equal(r.detach().numpy(), p.detach().numpy())
    e = glassgrad.nn.Parameter()
    assert e.shape == (0,) and e.requires_grad
    assert type(p * 2) is glassgrad.Tensor
    # as torch: a program may tag a parameter with attributes; they survive a pickle round trip
    # (Tensor stays slotted: results of ops carry no __dict__)
    p.tag = "decay"
    assert pickle.loads(pickle.dumps(p)).tag == "decay"
    assert not hasattr(p * 2, "__dict__")
