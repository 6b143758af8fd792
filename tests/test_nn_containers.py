"""Containers against torch: the same operations on both libraries give the same structure
(names, lengths, reprs, state_dict keys) and the same outputs."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import torch

import glassgrad
from tests.oracle import assert_close, copy_params


def _norm(s: str) -> str:
    return s.replace("torch.", "glassgrad.")


def _structure(mod):
    return (_norm(repr(mod)), list(mod.state_dict()), len(mod) if hasattr(mod, "__len__") else None)


def _same(fn):
    ours, theirs = fn(glassgrad), fn(torch)
    assert _structure(ours) == _structure(theirs)
    return ours, theirs


def test_sequential_operations():
    def ops(m):
        seq = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.ReLU(), m.nn.Linear(3, 4))
        seq.append(m.nn.Tanh())
        seq.insert(1, m.nn.Sigmoid())
        seq.insert(-1, m.nn.Identity())
        del seq[0]
        seq.pop(0)
        seq.extend([m.nn.Linear(4, 2)])
        seq[0] = m.nn.ELU()
        return seq

    _same(ops)
    _same(lambda m: m.nn.Sequential(m.nn.Linear(2, 3), m.nn.ReLU(), m.nn.Linear(3, 4))[1:])
    _same(lambda m: m.nn.Sequential(OrderedDict(fc=m.nn.Linear(2, 2), act=m.nn.ReLU()))[::-1])
    _same(lambda m: m.nn.Sequential(m.nn.Linear(2, 2)) + m.nn.Sequential(m.nn.ReLU()))
    for m in (glassgrad, torch):
        seq = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.ReLU())
        assert isinstance(seq[-1], m.nn.ReLU) and isinstance(seq[1:], m.nn.Sequential)
        with pytest.raises(IndexError, match="index 5 is out of range"):
            seq[5]


def test_sequential_ordered_dict_forward():
    def make(m):
        return m.nn.Sequential(OrderedDict(fc1=m.nn.Linear(3, 4), act=m.nn.GELU(),
                                           fc2=m.nn.Linear(4, 1))).double()

    ours, theirs = _same(make)
    copy_params(theirs, ours)
    x = np.random.default_rng(0).standard_normal((2, 3))
    assert_close(ours(glassgrad.tensor(x)), theirs(torch.tensor(x)))
    assert isinstance(ours.fc1, glassgrad.nn.Linear)


def test_module_list_operations():
    def ops(m):
        ml = m.nn.ModuleList([m.nn.Linear(2, 2) for _ in range(3)])
        ml.append(m.nn.ReLU())
        ml.extend([m.nn.Tanh(), m.nn.Tanh()])
        ml.insert(1, m.nn.Sigmoid())
        ml += [m.nn.Linear(2, 2)]
        del ml[2]
        ml[0] = m.nn.Linear(2, 2)
        ml.pop(-1)
        return ml

    _same(ops)
    _same(lambda m: m.nn.ModuleList([m.nn.ReLU(), m.nn.Linear(2, 2), m.nn.Linear(2, 2)])[1:])
    _same(lambda m: m.nn.ModuleList([m.nn.ReLU()]) + m.nn.ModuleList([m.nn.Tanh()]))
    _same(lambda m: m.nn.ModuleList())
    with pytest.raises(NotImplementedError):
        glassgrad.nn.ModuleList([glassgrad.nn.ReLU()])(glassgrad.ones(1))


def test_module_dict_operations():
    def ops(m):
        md = m.nn.ModuleDict({"b": m.nn.Linear(2, 2), "a": m.nn.ReLU()})
        md["c"] = m.nn.Tanh()
        md.update([("d", m.nn.Linear(1, 1))])
        del md["a"]
        md.pop("b")
        assert "c" in md and list(md.keys()) == ["c", "d"]
        return md

    _same(ops)


def test_parameter_list_and_dict():
    def plist(m):
        pl = m.nn.ParameterList([m.nn.Parameter(m.zeros(2, 3)), m.ones(4)])
        pl.append(m.nn.Parameter(m.ones(1, dtype=m.float64)))
        pl.extend([m.zeros(2)])
        pl[1] = m.nn.Parameter(m.ones(5))
        assert all(isinstance(p, m.nn.Parameter) for p in pl)
        return pl

    _same(plist)
    _same(lambda m: m.nn.ParameterList([m.ones(1), m.ones(2), m.ones(3)])[::2])

    def pdict(m):
        pd = m.nn.ParameterDict({"w": m.ones(2), "a": m.nn.Parameter(m.zeros(1))})
        pd["z"] = m.ones(3, 3)
        pd.update(OrderedDict(y=m.ones(1), b=m.ones(1)))
        del pd["w"]
        assert "z" in pd and pd.get("nope") is None
        assert isinstance(pd["z"], m.nn.Parameter)
        assert list(pd.keys()) == ["a", "z", "y", "b"]
        return pd

    _same(pdict)
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        glassgrad.nn.ParameterList()(1)


def test_containers_in_a_model_train_together():
    def make(m):
        class Net(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = m.nn.ModuleList([m.nn.Linear(3, 3) for _ in range(2)])
                self.gains = m.nn.ParameterList([m.ones(3) * 0.5, m.ones(3) * 2.0])
                self.heads = m.nn.ModuleDict({"out": m.nn.Linear(3, 1)})

            def forward(self, x):
                for layer, g in zip(self.layers, self.gains):
                    x = m.tanh(layer(x)) * g
                return self.heads["out"](x)

        return Net().double()

    ours, theirs = _same(make)
    copy_params(theirs, ours)
    x = np.random.default_rng(0).standard_normal((4, 3))
    theirs(torch.tensor(x)).sum().backward()
    ours(glassgrad.tensor(x)).sum().backward()
    for (n, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_close(a.grad, b.grad, what=n)
