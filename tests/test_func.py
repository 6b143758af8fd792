"""``glassgrad.func`` autograd transforms and ``functional_call`` against ``torch.func`` on the same
inputs: values, pytrees, argnums, has_aux, compositions (``grad(grad)``, ``jacrev(jacrev)``,
``vmap(jacrev)``), MAML's second-order gradient, and PyTorch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import func as tf

import glassgrad
from glassgrad import func as gf

RNG = np.random.default_rng(0)
X = RNG.standard_normal(4)
Y = RNG.standard_normal((3, 4))


def close(a, b, atol=1e-10):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)
        for p, q in zip(a, b):
            close(p, q, atol)
        return
    if isinstance(a, dict):
        assert set(a) == set(b)
        for k in a:
            close(a[k], b[k], atol)
        return
    assert tuple(a.shape) == tuple(b.shape), f"{tuple(a.shape)} vs {tuple(b.shape)}"
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=atol)


def both(fn):
    """``fn(lib, func_namespace)`` on glassgrad and on torch."""
    return fn(glassgrad, gf), fn(torch, tf)


def f_scalar(lib):
    return lambda x: (x.sin() * x.exp()).sum() + (x ** 3).mean()


def f_vector(lib):
    return lambda x, y: (y @ x).tanh() * x[:3].sum()


def test_grad_and_grad_and_value():
    ours, theirs = both(lambda m, F: F.grad(f_scalar(m))(m.tensor(X)))
    close(ours, theirs)
    ours, theirs = both(lambda m, F: F.grad_and_value(f_scalar(m))(m.tensor(X)))
    close(ours, theirs)
    assert ours[0].grad_fn is None and not ours[0].requires_grad  # no graph at the outermost


def test_grad_argnums_has_aux_and_pytrees():
    def run(m, F):
        def loss(p, x, scale):
            out = (p["w"] @ x + p["b"]).relu().sum() * scale
            return out, {"out": out * 2}

        p = {"w": m.tensor(Y), "b": m.tensor(X[:3])}
        g1, aux = F.grad(loss, has_aux=True)(p, m.tensor(X), 2.0)
        g2 = F.grad(lambda p, x: loss(p, x, 1.0)[0], argnums=(0, 1))(p, m.tensor(X))
        return g1, aux, g2

    ours, theirs = both(run)
    close(ours, theirs)
    assert set(ours[0]) == {"w", "b"} and isinstance(ours[2], tuple)


def test_unused_input_gives_zeros_and_outer_graph_is_kept():
    ours, theirs = both(lambda m, F: F.grad(lambda x, y: (y * 2).sum(), argnums=(0, 1))(
        m.tensor(X), m.tensor(X)))
    close(ours, theirs)
    # a closed-over tensor that requires grad keeps the result differentiable, as in torch
    w_g = glassgrad.tensor(X, requires_grad=True)
    w_t = torch.tensor(X, requires_grad=True)
    g_g = gf.grad(lambda x: (w_g * x * x).sum())(glassgrad.tensor(X))
    g_t = tf.grad(lambda x: (w_t * x * x).sum())(torch.tensor(X))
    assert g_g.requires_grad and g_t.requires_grad
    g_g.sum().backward()
    g_t.sum().backward()
    close(w_g.grad, w_t.grad)


def test_grad_of_grad_and_perturbation_confusion():
    ours, theirs = both(lambda m, F: F.grad(lambda x: F.grad(f_scalar(m))(x).sum())(m.tensor(X)))
    close(ours, theirs)
    # the inner grad differentiates w.r.t. its own variable only, not the outer x it aliases
    ours, theirs = both(lambda m, F: F.grad(
        lambda x: F.grad(lambda y: (x * y).sum())(x).sum())(m.tensor(X)))
    close(ours, theirs)


def test_vjp_with_pytree_outputs_and_aux():
    def run(m, F):
        out, fn, aux = F.vjp(lambda x, y: (((y @ x).sin(), {"s": x.exp()}), x.sum()),
                             m.tensor(X), m.tensor(Y), has_aux=True)
        ct = (m.tensor(RNG.standard_normal(3) * 0 + 1.5), {"s": m.tensor(X * 0.5)})
        return out, fn(ct), aux

    ours, theirs = both(run)
    close(ours, theirs)


def test_vjp_errors():
    _, fn = gf.vjp(lambda x: x.sin(), glassgrad.tensor(X))
    with pytest.raises(RuntimeError, match="Expected pytree structure of cotangents"):
        fn((glassgrad.tensor(X), glassgrad.tensor(X)))
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
        gf.grad(lambda x: x.sin())(glassgrad.tensor(X))
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a Tensor"):
        gf.grad(lambda x: 3.0)(glassgrad.tensor(X))
    with pytest.raises(RuntimeError, match="only 1 positional inputs"):
        gf.grad(lambda x: x.sum(), argnums=1)(glassgrad.tensor(X))


def test_jvp():
    t = RNG.standard_normal(4)
    ours, theirs = both(lambda m, F: F.jvp(f_vector(m), (m.tensor(X), m.tensor(Y)),
                                           (m.tensor(t), m.tensor(Y * 0.1))))
    close(ours, theirs)
    ours, theirs = both(lambda m, F: F.jvp(lambda x: x * 0 + 1, (m.tensor(X),), (m.tensor(t),)))
    close(ours, theirs)


@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobians(jac):
    ours, theirs = both(lambda m, F: getattr(F, jac)(f_vector(m))(m.tensor(X), m.tensor(Y)))
    close(ours, theirs)
    ours, theirs = both(lambda m, F: getattr(F, jac)(f_vector(m), argnums=(0, 1))(
        m.tensor(X), m.tensor(Y)))
    close(ours, theirs)
    # pytree outputs and inputs: outputs outside, inputs inside
    ours, theirs = both(lambda m, F: getattr(F, jac)(
        lambda d: {"a": d["x"].exp(), "b": (d["x"] * d["y"]).sum(1)})(
        {"x": m.tensor(Y), "y": m.tensor(Y * 2)}))
    close(ours, theirs)


def test_hessian_and_nested_jacobians():
    ours, theirs = both(lambda m, F: F.hessian(f_scalar(m))(m.tensor(X)))
    close(ours, theirs)
    ours, theirs = both(lambda m, F: F.jacrev(F.jacrev(f_vector(m)))(m.tensor(X), m.tensor(Y)))
    close(ours, theirs)
    ours, theirs = both(lambda m, F: F.hessian(lambda x, y: (y @ x).logsumexp(0), argnums=1)(
        m.tensor(X), m.tensor(Y)))
    close(ours, theirs)


def test_vmap_of_jacrev_and_of_hessian():
    xs = RNG.standard_normal((5, 4))
    ours, theirs = both(lambda m, F: F.vmap(F.jacrev(lambda x: x.sin() * x.sum()))(m.tensor(xs)))
    close(ours, theirs)
    ours, theirs = both(lambda m, F: F.vmap(F.hessian(f_scalar(m)))(m.tensor(xs)))
    close(ours, theirs)


def _modules():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 2))
    gm = glassgrad.nn.Sequential(glassgrad.nn.Linear(4, 6), glassgrad.nn.Tanh(),
                                 glassgrad.nn.Linear(6, 2))
    gm.load_state_dict({k: glassgrad.tensor(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    return tm.double(), gm.double()


def test_functional_call_swaps_and_restores():
    tm, gm = _modules()
    x = RNG.standard_normal((3, 4))
    new = {k: v * 2 for k, v in gm.state_dict().items()}
    before = {k: v.detach().numpy().copy() for k, v in gm.state_dict().items()}
    out = gf.functional_call(gm, new, glassgrad.tensor(x))
    ref = tf.functional_call(tm, {k: v * 2 for k, v in tm.state_dict().items()}, torch.tensor(x))
    close(out, ref)
    for k, v in gm.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])
        assert isinstance(getattr(gm.get_submodule(k.rsplit(".", 1)[0]), k.rsplit(".", 1)[1]),
                          glassgrad.nn.Parameter)
    # partial dicts, a tuple of dicts, restore after an error
    part = gf.functional_call(gm, ({"0.weight": new["0.weight"]}, {"2.bias": new["2.bias"]}),
                              (glassgrad.tensor(x),))
    ref = tf.functional_call(tm, ({"0.weight": tm.state_dict()["0.weight"] * 2},
                                  {"2.bias": tm.state_dict()["2.bias"] * 2}), (torch.tensor(x),))
    close(part, ref)
    with pytest.raises(RuntimeError):
        gf.functional_call(gm, new, glassgrad.tensor(RNG.standard_normal((3, 5))))
    np.testing.assert_array_equal(gm[0].weight.detach().numpy(), before["0.weight"])


def test_functional_call_errors_strict_and_tied_weights():
    _, gm = _modules()
    sd = dict(gm.state_dict())
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        gf.functional_call(gm, (sd, {"0.bias": sd["0.bias"]}), glassgrad.zeros(1, 4))
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): '2.bias'"):
        gf.functional_call(gm, {k: v for k, v in sd.items() if k != "2.bias"},
                           glassgrad.zeros(1, 4, dtype=glassgrad.float64), strict=True)
    with pytest.raises(RuntimeError, match="Unexpected key\\(s\\): 'nope'"):
        gf.functional_call(gm, dict(sd, nope=sd["0.bias"]),
                           glassgrad.zeros(1, 4, dtype=glassgrad.float64), strict=True)

    class Tied(glassgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = glassgrad.nn.Linear(2, 2, bias=False)
            self.b = glassgrad.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    m = Tied()
    x = glassgrad.ones(1, 2)
    w = glassgrad.eye(2) * 3
    np.testing.assert_allclose(gf.functional_call(m, {"a.weight": w}, x).numpy(), [[9.0, 9.0]])
    untied = gf.functional_call(m, {"a.weight": w}, x, tie_weights=False)
    np.testing.assert_allclose(untied.detach().numpy(),
                               (x @ w.t() @ m.b.weight.t()).detach().numpy())
    with pytest.raises(ValueError, match="which are tied"):
        gf.functional_call(m, {"a.weight": w, "b.weight": w * 2}, x)


def test_maml_second_order_matches_torch():
    """The inner SGD step keeps its graph (create_graph=True), so the meta-gradient includes the
    second-order term; compared with torch on the same weights and data."""
    tm, gm = _modules()
    rng = np.random.default_rng(1)
    xs, ys, xq, yq = (rng.standard_normal(s) for s in ((5, 4), (5, 2), (5, 4), (5, 2)))

    def meta_grad(lib, model, call):
        params = dict(model.named_parameters())
        loss = lib.nn.functional.mse_loss(call(model, params, lib.tensor(xs)), lib.tensor(ys))
        grads = lib.autograd.grad(loss, list(params.values()), create_graph=True)
        fast = {k: p - 0.1 * g for (k, p), g in zip(params.items(), grads)}
        outer = lib.nn.functional.mse_loss(call(model, fast, lib.tensor(xq)), lib.tensor(yq))
        return lib.autograd.grad(outer, list(params.values()))

    ours = meta_grad(glassgrad, gm, gf.functional_call)
    theirs = meta_grad(torch, tm, tf.functional_call)
    close(list(ours), list(theirs))
    # and it differs from the first-order approximation (the second-order term is there)
    first = torch.autograd.grad(torch.nn.functional.mse_loss(tf.functional_call(
        tm, dict(tm.named_parameters()), torch.tensor(xq)), torch.tensor(yq)),
        list(tm.parameters()))
    assert not all(np.allclose(a.numpy(), b.numpy()) for a, b in zip(ours, first))


def test_functional_call_with_grad_transform_like_torch_docs():
    tm, gm = _modules()
    x, t = RNG.standard_normal((4, 4)), RNG.standard_normal((4, 2))

    def run(lib, F, model):
        def loss(params, x, t):
            return lib.nn.functional.mse_loss(F.functional_call(model, params, (x,)), t)

        params = {k: v.detach() for k, v in model.named_parameters()}
        return F.grad(loss)(params, lib.tensor(x), lib.tensor(t))

    ours, theirs = run(glassgrad, gf, gm), run(torch, tf, tm)
    close(ours, theirs)
    assert all(v.grad_fn is None for v in ours.values())
