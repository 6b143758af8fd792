"""Transforms, constraints, constraint_registry and validate_args on glassgrad against torch:
forward, inverse and log|det J| values and gradients, shapes, reprs, constraint checks,
biject_to/transform_to, and the ValueError texts of argument and sample validation."""

import numpy as np
import pytest
import torch

import glassgrad

_rng = np.random.default_rng(0)
_X = _rng.standard_normal((3, 4))
TRANSFORMS = [  # name, constructor(m, T), input, has log|det J|
    ("Exp", lambda m, T: T.ExpTransform(), _X, True),
    ("Sigmoid", lambda m, T: T.SigmoidTransform(), _X, True),
    ("Tanh", lambda m, T: T.TanhTransform(), _X * 0.5, True),
    ("Softplus", lambda m, T: T.SoftplusTransform(), _X, True),
    ("Abs", lambda m, T: T.AbsTransform(), _X, False),
    ("Affine", lambda m, T: T.AffineTransform(m.tensor([1.0, 2, 3, 4], dtype=m.float64),
                                              m.tensor([0.5, -2, 3, 1], dtype=m.float64),
                                              event_dim=1), _X, True),
    ("Affine_number", lambda m, T: T.AffineTransform(1.5, -2.0), _X, True),
    ("Power", lambda m, T: T.PowerTransform(m.tensor(2.5, dtype=m.float64)), np.abs(_X), True),
    ("StickBreaking", lambda m, T: T.StickBreakingTransform(), _X, True),
    ("Softmax", lambda m, T: T.SoftmaxTransform(), _X, False),
    ("LowerCholesky", lambda m, T: T.LowerCholeskyTransform(), _X[:3, :3], False),
    ("PositiveDefinite", lambda m, T: T.PositiveDefiniteTransform(), _X[:3, :3], False),
    ("CorrCholesky", lambda m, T: T.CorrCholeskyTransform(), _rng.standard_normal((2, 6)), True),
    ("Compose", lambda m, T: T.ComposeTransform([T.AffineTransform(1.0, 2.0), T.ExpTransform()]),
     _X, True),
    ("Compose_event", lambda m, T: T.ComposeTransform([T.ExpTransform(),
                                                       T.StickBreakingTransform()]), _X, True),
    ("Independent", lambda m, T: T.IndependentTransform(T.SigmoidTransform(), 1), _X, True),
    ("Reshape", lambda m, T: T.ReshapeTransform((4,), (2, 2)), _X, True),
    ("Cat", lambda m, T: T.CatTransform([T.ExpTransform(), T.SigmoidTransform()], dim=1,
                                        lengths=[1, 3]), _X, True),
    ("Stack", lambda m, T: T.StackTransform([T.ExpTransform(), T.SigmoidTransform(),
                                             T.TanhTransform()], dim=0), _X * 0.5, True),
    ("Inverse", lambda m, T: T.ExpTransform().inv, np.abs(_X), True),
    ("CumulativeDistribution", lambda m, T: T.CumulativeDistributionTransform(
        m.distributions.Normal(m.tensor(0.5, dtype=m.float64), m.tensor(2.0, dtype=m.float64))),
     _X, True),
    ("identity", lambda m, T: T.identity_transform, _X, True),
]


def _run(m, make, x, ladj):
    T = m.distributions.transforms
    t = make(m, T)
    xt = m.tensor(x, dtype=m.float64, requires_grad=True)
    y = t(xt)
    out = [y]
    if ladj:
        out.append(t.log_abs_det_jacobian(xt, y))
    out.append(t.inv(y.detach()))
    grads = [m.autograd.grad((o * o).sum(), xt, allow_unused=True, retain_graph=True)[0]
             if o.requires_grad else None for o in out[:-1]]
    facts = (repr(t).replace("glassgrad.", "torch."), repr(t.domain), repr(t.codomain),
             t.bijective, tuple(t.forward_shape(tuple(x.shape))),
             tuple(t.inverse_shape(tuple(y.shape))))
    return [o.detach().numpy() for o in out], [None if g is None else g.numpy() for g in grads], \
        facts


@pytest.mark.parametrize("name,make,x,ladj", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_transform_against_torch(name, make, x, ladj):
    (tv, tg, tf), (gv, gg, gf) = _run(torch, make, x, ladj), _run(glassgrad, make, x, ladj)
    assert gf == tf
    for a, b in zip(tv, gv):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12)
    for a, b in zip(tg, gg):
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=1e-8, atol=1e-12)


def test_transform_caching_and_equality():
    T = glassgrad.distributions.transforms
    t = T.ExpTransform(cache_size=1)
    x = glassgrad.randn(3)
    y = t(x)
    assert t.inv(y) is x and t(x) is y
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.SigmoidTransform()
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
    assert T.ExpTransform().inv.inv == T.ExpTransform()
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)


