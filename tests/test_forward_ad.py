"""``torch.autograd.forward_ad`` on glassgrad against torch: levels, make_dual/unpack_dual and
their errors, tangents through views, in-place writes and no_grad, custom ``Function.jvp``."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as torch_fwad

import glassgrad
from glassgrad.autograd import forward_ad as fwad
from tests.oracle import assert_close

LIBS = ((glassgrad, fwad), (torch, torch_fwad))


def _data(lib, *shape, seed=0):
    return lib.from_numpy(np.random.default_rng(seed).standard_normal(shape))


def _both(fn):
    """``fn(lib, ad)`` on glassgrad and torch; returns (ours, theirs)."""
    return [fn(lib, ad) for lib, ad in LIBS]


def _raises(fn):
    """The exception type and message ``fn`` raises (the message up to glassgrad's own note)."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - compared with torch's below
        return type(e).__name__, str(e).split("\nglassgrad:")[0].replace("glassgrad.", "torch.")
    return None


ERRORS = {
    "no level": lambda lib, ad: ad.make_dual(_data(lib, 3), _data(lib, 3)),
    "exit without level": lambda lib, ad: ad.exit_dual_level(),
    "size": lambda lib, ad: _in_level(ad, lambda: ad.make_dual(_data(lib, 3), _data(lib, 2))),
    "int tangent": lambda lib, ad: _in_level(
        ad, lambda: ad.make_dual(_data(lib, 3), lib.ones(3, dtype=lib.int64))),
    "int primal": lambda lib, ad: _in_level(
        ad, lambda: ad.make_dual(lib.ones(3, dtype=lib.int64), _data(lib, 3))),
    "bad level": lambda lib, ad: _in_level(
        ad, lambda: ad.make_dual(_data(lib, 3), _data(lib, 3), level=5)),
    "nested": lambda lib, ad: _in_level(ad, lambda: _in_level(ad, lambda: None)),
    "already dual": lambda lib, ad: _in_level(
        ad, lambda: ad.make_dual(ad.make_dual(_data(lib, 3), _data(lib, 3)), _data(lib, 3))),
    "exit another level": lambda lib, ad: _in_level(ad, lambda: ad.exit_dual_level(level=3)),
    "dual tangent": lambda lib, ad: _in_level(
        ad, lambda: ad.make_dual(_data(lib, 2), ad.make_dual(_data(lib, 2), _data(lib, 2)))),
}


def _in_level(ad, fn):
    with ad.dual_level():
        return fn()


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name):
    ours, theirs = _both(lambda lib, ad: _raises(lambda: ERRORS[name](lib, ad)))
    assert theirs is not None and ours == theirs
    assert fwad._current_level == -1


def test_levels_unpack_and_tangent_identity():
    for lib, ad in LIBS:
        x, v = _data(lib, 3), _data(lib, 3, seed=1)
        assert ad.enter_dual_level() == 0
        d = ad.make_dual(x, v)
        u = ad.unpack_dual(d)
        assert type(u).__name__ == "UnpackedDualTensor" and u._fields == ("primal", "tangent")
        assert u.tangent is v and u.primal is not d and d is not x
        assert ad.unpack_dual(x).tangent is None  # make_dual's result is dual, not its input
        assert ad.unpack_dual(d.detach()).tangent is None
        ad.exit_dual_level()
        assert ad.unpack_dual(d).tangent is None  # dropped with the level
        assert ad.unpack_dual(d).primal is d


def test_print_shows_tangent():
    def run(lib, ad):
        with ad.dual_level():
            a = _data(lib, 3)
            b = ad.make_dual(a, _data(lib, 3, seed=1))
            p, t = ad.unpack_dual(b)
            return ["tangent=" in str(x) for x in (a, b, p, t)]

    ours, theirs = _both(run)
    assert ours == theirs == [False, True, False, False]


def _views_without_grad(lib, ad):
    """Views of a dual tensor that does not require grad share its tangent (PyTorch's
    test_view_inplace_differentiable_views)."""
    foo, bar = _data(lib, 4), lib.ones(4, dtype=lib.float64)
    with ad.dual_level():
        dual = ad.make_dual(foo, bar)
        view = dual.narrow(0, 0, 2)
        view *= 2
        dual[3] = dual[2] * 5
        baz = _data(lib, 4, seed=2)
        baz += dual
        return [ad.unpack_dual(t).tangent for t in (foo, dual, view, baz)]


def _program(lib, ad):
    """Tangents of a small program touching views, in-place writes and no_grad."""
    x = _data(lib, 3, 4).requires_grad_()
    v = _data(lib, 3, 4, seed=1)
    out = []
    with ad.dual_level():
        d = ad.make_dual(x, v)
        y = d * 1
        y[1:].mul_(d[1:].sin())  # in-place through a view reaches y's tangent
        y.t()[0] = d[:, 1] ** 2  # setitem through a transposed view
        y.diagonal().add_(1.5)
        w = y.view(12)
        w[3:5].copy_(d[0, :2].exp())
        with lib.no_grad():  # grad mode does not affect forward AD
            z = (y.tanh() @ d.t()).sum(0)
        m, idx = y.max(1)
        c = y.clone()
        c.index_add_(0, lib.tensor([0, 0]), d[:2] * 3)
        for t in (y, w, w[2:], z, m, idx, c):
            out.append(ad.unpack_dual(t).tangent)
        out.append(y.detach())
    return out


