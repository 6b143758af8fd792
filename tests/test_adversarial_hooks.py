"""Adversarial checks, torch as the oracle: ``grad_fn._saved_<key>`` (per-class descriptors)
and every way to hook a backward (Node's rare fields and its ``_hooked`` flag, NOTE [Node fields])."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import glassgrad
from tests.adversarial_util import LIBS, _both, _flat, _np, _same

# ---------------------------------------------------------------- 1. _saved_<key> descriptors

SAVED_CASES = {  # op -> (fn(x, w), names to probe)
    "exp": lambda x, w: x.exp(),
    "tanh": lambda x, w: x.tanh(),
    "sin": lambda x, w: x.sin(),
    "pow_scalar": lambda x, w: x**3,
    "pow_square": lambda x, w: x**2,
    "pow_tensor": lambda x, w: x.abs() ** w,
    "rpow": lambda x, w: 2**x,
    "mul_tensor": lambda x, w: x * w,
    "mul_scalar": lambda x, w: x * 2.0,
    "add_scalar": lambda x, w: x + 2.0,
    "div": lambda x, w: x / (w + 3),
    "log": lambda x, w: x.abs().log(),
    "sum_dim": lambda x, w: x.sum(0, keepdim=True),
    "mm": lambda x, w: x.reshape(1, 3) @ w.reshape(3, 1),
    "relu": lambda x, w: x.relu(),
    "sigmoid": lambda x, w: x.sigmoid(),
}
PROBE = ("self", "other", "result", "exponent", "alpha", "keepdim", "mat2", "nothing")
SHARED = {  # the _saved_ names torch answers that glassgrad answers too (glassgrad adds its own)
    "exp": {"result"}, "tanh": {"result"}, "sin": {"self"}, "pow_scalar": {"self", "exponent"},
    "pow_square": {"self", "exponent"}, "pow_tensor": {"self", "result"},
    "rpow": {"result"}, "mul_tensor": {"self", "other"}, "mul_scalar": set(),
    "add_scalar": set(), "div": {"self", "other"}, "log": {"self"}, "sum_dim": {"keepdim"},
    "mm": {"self"}, "relu": {"result"}, "sigmoid": {"result"},
}


def _probe(node, key):
    try:
        v = getattr(node, "_saved_" + key)
    except AttributeError:
        return "AttributeError"
    except RuntimeError as e:
        return "freed" if "a second time" in str(e) else f"RuntimeError {e}"
    return _np(v) if hasattr(v, "detach") else v


@pytest.mark.parametrize("case", sorted(SAVED_CASES))
def test_saved_attributes_answered_absent_listed_and_freed(case):
    fn = SAVED_CASES[case]
    data = np.array([0.5, -1.5, 2.5])
    res = {}
    for lib in LIBS:
        x = lib.tensor(data, requires_grad=True)
        w = lib.tensor(np.array([1.5, 2.0, 0.5]), requires_grad=True)
        y = fn(x, w)
        node = y.grad_fn
        before = {k: _probe(node, k) for k in PROBE}
        listed = {k[7:] for k in dir(node) if k.startswith("_saved_") and not k.endswith("_raw")}
        y.sum().backward()
        after = {k: _probe(node, k) for k in PROBE}
        res[lib] = before, listed, after
    (gb, gl, ga), (tb, tl, ta) = res[glassgrad], res[torch]
    for k in SHARED[case]:
        if isinstance(tb[k], np.ndarray):
            np.testing.assert_allclose(gb[k], tb[k], err_msg=k)
        else:
            assert gb[k] == tb[k] or float(gb[k]) == float(tb[k]), k
        assert k in gl and k in tl, k
        # a freed tensor raises torch's error; a number stays readable, as in torch
        t_freed = isinstance(ta[k], str) and ta[k] == "freed"
        assert (isinstance(ga[k], str) and ga[k] == "freed") == t_freed, k
    # everything glassgrad lists it answers, everything else is an AttributeError
    for k in PROBE:
        answered = not (isinstance(gb[k], str) and gb[k] == "AttributeError")
        assert answered == (k in gl), (k, gb[k], gl)
    assert gb["nothing"] == "AttributeError" and not hasattr(y.grad_fn, "_saved_nothing")


def test_dir_lists_only_this_nodes_saved_names():
    # (the node class carries descriptors for every name an op may answer: _saved_x of exp's
    # input, which exp does not save, must not be listed; it was, before the fix in __dir__)
    x = glassgrad.tensor([1.0, 2.0], requires_grad=True)
    node = x.exp().grad_fn
    names = [n for n in dir(node) if n.startswith("_saved_")]
    assert names == ["_saved_result"]
    assert hasattr(type(node), "_saved_x") and not hasattr(node, "_saved_x")
    tnames = [n for n in dir(torch.tensor([1.0], requires_grad=True).exp().grad_fn)
              if n.startswith("_saved_") and not n.endswith("_raw")]
    assert tnames == names


def test_saved_attribute_on_non_primitive_nodes_is_absent():
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        acc = (x * 2).grad_fn.next_functions[0][0]
        assert not hasattr(acc, "_saved_self") and not hasattr(acc, "_saved_result")

        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        node = Double.apply(x).grad_fn
        assert not hasattr(node, "_saved_self")
        assert len(node.saved_tensors) == 1


def test_saved_attribute_fast_and_general_path_same_and_user_attribute_settable():
    for shape in [(), (1,), (3,)]:
        x = glassgrad.ones(shape, requires_grad=True)
        y = x**2
        assert y.grad_fn._saved_exponent == 2
        assert y.grad_fn._saved_self is x or y.grad_fn._saved_self.shape == x.shape
        y.grad_fn.note = "mine"  # torch's nodes take user attributes too
        assert y.grad_fn.note == "mine"
        z = x * 3
        assert z.grad_fn._saved_other == 3 and type(z.grad_fn._saved_other) is int
        y.sum().backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            _ = y.grad_fn._saved_self
        assert y.grad_fn._saved_exponent == 2  # a number stays readable, as in torch


# ---------------------------------------------------------------- 2. hooks and the _hooked flag


def _hook_log(lib, scenario):
    """Run a hook scenario; the gradients and the ordered log of hook calls."""
    log = []
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    w = lib.tensor(0.5, requires_grad=True)
    a = x * w
    b = a.tanh()
    c = (b * 2.0).sum()
    scenario(lib, log, x, w, a, b, c)
    return [x.grad, w.grad, log]


def _rec(log, tag, ret=None):
    def hook(*args):
        flat = []
        for v in args:
            if isinstance(v, (tuple, list)):
                flat.append([None if t is None else _np(t).tolist() for t in v])
            elif v is None:
                flat.append(None)
            else:
                flat.append(_np(v).tolist())
        log.append((tag, flat))
        return ret(*args) if ret is not None else None

    return hook


def _sc_tensor_hooks(lib, log, x, w, a, b, c):
    x.register_hook(_rec(log, "leaf"))
    b.register_hook(_rec(log, "b1"))
    b.retain_grad()
    b.register_hook(_rec(log, "b2", lambda g: g * 3))  # retain_grad sees the changed grad
    a.register_hook(_rec(log, "a"))
    c.backward()
    log.append(("b.grad", _np(b.grad).tolist()))


def _sc_node_hooks(lib, log, x, w, a, b, c):
    b.grad_fn.register_prehook(_rec(log, "pre"))
    b.grad_fn.register_hook(_rec(log, "post"))
    b.grad_fn.register_hook(_rec(log, "post_b", lambda gi, go: (gi[0] * 10,)))
    x.register_post_accumulate_grad_hook(lambda t: log.append(("acc", _np(t.grad).tolist())))
    c.backward()


def _sc_removed_then_readded(lib, log, x, w, a, b, c):
    h1 = b.register_hook(_rec(log, "gone", lambda g: g * 100))
    h2 = b.grad_fn.register_prehook(_rec(log, "gone_pre"))
    h3 = x.register_hook(_rec(log, "gone_leaf"))
    h1.remove()
    h2.remove()
    h3.remove()
    c.backward(retain_graph=True)
    log.append(("first", _np(x.grad).tolist()))
    b.register_hook(_rec(log, "again", lambda g: g * 2))
    c.backward()


def _sc_between_backwards(lib, log, x, w, a, b, c):
    c.backward(retain_graph=True)
    log.append(("first", _np(x.grad).tolist(), _np(w.grad).tolist()))
    a.register_hook(_rec(log, "a_late", lambda g: -g))
    a.retain_grad()
    w.register_hook(_rec(log, "w_late"))
    c.backward(retain_graph=True)
    log.append(("a.grad", _np(a.grad).tolist()))
    c.backward()  # the hooks run again on a third pass


def _sc_retain_only(lib, log, x, w, a, b, c):
    a.retain_grad()
    b.retain_grad()
    c.retain_grad()
    c.backward()
    log.append(("retained", [_np(t.grad).tolist() for t in (a, b, c)]))


def _sc_autograd_grad_inputs(lib, log, x, w, a, b, c):
    b.register_hook(_rec(log, "b"))
    a.retain_grad()
    (gw, gb) = lib.autograd.grad(c, (w, b), retain_graph=True)
    log.append(("grad", _np(gw).tolist(), _np(gb).tolist(), a.grad is None))
    (ga,) = lib.autograd.grad(c, (a,))
    log.append(("grad_a", _np(ga).tolist()))


HOOK_SCENARIOS = {
    "tensor_hooks": _sc_tensor_hooks,
    "node_hooks": _sc_node_hooks,
    "removed_then_readded": _sc_removed_then_readded,
    "between_backwards": _sc_between_backwards,
    "retain_only": _sc_retain_only,
    "autograd_grad_inputs": _sc_autograd_grad_inputs,
}


@pytest.mark.parametrize("name", sorted(HOOK_SCENARIOS))
def test_hooks_calls_order_and_gradients_match_torch(name):
    ours, theirs = _both(lambda lib: _hook_log(lib, HOOK_SCENARIOS[name]))
    _same(ours[:2], theirs[:2], name)
    assert len(ours[2]) == len(theirs[2]), (ours[2], theirs[2])
    for o, t in zip(ours[2], theirs[2]):
        assert o[0] == t[0], (ours[2], theirs[2])
        np.testing.assert_allclose(_flat(o[1:]), _flat(t[1:]), rtol=1e-6, err_msg=str(o[0]))




def test_hooked_flag_is_per_node_and_class_defaults_untouched():
    x = glassgrad.tensor(1.5, requires_grad=True)
    y = x.exp()
    z = x.exp()
    assert not y.grad_fn._hooked and "_hooked" not in vars(y.grad_fn)
    y.register_hook(lambda g: g * 2)
    assert y.grad_fn._hooked and not z.grad_fn._hooked
    assert type(y.grad_fn)._hooked is False and type(y.grad_fn)._tensor_hooks is None
    (y + z).backward()
    np.testing.assert_allclose(float(x.grad), 3 * math.exp(1.5), rtol=1e-6)


def test_module_full_backward_hook_and_saved_tensors_hooks_match_torch():
    def run(lib):
        log = []
        lib.manual_seed(0)
        lin = lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            lin.weight.copy_(lib.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], dtype=lib.float64))
            lin.bias.copy_(lib.tensor([0.05, -0.05], dtype=lib.float64))
        lin.register_full_backward_pre_hook(lambda m, go: log.append(("pre", _np(go[0]).tolist())))
        lin.register_full_backward_hook(
            lambda m, gi, go: log.append(("full", _np(gi[0]).tolist(), _np(go[0]).tolist())))
        x = lib.tensor([[1.0, 2.0, -1.0]], dtype=lib.float64, requires_grad=True)
        packed = []

        def pack(t):
            packed.append(tuple(t.shape))
            return t * 1

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = lin(x).tanh()
            s = (x**2).sum() + (y * 0.5).sum() + (y.exp() ** 2).sum()
        s.backward()
        return [x.grad, lin.weight.grad, lin.bias.grad], log, sorted(packed)

    (og, olog, op), (tg, tlog, tp) = _both(run)
    _same(og, tg)
    assert [e[0] for e in olog] == [e[0] for e in tlog]
    np.testing.assert_allclose(_flat([e[1:] for e in olog]), _flat([e[1:] for e in tlog]))
    assert len(op) > 0 and len(tp) > 0


def test_saved_tensors_hooks_see_the_fast_path_ops_saves_like_torch():
    # under saved_tensors_hooks the fast path stays off: pack runs once per saved tensor
    def run(lib):
        out = []
        for shape in [(), (2,)]:
            x = lib.full(shape, 0.5, dtype=lib.float64, requires_grad=True)
            for op in (lambda t: t.exp(), lambda t: t.sin(), lambda t: t**2, lambda t: t**3,
                       lambda t: t * 2.0, lambda t: 1 - t, lambda t: t.tanh()):
                packed = []

                def pack(t, packed=packed):
                    packed.append(tuple(t.shape))
                    return t.clone()

                with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t * 1):
                    y = op(x)
                y.sum().backward()
                out.append((len(packed), x.grad.clone()))
                x.grad = None
        return out

    ours, theirs = _both(run)
    _same(ours, theirs)


def test_node_post_hook_sees_reduced_grad_inputs_like_torch():
    def run(lib):
        seen = []
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        w = lib.tensor(0.5, requires_grad=True)
        a = x * w
        a.grad_fn.register_hook(lambda gi, go: seen.append([tuple(g.shape) for g in gi]))
        a.sum().backward()
        return seen

    ours, theirs = _both(run)
    assert ours == [list(s) for s in theirs]


def test_hooks_on_0d_fast_path_chain_get_tensors_and_match_torch():
    # 0-d gradients travel as NumPy scalars in the array engine: a hook must still get a Tensor
    # (ndarray inside) it can clone, modify in place and read; AccumulateGrad's hooks too
    def run(lib):
        seen = []
        x = lib.tensor(0.5, requires_grad=True)
        y = x.tanh()
        z = y * 3.0
        w = z**2 + (2 - y).exp()

        def on_z(g):
            g2 = g.clone()
            g2.add_(1)
            seen.append(("z", tuple(g.shape), float(g), float(g2), g.numpy().shape))
            return g * 2

        z.register_hook(on_z)
        y.retain_grad()
        acc = y.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda go: seen.append(("acc_pre", float(go[0]))))
        acc.register_hook(lambda gi, go: seen.append(("acc_post", len(gi), float(go[0]))))
        x.register_post_accumulate_grad_hook(lambda t: seen.append(("post_acc", float(t.grad))))
        w.backward()
        return [x.grad, y.grad], seen

    _same_run(run, rtol=1e-6)


def test_hooks_registered_during_backward_and_reentrant_backward_match_torch():
    def run(lib):
        log = []
        x = lib.tensor([0.5, -1.0], dtype=lib.float64, requires_grad=True)
        s = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
        a = x.exp()
        b = (a * s).sin()
        c = (b**2).sum()

        def late(g):
            log.append(("late", _np(g).tolist()))
            return g + 1

        def on_b(g):
            a.register_hook(late)  # a's node has not run yet
            # a reentrant backward on a separate graph, from inside the hook
            with lib.enable_grad():  # (hooks run with grad mode off, in both libraries)
                u = lib.tensor(1.5, dtype=lib.float64, requires_grad=True)
                (gu,) = lib.autograd.grad((u**3).exp(), u)
            log.append(("reentrant", float(gu)))
            return g * 0.5

        b.register_hook(on_b)
        c.backward()
        return [x.grad, s.grad], log

    _same_run(run, rtol=1e-10)


def _same_run(run, rtol):
    """``run(lib) -> (gradients, hook log)`` on both libraries: same gradients, same hook calls in
    the same order with the same numbers."""
    (og, olog), (tg, tlog) = _both(run)
    _same(og, tg, rtol=rtol)
    assert [e[0] for e in olog] == [e[0] for e in tlog]
    np.testing.assert_allclose(_flat([e[1:] for e in olog]), _flat([e[1:] for e in tlog]),
                               rtol=rtol)
