"""graph.why_alive names each holder kind of issue 19 in autograd's terms. Each case first checks,
with weakrefs, that the holder really keeps the object alive in glassgrad and in torch (dropping
the holder frees it), so the named holder is the true one."""
import gc
import os
import weakref

import torch

import glassgrad as gg
from glassgrad.autograd.graph import why_alive

_PKG = os.path.dirname(gg.__file__)


def _text(obj, depth=3):
    lines = why_alive(obj, depth=depth)
    assert not any(_PKG in line for line in lines), lines  # glassgrad's own frames are dropped
    assert not any("a closure cell (hook or function)" == line.strip() for line in lines), lines
    return "\n".join(lines)


def _freed_when_dropped(make, drop, lib):
    """make(lib) -> (holder dict, obj); drop(holder) removes the holder; True if obj then dies."""
    holder, obj = make(lib)
    ref = weakref.ref(obj)
    del obj
    gc.collect()
    alive_before = ref() is not None
    drop(holder)
    gc.collect()
    return alive_before and ref() is None


def test_variable_and_list_of_losses():
    w = gg.ones(3, requires_grad=True)
    losses = [(w * 2).sum()]
    text = _text(losses[0].grad_fn)
    assert "grad_fn of a tensor of shape []" in text
    assert "a list of 1 items" in text
    held = (w * 3).sum()
    assert f"variable ['held'] in test_variable_and_list_of_losses ({__file__}:" in _text(held)


def test_hook_closure_names_the_function():
    t = gg.ones(2) * 3

    def make_hook(x):
        return lambda g: x
    hook = make_hook(t)  # noqa: F841
    text = _text(t)
    assert "a closure cell of function test_hook_closure_names_the_function.<locals>.make_hook." \
        f"<locals>.<lambda> ({__file__}:" in text
    assert "a hook or callback" in text


def _saved_make(lib):
    a = lib.ones(3, requires_grad=True)
    c = lib.ones(3) * 4
    y = (a * c).sum()
    return {"y": y}, c


def test_saved_tensor_and_retain_graph_root():
    for lib in (torch, gg):  # the output's graph keeps the saved input; dropping it frees it
        assert _freed_when_dropped(_saved_make, lambda h: h.clear(), lib)
    a = gg.ones(3, requires_grad=True)
    c = gg.ones(3) * 4
    y = (a * c).sum()
    assert "saved for backward by MulBackward0" in _text(c)
    assert "kept by backward(retain_graph=True)" not in _text(c)
    y.backward(retain_graph=True)
    text = _text(c)
    assert "saved for backward by MulBackward0; its graph was kept by backward(retain_graph=True)" \
        f" at {__file__}:" in text
    assert "del the output, or drop retain_graph=True" in text


def _ctx_fn(lib):
    class Keep(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.kept = b
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None
    return Keep


def test_ctx_attribute_by_name():
    def make(lib):
        b = lib.ones(2) * 5
        out = _ctx_fn(lib).apply(lib.ones(2, requires_grad=True), b)
        return {"out": out}, b
    for lib in (torch, gg):
        assert _freed_when_dropped(make, lambda h: h.clear(), lib)
    b = gg.ones(2) * 5
    out = _ctx_fn(gg).apply(gg.ones(2, requires_grad=True), b)
    del b
    text = _text(out.grad_fn.kept)
    assert "attribute ctx.kept of KeepBackward (set in the Function's forward)" in text
    assert "grad_fn of a tensor of shape [2]" in text


def test_create_graph_cycle():
    p = gg.ones(3, requires_grad=True)
    (p * p * p).sum().backward(create_graph=True)
    text = _text(p)
    assert text.startswith("reference cycle made by backward(create_graph=True): parameter -> .grad"
                           " -> grad_fn (")
    assert "-> AccumulateGrad) -> parameter" in text
    assert "zero_grad(set_to_none=True)" in text
    p.grad = None
    assert "reference cycle" not in _text(p)
    q = gg.ones(3, requires_grad=True)
    (q * q).sum().backward()  # first order: .grad has no grad_fn, no cycle
    assert "reference cycle" not in _text(q)
