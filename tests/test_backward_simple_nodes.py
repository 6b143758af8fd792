"""Adversarial checks of array backward's one read for simple nodes (NOTE [Simple nodes] in
autograd/engine_arrays.py: ``_np_fast``, ``Node._mark_hooked``, ``_general``, ZERO_D_META), torch
as the oracle: each scenario runs with create_graph False (array backward) and True (Tensor
backward) on both; values, gradients, hook calls (order, gradients) and error phrases agree.

(Named to run after test_autograd_basics: torch warns about backward(create_graph=True) once per
process, and that file checks the warning against glassgrad's.)"""

from __future__ import annotations

import math
from itertools import product

import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.autograd import engine_arrays
from tests.adversarial_util import _np


def tl(t):
    return None if t is None else _np(t).tolist()


def _err(e, *phrases):
    return [p for p in phrases if p in str(e)] or type(e).__name__


def _close(a, b, what=""):
    if isinstance(b, (list, tuple)):
        assert isinstance(a, (list, tuple)) and len(a) == len(b), f"{what}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{what}[{i}]")
    elif isinstance(b, float):  # (float32 results: their last bits differ from torch's)
        assert isinstance(a, float) and (math.isnan(a) and math.isnan(b) or math.isclose(
            a, b, rel_tol=3e-5, abs_tol=1e-6)), f"{what}: {a!r} vs {b!r}"
    else:  # (a dtype's name: torch.float32 for glassgrad.float32)
        assert (a.replace("glassgrad", "torch") if isinstance(a, str) else a) == b, f"{what}"


def _vec(lib, shape=(2,), dtype=np.float64, v=0.5):
    a = np.full(shape, v) * ([1, -2] if shape == (2,) else 1)
    return lib.tensor(a.astype(dtype), requires_grad=True)


# ------------------------------------------------------------------ scenarios (lib, cg, log)
def sc_hooks_registered_during_backward(lib, cg, log):
    c = (b := (a := (x := _vec(lib)).tanh()) * 3.0).exp()
    def on_c(g):  # a's and b's nodes have not run yet: both changes apply this pass
        log.append(("c", tl(g)))
        a.retain_grad()
        b.register_hook(lambda g: log.append(("b", tl(g))) or g * 2)
    def pre_c(go):
        log.append(("pre_c", tl(go[0])))
        a.grad_fn.register_hook(lambda gi, go: log.append(("post_a", tl(gi[0]), tl(go[0]))))
        a.grad_fn.register_prehook(lambda go: log.append(("pre_a", tl(go[0]))))
    c.register_hook(on_c)
    c.grad_fn.register_prehook(pre_c)
    (c**2).sum().backward(create_graph=cg)
    return tl(x.grad), tl(a.grad)


def sc_hooks_registered_on_nodes_already_run_and_removed_hooks(lib, cg, log):
    c = (b := (a := (x := _vec(lib, ())).exp()) * 2.0) + 1.0
    def on_a(g):  # c's and b's nodes ran: nothing this pass, everything on the second
        log.append(("a", tl(g)))
        c.register_hook(lambda g: log.append(("c_late", tl(g))))
        b.retain_grad()
    a.register_hook(on_a)
    for h in [b.register_hook(lambda g: g * 100), a.register_hook(lambda g: g * 3),
              b.grad_fn.register_prehook(lambda go: (go[0] * 7,)),
              b.grad_fn.register_hook(lambda gi, go: (gi[0] * 5,))]:
        h.remove()
    c.backward(retain_graph=True, create_graph=cg)
    log.append(("b.grad", tl(b.grad)))
    c.backward(create_graph=cg)
    (y := x + 1.0).register_hook(lambda g: log.append(("old", tl(g))))  # stays with the old value
    y.mul_(2.0).register_hook(lambda g: log.append(("new", tl(g))))  # after an in-place write
    (y * 3.0).backward(create_graph=cg)
    return tl(x.grad), tl(b.grad)


