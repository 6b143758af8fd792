"""``torch.func.jvp``/``jacfwd``/``linearize``/``hessian`` and ``torch.autograd.functional.jvp``
on glassgrad's forward mode (NOTE [Forward transforms] in glassgrad/func/_forward.py) against
torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.func

import glassgrad
import glassgrad.func
from tests.oracle import assert_close


def _data(lib, *shape, seed=0):
    return lib.from_numpy(np.random.default_rng(seed).standard_normal(shape))


def _f(lib, x, y):
    return (x.sin() * y).sum(-1) + x.matmul(y.t()).tanh().mean(), x.exp()


CASES = {
    "jvp": lambda lib: lib.func.jvp(
        lambda x, y: _f(lib, x, y), (_data(lib, 3, 4), _data(lib, 3, 4, seed=1)),
        (_data(lib, 3, 4, seed=2), _data(lib, 3, 4, seed=3)))[1],
    "jvp has_aux": lambda lib: lib.func.jvp(
        lambda x: (x.cumsum(0).log_softmax(0), x.max()), (_data(lib, 5),),
        (_data(lib, 5, seed=1),), has_aux=True),
    "jacfwd": lambda lib: lib.func.jacfwd(lambda x, y: _f(lib, x, y)[0], argnums=(0, 1))(
        _data(lib, 2, 3), _data(lib, 2, 3, seed=1)),
    "jacfwd has_aux": lambda lib: lib.func.jacfwd(
        lambda x: (x.pow(3).flip(0), x.sum()), has_aux=True)(_data(lib, 4)),
    "hessian": lambda lib: lib.func.hessian(lambda x: x.sin().prod())(_data(lib, 4)),
    "linearize": lambda lib: lib.func.linearize(lambda x: x.cosh() @ x, _data(lib, 3, 3))[1](
        _data(lib, 3, 3, seed=1)),
    "functional jvp": lambda lib: lib.autograd.functional.jvp(
        lambda x: x.sigmoid().cumprod(0), _data(lib, 4), _data(lib, 4, seed=1)),
    "jvp of grad": lambda lib: lib.func.jvp(
        lib.func.grad(lambda x: (x ** 3).sum()), (_data(lib, 3),), (_data(lib, 3, seed=1),)),
}


def _flat(x):
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in _flat(item)]
    return [x]


@pytest.mark.parametrize("name", list(CASES))
def test_transform_matches_torch(name):
    ours, theirs = _flat(CASES[name](glassgrad)), _flat(CASES[name](torch))
    assert len(ours) == len(theirs)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        assert_close(a, b, 1e-10, 1e-8, what=f"{name} output {k}")


def test_jvp_runs_in_forward_mode():
    """A Function whose backward fails: only forward mode (its jvp) can give the tangent."""

    def make(lib):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x ** 3

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_forward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                raise RuntimeError("no backward")

            @staticmethod
            def jvp(ctx, t):
                (x,) = ctx.saved_tensors
                return 3 * x ** 2 * t

        return Cube

    def run(lib, ad):
        with ad.dual_level():
            d = ad.make_dual(_data(lib, 4), _data(lib, 4, seed=1))
            return ad.unpack_dual(make(lib).apply(d)).tangent

    ours = glassgrad.func.jvp(make(glassgrad).apply, (_data(glassgrad, 4),),
                              (_data(glassgrad, 4, seed=1),))[1]
    assert_close(ours, run(torch, torch.autograd.forward_ad), 1e-12, 1e-12)


def test_linearize_errors_match_torch():
    def errors(lib):
        _, fn = lib.func.linearize(lib.sin, _data(lib, 3))
        out = []
        for args in ((_data(lib, 3), _data(lib, 3)), (_data(lib, 2),)):
            try:
                fn(*args)
            except RuntimeError as e:
                out.append(str(e).split(" ")[:3])
        return out

    assert errors(glassgrad) == errors(torch)
