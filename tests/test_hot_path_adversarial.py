"""Adversarial checks of the recording fast path (ops/fast_path.py) and the array backward
(autograd/engine_arrays.py), each run on torch and glassgrad and compared.

The top section guards behaviour that holds (no aliasing of user-held gradients by the engine's
in-place accumulation, saved-output version checks, grad modes, threads, vmap/grad). The section
at the bottom holds reproducers of the bugs found while probing, all fixed since.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
import torch

import glassgrad

LIBS = (torch, glassgrad)


def _np(v):
    if isinstance(v, torch.Tensor):
        v = v.detach()
        return v.to(torch.float64).numpy() if v.is_floating_point() else v.numpy()
    v = v.detach()
    return v.to(glassgrad.float64).numpy() if v.is_floating_point() else v.numpy()


def _summary(v):
    """A library-neutral, comparable form of a result (tensors by dtype, shape, flags, values)."""
    if isinstance(v, (torch.Tensor, glassgrad.Tensor)):
        fn = v.grad_fn.name() if v.grad_fn is not None else None
        return ("T", str(v.dtype).split(".")[-1], tuple(v.shape), v.requires_grad, fn,
                np.array(_np(v), copy=True))
    if isinstance(v, (list, tuple)):
        return [_summary(x) for x in v]
    return v


def _assert_same(ours, theirs, path="result", rtol=1e-5):
    if isinstance(theirs, tuple) and theirs and theirs[0] == "T":
        assert isinstance(ours, tuple) and ours and ours[0] == "T", f"{path}: {ours!r}"
        for i, what in enumerate(("dtype", "shape", "requires_grad", "grad_fn"), 1):
            assert ours[i] == theirs[i], f"{path}.{what}: glassgrad {ours[i]} vs torch {theirs[i]}"
        np.testing.assert_allclose(ours[5], theirs[5], rtol=rtol, atol=1e-6, equal_nan=True,
                                   err_msg=path)
    elif isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), f"{path}: {ours!r}"
        for k, (a, b) in enumerate(zip(ours, theirs)):
            _assert_same(a, b, f"{path}[{k}]", rtol)
    else:
        assert ours == theirs, f"{path}: glassgrad {ours!r} vs torch {theirs!r}"


def _outcome(lib, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return _summary(fn(lib))
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            return ("ERR", type(e).__name__, str(e).split("\n")[0][:60])


def same(fn, rtol=1e-5):
    """Run ``fn(lib)`` on both libraries and compare results, or error type and leading phrase."""
    theirs, ours = _outcome(torch, fn), _outcome(glassgrad, fn)
    if isinstance(theirs, tuple) and theirs[0] == "ERR":
        assert ours == theirs, f"glassgrad {ours!r} vs torch {theirs!r}"
        return
    assert not (isinstance(ours, tuple) and ours[0] == "ERR"), f"glassgrad raised {ours!r}"
    _assert_same(ours, theirs, rtol=rtol)


def leaf(lib, v, dtype="float32"):
    return lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=True)


X = [1.0, 2.0, 3.0]

# ---------------------------------------------------------------- user-held gradients stay intact


def test_gradient_argument_reused_through_passthrough_is_not_mutated():
    def f(lib):
        x = leaf(lib, X)
        g = lib.ones(3)
        (x + 1.0).backward(g)  # AddScalar passes the seed through unchanged
        (x + 1.0).backward(g)
        x.backward(g)
        return g, x.grad

    same(f)


def test_kept_grad_is_accumulated_in_place_like_torch():
    def f(lib):
        x = leaf(lib, X)
        g = lib.ones(3)
        (x + 1.0).backward(g)
        kept = x.grad
        (x * 2.0).backward(g)
        return g, kept, x.grad, kept is x.grad

    same(f)


def test_retain_grad_and_leaf_grad_do_not_alias_across_backwards():
    def f(lib):
        x = leaf(lib, X)
        y = x + 1.0
        y.retain_grad()
        z = y * 2.0
        z.backward(lib.ones(3), retain_graph=True)
        yg, xg = y.grad, x.grad
        z.backward(lib.ones(3))
        return yg, xg, y.grad, x.grad

    same(f)


def test_hooks_that_keep_gradients_see_them_unchanged():
    def f(lib):
        x = leaf(lib, X)
        held = []
        y = x + 1.0
        y.register_hook(held.append)
        x.register_hook(held.append)
        z = y * 2 + y * 3 + x
        z.backward(lib.ones(3), retain_graph=True)
        z.backward(lib.ones(3) * 2)
        x.grad.add_(100)
        return held, x.grad

    same(f)


@pytest.mark.parametrize("where", ["leaf", "nonleaf", "passthrough"])
def test_hook_returning_a_user_tensor_leaves_it_intact(where):
    def f(lib):
        x = leaf(lib, X)
        keep = lib.ones(3)
        if where == "leaf":
            x.register_hook(lambda g: keep)
            (x + 1.0).sum().backward()
        else:
            y = x + 0.0 if where == "passthrough" else x * 1.0
            y.register_hook(lambda g: keep)
            ((x * 2.0) + (y + 0.0)).sum().backward()
        (x * 3.0).sum().backward()
        return keep, x.grad

    same(f)


def test_autograd_grad_results_reused_as_grad_outputs():
    def f(lib):
        x = leaf(lib, X)
        y = x + 0.0
        a = y + 0.0
        gy, = lib.autograd.grad(a, [y], lib.ones(3), retain_graph=True)
        gx, = lib.autograd.grad([a, y], [x], [gy, gy])
        g0 = lib.ones(3)
        gxx, = lib.autograd.grad(x + 0.0, x, g0)
        gxx.add_(5)
        return gy, gx, g0, gxx

    same(f)


def test_backward_inputs_nonleaf_twice():
    def f(lib):
        x = leaf(lib, X)
        a = x + 1.0
        c = a * 2 + a
        c.backward(lib.ones(3), inputs=[a], retain_graph=True)
        first = a.grad.clone()
        c.backward(lib.ones(3), inputs=[a, x])
        return first, a.grad, x.grad

    same(f)


# ------------------------------------------------------------ graphs, broadcasting, 0-d vs 1-elem


def test_same_tensor_many_times_and_loops():
    def f(lib):
        x = leaf(lib, X)
        y = x
        for _ in range(5):
            y = y + x
        y = y * x + x * x - x / x
        y.sum().backward()
        (x * x).sum().backward()
        return y, x.grad

    same(f)


@pytest.mark.parametrize("shapes", [((3, 1), (1, 4)), ((), (3,)), ((1,), ()), ((), ())])
@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
def test_broadcast_and_zero_dim(shapes, dtype_name):
    def f(lib):
        dtype = getattr(lib, dtype_name)
        a = (lib.arange(1, 1 + int(np.prod(shapes[0]))).reshape(shapes[0]) * 1.5).to(dtype)
        b = (lib.arange(1, 1 + int(np.prod(shapes[1]))).reshape(shapes[1]) + 0.5).to(dtype)
        a.requires_grad_()
        b.requires_grad_()
        c = (a * b).exp().tanh() + b.sigmoid().log() - a / b + b ** 2.0 - 1.0 / a
        c.sum().backward()
        return c, a.grad, b.grad

    # float32 sums of cancelling terms differ from torch's in the last bits
    same(f, rtol=2e-4 if dtype_name == "float32" else 1e-7)


@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid", "sqrt", "rsqrt", "reciprocal"])
@pytest.mark.parametrize("how", ["add_", "view", "detach", "data", "no_grad"])
def test_modifying_saved_output_raises_like_torch(op, how):
    def f(lib):
        x = leaf(lib, X)
        y = getattr(x, op)()
        if how == "add_":
            y.add_(1)
        elif how == "view":
            y[1:].mul_(2)
        elif how == "detach":
            y.detach().add_(1)
        elif how == "data":
            y.data.add_(1)  # .data does not share the version counter: no error
        else:
            with lib.no_grad():
                y.add_(1)
        y.sum().backward()
        return y, x.grad

    same(f)


@pytest.mark.parametrize("op", ["mul_s", "add_s", "neg", "sub_t", "sin", "mul_t"])
def test_modifying_inputs_saved_or_not(op):
    def f(lib):
        x = leaf(lib, X)
        w = leaf(lib, [4.0, 5.0, 6.0])
        y = {"mul_s": lambda: x * 2.0, "add_s": lambda: x + 2.0, "neg": lambda: -x,
             "sub_t": lambda: x - w, "sin": lambda: x.sin(), "mul_t": lambda: x * w}[op]()
        with lib.no_grad():
            x.add_(1)
        y.sum().backward()
        return y, x.grad, w.grad

    same(f)


def test_saved_attributes_of_fast_nodes():
    def f(lib):
        x = leaf(lib, X)
        w = leaf(lib, [4.0, 5.0, 6.0])
        y, s, m = x.exp(), x.sin(), x * w
        out = [y.grad_fn._saved_result, s.grad_fn._saved_self is x,
               m.grad_fn._saved_self is x, m.grad_fn._saved_other is w]
        y.sum().backward()
        try:
            out.append(y.grad_fn._saved_result)
        except RuntimeError as e:
            out.append(str(e)[:40])
        return out

    same(f)


# ------------------------------------------------------------------ modes, dtypes, operand kinds


@pytest.mark.parametrize("shape", [(3,), ()])
@pytest.mark.parametrize("op", ["exp", "mul_s", "mul_t", "neg", "pow", "rsub"])
def test_grad_mode_nesting(op, shape):
    def f(lib):
        x = (lib.arange(1, 1 + int(np.prod(shape))).reshape(shape) * 1.0).requires_grad_()
        w = x.detach() + 1
        fn = {"exp": lambda: x.exp(), "mul_s": lambda: x * 2.0, "mul_t": lambda: x * w,
              "neg": lambda: -x, "pow": lambda: x ** 2, "rsub": lambda: 1.0 - x}[op]
        out = []
        with lib.inference_mode():
            with lib.enable_grad():
                out.append(fn())
            with lib.set_grad_enabled(True):
                out.append(fn())
            with lib.inference_mode(False):
                out.append(fn())
        with lib.no_grad():
            with lib.enable_grad():
                out.append(fn())
            with lib.inference_mode():
                out.append(fn())
        return out

    same(f)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "sin", "relu", "abs", "neg", "reciprocal"])
def test_other_dtypes_fall_back(op, dtype):
    def f(lib):
        x = leaf(lib, [0.5, 2.0, 1.0], dtype)
        y = getattr(x, op)()
        y.sum().backward()
        return y, x.grad

    same(f)


@pytest.mark.parametrize("other", [np.float32(2.0), np.float64(2.0), np.int32(2), np.array(2.0),
                                   True, 2, 2.5])
def test_numpy_scalar_and_bool_operands(other):
    def f(lib):
        x = leaf(lib, X)
        ys = [x * other, other * x, x + other, x / other, x ** 2]
        sum(y.sum() for y in ys).backward()
        return [type(y).__name__ for y in ys], ys, x.grad

    same(f)


def test_parameters_as_operands():
    def f(lib):
        p = lib.nn.Parameter(lib.tensor(X))
        ys = [p * 2, p + p, p.exp(), -p, p ** 2, 2.0 - p, p / p]
        sum(y.sum() for y in ys).backward()
        return [type(y).__name__ for y in ys], ys, p.grad

    same(f)


# -------------------------------------------------- functions, higher order, vmap, threads, misc


def test_custom_function_in_the_middle_with_retain_graph():
    def f(lib):
        class Sq(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * g * x

        x = leaf(lib, X)
        y = Sq.apply(x.exp() + 1.0)
        z = (y * 2.0).tanh() + y
        z.sum().backward(retain_graph=True)
        first = x.grad.clone()
        z.sum().backward()
        try:
            z.sum().backward()
        except RuntimeError as e:
            return first, x.grad, str(e)[:40]
        return first, x.grad

    same(f)


@pytest.mark.parametrize("shape", [(3,), ()])
def test_second_order_through_fast_nodes(shape):
    def f(lib):
        x = (lib.arange(1, 1 + int(np.prod(shape))).reshape(shape) * 0.5).requires_grad_()
        y = (x.sigmoid() * x.log() / x.sqrt() - x.rsqrt() + x.reciprocal() + x.sin() * x.cos()
             + x.log1p() + x.relu().abs()) ** 3
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        h, = lib.autograd.grad(g.sum(), x)
        return g, h

    same(f)


def test_per_sample_gradients():
    def f(lib):
        w = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]) * 0.1
        xs = lib.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0], [0.0, 0.0, 1.0]])

        def loss(w, x):
            h = x @ w
            return (h.tanh() * 2.0 + h.exp() - 1.0).sigmoid().sum() ** 2

        return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0))(w, xs)

    same(f)


def test_threads_each_with_its_own_graph():
    def f(lib):
        res = [None] * 4

        def work(i):
            for _ in range(10):
                x = leaf(lib, [1.0 + i, 2.0, 3.0])
                y = x
                for _ in range(10):
                    y = (y * 0.9 + x).tanh() + x.exp() / 10.0
                if i % 2:
                    y.sum().backward()
                    g = x.grad
                else:
                    g, = lib.autograd.grad(y.sum(), [x])
            res[i] = g

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return res

    same(f)


def test_empty_and_non_finite():
    def f(lib):
        e = lib.ones(0, 3, requires_grad=True)
        (e.exp() * 2.0 + e * e - 1.0 / e.sqrt()).sum().backward()
        x = leaf(lib, [float("nan"), float("inf"), -float("inf"), 0.0])
        y = (x * 2.0 + x.exp() - x.tanh() + x.sigmoid() + x.relu() + x.abs()) / 2.0
        y.sum().backward()
        return e.grad, y, x.grad

    same(f)


# ================================================================================================
# Reproducers of the bugs found while probing (all fixed; they keep them fixed).
# ================================================================================================


def test_bug_accumulate_grad_node_hooks_never_run():
    # engine.run and engine_arrays.run_arrays: the AccumulateGrad branch runs only
    # node.variable._hooks, never the node's own _pre_hooks/_post_hooks
    def f(lib):
        x = leaf(lib, X)
        acc = (x * 1.0).grad_fn.next_functions[0][0]
        log = []
        acc.register_prehook(lambda go: log.append(("pre", go[0])))
        acc.register_hook(lambda gi, go: log.append(("post", go[0])))
        x.exp().sum().backward()
        return log

    same(f)


@pytest.mark.parametrize("op", ["exp", "mul_t"])
def test_bug_view_made_before_base_inplace_gives_wrong_gradient(op):
    # a view's grad_fn must follow an in-place op on its base (PyTorch rebuilds it as
    # AsStridedBackward0 over the base's new history; glassgrad replays the view: NOTE [Stale
    # views]), or its gradients skip the write
    def f(lib):
        x = leaf(lib, X)
        y = x * 1.0
        v = y[1:]
        y.mul_(2.0)
        w = v.exp() if op == "exp" else v * lib.ones(2)
        w.sum().backward()
        return w, x.grad

    same(f)


def test_bug_func_grad_seed_is_nan_when_output_is_not_finite():
    # func/transforms.py grad_and_value: `one = output.detach() * 0 + 1` is NaN for an inf/NaN
    # output, so every gradient becomes NaN (torch: ones_like)
    def f(lib):
        return [lib.func.grad(lambda a: a.exp().sum())(lib.tensor([1.0, 1000.0])),
                lib.func.grad(lambda a: (a * a).sum())(lib.tensor([1.0, float("nan")])),
                lib.func.grad(lambda a: a.log().sum())(lib.tensor([0.5, -1.0]))]

    same(f)


def test_bug_func_grad_unused_input_with_inf_gets_nan():
    # func/transforms.py _grads: zeros for an unused input are `x.detach() * 0` (NaN for inf)
    def f(lib):
        a, b = lib.tensor([1.0, 2.0]), lib.tensor([float("inf"), 1.0])
        return lib.func.grad(lambda a, b: (a * 2).sum(), argnums=(0, 1))(a, b)

    same(f)


def test_bug_no_grad_view_of_leaf_modified_with_grad_on_is_not_rejected():
    # PyTorch: "A view was created in no_grad mode and is being modified inplace with grad mode
    # enabled..."; glassgrad lets the leaf be modified (and x * 2.0 then backpropagates fine)
    def f(lib):
        x = leaf(lib, X)
        y = x * 2.0
        with lib.no_grad():
            v = x[0:2]
        v.mul_(2)
        y.sum().backward()
        return x, x.grad

    same(f)


def test_bug_bfloat16_pow_float_exponent_returns_float32():
    # ops/elementwise.py PowScalar.forward: bfloat16 ** Python float comes back float32
    def f(lib):
        x = leaf(lib, [0.5, 2.0], "bfloat16")
        return x ** 2.5, x.detach() ** 0.5

    same(f)


def test_bug_rpow_negative_base_backward_raises_math_domain_error():
    # ops/elementwise.py:195 RPow backward uses math.log(base): ValueError for base < 0
    def f(lib):
        x = leaf(lib, [0.5, 2.0])
        y = (-3) ** x
        y.sum().backward()
        return y, x.grad

    same(f)


def test_bug_bool_subtraction_is_not_rejected():
    # PyTorch refuses `-` with a bool operand ("Subtraction, the `-` operator, with a bool
    # tensor is not supported..."); glassgrad computes it
    def f(lib):
        x = leaf(lib, X)
        return x - True

    same(f)


def test_views_follow_writes_through_a_sibling_view_and_die_with_their_base():
    """NOTE [Stale views]: a write through one view reaches the gradients of another view of the
    same base; the registry forgets views and bases that died."""
    from glassgrad.ops import _util

    def f(lib):
        x = leaf(lib, X)
        y = x * 1.0
        a, b = y[:2], y[1:]
        a.mul_(3.0)  # through a sibling view: b[0] is y[1], written
        (b.exp() * lib.tensor([1.0, 2.0])).sum().backward()
        return b.detach(), x.grad  # (torch names b's node AsStridedBackward0, glassgrad replays)

    same(f)
    before = len(_util.VIEWS)
    y = glassgrad.tensor(X, requires_grad=True) * 1.0
    views = [y[i:] for i in range(3)]
    assert len(_util.VIEWS) == before + 1 and len(_util.VIEWS[id(y)]) == 3
    del views
    assert len(_util.VIEWS[id(y)]) == 0
    del y
    assert len(_util.VIEWS) == before