def sc_autograd_grad_and_backward_inputs_of_intermediates(lib, cg, log):
    x = _vec(lib, (3,))
    v = (w := (z := (y := x.tanh()) * 2.0) ** 3).exp().sum()
    out = list(lib.autograd.grad(v, (z, y, w, x), retain_graph=True, create_graph=cg))
    out += lib.autograd.grad(v, (y, y, x), retain_graph=True, create_graph=cg)
    out += lib.autograd.grad(v, (w,), create_graph=cg)  # the node next to the root only
    p, q = (x[:2] * 2.0).split(1)
    out += lib.autograd.grad((p.exp() * q.tanh() + q**2).sum(), (q, p, x), create_graph=cg)
    u, e = z.tanh(), x.exp().sum()
    out += lib.autograd.grad(e, (z, x, u), allow_unused=True, retain_graph=True, create_graph=cg)
    out += lib.autograd.grad(e, (z, x), allow_unused=True, materialize_grads=True,
                             retain_graph=True, create_graph=cg)
    try:
        lib.autograd.grad(e, (u,), create_graph=cg)
    except RuntimeError as exc:
        log.append(_err(exc, "appears to not have been used in the graph"))
    w = ((z := (y := x.exp()) * 3.0) ** 2).sum()  # backward(inputs=) of intermediates
    w.backward(inputs=[y, x], retain_graph=True, create_graph=cg)
    w.backward(inputs=[z], create_graph=cg)
    return [tl(t) for t in out + [x.grad, y.grad, z.grad]]


def sc_zero_d_float32_float64_mixes_and_broadcasting(lib, cg, log):
    out = []
    for d1, d2 in ((np.float32, np.float64), (np.float64, np.float32), (np.float32, np.float32)):
        a, b, v = _vec(lib, (), d1), _vec(lib, (), d2, 1.5), _vec(lib, (3,), d1, 2.0)
        y = (a * b).exp() + (v * b).sum() + (v * a).tanh().sum() + (a / b) ** 2 \
            + ((v + a) * b).sum() + (b**3) * 2.0 + a**3 + (a - b).exp()
        y.backward(create_graph=cg)
        out.append([(tl(t.grad), str(t.grad.dtype)) for t in (a, b, v)] + [str(y.dtype)])
    return out


def sc_hooks_give_0d_gradients_as_arrays_and_change_them_in_place(lib, cg, log):
    out = []
    for shape in ((), (2,)):
        z = (y := (x := _vec(lib, shape, np.float32)).tanh()) * 2.0
        def h(g):
            with lib.no_grad():
                g.mul_(3)  # in place, returns None: the changed gradient flows on
        z.register_hook(lambda g, shape=shape: g.clone().reshape(shape) * 2)
        y.register_hook(h)
        x.register_hook(h)
        y.register_hook(lambda g: log.append((str(g.dtype), tuple(g.shape), tl(g))))
        z.exp().sum().backward(create_graph=cg)
        out.append((tl(x.grad), str(x.grad.dtype)))
    return out


def sc_accumulation_through_many_simple_nodes_and_two_calls(lib, cg, log):
    x, s = _vec(lib), _vec(lib, (), v=0.3)
    y = x.exp() + x * 2.0 + x**2 + x.tanh() + (x + 1.0) * s + s.exp() + s * 3.0 + s**2 - s
    y.sum().backward(retain_graph=True, create_graph=cg)
    g1 = x.grad
    y.sum().backward(create_graph=cg)  # (g1: first order adds into it in place, as torch)
    return tl(x.grad), tl(s.grad), tl(g1)


def sc_gradients_kept_by_hooks_and_seeds_are_not_aliased(lib, cg, log):
    out = []
    for shape in ((), (2,)):
        kept = []
        u = -((y := (x := _vec(lib, shape)) + 1.0) * 1.0)
        for t in (y, u, x):
            t.register_hook(kept.append)
        y.grad_fn.register_hook(lambda gi, go, kept=kept: kept.extend([gi[0], go[0]]))
        u.grad_fn.register_prehook(lambda go, kept=kept: kept.append(go[0]))
        seed = lib.full(shape, 2.0, dtype=lib.float64)
        u.backward(seed, retain_graph=True)
        u.backward(seed)
        with lib.no_grad():
            for k in kept:
                k.mul_(100)
        out.append((tl(x.grad), [tl(k) for k in kept], tl(seed)))
    return out


