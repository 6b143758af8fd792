"""Generic op tests driven by tests/op_db: forward, VJP and double backward against torch, and
float64 gradcheck/gradgradcheck against central differences."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from tests.op_db import all_ops
from tests.oracle import assert_close, assert_same_dtype, flat_tensors, leaves, to_lib

OPS = all_ops()
CASES = []
for _op in OPS:
    for _i, _s in enumerate(_op.samples(np.random.default_rng(0))):
        CASES.append(pytest.param(_op, _i, id=f"{_op.name}-{_s.desc or _i}"))


def _sample(op, i):
    return op.samples(np.random.default_rng(0))[i]


def _run(lib, op, sample, dtype=np.float64, requires_grad=True):
    args = [to_lib(lib, a, dtype, requires_grad) for a in sample.args]
    out = op.fn(lib, *args, **sample.kwargs)
    return args, flat_tensors(out, lib)


def _xfail(op):
    if op.xfail:
        pytest.xfail(op.xfail)


@pytest.mark.parametrize("op,i", CASES)
def test_forward_matches_torch(op, i):
    _xfail(op)
    sample = _sample(op, i)
    for dtype in (np.float64, np.float32) if op.float32 else (np.float64,):
        _, ours = _run(glassgrad, op, sample, dtype, requires_grad=False)
        _, theirs = _run(torch, op, sample, dtype, requires_grad=False)
        assert len(ours) == len(theirs)
        tol = 1e-4 if dtype == np.float32 else op.atol
        for a, b in zip(ours, theirs):
            assert_same_dtype(a, b)
            assert_close(a, b, atol=tol, rtol=max(op.rtol, tol), what=f"{op.name} forward")


def _diff_outputs(outs):
    return [o for o in outs if o.requires_grad]


@pytest.mark.parametrize("op,i", CASES)
def test_vjp_matches_torch(op, i):
    _xfail(op)
    if not op.grad:
        pytest.skip("not differentiable")
    sample = _sample(op, i)
    rng = np.random.default_rng(1)
    g_args, g_out = _run(glassgrad, op, sample)
    t_args, t_out = _run(torch, op, sample)
    g_out, t_out = _diff_outputs(g_out), _diff_outputs(t_out)
    assert len(g_out) == len(t_out)
    if not t_out:
        return
    cots = [rng.standard_normal(o.shape) for o in t_out]
    g_in, t_in = leaves(g_args, glassgrad), leaves(t_args, torch)
    g_grads = glassgrad.autograd.grad(g_out, g_in, [glassgrad.tensor(c) for c in cots],
                                      allow_unused=True)
    t_grads = torch.autograd.grad(t_out, t_in, [torch.tensor(c) for c in cots], allow_unused=True)
    for k, (a, b) in enumerate(zip(g_grads, t_grads)):
        assert_close(a, b, op.atol, op.rtol, what=f"{op.name} grad of input {k}")


@pytest.mark.parametrize("op,i", CASES)
def test_double_backward_matches_torch(op, i):
    _xfail(op)
    if not (op.grad and op.gradgrad):
        pytest.skip("no double backward")
    sample = _sample(op, i)
    rng = np.random.default_rng(2)
    results = []
    for lib in (glassgrad, torch):
        args, out = _run(lib, op, sample)
        out = _diff_outputs(out)
        if not out:
            return
        ins = leaves(args, lib)
        cots = [lib.tensor(rng.standard_normal(tuple(o.shape))).requires_grad_() for o in out]
        firsts = lib.autograd.grad(out, ins, cots, create_graph=True, allow_unused=True)
        ws = [rng.standard_normal(tuple(x.shape)) for x in ins]
        total = sum(((f * lib.tensor(w)).sum() for f, w in zip(firsts, ws)
                     if f is not None and f.requires_grad), lib.tensor(0.0, dtype=lib.float64))
        if not total.requires_grad:
            results.append(None)
            continue
        results.append(lib.autograd.grad(total, ins + cots, allow_unused=True))
        rng = np.random.default_rng(2)
    ours, theirs = results
    if ours is None or theirs is None:
        assert ours is None or all(g is None or not g.detach().numpy().any() for g in ours)
        assert theirs is None or all(g is None or not g.detach().numpy().any() for g in theirs)
        return
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert_close(a, b, op.atol * 10, op.rtol * 10, what=f"{op.name} grad-of-grad {k}")


def _small_cases():
    out = []
    for op in OPS:
        samples = op.samples(np.random.default_rng(0))
        order = sorted(range(len(samples)), key=lambda k: sum(
            np.size(a) for a in samples[k].args if isinstance(a, np.ndarray)))
        for k in [k for k in order if _has_float(samples[k])][: op.gradcheck_samples]:
            out.append(pytest.param(op, k, id=f"{op.name}-{samples[k].desc or k}"))
    return out


def _has_float(sample):
    return any(isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size for a in sample.args)


@pytest.mark.parametrize("op,i", _small_cases())
def test_gradcheck(op, i):
    _xfail(op)
    if not op.grad:
        pytest.skip("not differentiable")
    sample = _sample(op, i)
    args = [to_lib(glassgrad, a) for a in sample.args]
    pos = [k for k, a in enumerate(args) if isinstance(a, glassgrad.Tensor) and a.requires_grad]

    def f(*xs):
        full = list(args)
        for k, x in zip(pos, xs):
            full[k] = x
        return tuple(flat_tensors(op.fn(glassgrad, *full, **sample.kwargs), glassgrad))

    assert glassgrad.autograd.gradcheck(f, tuple(args[k] for k in pos), atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("op,i", _small_cases())
def test_gradgradcheck(op, i):
    _xfail(op)
    if not (op.grad and op.gradgrad):
        pytest.skip("no double backward")
    sample = _sample(op, i)
    args = [to_lib(glassgrad, a) for a in sample.args]
    pos = [k for k, a in enumerate(args) if isinstance(a, glassgrad.Tensor) and a.requires_grad]

    def f(*xs):
        full = list(args)
        for k, x in zip(pos, xs):
            full[k] = x
        outs = flat_tensors(op.fn(glassgrad, *full, **sample.kwargs), glassgrad)
        return tuple(o for o in outs if o.requires_grad)

    assert glassgrad.autograd.gradgradcheck(f, tuple(args[k] for k in pos), atol=1e-4, rtol=1e-3)