CONSTRAINTS = [
    "real", "positive", "nonnegative", "unit_interval", "boolean", "nonnegative_integer",
    "positive_integer", "simplex", "real_vector", "lower_cholesky", "lower_triangular",
    "corr_cholesky", "positive_definite", "positive_semidefinite", "symmetric", "square",
    "one_hot", "greater_than(0.5)", "greater_than_eq(0.5)", "less_than(0.5)",
    "interval(-0.5, 1.0)", "half_open_interval(-0.5, 1.0)", "integer_interval(0, 2)",
    "multinomial(3)", "independent(constraints.positive, 1)",
]
_VALUES = [np.array([[-1.0, 0.0, 0.5, 1.0], [2.0, 1.0, 0.0, 0.0]]),
           np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0], [0.7, 0.7, -0.4]]),
           np.array([[[1.0, 0.0], [0.5, 2.0]], [[1.0, 0.3], [0.3, 1.0]],
                     [[1.0, 0.0], [0.6, 0.8]], [[1.0, 2.0], [2.0, 1.0]]])]


@pytest.mark.parametrize("expr", CONSTRAINTS)
def test_constraint_check_repr_and_registry(expr):
    def build(m):
        return eval(expr, {"constraints": m.distributions.constraints},
                    vars(m.distributions.constraints))

    tc, gc = build(torch), build(glassgrad)
    assert repr(gc) == repr(tc)
    assert (gc.is_discrete, gc.event_dim) == (tc.is_discrete, tc.event_dim)
    for v in _VALUES:
        if v.ndim < tc.event_dim:
            continue
        try:
            want = tc.check(torch.tensor(v)).numpy()
        except (RuntimeError, ValueError):
            continue
        np.testing.assert_array_equal(gc.check(glassgrad.tensor(v)).numpy(), want)
    for reg in ("biject_to", "transform_to"):
        try:
            tt = getattr(torch.distributions, reg)(tc)
        except NotImplementedError as e:
            with pytest.raises(NotImplementedError, match=str(e)):
                getattr(glassgrad.distributions, reg)(gc)
            continue
        gt = getattr(glassgrad.distributions, reg)(gc)
        assert repr(gt) == repr(tt)


def test_validate_args_errors_match_torch():
    cases = [
        lambda m: m.distributions.Normal(m.tensor([float("nan"), 0.0]), m.ones(2)),
        lambda m: m.distributions.Normal(m.zeros(2), m.tensor([1.0, -1.0])),
        lambda m: m.distributions.Bernoulli(m.tensor([0.3, 1.2])),
        lambda m: m.distributions.Categorical(m.tensor([[0.3, -0.2, 0.9]])),
        lambda m: m.distributions.Bernoulli(m.tensor([0.3, 0.2])).log_prob(m.tensor([0.5, 1.0])),
        lambda m: m.distributions.Normal(m.zeros(2), m.ones(2)).log_prob(m.ones(3)),
        lambda m: m.distributions.Exponential(m.tensor([1.0])).log_prob(m.tensor([-1.0])),
        lambda m: m.distributions.Bernoulli(),
        lambda m: m.distributions.Uniform(m.tensor([1.0]), m.tensor([0.0])),
        lambda m: m.distributions.Uniform(0.0, 1.0).log_prob(m.tensor(2.0)),
        lambda m: m.distributions.Dirichlet(m.tensor([1.0, 2.0])).log_prob(m.tensor([0.5, 0.6])),
        lambda m: m.distributions.Wishart(m.tensor(1.0), m.eye(3)),
        lambda m: m.distributions.LKJCholesky(1),
        lambda m: m.distributions.Multinomial(m.tensor(3), m.ones(3)),
        lambda m: m.distributions.Geometric(m.tensor([0.0, 0.5])),
        lambda m: m.distributions.Categorical(m.tensor(0.5)),
        lambda m: m.distributions.MultivariateNormal(m.zeros(2)),
        lambda m: m.distributions.Independent(m.distributions.Normal(0.0, 1.0), 1),
        lambda m: m.distributions.TransformedDistribution(m.distributions.Normal(0.0, 1.0), 3),
    ]
    for case in cases:
        with pytest.raises(Exception) as te:
            case(torch)
        with pytest.raises(type(te.value)) as ge:
            case(glassgrad)
        want = str(te.value).replace("torch.", "glassgrad.")
        assert str(ge.value).split("\n")[0] == want.split("\n")[0]


def test_set_default_validate_args():
    for m in (torch, glassgrad):
        D = m.distributions.Distribution
        D.set_default_validate_args(False)
        try:
            m.distributions.Normal(m.zeros(1), -m.ones(1))  # no error
        finally:
            D.set_default_validate_args(True)
        with pytest.raises(ValueError):
            m.distributions.Normal(m.zeros(1), -m.ones(1))
        m.distributions.Normal(m.zeros(1), -m.ones(1), validate_args=False)