def sc_exponents_int_float_and_dtypes(lib, cg, log):
    out = []
    for e, shape, dt in product((0, 1, 2, 3, -1, -2, 0.5, 2.0), ((), (2,)), (np.float32, float)):
        ((x := _vec(lib, shape, dt, 1.7)) ** e * 2.0).sum().backward(create_graph=cg)
        out.append((tl(x.grad), str(x.grad.dtype)))
    return out


def sc_no_grad_in_hooks_and_multi_grad_hooks(lib, cg, log):
    a, b, c = (x := _vec(lib)).exp(), x * 2.0, x.tanh()
    def h(g):
        with lib.no_grad():
            d = g * 2
        log.append((tl(d), d.requires_grad, lib.is_grad_enabled()))
        return g * 0.5
    c.register_hook(h)
    reg = lib.autograd.graph.register_multi_grad_hook
    reg((a, b, c), lambda gs: log.append(("all", [tl(g) for g in gs])))
    reg((a, c), lambda g: log.append(("any", tl(g))), mode="any")
    (a.sum() + (b**2).sum() + c.sum()).backward(create_graph=cg)
    return tl(x.grad), lib.is_grad_enabled()


def sc_0d_grads_from_numpy_scalars_stay_mutable(lib, cg, log):
    out = []
    for dt in (np.float32, np.float64):
        (y := (x := _vec(lib, (), dt)).exp()).retain_grad()
        (y * 2.0).tanh().backward()
        x.grad.add_(1)
        y.grad.mul_(3)
        x.grad.numpy()[()] += 100
        (x * 3.0).exp().backward()
        (g,) = lib.autograd.grad(x.tanh() ** 2, x)
        g.add_(1)
        out.append((tl(x.grad), tl(y.grad), tl(g), str(x.grad.dtype)))
    return out


def sc_data_and_views_of_saved_values(lib, cg, log):
    out = []
    for shape in ((), (2,)):
        y, z, u = (x := _vec(lib, shape)).exp(), x**2, x.tanh()
        y.data.mul_(2)  # .data: no version bump, backward reads the changed values
        u.data = lib.full(shape, 0.25, dtype=lib.float64)
        x.data = lib.full(shape, 3.0, dtype=lib.float64)
        (y + z + u).sum().backward(create_graph=cg)
        out.append(tl(x.grad))
    for dt, k in product((lib.float32, lib.float64), (0, 1)):  # saved: a 0-d view, written
        c = lib.tensor([0.5, 2.0], dtype=dt, requires_grad=True).clone()
        y = c[k] ** 2 + c[k].log() + c[k] * 3.0 if k else c[k].exp()
        c[k].add_(1)
        try:
            y.backward(create_graph=cg)
        except RuntimeError as e:
            out.append(_err(e, "modified by an inplace operation"))
    return out


def sc_several_roots_seed_dtypes_and_post_hooks_dropping_grads(lib, cg, log):
    x, s = _vec(lib), _vec(lib, ())
    y, t, f = x * 2.0, s.tanh(), lib.full
    lib.autograd.backward([y, y.exp(), y, t * 3.0, t], [f((2,), 1.0), f((2,), 2.0), f((2,), 3.0),
                                                       f((), 1.0), f((), 5.0)], create_graph=cg)
    out = [tl(x.grad), tl(s.grad)]
    y = (x32 := _vec(lib, (), np.float32)).exp() * 2.0
    for seed in (lib.tensor(2.0, dtype=lib.float64), lib.tensor([2.0]), lib.tensor(2.0)):
        try:
            (g,) = lib.autograd.grad(y, x32, seed, retain_graph=True, create_graph=cg)
            out.append((tl(g), str(g.dtype)))
        except RuntimeError as e:
            out.append(_err(e, "Mismatch in shape"))
    for shape in ((), (2,)):
        z = (y := (x := _vec(lib, shape)).exp()) * 2.0
        z.grad_fn.register_hook(lambda gi, go: (None, None))
        y.grad_fn.register_hook(lambda gi, go: (None,))
        (z + x**2 + y).sum().backward(create_graph=cg)
        out.append(tl(x.grad))
    return out