@pytest.mark.parametrize("program", [_program, _views_without_grad])
def test_program_tangents_match_torch(program):
    ours, theirs = _both(program)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert_close(a, b, 1e-10, 1e-10, what=f"tangent {k}")


class _Custom:
    @staticmethod
    def make(lib, ad, kind):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, k):
                ctx.inside = ad.unpack_dual(a).tangent is None
                ctx.save_for_forward(a, b)
                ctx.k = k
                return a * b * k, a + b

            @staticmethod
            def backward(ctx, g1, g2):
                return None, None, None

            @staticmethod
            def jvp(ctx, ta, tb, tk):
                a, b = ctx.saved_tensors
                assert tk is None
                if kind == "count":
                    return ta
                return ta * b * ctx.k + a * tb * ctx.k, ta + tb

        class NoJvp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class Exp(lib.autograd.Function):  # setup_context style
            @staticmethod
            def forward(a):
                return a.exp()

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_forward(output)

            @staticmethod
            def jvp(ctx, ta):
                (r,) = ctx.saved_tensors
                return ta * r

        class NonDiff(lib.autograd.Function):  # a tangent for a non-differentiable output
            @staticmethod
            def forward(ctx, a):
                out = a.clone()
                ctx.mark_non_differentiable(out)
                return a.clone(), out

            @staticmethod
            def jvp(ctx, ta):
                return ta, ta.clone()

        return {"ok": Scale, "count": Scale, "missing": NoJvp, "setup": Exp,
                "nondiff": NonDiff}[kind]


@pytest.mark.parametrize("kind", ["ok", "count", "missing", "setup", "nondiff"])
def test_custom_function_jvp(kind):
    def run(lib, ad):
        fn = _Custom.make(lib, ad, kind)
        with ad.dual_level():
            d = ad.make_dual(_data(lib, 3), _data(lib, 3, seed=1))
            one = kind in ("missing", "setup", "nondiff")
            args = (d,) if one else (d, _data(lib, 3, seed=2), 3.0)
            err = _raises(lambda: fn.apply(*args))
            if err is not None:
                return err
            outs = fn.apply(*args)
            outs = outs if isinstance(outs, tuple) else (outs,)
            return [ad.unpack_dual(o).tangent for o in outs]

    ours, theirs = _both(run)
    if isinstance(theirs, tuple):
        assert ours == theirs
        return
    for a, b in zip(ours, theirs):
        assert_close(a, b, 1e-12, 1e-12, what=f"custom {kind}")


def test_dual_level_as_decorator_and_no_cost_outside():
    @fwad.dual_level()
    def inside():
        d = fwad.make_dual(_data(glassgrad, 2), _data(glassgrad, 2, seed=1))
        return fwad.unpack_dual(d.sin()).tangent

    assert inside() is not None
    from glassgrad.autograd.graph import _Hooks

    assert _Hooks.trace is None and _Hooks.forward_ad is None and not _Hooks.any_on


def _wrong_jvp_function(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x ** 2

        @staticmethod
        def backward(ctx, g):
            return g * 0 + 1

        @staticmethod
        def jvp(ctx, t):
            return t * 3

    return Square


@pytest.mark.parametrize("case", ["ops", "wrong jvp", "wrong jvp no raise"])
def test_gradcheck_check_forward_ad(case):
    def run(lib, ad):
        x = _data(lib, 2, 3).requires_grad_()
        y = _data(lib, 3, seed=1).requires_grad_()
        if case == "ops":
            return lib.autograd.gradcheck(
                lambda a, b: ((a * b).tanh().cumsum(1) @ b, a.amax(0)), (x, y),
                check_forward_ad=True)
        fn = _wrong_jvp_function(lib)
        kw = {"check_forward_ad": True, "check_backward_ad": False}
        if case == "wrong jvp no raise":
            return lib.autograd.gradcheck(fn.apply, (x,), raise_exception=False, **kw)
        return _raises(lambda: lib.autograd.gradcheck(fn.apply, (x,), **kw))

    ours, theirs = _both(run)
    if isinstance(theirs, tuple):
        assert ours[0] == theirs[0] and ours[1].split("numerical")[0] == theirs[1].split(
            "numerical")[0]
    else:
        assert ours == theirs


@pytest.mark.parametrize("mode", ["same", "new", "inplace"])
def test_custom_function_dirty_input_tangent(mode):
    """A Function that writes its input in place (mark_dirty) must write the tangent in place."""

    def run(lib, ad):
        class Double(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x.mul_(2)

            @staticmethod
            def backward(ctx, g):
                return g * 2

            @staticmethod
            def jvp(ctx, t):
                return {"same": lambda: t, "new": lambda: t * 2, "inplace": lambda: t.mul_(2)}[
                    mode]()

        with ad.dual_level():
            d = ad.make_dual(_data(lib, 3), _data(lib, 3, seed=1))
            err = _raises(lambda: Double.apply(d))
            return err if err is not None else ad.unpack_dual(d).tangent

    ours, theirs = _both(run)
    if isinstance(theirs, tuple):
        assert ours == theirs
    else:
        assert_close(ours, theirs, 1e-12, 1e-12)
