"""Run one distribution spec on torch and glassgrad and compare: values of log_prob, cdf, icdf,
entropy, mean, mode, variance, stddev; their first and second derivatives w.r.t. the
parameters; shapes, supports and reprs. Used by tests/test_distributions*.py."""

from __future__ import annotations

import numpy as np
import torch

import glassgrad

METHODS = ("log_prob", "cdf", "icdf")
PROPERTIES = ("mean", "mode", "variance", "stddev", "entropy")


class Spec:
    """``make(m, *params)`` builds the distribution from module ``m`` (torch or glassgrad) and
    float64 parameter tensors; ``params`` are NumPy arrays; ``value`` feeds log_prob/cdf,
    ``prob`` feeds icdf; ``skip`` names quantities torch does not have for this family;
    ``second`` False where torch's second derivative is not defined; ``grad`` False for
    quantities whose parameters are not differentiable (discrete parameters)."""

    def __init__(self, name, make, params, value=None, prob=None, skip=(), second=True,
                 grad=True, int_params=(), rtol=1e-7, atol=1e-9):
        self.name, self.make, self.params = name, make, [np.asarray(p) for p in params]
        self.value, self.prob, self.skip = value, prob, set(skip)
        self.second, self.grad, self.int_params = second, grad, set(int_params)
        self.rtol, self.atol = rtol, atol

    def __repr__(self) -> str:
        return self.name


def _tensors(m, spec, requires_grad):
    out = []
    for i, p in enumerate(spec.params):
        if i in spec.int_params or p.dtype.kind in "iub":
            out.append(m.tensor(p))
        else:
            out.append(m.tensor(p, dtype=m.float64, requires_grad=requires_grad))
    return out


def quantity(m, dist, what, spec):
    """One quantity of ``dist`` by name; None where the family does not define it."""
    if what in METHODS:
        arg = spec.prob if what == "icdf" else spec.value
        if arg is None:
            return None
        arr = np.asarray(arg)
        t = m.tensor(arr, dtype=m.float64) if arr.dtype.kind == "f" else m.tensor(arr)
        return getattr(dist, what)(t)
    if what == "entropy":
        return dist.entropy()
    return getattr(dist, what)


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(a, b, spec, what):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, f"{spec.name}.{what}: shape {b.shape} vs torch {a.shape}"
    np.testing.assert_allclose(b, a, rtol=spec.rtol, atol=spec.atol, equal_nan=True,
                               err_msg=f"{spec.name}.{what}")


def _derivatives(m, spec, what, rng_seed):
    """(value, first, second): the quantity, grad of <q, w> w.r.t. the parameters and the grad
    of <grad, v> (second order), NumPy arrays; None entries where not defined."""
    params = _tensors(m, spec, requires_grad=True)
    dist = spec.make(m, *params)
    try:
        q = quantity(m, dist, what, spec)
    except NotImplementedError:
        return "NotImplementedError"
    if q is None:
        return None
    value = _np(q)
    diff = [p for p in params if p.requires_grad]
    if not spec.grad or not getattr(q, "requires_grad", False) or not diff:
        return value, None, None
    rng = np.random.default_rng(rng_seed)
    finite = np.isfinite(value)
    w = m.tensor(np.where(finite, rng.uniform(0.5, 1.5, value.shape), 0.0), dtype=m.float64)
    q_finite = m.where(m.tensor(finite), q, m.zeros_like(q))
    try:
        grads = m.autograd.grad((q_finite * w).sum(), diff, create_graph=spec.second,
                                allow_unused=True)
    except NotImplementedError:  # torch's igamma w.r.t. its first argument, for one
        return value, "NotImplementedError", None
    first = [None if g is None else _np(g) for g in grads]
    second = None
    if spec.second:
        used = [(p, g) for p, g in zip(diff, grads) if g is not None and g.requires_grad]
        if used:
            total = sum((g * m.tensor(rng.uniform(0.5, 1.5, tuple(g.shape)), dtype=m.float64))
                        .sum() for _, g in used)
            gg = m.autograd.grad(total, diff, allow_unused=True)
            second = [None if g is None else _np(g) for g in gg]
    return value, first, second


def compare(spec, what):
    """Assert glassgrad matches torch for one quantity of one spec (values and derivatives)."""
    if what in spec.skip:
        return
    expected = _derivatives(torch, spec, what, 0)
    got = _derivatives(glassgrad, spec, what, 0)
    if expected is None or isinstance(expected, str):
        assert got == expected, f"{spec.name}.{what}: torch gives {expected}, glassgrad {got}"
        return
    assert got is not None, f"{spec.name}.{what}: glassgrad gives none"
    _close(expected[0], got[0], spec, what)
    for order, (e, g) in enumerate(zip(expected[1:], got[1:]), start=1):
        if e is None:
            continue
        if isinstance(e, str) or isinstance(g, str):
            assert e == g, f"{spec.name}.{what}: order {order}: torch {e}, glassgrad {g}"
            continue
        assert g is not None, f"{spec.name}.{what}: order-{order} derivative missing"
        for i, (ei, gi) in enumerate(zip(e, g)):
            if ei is None:
                continue
            gi = np.zeros_like(ei) if gi is None else gi
            _close(ei, gi, spec, f"{what} d{order}/dparam{i}")


def compare_shapes(spec, n=7):
    """batch/event shapes, sample((n,)) shape and dtype, support repr, has_rsample, repr."""
    td = spec.make(torch, *_tensors(torch, spec, False))
    gd = spec.make(glassgrad, *_tensors(glassgrad, spec, False))
    assert tuple(gd.batch_shape) == tuple(td.batch_shape), spec.name
    assert tuple(gd.event_shape) == tuple(td.event_shape), spec.name
    assert gd.has_rsample == td.has_rsample, spec.name
    assert gd.has_enumerate_support == td.has_enumerate_support, spec.name
    ts, gs = td.sample((n,)), gd.sample((n,))
    assert tuple(gs.shape) == tuple(ts.shape), spec.name
    assert str(gs.dtype).split(".")[-1] == str(ts.dtype).split(".")[-1], spec.name
    assert repr(gd.support).replace("glassgrad.", "torch.") == repr(td.support), spec.name
    assert repr(gd).replace("glassgrad.", "torch.") == repr(td), spec.name
    if td.has_enumerate_support:
        for expand in (True, False):
            try:
                want = _np(td.enumerate_support(expand))
            except NotImplementedError:
                try:
                    gd.enumerate_support(expand)
                except NotImplementedError:
                    continue
                raise AssertionError(f"{spec.name}: torch raises NotImplementedError")
            _close(want, _np(gd.enumerate_support(expand)), spec, "enumerate_support")
    batch = (2,) + tuple(td.batch_shape)
    te, ge = td.expand(batch), gd.expand(batch)
    assert tuple(ge.batch_shape) == tuple(te.batch_shape) and type(ge) is type(gd), spec.name
    if spec.value is not None:
        v = np.asarray(spec.value)
        tv = torch.tensor(v, dtype=torch.float64) if v.dtype.kind == "f" else torch.tensor(v)
        gv = glassgrad.tensor(v, dtype=glassgrad.float64) if v.dtype.kind == "f" else \
            glassgrad.tensor(v)
        _close(_np(te.log_prob(tv)), _np(ge.log_prob(gv)), spec, "expand().log_prob")