SCENARIOS = {k[3:]: f for k, f in list(globals().items()) if k.startswith("sc_")}


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("mode", ["arrays", "create_graph", "arrays_strict_off"])
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_matches_torch(name, mode, monkeypatch):
    # the suite runs with STRICT on; users run with it off (an array rule's failure falls back)
    monkeypatch.setattr(engine_arrays, "STRICT", mode != "arrays_strict_off")
    fn, cg = SCENARIOS[name], mode == "create_graph"
    _close([fn(glassgrad, cg, log := []), log], [fn(torch, cg, log := []), log], name)


def test_hook_registered_during_backward_takes_the_node_off_the_one_read_path(monkeypatch):
    general, real = [], engine_arrays._general
    monkeypatch.setattr(engine_arrays, "_general",
                        lambda eng, node, *a: general.append(node.name()) or real(eng, node, *a))
    grads = []
    for lib in (glassgrad, torch):
        c = (b := (a := (x := _vec(lib)).tanh()) * 3.0).exp()
        c.register_hook(lambda g, b=b: b.register_hook(lambda g: g * 2) and None)
        if lib is glassgrad:
            node_a, fast = a.grad_fn, [a.grad_fn._np_fast, b.grad_fn._np_fast]
            c.register_hook(lambda g, b=b, fast=fast: fast.append(b.grad_fn._np_fast))
        c.sum().backward()
        grads.append(x.grad)
    # b's node left the one read when its hook came, during backward; a's never did
    assert None not in fast[:2] and fast[2] is None and node_a._np_fast is fast[0]
    assert "MulBackward0" in general and "TanhBackward0" not in general
    np.testing.assert_allclose(_np(grads[0]), _np(grads[1]), rtol=1e-6)


def test_float64_seed_of_a_0d_float32_chain_gives_float32_gradients_on_both_paths():
    # torch casts a seed to its root's dtype, so no float64 reaches the 0-d float32 chain (nor
    # can a hook bring one: test_hooks_changing_the_dtype_are_refused); ZERO_D_META's shortcut
    # still tests the gradient's type, for any rule that returns another one
    def run(lib, cg):
        seen = []
        y = (x := _vec(lib, (), np.float32)).exp()
        y.register_hook(lambda g: seen.append(str(g.dtype).split(".")[-1]))
        (y * 2.0).tanh().backward(lib.tensor(1.5, dtype=lib.float64), create_graph=cg)
        return seen, str(x.grad.dtype).split(".")[-1], tl(x.grad)
    for cg in (False, True):
        _close(run(glassgrad, cg), run(torch, cg), f"cg={cg}")


# ------------------------------------------------------------ second backward, in-place writes
OPS = {"mul_number": lambda t: t * 2.0, "add_number": lambda t: t + 1.0, "neg": lambda t: -t,
       "rsub": lambda t: 1.0 - t, "div_number": lambda t: t / 2.0, "exp": lambda t: t.exp(),
       "tanh": lambda t: t.tanh(), "pow2": lambda t: t**2, "pow3": lambda t: t**3,
       "sin": lambda t: t.sin(), "relu": lambda t: t.relu(), "abs": lambda t: t.abs(),
       "clone": lambda t: t.clone(), "view": lambda t: t.view(-1)}


def _second_backward(lib, op, shape, hooked, cg):
    y = OPS[op](x := _vec(lib, shape))
    if hooked:  # the general path (_general) instead of the one read
        y.register_hook(lambda g: g * 1)
    y.backward(lib.ones_like(y), create_graph=cg)
    try:
        y.backward(lib.ones_like(y), create_graph=cg)
    except RuntimeError as e:
        return _err(e, "Trying to backward through the graph a second time")
    return tl(x.grad)


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("hooked", [False, True])
@pytest.mark.parametrize("shape", [(), (2,)])
@pytest.mark.parametrize("op", sorted(OPS))
def test_second_backward_raises_exactly_where_torch_does(op, shape, hooked):
    # torch raises only for a node that saved a tensor (x * 2.0 saves the number as one)
    for cg in (False, True):
        _close(_second_backward(glassgrad, op, shape, hooked, cg),
               _second_backward(torch, op, shape, hooked, cg), f"{op} cg={cg}")


