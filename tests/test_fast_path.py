"""NOTE [Fast path] (ops/fast_path.py) and NOTE [Array backward] (autograd/engine_arrays.py): the
shortcuts must build exactly what the general path builds, and compute the same gradients.

The fast path of ``x.tanh()``, ``x * 2.0``, ``x ** 2`` ... is compared slot by slot with
``Primitive.apply_*`` (the general path) on the same input; the first-order backward on arrays is
compared with the Tensor backward (``create_graph=True`` runs that one) and with torch, on 0-d
inputs (NumPy scalars inside) and on n-d ones.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.autograd.graph import Node, SavedTensor
from glassgrad.ops import elementwise as ew
from glassgrad.ops import scalar as sc
from glassgrad.tensor import Tensor

UNARY = [
    ("exp", ew.Exp), ("log", ew.Log), ("tanh", ew.Tanh), ("sigmoid", ew.Sigmoid),
    ("sqrt", ew.Sqrt), ("sin", ew.Sin), ("cos", ew.Cos), ("log1p", ew.Log1p), ("relu", ew.Relu),
    ("abs", ew.Abs), ("neg", ew.Neg), ("reciprocal", ew.Reciprocal), ("rsqrt", ew.Rsqrt),
]
SCALAR = [
    (lambda t: t + 0.5, sc.AddScalar, 0.5), (lambda t: t - 0.5, sc.SubScalar, 0.5),
    (lambda t: 0.5 - t, sc.RSubScalar, 0.5), (lambda t: t * 0.5, sc.MulScalar, 0.5),
    (lambda t: t / 0.5, sc.DivScalar, 0.5), (lambda t: t**3, ew.PowScalar, 3),
    (lambda t: 2 * t, sc.MulScalar, 2),
]
SHAPES = [(), (3,), (2, 3)]


def _slots(obj) -> dict:
    names = [s for c in type(obj).__mro__ for s in getattr(c, "__slots__", ()) if s != "__weakref__"]
    return {n: getattr(obj, n, "<unset>") for n in names}


def _same_value(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return type(a) is type(b) and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, SavedTensor) and isinstance(b, SavedTensor):
        sa, sb = _slots(a), _slots(b)
        return set(sa) == set(sb) and all(
            _same_value(sa[k], sb[k]) for k in sa if k not in ("_tensor", "_array")
        ) and _same_value(a._peek(), b._peek())
    if isinstance(a, Node) and isinstance(b, Node):
        return type(a) is type(b)
    if isinstance(a, Tensor) and isinstance(b, Tensor):
        return a is b
    return a == b


def _assert_same_record(fast: Tensor, slow: Tensor) -> None:
    tf, ts = _slots(fast), _slots(slow)
    assert set(tf) == set(ts)
    for name in tf:
        assert _same_value(tf[name], ts[name]), f"Tensor.{name}: {tf[name]!r} vs {ts[name]!r}"
    nf, ns = _slots(fast.grad_fn), _slots(slow.grad_fn)
    assert set(nf) == set(ns)
    for name in nf:
        if name == "_seq":
            assert nf[name] < ns[name]  # both from the one creation counter, in order
            continue
        assert _same_value(nf[name], ns[name]), f"Node.{name}: {nf[name]!r} vs {ns[name]!r}"


def _input(shape, requires_grad=True, leaf=False):
    rng = np.random.default_rng(0)
    x = glassgrad.tensor(rng.uniform(0.2, 0.9, size=shape).astype(np.float32),
                         requires_grad=requires_grad)
    return x if leaf or not requires_grad else x * 1.0


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("leaf", [False, True], ids=["non-leaf", "leaf"])
@pytest.mark.parametrize(("name", "prim"), UNARY, ids=[u[0] for u in UNARY])
def test_unary_fast_path_records_what_apply_records(name, prim, shape, leaf):
    x = _input(shape, leaf=leaf)
    _assert_same_record(getattr(x, name)(), prim.apply_unary(x))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize(("op", "prim", "number"), SCALAR, ids=["add", "sub", "rsub", "mul",
                                                                   "div", "pow", "rmul"])
def test_scalar_fast_path_records_what_apply_records(op, prim, number, shape):
    x = _input(shape)
    _assert_same_record(op(x), prim.apply_scalar(x, number))


BINARY = [(lambda a, b: a + b, ew.Add), (lambda a, b: a - b, ew.Sub),
          (lambda a, b: a * b, ew.Mul), (lambda a, b: a / b, ew.Div)]


@pytest.mark.parametrize("shapes", [((), ()), ((3,), (3,)), ((2, 3), (3,)), ((), (2, 3))],
                         ids=str)
@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)], ids=str)
@pytest.mark.parametrize(("op", "prim"), BINARY, ids=["add", "sub", "mul", "div"])
def test_binary_fast_path_records_what_apply_records(op, prim, grads, shapes):
    x = _input(shapes[0], requires_grad=grads[0])
    y = _input(shapes[1], requires_grad=grads[1], leaf=True)
    _assert_same_record(op(x, y), prim.apply_binary(x, y))


def test_fast_path_steps_aside_for_hooks_anomaly_and_no_grad():
    x = _input(())
    with glassgrad.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        y = x.exp()
    assert y.grad_fn._saved[0]._unpack_hook is not None
    with glassgrad.autograd.set_detect_anomaly(True):
        y = x.tanh()
    assert y.grad_fn.source is not None  # the user's line, recorded by the general path
    with glassgrad.no_grad():
        y = x * 2.0
    assert y.grad_fn is None and not y.requires_grad
    with glassgrad.inference_mode():
        y = x * 2.0
    assert glassgrad.is_inference(y) if hasattr(glassgrad, "is_inference") else y.is_inference()


def _chain(m, x):
    y = (x.tanh().exp() ** 2 * 0.25 + 0.1).sigmoid()
    y = (y.sqrt() / 0.7 - 0.2).sin() * y.cos() + y.log() * y.reciprocal()
    y = (1.5 - y).relu() + (y * y).log1p() - y / (y + 1.0)
    return y.sum()


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_array_backward_matches_tensor_backward_and_torch(shape):
    rng = np.random.default_rng(1)
    data = rng.uniform(0.2, 0.9, size=shape)
    grads = []
    for create_graph in (False, True):  # the array loop, then the Tensor loop
        x = glassgrad.tensor(data, requires_grad=True)
        (g,) = glassgrad.autograd.grad(_chain(glassgrad, x), x, create_graph=create_graph)
        grads.append(g.detach().numpy())
    t = torch.tensor(data, requires_grad=True)
    (tg,) = torch.autograd.grad(_chain(torch, t), t)
    np.testing.assert_array_equal(grads[0], grads[1])
    np.testing.assert_allclose(grads[0], tg.numpy(), rtol=1e-12, atol=1e-14)


def test_array_backward_float32_zero_dim_matches_torch():
    x = glassgrad.tensor(0.3, dtype=glassgrad.float32, requires_grad=True)
    t = torch.tensor(0.3, dtype=torch.float32, requires_grad=True)
    for lib, v in ((glassgrad, x), (torch, t)):
        y = v
        for _ in range(50):
            y = y.tanh().exp() ** 2 * 0.25 + 0.1
        y.backward()
        del lib
    assert x.grad.dtype == glassgrad.float32 and x.grad.shape == ()
    assert type(x.grad._array) is np.ndarray  # a NumPy scalar inside never reaches .grad
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-4)


def test_array_backward_keeps_hooks_retain_grad_and_errors():
    x = glassgrad.tensor(0.5, requires_grad=True)
    seen = []
    y = x.exp()
    y.retain_grad()
    y.register_hook(lambda g: seen.append(type(g)) or g * 2)
    z = y.tanh() * 3.0
    z.backward(retain_graph=True)
    assert seen == [Tensor] and isinstance(y.grad, Tensor)
    t = torch.tensor(0.5, requires_grad=True)
    ty = t.exp()
    ty.register_hook(lambda g: g * 2)
    (ty.tanh() * 3.0).backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6)
    z.backward()  # retained: runs again, accumulates
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        z.backward()
    u = x * 1.0
    s = u.sigmoid()
    with glassgrad.no_grad():
        u.mul_(2.0)
    s.backward()  # sigmoid saved its output, not u: fine
    q = x * 1.0
    r = q.log()
    with glassgrad.no_grad():
        q.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        r.backward()


def test_simple_node_with_any_hook_leaves_the_one_read_path():
    # NOTE [Simple nodes]: each way of hooking a node must turn its _np_fast off, or backward's
    # one test would skip the hook; the numbers are torch's
    assert glassgrad.tensor(1.0, requires_grad=True).exp().grad_fn._np_fast is not None
    kinds = {
        "tensor hook": lambda y, log: y.register_hook(lambda g: log.append("t") or g * 2),
        "retain_grad": lambda y, log: y.retain_grad(),
        "prehook": lambda y, log: y.grad_fn.register_prehook(
            lambda go: log.append("pre") or (go[0] * 2,)),
        "post hook": lambda y, log: y.grad_fn.register_hook(
            lambda gi, go: log.append("post") or (gi[0] * 2,)),
    }
    for lib in (glassgrad, torch):
        results = {}
        for kind, hook in kinds.items():
            x = lib.tensor(0.5, requires_grad=True)
            y = x.exp()
            log = []
            hook(y, log)
            (y.tanh() * 3.0).backward()
            results[kind] = (float(x.grad), log, None if y.grad is None else float(y.grad))
            if lib is glassgrad:
                assert y.grad_fn._np_fast is None, kind
        if lib is glassgrad:
            ours = results
    for kind, (grad, log, kept) in results.items():
        assert ours[kind][1] == log and (ours[kind][2] is None) == (kept is None), kind
        np.testing.assert_allclose(ours[kind][0], grad, rtol=1e-6, err_msg=kind)
        if kept is not None:
            np.testing.assert_allclose(ours[kind][2], kept, rtol=1e-6, err_msg=kind)


_EDGE_VALUES = [0.3, -2.5, 0.0, -0.0, 1e-30, 1e30, 3.0e38, float("inf"), float("-inf"), float("nan")]
_NUMBERS = [0.25, 0.1, -3.0, 0.0, -0.0, 1e-300, 3.5e38, float("inf"), float("nan"), 2, 3, -1, 0,
            0.5, 2.0, 2**70, 10**40]


def _same_bits(a, b) -> bool:
    return type(a) is type(b) and a.dtype == b.dtype and (
        np.array_equal(a, b, equal_nan=True) and np.array_equal(np.signbit(a), np.signbit(b)))


def _outcome(fn, *args, **kwargs):
    """(value, number of warnings) or the exception's type: what a user would see (NumPy names
    the kernel in the text: 'square' where the shortcut says 'scalar multiply')."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - compared, not hidden
            return type(exc), None
    return value, len(caught)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_declared_shortcuts_compute_what_forward_computes(dtype):
    """A primitive's ``ufunc``/``scalar_op`` (what the fast path calls instead of forward) gives
    forward's numbers, types and warnings bit for bit, edge values included."""
    from glassgrad.ops.primitive import REGISTRY

    ufuncs = [p for p in REGISTRY.values() if p.ufunc is not None]
    scalar_ops = [p for p in REGISTRY.values() if p.scalar_op is not None]
    assert {p.__name__ for p in ufuncs} >= {"Exp", "Tanh"}
    assert {p.__name__ for p in scalar_ops} == {"AddScalar", "SubScalar", "RSubScalar", "MulScalar",
                                                 "PowScalar"}
    for value in _EDGE_VALUES:
        x = dtype(value)
        for prim in ufuncs:
            got, want = _outcome(prim.ufunc, x), _outcome(prim.forward, np, x)
            assert _same_bits(got[0], want[0]) and got[1] == want[1], (prim.__name__, value)
        for prim in scalar_ops:
            for number in _NUMBERS:
                got = _outcome(prim.scalar_op, x, number)
                sc._CONSTANTS.clear()  # a cached constant warns only when first converted
                arg = x if prim.zero_d_as_scalar else np.asarray(x)  # what the fast path passes
                want = _outcome(prim.forward, np, arg, **{prim.scalar_attr: number})
                if isinstance(want[0], type):
                    assert got[0] is want[0], (prim.__name__, value, number)
                else:
                    assert _same_bits(got[0], want[0]) and got[1] == want[1], (
                        prim.__name__, value, number, got, want)