IN_PLACE = {"exp": lambda t: t.exp(), "tanh": lambda t: t.tanh(), "sigmoid": lambda t: t.sigmoid(),
            "sqrt": lambda t: t.sqrt(), "relu": lambda t: t.relu(), "pow2": lambda t: t**2,
            "pow3": lambda t: t**3, "pow2.5": lambda t: t**2.5, "log": lambda t: t.log(),
            "sin": lambda t: t.sin(), "mul_self": lambda t: t * t, "mul_number": lambda t: t * 2.0}


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("write", ["output", "input"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (2,)])
def test_in_place_write_of_a_saved_value_raises_like_torch(write, dtype, shape):
    def run(lib, cg):
        out = []
        for op, f in IN_PLACE.items():
            y = f(c := (x := _vec(lib, shape, dtype, 0.7)).abs().clone())
            (y if write == "output" else c).add_(1)
            try:
                y.sum().backward(create_graph=cg)
                out.append((op, tl(x.grad)))
            except RuntimeError as e:
                out.append((op, _err(e, "modified by an inplace operation")))
        return out
    for cg in (False, True):
        _close(run(glassgrad, cg), run(torch, cg), f"cg={cg}")


# ------------------------------------------------ differences the helper found (fixed since)
def test_autograd_grad_captures_inputs_in_pytorchs_order():
    # NOTE [Captures] in engine.py: an input whose node runs on (an input lies beyond it) is
    # captured before its tensor hooks; one whose node stops there after them, and that node's
    # own pre-hooks do not run
    def run(lib, cg):
        log = []
        (y := (x := _vec(lib)).exp()).register_hook(lambda g: g + 1)
        y.grad_fn.register_prehook(lambda go: log.append("pre"))
        out = [tl(t) for t in lib.autograd.grad((y * 3.0).tanh().sum(), (y, x),
                                                 retain_graph=True, create_graph=cg)
               + lib.autograd.grad((y * 3.0).sum(), (y,), create_graph=cg)]
        return out, log
    for cg in (False, True):
        _close(run(glassgrad, cg), run(torch, cg), f"cg={cg}")


def test_retain_grad_follows_an_in_place_write():
    # torch moves retain_grad to the tensor's new grad_fn (graph.move_retain); a tensor hook
    # stays with the value it was registered on
    def run(lib):
        y, v, w = (x := _vec(lib)) + 1.0, x * 2.0, x * 3.0
        for t in (y, v, w):
            t.retain_grad()
        seen = []
        y.register_hook(lambda g: seen.append(tl(g)))
        y.mul_(2.0)
        v[0].mul_(2.0)  # through a view: the base is rebased
        w2 = w[1:]
        w2.retain_grad()
        w.mul_(3.0)  # the base: its live view takes a new grad_fn too
        ((y + v) * 3.0 + (w2**2).sum()).sum().backward()
        return tl(x.grad), tl(y.grad), tl(v.grad), tl(w.grad), tl(w2.grad), seen
    for lib_out in zip(run(glassgrad), run(torch)):
        _close(*lib_out, "retain_grad after in-place")


def test_prehook_returning_no_gradient_runs_no_rule():
    # torch: a node pre-hook returning (None,) leaves the node's inputs without a gradient from
    # it (its post hooks see None), on the array and the Tensor backward alike
    def run(lib, cg):
        log = []
        y = (x := _vec(lib)).exp()
        y.grad_fn.register_prehook(lambda go: (None,))
        y.grad_fn.register_hook(lambda gi, go: log.append((gi[0] is None, go[0] is None)))
        (y * 2.0 + x**2).sum().backward(create_graph=cg)
        return tl(x.grad), log
    for cg in (False, True):
        _close(run(glassgrad, cg), run(torch, cg), f"cg={cg}")


def test_hooks_changing_the_dtype_are_refused():
    # torch: "hook '<lambda>' has changed the type of value" for a tensor, pre or post hook
    def run(lib):
        log = []
        for k in range(3):
            y = (x := _vec(lib, dtype=np.float32)).exp()
            [lambda y=y: y.register_hook(lambda g: g.double()),
             lambda y=y: y.grad_fn.register_prehook(lambda go: (go[0].double(),)),
             lambda y=y: y.grad_fn.register_hook(lambda gi, go: (gi[0].double(),))][k]()
            try:
                (y * 2.0).sum().backward()
                log.append(tl(x.grad))
            except RuntimeError as e:
                log.append(_err(e, "has changed the type of value"))
        return log
    _close(run(glassgrad), run(torch), "dtype-changing hooks")
